/* rspctl report's own script: draws the flame graph (d3-flame-graph) from
 * the page's embedded data. No network: everything it uses is in the page. */
(function () {
  'use strict';
  var COLORS = {
    running: '#e4572e', runnable: '#f3a712', block_io: '#4c72b0', network: '#29a19c',
    lock: '#8e44ad', timer: '#76b041', other: '#a0a0a0', unknown: '#d0d0d0',
    left_out: '#ececec', mixed: '#e8d8c0'
  };

  function data(id) {
    var e = document.getElementById(id);
    return e ? JSON.parse(e.textContent) : null;
  }

  function us(v) {
    return v >= 1e6 ? (v / 1e6).toFixed(3) + ' s' : v >= 1e3 ? (v / 1e3).toFixed(1) + ' ms'
      : v + ' us';
  }

  function flame() {
    var d = data('rsp-flame'), el = document.getElementById('flame-chart');
    if (!d || !el || typeof flamegraph !== 'function' || typeof d3 === 'undefined') return;
    var total = d.value || 1;
    var details = document.getElementById('flame-details');
    var chart = flamegraph()
      .width(Math.max(600, el.clientWidth || 1000))
      .cellHeight(18)
      .transitionDuration(250)
      .minFrameSize(0)
      .sort(true)
      .title('')
      .setColorMapper(function (n) {
        return n.highlight ? '#e600e6' : (COLORS[n.data.kind] || COLORS.unknown);
      })
      .label(function (n) {
        return n.data.name + ': ' + us(n.value) + ' (' +
          (100 * n.value / total).toFixed(1) + '%), ' + n.data.kind;
      })
      .setDetailsElement(details);
    d3.select(el).datum(d).call(chart);
    var search = document.getElementById('flame-search');
    search.addEventListener('input', function () {
      if (search.value) chart.search(search.value); else chart.clear();
    });
    document.getElementById('flame-form').addEventListener('submit', function (e) {
      e.preventDefault();
    });
    document.getElementById('flame-reset').addEventListener('click', function () {
      chart.resetZoom();
    });
  }

  flame();
})();
