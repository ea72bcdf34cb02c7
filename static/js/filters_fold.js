// The leaderboard's filters come folded, so that on a phone the ranking comes first; where there is room,
// this unfolds them. Included right after them, so that it runs before the table below is drawn.
if (window.matchMedia("(min-width: 48rem)").matches) document.getElementById("filters-toggle").open = true;
