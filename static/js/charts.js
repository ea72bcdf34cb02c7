// Charts: drawn by plotly.js, which is fetched only when a chart is about to come into view. A first visit to
// the leaderboard reads and sorts its table before (and without) it; plotly.js is the partial "basic" build
// (bar and scatter traces, all the charts use: leaderboard/charts.py), a quarter of the full one's size.
// A chart is an element whose id has a json_script sibling "<id>-data" holding its figure.
(function () {
  "use strict";
  var source = document.currentScript.dataset.plotly;
  var loading = null;

  function plotly() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = source;
        script.onload = resolve;
        script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function plot(element) {
    var figure = JSON.parse(document.getElementById(element.id + "-data").textContent);
    plotly().then(function () {
      Plotly.newPlot(element, figure.data, figure.layout, { displayModeBar: false, responsive: true });
    });
  }

  function draw(root) {
    var charts = Array.prototype.filter.call(root.querySelectorAll("[id$='-chart']"), function (element) {
      return document.getElementById(element.id + "-data");
    });
    if (!window.IntersectionObserver) { charts.forEach(plot); return; }
    var watcher = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) { watcher.unobserve(entry.target); plot(entry.target); }
      });
    }, { rootMargin: "300px" });
    charts.forEach(function (element) { watcher.observe(element); });
  }

  window.termiteCharts = { draw: draw };
  draw(document);
})();
