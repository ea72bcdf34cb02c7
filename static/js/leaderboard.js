// Leaderboard and comparison pages (their charts: charts.js): sort, filter and hide column groups in the browser.
// The server does the same from the query string (?sort=&order=&q=&weights=&approach=&size=&verified=1&portal_run=1
// &team=&hide=), in leaderboard/ranking.py, so the page works without JavaScript and every state has a URL, kept
// up to date.
(function () {
  "use strict";

  var table = document.getElementById("leaderboard");
  var form = document.getElementById("leaderboard-filters");
  if (!table || !form) return;
  var tbody = table.tBodies[0];
  var headers = Array.prototype.slice.call(table.tHead.rows[table.tHead.rows.length - 1].cells);
  var shownCount = document.getElementById("shown-count");

  // The model column sticks just right of the rank column (static/css/leaderboard.css): as far as that column is wide.
  var rankHeader = headers[0];
  function fitRankWidth() { table.style.setProperty("--rank-width", rankHeader.offsetWidth + "px"); }
  fitRankWidth();
  if (window.ResizeObserver) new ResizeObserver(fitRankWidth).observe(rankHeader);
  var field = function (name) { return form.elements.namedItem(name); };
  // One page of a long ranking (data-paged) holds only its rows: there the header links and the form go to
  // the server, which sorts and filters them all; only the column groups are hidden in the browser.
  var paged = table.hasAttribute("data-paged");

  function rows() { return Array.prototype.slice.call(tbody.rows); }

  function setParams(values) {
    var url = new URL(window.location.href);
    Object.keys(values).forEach(function (name) {
      url.searchParams.delete(name);
      [].concat(values[name]).forEach(function (value) { if (value) url.searchParams.append(name, value); });
    });
    history.replaceState(null, "", url.pathname + url.search);
  }

  // The form carries the sort too, so that choosing another version keeps it.
  function setHidden(name, value) {
    var input = field(name);
    if (!input && value) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      form.appendChild(input);
    }
    if (input) input.value = value;
  }

  // Sorting: cells carry data-sort (a number, an ISO date or lower-case text; empty when missing).
  function compare(a, b) {
    var x = Number(a), y = Number(b);
    if (!isNaN(x) && !isNaN(y)) return x - y;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function position(row) { return Number(row.cells[0].dataset.sort); }

  function sortBy(key, descending) {
    var index = headers.findIndex(function (th) { return th.dataset.key === key; });
    var value = function (row) { return row.cells[index].dataset.sort; };
    var ordered = rows().sort(function (r1, r2) { return position(r1) - position(r2); });
    var present = ordered.filter(function (row) { return value(row) !== ""; });
    var missing = ordered.filter(function (row) { return value(row) === ""; });
    present.sort(function (r1, r2) {
      var order = compare(value(r1), value(r2));
      return descending ? -order : order;
    });
    present.concat(missing).forEach(function (row) { tbody.appendChild(row); });
    headers.forEach(function (th) {
      th.setAttribute("aria-sort", th.dataset.key === key ? (descending ? "descending" : "ascending") : "none");
    });
    var isDefault = key === "rank" && !descending;
    setHidden("sort", isDefault ? "" : key);
    setHidden("order", descending ? "desc" : "");
    setParams({ sort: isDefault ? "" : key, order: isDefault ? "" : (descending ? "desc" : "asc") });
  }

  headers.forEach(function (th) {
    th.querySelector("a:not(.about)").addEventListener("click", function (event) {
      if (paged) return;
      event.preventDefault();
      var current = th.getAttribute("aria-sort");
      var bestFirst = th.classList.contains("num") && th.dataset.key !== "rank";
      var descending = current === "none" ? bestFirst : current === "ascending";
      sortBy(th.dataset.key, descending);
    });
  });

  // Filtering: the same rules as leaderboard.ranking.filter_rows.
  function applyFilters() {
    var words = field("q").value.toLowerCase().split(/\s+/).filter(Boolean);
    var weights = field("weights").value, approach = field("approach").value, size = field("size").value;
    var verified = field("verified").checked, portalRun = field("portal_run").checked, team = field("team").value;
    var shown = 0;
    rows().forEach(function (row) {
      var data = row.dataset;
      var ok = words.every(function (word) { return data.text.indexOf(word) !== -1; }) &&
        (!weights || data.weights === weights) &&
        (!approach || data.approach === approach) &&
        (!size || data.size === size) &&
        (!verified || data.verified === "1") &&
        (!portalRun || data.portalRun === "1") &&
        (!team || data.team === team);
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    if (shownCount) shownCount.textContent = String(shown);
    setParams({
      q: field("q").value.trim(), weights: weights, approach: approach, size: size, verified: verified ? "1" : "",
      portal_run: portalRun ? "1" : "", team: team
    });
  }

  // Column groups.
  // The groups folded by default (the form's data-folded) need no parameter; the form's hidden "hide" value
  // ("none") says that every group is shown.
  var noGroupHidden = form.querySelector("input[type=hidden][name=hide]").value;
  var groupBoxes = form.querySelectorAll("input[type=checkbox][name=hide]");
  function applyHidden() {
    var hidden = Array.prototype.filter.call(groupBoxes, function (box) { return box.checked; })
      .map(function (box) { return box.value; });
    groupBoxes.forEach(function (box) { table.classList.toggle("hide-" + box.value, box.checked); });
    var folded = document.getElementById("folded-groups");
    if (folded) folded.hidden = hidden.length === 0;
    setParams({ hide: hidden.join(" ") === form.dataset.folded ? [] : hidden.length ? hidden : [noGroupHidden] });
  }
  var unfold = document.getElementById("unfold");
  if (unfold) {
    unfold.addEventListener("click", function (event) {
      event.preventDefault();
      groupBoxes.forEach(function (box) { box.checked = false; });
      applyHidden();
    });
  }

  form.addEventListener("input", function (event) {
    if (event.target.name === "q" && !paged) applyFilters();
  });
  form.addEventListener("change", function (event) {
    var name = event.target.name;
    if (name === "version") form.submit();  // another version: other rows, from the server
    else if (name === "hide") applyHidden();
    else if (paged) { if (name !== "q") form.submit(); }
    else if (name !== "q") applyFilters();
  });
  form.addEventListener("submit", function (event) {
    if (paged) return;
    event.preventDefault();
    applyFilters();
  });
  var apply = form.querySelector("button[type=submit]");
  if (apply && !paged) apply.hidden = true;
})();
