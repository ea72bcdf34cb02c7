// Results page (its chart: charts.js): while scoring runs, poll the status and, once it ends, swap in the
// finished page's content in place, so the user watches it change without a reload.
(function () {
  function showFinished() {
    return fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.querySelector("main.content");
        var current = document.querySelector("main.content");
        if (fresh && current) {
          current.innerHTML = fresh.innerHTML;
          window.termiteCharts.draw(current);
        }
      });
  }

  var card = document.getElementById("status-card");
  if (!card || card.dataset.finished === "1") return;
  var delay = 1000;
  function poll() {
    fetch(card.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (status) {
        var badge = document.getElementById("status");
        badge.textContent = status.status_label;
        badge.className = "badge status-" + status.status;
        if (status.finished) { return showFinished(); }
        delay = Math.min(delay * 1.5, 10000);
        setTimeout(poll, delay);
      })
      .catch(function () { setTimeout(poll, 10000); });
  }
  setTimeout(poll, delay);
})();
