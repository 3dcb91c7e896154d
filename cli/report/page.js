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

  /* The chronological flame view: the pid's pseudostacks on a time axis,
   * speedscope's "time order" as the model. A lane per thread of the pid
   * (its depth-0 slices), the slices nested under them by depth; d3's zoom
   * on the time axis only (wheel, drag). */
  function chrono() {
    var c = data('rsp-chrono'), el = document.getElementById('chrono-chart');
    if (!c || !el || typeof d3 === 'undefined') return;
    var span = Math.max(1, c.end_ns - c.start_ns), row = 16, laneGap = 22, margin = 70;
    var lanes = [], byTid = {};
    c.slices.forEach(function (s) {
      var lane;
      if (s.depth === 0) {
        lane = byTid[s.tid];
        if (!lane) {
          lane = byTid[s.tid] = {tid: s.tid, last: [], depth: 0, index: lanes.length};
          lanes.push(lane);
        }
      } else {
        lane = lanes.find(function (l) {
          var p = l.last[s.depth - 1];
          return p && p.start <= s.start && s.end <= p.end;
        });
        if (!lane) return; /* its parent was not kept: not drawn */
      }
      lane.last[s.depth] = s;
      lane.depth = Math.max(lane.depth, s.depth);
      s.lane = lane;
    });
    var y = 0;
    lanes.forEach(function (l) { l.y = y; y += (l.depth + 1) * row + laneGap; });
    var width = Math.max(600, el.clientWidth || 1000), height = y + 24;
    var x = d3.scaleLinear().domain([0, span]).range([margin, width - 10]);
    var svg = d3.select(el).append('svg').attr('width', width).attr('height', height)
      .attr('class', 'chrono');
    svg.append('clipPath').attr('id', 'chrono-clip').append('rect')
      .attr('x', margin).attr('y', 0).attr('width', width - 10 - margin).attr('height', height);
    svg.selectAll('text.lane').data(lanes).enter().append('text').attr('class', 'lane')
      .attr('x', 2).attr('y', function (l) { return l.y + 12; })
      .text(function (l) { return 'tid ' + l.tid; });
    var drawn = c.slices.filter(function (s) { return s.lane; });
    var g = svg.append('g').attr('clip-path', 'url(#chrono-clip)');
    var node = g.selectAll('g.slice').data(drawn).enter().append('g')
      .attr('class', function (s) { return 'slice kind-' + s.kind; });
    node.append('rect').attr('height', row - 1)
      .attr('y', function (s) { return s.lane.y + s.depth * row; })
      .attr('fill', function (s) { return COLORS[s.kind] || COLORS.unknown; });
    node.append('title').text(function (s) {
      return s.name + ': ' + us(Math.round((s.end - s.start) / 1000)) + ' (' + s.kind +
        ', tid ' + s.tid + ')';
    });
    node.append('text').attr('y', function (s) { return s.lane.y + s.depth * row + 12; });
    var axis = svg.append('g').attr('class', 'axis')
      .attr('transform', 'translate(0,' + (height - 22) + ')');
    function draw(sx) {
      node.select('rect').attr('x', function (s) { return sx(s.start); })
        .attr('width', function (s) { return Math.max(0.5, sx(s.end) - sx(s.start)); });
      node.select('text').attr('x', function (s) { return sx(s.start) + 2; })
        .text(function (s) { return sx(s.end) - sx(s.start) > 60 ? s.name : ''; });
      axis.call(d3.axisBottom(sx).ticks(8).tickFormat(function (v) {
        return (v / 1e6).toFixed(v < 1e7 ? 2 : 0) + ' ms';
      }));
    }
    draw(x);
    svg.call(d3.zoom().scaleExtent([1, 1e6])
      .translateExtent([[margin, 0], [width - 10, height]])
      .extent([[margin, 0], [width - 10, height]])
      .on('zoom', function (ev) { draw(ev.transform.rescaleX(x)); }));
  }

  flame();
  chrono();
})();
