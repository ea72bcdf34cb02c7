// Results page: draw the chart, and poll the status until scoring ends, then reload once to show scores.
(function () {
  var data = document.getElementById("results-chart-data");
  if (data && window.Plotly) {
    var figure = JSON.parse(data.textContent);
    Plotly.newPlot("results-chart", figure.data, figure.layout, { displayModeBar: false, responsive: true });
  }
  var card = document.getElementById("status-card");
  if (!card || card.dataset.finished === "1") return;
  var delay = 1000;
  function poll() {
    fetch(card.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (status) {
        var badge = document.getElementById("status");
        badge.textContent = status.status;
        badge.className = "badge status-" + status.status;
        if (status.finished) { window.location.reload(); return; }
        delay = Math.min(delay * 1.5, 10000);
        setTimeout(poll, delay);
      })
      .catch(function () { setTimeout(poll, 10000); });
  }
  setTimeout(poll, delay);
})();
