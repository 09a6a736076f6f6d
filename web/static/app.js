// queuewatch UI behaviour. Loaded synchronously in <head> so the theme is
// set before first paint; everything else waits for DOMContentLoaded.
// No inline scripts anywhere (CSP script-src 'self'): all behaviour is here.
(function () {
  'use strict';

  var root = document.documentElement;
  var THEME_KEY = 'qw-theme';
  var darkQuery = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;

  function storedTheme() {
    try { return window.localStorage.getItem(THEME_KEY); } catch (e) { return null; }
  }
  function systemTheme() { return darkQuery && darkQuery.matches ? 'dark' : 'light'; }
  function applyTheme(t) {
    root.setAttribute('data-theme', t);
    document.dispatchEvent(new CustomEvent('qw:theme'));
  }
  applyTheme(storedTheme() || systemTheme());
  if (darkQuery && darkQuery.addEventListener) {
    darkQuery.addEventListener('change', function () { if (!storedTheme()) applyTheme(systemTheme()); });
  }

  // partialURL is the current page's URL asking for only its live blocks.
  function partialURL() {
    var u = new URL(window.location.href);
    u.searchParams.set('partial', '1');
    return u.pathname + u.search;
  }
  function stateOf(path) {
    var u = new URL(path, window.location.href);
    u.searchParams.delete('partial');
    return u.pathname + u.search;
  }

  document.addEventListener('htmx:configRequest', function (e) {
    if (e.detail.elt && e.detail.elt.hasAttribute('data-partial')) e.detail.path = partialURL();
  });
  // A refresh started before the URL changed (filter typed, column
  // clicked) would put old rows back: drop it.
  document.addEventListener('htmx:beforeSwap', function (e) {
    var rc = e.detail.requestConfig;
    if (rc && rc.elt && rc.elt.hasAttribute('data-partial')) {
      var here = window.location.pathname + window.location.search;
      if (stateOf(rc.path) !== stateOf(here)) e.detail.shouldSwap = false;
    }
  });

  function refresh() {
    var p = document.getElementById('poller');
    if (p && window.htmx) window.htmx.trigger(p, 'qw:refresh');
  }

  // navigate changes the URL (sort, page, tab, filter) and fetches the new
  // live blocks without a reload, so the layout and the focus stay put.
  function navigate(href, replace) {
    if (!document.getElementById('poller') || !window.htmx) { window.location.href = href; return; }
    if (replace) window.history.replaceState(null, '', href);
    else window.history.pushState(null, '', href);
    refresh();
  }

  function syncFilter() {
    var f = document.getElementById('filter');
    if (!f) return;
    var q = new URL(window.location.href).searchParams.get('q') || '';
    if (f.value !== q && document.activeElement !== f) f.value = q;
    var tab = f.form && f.form.querySelector('input[name="tab"]');
    var t = new URL(window.location.href).searchParams.get('tab');
    if (tab && t) tab.value = t;
  }

  function initFilter() {
    var f = document.getElementById('filter');
    if (!f) return;
    var timer = null;
    var apply = function () {
      var u = new URL(window.location.href);
      if (f.value.trim()) u.searchParams.set('q', f.value.trim()); else u.searchParams.delete('q');
      u.searchParams.delete('page');
      navigate(u.pathname + u.search, true);
    };
    f.addEventListener('input', function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(apply, 150);
    });
    f.form.addEventListener('submit', function (e) { e.preventDefault(); window.clearTimeout(timer); apply(); });
    f.addEventListener('keydown', function (e) {
      if (e.key === 'Escape') {
        if (f.value) { f.value = ''; apply(); } else { f.blur(); }
      }
    });
  }

  function initKeys() {
    document.addEventListener('keydown', function (e) {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      var t = e.target;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
      var f = document.getElementById('filter') || document.querySelector('[data-filter-local]');
      if (f) { e.preventDefault(); f.focus(); f.select(); }
    });
  }

  function initNav() {
    document.addEventListener('click', function (e) {
      if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      var a = e.target.closest ? e.target.closest('a[data-nav]') : null;
      if (!a || a.origin !== window.location.origin || a.pathname !== window.location.pathname) return;
      e.preventDefault();
      if (a.hasAttribute('data-clear')) { var f = document.getElementById('filter'); if (f) f.value = ''; }
      navigate(a.pathname + a.search, false);
      syncFilter();
    });
    window.addEventListener('popstate', function () { syncFilter(); refresh(); });
  }

  function initTheme() {
    var b = document.getElementById('theme');
    if (!b) return;
    b.addEventListener('click', function () {
      var next = root.getAttribute('data-theme') === 'dark' ? 'light' : 'dark';
      try { window.localStorage.setItem(THEME_KEY, next); } catch (e) { /* private mode: not kept */ }
      applyTheme(next);
    });
  }

  // ---- group and consumer charts (uPlot) ----
  var RANGES = { '15m': 900, '1h': 3600, '6h': 21600 };

  function cssVar(name) { return getComputedStyle(root).getPropertyValue(name).trim(); }

  // humanCount and humanSeconds write numbers as queue.HumanCount and
  // queue.HumanDuration do on the server: 12.4k, 3m 20s, 1d 2h.
  function humanCount(n) {
    if (n == null) return '—';
    var a = Math.abs(n);
    if (a < 10000) return Math.round(n).toLocaleString('en-US');
    if (a < 999950) return (n / 1e3).toFixed(1).replace(/\.0$/, '') + 'k';
    if (a < 999950000) return (n / 1e6).toFixed(1).replace(/\.0$/, '') + 'M';
    return (n / 1e9).toFixed(1).replace(/\.0$/, '') + 'G';
  }
  function humanSeconds(s) {
    if (s == null) return '—';
    s = Math.floor(s);
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + (s % 60 ? ' ' + (s % 60) + 's' : '');
    if (s < 86400) return Math.floor(s / 3600) + 'h' + (Math.floor(s / 60) % 60 ? ' ' + (Math.floor(s / 60) % 60) + 'm' : '');
    return Math.floor(s / 86400) + 'd' + (Math.floor(s / 3600) % 24 ? ' ' + (Math.floor(s / 3600) % 24) + 'h' : '');
  }

  // CHART_KINDS are the series of each history chart, by the element's
  // data-chart: the JSON field each reads, its scale (messages on the left,
  // seconds on the right) and how it looks. A null value is a gap.
  var CHART_KINDS = {
    group: [
      { label: 'total lag', field: 'lag', scale: 'lag', colour: '--link', fill: true },
      { label: 'max lag time', field: 'lag_seconds', scale: 'sec', colour: '--warn' }
    ],
    consumer: [
      { label: 'pending', field: 'pending', scale: 'lag', colour: '--link', fill: true },
      { label: 'in flight', field: 'ack_pending', scale: 'lag', colour: '--rewind' },
      { label: 'lag time', field: 'lag_seconds', scale: 'sec', colour: '--warn' }
    ],
    sqs: [
      { label: 'visible', field: 'visible', scale: 'lag', colour: '--link', fill: true }
    ],
    kinesis: [
      { label: 'shards behind', field: 'shards_behind', scale: 'lag', colour: '--link', fill: true },
      { label: 'lag time', field: 'lag_seconds', scale: 'sec', colour: '--warn' }
    ],
    share: [
      { label: 'lag', field: 'lag', scale: 'lag', colour: '--link', fill: true }
    ],
    connect: [
      { label: 'group lag', field: 'lag', scale: 'lag', colour: '--link', fill: true }
    ],
    streams: [
      { label: 'lag', field: 'lag', scale: 'lag', colour: '--link', fill: true }
    ],
    pubsub: [
      { label: 'undelivered', field: 'undelivered', scale: 'lag', colour: '--link', fill: true },
      { label: 'oldest unacked', field: 'oldest_unacked_seconds', scale: 'sec', colour: '--warn' }
    ],
    rabbitmq: [
      { label: 'ready', field: 'ready', scale: 'lag', colour: '--link', fill: true },
      { label: 'head age', field: 'head_message_age_seconds', scale: 'sec', colour: '--warn' }
    ]
  };

  // HistoryChart is the uPlot chart of a group's or a JetStream consumer's
  // kept history, read from the JSON at data-url every 5 s.
  // timeAxis is the x scale of the time charts, from the first point to
  // the last. uPlot pads a single point by its magnitude, which for a Unix
  // time spreads the axis over months ("Feb 2027 … Aug"), so a span
  // shorter than a minute is widened to the minute before the last point.
  // A new object per chart: uPlot writes into its scale options.
  function timeAxis() {
    return { time: true, range: function (u, mn, mx) {
      var xs = u.data[0];
      if (!xs || !xs.length) return [mn, mx];
      var first = xs[0], last = xs[xs.length - 1];
      return [Math.min(first, last - 60), last];
    } };
  }

  // timeLabels is the x axis: clock times one line high, spaced so they
  // never run into each other (uPlot's own stack a date under some of
  // them and collide once a chart spans ten minutes or more); the date
  // comes in only where the day changes.
  function timeLabels(axis) {
    function pad(n) { return n < 10 ? '0' + n : '' + n; }
    return Object.assign({}, axis, { space: 72, values: function (u, splits) {
      var day = '';
      // Seconds only when ticks are less than a minute apart, so no two
      // labels read the same.
      var step = splits.length > 1 ? splits[1] - splits[0] : 60;
      return splits.map(function (t) {
        var d = new Date(t * 1000);
        var clock = pad(d.getHours()) + ':' + pad(d.getMinutes());
        if (step < 60) clock += ':' + pad(d.getSeconds());
        var today = d.toDateString();
        if (day && today !== day) clock = (d.getMonth() + 1) + '/' + d.getDate() + ' ' + clock;
        day = today;
        return clock;
      });
    } });
  }

  function HistoryChart(el) {
    this.el = el;
    this.url = el.getAttribute('data-url');
    this.kind = CHART_KINDS[el.getAttribute('data-chart')];
    this.range = RANGES[el.getAttribute('data-range')] ? el.getAttribute('data-range') : '1h';
    this.data = [[]].concat(this.kind.map(function () { return []; }));
    this.plot = null;
  }
  HistoryChart.prototype.build = function () {
    if (this.plot) { this.plot.destroy(); this.plot = null; }
    var grid = { stroke: cssVar('--line'), width: 1 };
    var axis = { stroke: cssVar('--muted'), grid: grid, ticks: { stroke: cssVar('--line'), width: 1 } };
    var fromZero = { range: function (u, mn, mx) { return [0, Math.max(1, mx * 1.1)]; } };
    var series = [{}].concat(this.kind.map(function (k) {
      var sec = k.scale === 'sec';
      var s = { label: k.label, scale: k.scale, stroke: cssVar(k.colour), width: 1.5, value: function (u, v) { return sec ? humanSeconds(v) : humanCount(v); } };
      if (k.fill) s.fill = cssVar('--lagfill');
      if (sec) s.dash = [4, 3];
      return s;
    }));
    var opts = {
      width: Math.max(320, this.el.clientWidth),
      height: 220,
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: timeAxis(), lag: fromZero, sec: fromZero },
      series: series,
      axes: [
        timeLabels(axis),
        Object.assign({}, axis, { scale: 'lag', size: 56, incrs: COUNT_INCRS, values: function (u, vals) { return vals.map(humanCount); } })
      ]
    };
    // A seconds axis only for a kind that draws seconds (an SQS queue's
    // age is not known), so no empty scale is shown.
    if (this.kind.some(function (k) { return k.scale === 'sec'; })) {
      opts.axes.push(Object.assign({}, axis, { scale: 'sec', side: 1, size: 72, incrs: SECOND_INCRS, grid: { show: false }, values: function (u, vals) { return vals.map(humanSeconds); } }));
    }
    this.el.textContent = '';
    this.plot = new window.uPlot(opts, this.windowed(), this.el);
  };
  HistoryChart.prototype.windowed = function () {
    var xs = this.data[0];
    if (!xs.length) return this.data;
    var from = Date.now() / 1000 - RANGES[this.range];
    var i = 0;
    while (i < xs.length && xs[i] < from) i++;
    return this.data.map(function (col) { return col.slice(i); });
  };
  HistoryChart.prototype.load = function () {
    var self = this;
    return fetch(this.url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) throw new Error('history ' + r.status); return r.json(); })
      .then(function (j) {
        var h = j.history || [];
        var data = [h.map(function (p) { return Date.parse(p.at) / 1000; })];
        self.kind.forEach(function (k) {
          data.push(h.map(function (p) { return p[k.field] == null ? null : p[k.field]; }));
        });
        self.data = data;
        if (!self.plot) self.build(); else self.plot.setData(self.windowed());
        self.el.classList.toggle('chart-empty', h.length === 0);
        self.el.removeAttribute('data-error');
      })
      .catch(function (err) { self.el.setAttribute('data-error', String(err)); });
  };
  HistoryChart.prototype.setRange = function (r) {
    if (!RANGES[r]) return;
    this.range = r;
    if (this.plot) this.plot.setData(this.windowed());
    var u = new URL(window.location.href);
    if (r === '1h') u.searchParams.delete('range'); else u.searchParams.set('range', r);
    window.history.replaceState(null, '', u.pathname + u.search);
  };

  function initChart() {
    var el = document.querySelector('[data-chart="group"], [data-chart="consumer"], [data-chart="sqs"], [data-chart="share"], [data-chart="streams"], [data-chart="rabbitmq"], [data-chart="kinesis"], [data-chart="connect"], [data-chart="pubsub"]');
    if (!el || !window.uPlot) return;
    var chart = new HistoryChart(el);
    chart.load();
    window.setInterval(function () { if (!document.hidden) chart.load(); }, 5000);
    document.querySelectorAll('[data-range]').forEach(function (b) {
      if (b === el) return;
      b.addEventListener('click', function () {
        document.querySelectorAll('button[data-range]').forEach(function (x) { x.classList.toggle('active', x === b); });
        chart.setRange(b.getAttribute('data-range'));
      });
    });
    document.addEventListener('qw:theme', function () { if (chart.plot) chart.build(); });
    var resizeTimer = null;
    window.addEventListener('resize', function () {
      window.clearTimeout(resizeTimer);
      resizeTimer = window.setTimeout(function () {
        if (chart.plot) chart.plot.setSize({ width: Math.max(320, el.clientWidth), height: 220 });
      }, 100);
    });
  }

  // ---- outbox page charts (uPlot) ----
  // One history request feeds a chart per table and one for the slots.

  var BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  // humanBytes writes sizes as components.ByteCount does: 512 B, 12.4 KiB.
  function humanBytes(n) {
    if (n == null) return '—';
    if (Math.abs(n) < 1024) return Math.round(n) + ' B';
    var i = -1;
    do { n /= 1024; i++; } while (Math.abs(n) >= 1024 && i < BYTE_UNITS.length - 1);
    return n.toFixed(1).replace(/\.0$/, '') + ' ' + BYTE_UNITS[i];
  }

  var SLOT_COLOURS = ['--link', '--rewind', '--warn', '--ok', '--dlq', '--bad'];

  // Tick steps, so axes read 0, 5, 10 rows, 1m, 2m and 1 MiB, 2 MiB rather
  // than fractions of a row or 16m 40s.
  var COUNT_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2500, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];
  var SECOND_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
  var BYTE_INCRS = (function () {
    var out = [];
    for (var p = 1; p < 1e18; p *= 2) out.push(p);
    return out;
  })();

  // SeriesChart is a uPlot chart whose series (spec) are built from the
  // theme's colours each time it is drawn.
  function SeriesChart(el, spec, range) {
    this.el = el;
    this.spec = spec;
    this.range = range;
    this.data = [[]];
    this.shape = '';
    this.plot = null;
  }
  SeriesChart.prototype.build = function () {
    if (this.plot) { this.plot.destroy(); this.plot = null; }
    var axis = { stroke: cssVar('--muted'), grid: { stroke: cssVar('--line'), width: 1 }, ticks: { stroke: cssVar('--line'), width: 1 } };
    var sp = this.spec(axis);
    // From zero, and at least 0–5, so an empty table's axis is not 0–1.
    var fromZero = { range: function (u, mn, mx) { return [0, Math.max(5, mx * 1.1)]; } };
    var scales = { x: timeAxis() };
    sp.series.forEach(function (x) { scales[x.scale] = fromZero; });
    this.el.textContent = '';
    this.plot = new window.uPlot({
      width: Math.max(320, this.el.clientWidth), height: 200,
      legend: { show: true, live: true }, cursor: { drag: { x: false, y: false } },
      scales: scales, series: [{}].concat(sp.series), axes: sp.axes
    }, this.windowed(), this.el);
  };
  SeriesChart.prototype.windowed = function () {
    var xs = this.data[0];
    var from = Date.now() / 1000 - RANGES[this.range];
    var i = 0;
    while (i < xs.length && xs[i] < from) i++;
    return this.data.map(function (col) { return col.slice(i); });
  };
  // setData draws new data; a new shape (other slots) rebuilds the chart.
  SeriesChart.prototype.setData = function (data, shape) {
    this.data = data;
    if (!this.plot || shape !== this.shape) { this.shape = shape; this.build(); } else this.plot.setData(this.windowed());
    this.el.classList.toggle('chart-empty', data[0].length === 0);
  };
  SeriesChart.prototype.setRange = function (r) {
    this.range = r;
    if (this.plot) this.plot.setData(this.windowed());
  };

  function tableSpec(axis) {
    return {
      series: [
        { label: 'pending rows', scale: 'rows', stroke: cssVar('--link'), width: 1.5, fill: cssVar('--lagfill'), value: function (u, v) { return humanCount(v); } },
        { label: 'oldest pending', scale: 'sec', stroke: cssVar('--warn'), width: 1.5, dash: [4, 3], value: function (u, v) { return humanSeconds(v); } }
      ],
      axes: [
        timeLabels(axis),
        Object.assign({}, axis, { scale: 'rows', size: 56, incrs: COUNT_INCRS, values: function (u, vals) { return vals.map(humanCount); } }),
        Object.assign({}, axis, { scale: 'sec', side: 1, size: 72, incrs: SECOND_INCRS, grid: { show: false }, values: function (u, vals) { return vals.map(humanSeconds); } })
      ]
    };
  }

  function slotSpec(names) {
    return function (axis) {
      return {
        series: names.map(function (n, i) {
          return { label: n, scale: 'bytes', stroke: cssVar(SLOT_COLOURS[i % SLOT_COLOURS.length]), width: 1.5, value: function (u, v) { return humanBytes(v); } };
        }),
        axes: [
          timeLabels(axis),
          Object.assign({}, axis, { scale: 'bytes', size: 72, incrs: BYTE_INCRS, values: function (u, vals) { return vals.map(humanBytes); } })
        ]
      };
    };
  }

  // slotColumns aligns the slots' histories on the union of their poll
  // times; a slot without a point at a time (unreadable then) is a gap.
  function slotColumns(slots) {
    var seen = new Map();
    slots.forEach(function (s) {
      s.history.forEach(function (h) { seen.set(Date.parse(h.at) / 1000, 0); });
    });
    var xs = Array.from(seen.keys()).sort(function (a, b) { return a - b; });
    xs.forEach(function (t, i) { seen.set(t, i); });
    var data = [xs];
    slots.forEach(function (s) {
      var col = xs.map(function () { return null; });
      s.history.forEach(function (h) { col[seen.get(Date.parse(h.at) / 1000)] = h.lag_bytes; });
      data.push(col);
    });
    return data;
  }

  function initOutboxCharts() {
    var box = document.querySelector('[data-chart="outbox"]');
    if (!box || !window.uPlot) return;
    var range = RANGES[box.getAttribute('data-range')] ? box.getAttribute('data-range') : '1h';
    var charts = [];
    var byTable = new Map();
    box.querySelectorAll('[data-table]').forEach(function (el) {
      var c = new SeriesChart(el, tableSpec, range);
      byTable.set(el.getAttribute('data-table'), c);
      charts.push(c);
    });
    var slotEl = box.querySelector('[data-slots]');
    var slotChart = slotEl ? new SeriesChart(slotEl, slotSpec([]), range) : null;
    if (slotChart) charts.push(slotChart);
    var load = function () {
      return fetch(box.getAttribute('data-url'), { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (r) { if (!r.ok) throw new Error('history ' + r.status); return r.json(); })
        .then(function (j) {
          (j.tables || []).forEach(function (t) {
            var c = byTable.get(t.table);
            if (!c) return;
            var xs = [], pending = [], age = [];
            t.history.forEach(function (h) {
              xs.push(Date.parse(h.at) / 1000);
              pending.push(h.pending);
              age.push(h.oldest_pending_age_seconds);
            });
            c.setData([xs, pending, age], 'table');
          });
          if (slotChart) {
            var slots = j.slots || [];
            var names = slots.map(function (s) { return s.slot; });
            slotChart.spec = slotSpec(names);
            slotChart.setData(slotColumns(slots), JSON.stringify(names));
          }
          box.removeAttribute('data-error');
        })
        .catch(function (err) { box.setAttribute('data-error', String(err)); });
    };
    load();
    window.setInterval(function () { if (!document.hidden) load(); }, 5000);
    document.querySelectorAll('button[data-range]').forEach(function (b) {
      b.addEventListener('click', function () {
        var r = b.getAttribute('data-range');
        if (!RANGES[r]) return;
        document.querySelectorAll('button[data-range]').forEach(function (x) { x.classList.toggle('active', x === b); });
        charts.forEach(function (c) { c.setRange(r); });
        var u = new URL(window.location.href);
        if (r === '1h') u.searchParams.delete('range'); else u.searchParams.set('range', r);
        window.history.replaceState(null, '', u.pathname + u.search);
      });
    });
    document.addEventListener('qw:theme', function () { charts.forEach(function (c) { if (c.plot) c.build(); }); });
    var resizeTimer = null;
    window.addEventListener('resize', function () {
      window.clearTimeout(resizeTimer);
      resizeTimer = window.setTimeout(function () {
        charts.forEach(function (c) { if (c.plot) c.plot.setSize({ width: Math.max(320, c.el.clientWidth), height: 200 }); });
      }, 100);
    });
  }

  // ---- DLQ page and replays page ----
  // Everything a message contains reaches the page through the server's
  // escaping or through textContent here; nothing is ever parsed as HTML.

  function api(method, url, body) {
    var init = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) { return { status: r.status, ok: r.ok, body: j }; });
    });
  }

  function plural(n, one, many) { return n === 1 ? one : many; }
  function exact(n) { return Number(n || 0).toLocaleString('en-US'); }
  function setText(el, s) { if (el) el.textContent = s; }
  function byId(id) { return document.getElementById(id); }

  // targetLabel turns an outcome target into words: RabbitMQ's
  // "exchange/routing-key" ("/queue" is the default exchange) or a topic.
  function targetLabel(t, broker) {
    if (broker !== 'rabbitmq') return t;
    var i = t.indexOf('/');
    if (i < 0) return t;
    var ex = t.slice(0, i), key = t.slice(i + 1);
    return ex === '' ? key + ' (default exchange)' : 'exchange ' + ex + ' → ' + key;
  }

  // receiptText phrases a dry run's outcomes as the sentence the operator
  // confirms: "Replay 120 messages from orders.dlq → orders (default
  // exchange), at most 200/s", plus what would be skipped or fail.
  function receiptText(action, name, broker, outcomes, rate) {
    var n = 0, targets = {}, order = [], skipped = {}, failed = {}, ns = 0, nf = 0;
    outcomes.forEach(function (o) {
      if (o.result === 'would_move' || o.result === 'would_delete') {
        n++;
        if (o.target && !targets[o.target]) { targets[o.target] = 0; order.push(o.target); }
        if (o.target) targets[o.target]++;
      } else if (o.result === 'skipped') {
        ns++; skipped[o.reason || 'skipped'] = (skipped[o.reason || 'skipped'] || 0) + 1;
      } else if (o.result === 'failed') {
        nf++; failed[o.reason || 'failed'] = (failed[o.reason || 'failed'] || 0) + 1;
      }
    });
    var verb = { replay: 'Replay', move: 'Move', delete: 'Delete' }[action] || action;
    var s = verb + ' ' + exact(n) + ' ' + plural(n, 'message', 'messages') + ' from ' + name;
    if (action !== 'delete' && order.length) {
      var labels = order.slice(0, 3).map(function (t) { return targetLabel(t, broker); });
      if (order.length > 3) labels.push('and ' + (order.length - 3) + ' more');
      s += ' → ' + labels.join(', ');
    }
    if (action === 'delete') s += ' (each is archived first and can be restored from Replays)';
    else if (rate > 0) s += ', at most ' + exact(rate) + '/s';
    else s += ', as fast as the broker confirms';
    var detail = [];
    Object.keys(skipped).forEach(function (r) { detail.push(exact(skipped[r]) + ' skipped: ' + r); });
    Object.keys(failed).forEach(function (r) { detail.push(exact(failed[r]) + ' would fail: ' + r); });
    return { text: s, count: n, skipped: ns, failed: nf, detail: detail };
  }

  function humanETA(sec) { return sec == null || !isFinite(sec) ? '' : ' · ETA ' + humanSeconds(Math.max(1, sec)); }

  function JobFollower(bar, onDone) {
    this.bar = bar;
    this.onDone = onDone;
    this.timer = null;
    this.first = null;
  }
  JobFollower.prototype.follow = function (id) {
    var self = this;
    this.id = id;
    this.first = null;
    this.bar.hidden = false;
    setText(byId('job-id'), id);
    var cancel = byId('job-cancel');
    if (cancel) { cancel.hidden = false; cancel.disabled = false; }
    var poll = function () {
      api('GET', '/api/v1/replays/' + encodeURIComponent(id) + '?outcomes=false').then(function (r) {
        if (!r.ok) { setText(byId('job-text'), (r.body && r.body.error) || ('job ' + r.status)); return; }
        var j = r.body.job, p = j.progress, moved = j.dry_run ? p.would_move : p.moved;
        var done = moved + p.failed + p.skipped;
        var prog = byId('job-progress');
        prog.max = Math.max(p.to_move, 1);
        prog.value = done;
        var now = Date.now();
        if (!self.first) self.first = { t: now, done: done };
        var eta = null;
        if (done > self.first.done) eta = (p.remaining) / ((done - self.first.done) / ((now - self.first.t) / 1000));
        var verb = { delete: 'deleted', restore: 'restored' }[j.action] || 'moved';
        if (j.dry_run) verb = j.action === 'delete' ? 'would delete' : 'would move';
        var text = exact(moved) + ' / ' + exact(p.to_move) + ' ' + verb + ' · ' + exact(p.failed) + ' failed · ' + exact(p.skipped) + ' skipped';
        if (j.mode === 'native') text = 'native redrive: ' + exact(moved) + ' / ' + exact(p.to_move) + ' moved by the broker';
        if (p.duplicates) text += ' · ' + exact(p.duplicates) + ' possible duplicates';
        if (j.state === 'running') {
          setText(byId('job-text'), text + humanETA(eta));
          self.timer = window.setTimeout(poll, 600);
          return;
        }
        text = j.state + ': ' + text + (j.error && j.state !== 'succeeded' ? ' · ' + j.error : '');
        setText(byId('job-text'), text);
        if (cancel) cancel.hidden = true;
        var rc = byId('job-receipt');
        if (rc) { rc.href = '/replays?job=' + encodeURIComponent(id); rc.hidden = false; }
        self.bar.classList.add('done');
        if (self.onDone) self.onDone(j, text);
      });
    };
    poll();
  };

  var LASTJOB_KEY = 'qw-lastjob';

  function initDLQ() {
    var root = byId('dlq');
    if (!root) return;
    var name = root.getAttribute('data-name');
    var broker = root.getAttribute('data-broker');
    var replayAPI = root.getAttribute('data-api');
    var bar = byId('jobbar');
    var rows = Array.prototype.slice.call(root.querySelectorAll('#messages tbody tr.msg'));
    var tbody = root.querySelector('#messages tbody');

    // The message list is stale once a job ends: reload it, keeping the
    // job's final line to show on the fresh page.
    var follower = new JobFollower(bar, function (j, text) {
      try { window.sessionStorage.setItem(LASTJOB_KEY, JSON.stringify({ dlq: root.getAttribute('data-dlq'), id: j.id, text: text })); } catch (e) { /* not kept */ }
      window.setTimeout(function () { window.location.reload(); }, 1200);
    });
    var last = null;
    try { last = JSON.parse(window.sessionStorage.getItem(LASTJOB_KEY) || 'null'); window.sessionStorage.removeItem(LASTJOB_KEY); } catch (e) { last = null; }
    if (root.getAttribute('data-job')) {
      follower.follow(root.getAttribute('data-job'));
    } else if (last && last.dlq === root.getAttribute('data-dlq')) {
      bar.hidden = false;
      bar.classList.add('done');
      setText(byId('job-id'), last.id);
      setText(byId('job-text'), last.text);
      var prog = byId('job-progress');
      prog.max = 1; prog.value = 1;
      var c0 = byId('job-cancel');
      if (c0) c0.hidden = true;
      var rc = byId('job-receipt');
      if (rc) { rc.href = '/replays?job=' + encodeURIComponent(last.id); rc.hidden = false; }
    }
    var cancelBtn = byId('job-cancel');
    if (cancelBtn) cancelBtn.addEventListener('click', function () {
      cancelBtn.disabled = true;
      api('DELETE', '/api/v1/replays/' + encodeURIComponent(follower.id));
    });

    // inspector
    function inspect(row) {
      if (!row) return;
      var idx = row.getAttribute('data-idx');
      rows.forEach(function (r) { r.classList.toggle('active', r === row); });
      root.querySelectorAll('.insp').forEach(function (s) { s.hidden = s.getAttribute('data-idx') !== idx; });
      var empty = byId('insp-empty');
      if (empty) empty.hidden = true;
    }
    rows.forEach(function (r) {
      r.addEventListener('click', function (e) {
        if (e.target.closest('input, a, button')) return;
        inspect(r);
      });
      r.addEventListener('keydown', function (e) {
        if (e.key === 'Enter') { inspect(r); return; }
        if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'j' && e.key !== 'k') return;
        var vis = visibleRows(), i = vis.indexOf(r);
        var next = vis[i + (e.key === 'ArrowDown' || e.key === 'j' ? 1 : -1)];
        if (next) { e.preventDefault(); next.focus(); inspect(next); }
      });
    });
    // a message shown in clear (?unmask=) opens with the page
    var opened = root.querySelector('.insp[data-open]');
    if (opened) inspect(rows.filter(function (r) { return r.getAttribute('data-idx') === opened.getAttribute('data-idx'); })[0]);
    root.addEventListener('click', function (e) {
      var b = e.target.closest('button[data-itab]');
      if (!b) return;
      var insp = b.closest('.insp');
      insp.querySelectorAll('button[data-itab]').forEach(function (x) { x.classList.toggle('active', x === b); });
      insp.querySelectorAll('[data-ipanel]').forEach(function (p) { p.hidden = p.getAttribute('data-ipanel') !== b.getAttribute('data-itab'); });
    });

    // selection
    function visibleRows() { return rows.filter(function (r) { return !r.hidden; }); }
    function picked() {
      return rows.filter(function (r) { var c = r.querySelector('input.pick'); return c && c.checked; })
        .map(function (r) { return r.getAttribute('data-id'); });
    }
    function updateSelection() {
      var n = picked().length;
      setText(byId('selcount'), exact(n));
      root.querySelectorAll('#actions button[data-action]').forEach(function (b) { b.disabled = n === 0; });
      var all = byId('selectpage');
      if (all) {
        var vis = visibleRows();
        var on = vis.filter(function (r) { var c = r.querySelector('input.pick'); return c && c.checked; }).length;
        all.checked = vis.length > 0 && on === vis.length;
        all.indeterminate = on > 0 && on < vis.length;
      }
    }
    root.addEventListener('change', function (e) { if (e.target.classList.contains('pick')) updateSelection(); });
    var selAll = byId('selectpage');
    if (selAll) selAll.addEventListener('change', function () {
      visibleRows().forEach(function (r) { var c = r.querySelector('input.pick'); if (c) c.checked = selAll.checked; });
      updateSelection();
    });

    // filter and order, kept in the URL
    var filter = byId('msgfilter'), orderSel = byId('order');
    function keepState() {
      var u = new URL(window.location.href);
      if (filter && filter.value.trim()) u.searchParams.set('q', filter.value.trim()); else u.searchParams.delete('q');
      if (orderSel && orderSel.value === 'newest') u.searchParams.set('order', 'newest'); else u.searchParams.delete('order');
      window.history.replaceState(null, '', u.pathname + u.search);
    }
    function applyFilter() {
      var q = filter ? filter.value.trim().toLowerCase() : '';
      var shown = 0;
      rows.forEach(function (r) {
        var insp = root.querySelector('.insp[data-idx="' + r.getAttribute('data-idx') + '"] .body');
        var hay = (r.textContent + ' ' + (insp ? insp.textContent.slice(0, 4096) : '')).toLowerCase();
        r.hidden = q !== '' && hay.indexOf(q) < 0;
        if (!r.hidden) shown++;
      });
      var nm = byId('nomatch');
      if (nm) nm.hidden = shown > 0 || rows.length === 0;
      updateSelection();
    }
    function applyOrder() {
      if (!tbody) return;
      var desc = orderSel && orderSel.value === 'newest';
      rows.slice().sort(function (a, b) {
        var d = Number(a.getAttribute('data-ts')) - Number(b.getAttribute('data-ts'));
        if (d === 0) d = Number(a.getAttribute('data-idx')) - Number(b.getAttribute('data-idx'));
        return desc ? -d : d;
      }).forEach(function (r) { tbody.appendChild(r); });
    }
    var params = new URL(window.location.href).searchParams;
    if (filter) {
      filter.value = params.get('q') || '';
      var t = null;
      filter.addEventListener('input', function () { window.clearTimeout(t); t = window.setTimeout(function () { applyFilter(); keepState(); }, 120); });
      filter.addEventListener('keydown', function (e) {
        if (e.key === 'Escape') { if (filter.value) { filter.value = ''; applyFilter(); keepState(); } else filter.blur(); }
      });
    }
    if (orderSel) {
      orderSel.value = params.get('order') === 'newest' ? 'newest' : 'oldest';
      orderSel.addEventListener('change', function () { applyOrder(); keepState(); });
    }
    applyOrder();
    applyFilter();

    // actions: the dialog says what would happen — a preview, which
    // records nothing — and the job runs once confirmed. A dry run is what
    // someone asks for (the Dry run buttons): it is recorded once in the
    // audit log, labelled as such, and lists every message's outcome.
    var dlg = byId('confirm');
    if (!dlg) return;
    var previewAPI = root.getAttribute('data-preview');
    var VERB = { replay: 'Replay', move: 'Move', delete: 'Delete' };
    var OUTCOME_ROWS = 200;
    var pending = null;

    function rate() {
      var v = byId('rate') ? byId('rate').value.trim() : '';
      var n = Number(v);
      return v === '' || !isFinite(n) || n <= 0 ? -1 : n;
    }
    function target() {
      return pending.action === 'move' ? { kind: 'queue', name: byId('c-target').value.trim() } : null;
    }
    function request(dry) {
      var body = { action: pending.action, selection: pending.selection, dry_run: dry, rate: rate() };
      if (target()) body.target = target();
      return body;
    }
    function previewRequest() {
      var body = { action: pending.action, selection: pending.selection };
      if (target()) body.target = target();
      return body;
    }
    function showError(msg) {
      var e = byId('c-error');
      e.hidden = !msg;
      setText(e, msg || '');
    }
    function updateOK() {
      var ok = pending && pending.checked && pending.count > 0;
      if (ok && pending.action === 'delete') ok = byId('c-typed').value === name;
      byId('c-ok').disabled = !ok;
    }
    function detail(text) {
      var li = document.createElement('li');
      li.textContent = text;
      byId('c-detail').appendChild(li);
    }
    function clearResult() {
      byId('c-detail').textContent = '';
      byId('c-sum').hidden = true;
      byId('c-outcomes').hidden = true;
      byId('c-outcome-rows').textContent = '';
      byId('c-outcomes-more').hidden = true;
      byId('c-recorded').hidden = true;
    }
    // setTitle names what the dialog is about: the dry run, the action,
    // the selection (a failure group by name) and, once counted, how many
    // messages it holds in the whole DLQ.
    function setTitle() {
      var t = VERB[pending.action] + ' ' + pending.label;
      if (pending.dry) t = 'Dry run: ' + VERB[pending.action].toLowerCase() + ' ' + pending.label;
      if (pending.inDLQ != null) t += ' · ' + exact(pending.inDLQ) + ' ' + plural(pending.inDLQ, 'message', 'messages') + ' in the DLQ';
      setText(byId('c-title'), t);
    }
    function refused(what, r) {
      setText(byId('c-receipt'), what);
      var msg = (r.body && r.body.error) || ('HTTP ' + r.status);
      if (r.status === 409 && r.body.job) msg += ' (job ' + r.body.job + ')';
      showError(msg);
    }
    // showReceipt puts the sentence to confirm, from a preview's or a dry
    // run's outcomes, and arms the confirm button with its count.
    function showReceipt(action, outcomes) {
      var r = receiptText(action, name, broker, outcomes || [], rate());
      pending.checked = true;
      pending.count = r.count;
      setText(byId('c-receipt'), r.count > 0 ? r.text : 'Nothing to ' + action + ': no selected message can be ' + (action === 'delete' ? 'deleted' : 'sent') + '.');
      r.detail.forEach(detail);
      byId('c-ok').textContent = VERB[action] + ' ' + exact(r.count) + ' ' + plural(r.count, 'message', 'messages');
      updateOK();
      return r;
    }
    function showPreview(p) {
      showReceipt(pending.action, p.outcomes);
      if (p.complete && pending.group) {
        pending.inDLQ = p.progress.to_move;
        setTitle();
      }
      if (!p.complete) detail('The check stopped before reading the whole DLQ (' + exact(p.progress.remaining) + ' not read): the job takes every selected message, those too.');
      if (p.note) detail(p.note);
    }
    function tally(outcomes) {
      var t = { would: 0, skip: 0, poison: 0, fail: 0 };
      outcomes.forEach(function (o) {
        if (o.result === 'would_move' || o.result === 'would_delete') t.would++;
        else if (o.result === 'skipped' && (o.reason || '').indexOf('poison: ') === 0) t.poison++;
        else if (o.result === 'skipped') t.skip++;
        else if (o.result === 'failed') t.fail++;
      });
      return t;
    }
    function outcomeRow(o) {
      var tr = document.createElement('tr'), what, why = o.reason || '';
      if (o.result === 'would_move') { what = 'would move'; why = '→ ' + targetLabel(o.target || '', broker); }
      else if (o.result === 'would_delete') { what = 'would delete'; why = 'archived first; restorable from Replays'; }
      else if (o.result === 'skipped' && why.indexOf('poison: ') === 0) { what = 'poison-guarded'; why = why.slice('poison: '.length); }
      else if (o.result === 'skipped') what = 'would skip';
      else if (o.result === 'failed') what = 'would fail';
      else what = o.result;
      [[o.message_id, 'name mono'], [what, 'nowrap'], [why, '']].forEach(function (c) {
        var td = document.createElement('td');
        td.className = c[1];
        td.textContent = c[0];
        tr.appendChild(td);
      });
      tr.setAttribute('data-result', o.result);
      return tr;
    }
    // showDry shows a dry run's result: labelled, its counts, every
    // message's outcome, and the job the audit log recorded it as.
    function showDry(job, outcomes) {
      outcomes = outcomes || [];
      var r = receiptText(pending.action, name, broker, outcomes, rate());
      pending.checked = true;
      pending.count = r.count;
      if (pending.group && job.progress) {
        pending.inDLQ = job.progress.to_move;
        setTitle();
      }
      setText(byId('c-receipt'), 'Dry run — nothing ' + (job.action === 'delete' ? 'deleted' : 'moved'));
      var t = tally(outcomes);
      var s = (job.action === 'delete' ? 'would delete ' : 'would move ') + exact(t.would) + ' · would skip ' + exact(t.skip) + ' · poison-guarded ' + exact(t.poison);
      if (t.fail > 0) s += ' · would fail ' + exact(t.fail);
      setText(byId('c-sum'), s);
      byId('c-sum').hidden = false;
      if (r.count > 0) detail('Confirming runs it: ' + r.text + '.');
      if (job.note) detail(job.note);
      var rows = byId('c-outcome-rows');
      outcomes.slice(0, OUTCOME_ROWS).forEach(function (o) { rows.appendChild(outcomeRow(o)); });
      byId('c-outcomes').hidden = outcomes.length === 0;
      if (outcomes.length > OUTCOME_ROWS) {
        setText(byId('c-outcomes-more'), 'and ' + exact(outcomes.length - OUTCOME_ROWS) + ' more: the receipt lists every one.');
        byId('c-outcomes-more').hidden = false;
      }
      var a = byId('c-job');
      setText(a, job.id);
      a.href = '/replays?job=' + encodeURIComponent(job.id);
      byId('c-recorded').hidden = false;
      byId('c-ok').textContent = VERB[pending.action] + ' ' + exact(r.count) + ' ' + plural(r.count, 'message', 'messages');
      updateOK();
    }
    function waitDry(id, my) {
      api('GET', '/api/v1/replays/' + encodeURIComponent(id)).then(function (r) {
        if (pending !== my) return;
        if (r.ok && r.body.job && r.body.job.state === 'running') { window.setTimeout(function () { waitDry(id, my); }, 700); return; }
        if (!r.ok) { showError((r.body && r.body.error) || ('dry run failed: ' + r.status)); return; }
        showDry(r.body.job, r.body.outcomes);
      });
    }
    function needsTarget() {
      if (pending.action !== 'move' || byId('c-target').value.trim()) return false;
      setText(byId('c-receipt'), 'Name the queue or topic to move the messages to, then check.');
      return true;
    }
    function reset(dry) {
      pending.checked = false;
      pending.dry = dry;
      showError('');
      clearResult();
      updateOK();
      setTitle();
    }
    // check asks the preview: what would happen, recording nothing.
    function check() {
      reset(false);
      byId('c-dry').hidden = false;
      if (needsTarget()) return;
      setText(byId('c-receipt'), 'Checking what would happen (nothing moves, nothing is recorded)…');
      var my = pending;
      api('POST', previewAPI, previewRequest()).then(function (r) {
        if (pending !== my) return;
        if (r.status === 200) { showPreview(r.body); return; }
        refused('The check was refused.', r);
      }).catch(function (err) { showError(String(err)); });
    }
    // runDry runs the dry run someone asked for: a job, recorded once.
    function runDry() {
      reset(true);
      if (needsTarget()) return;
      byId('c-dry').hidden = true;
      setText(byId('c-receipt'), 'Running the dry run (nothing moves; it is recorded in the audit log)…');
      var my = pending;
      api('POST', replayAPI, request(true)).then(function (r) {
        if (pending !== my) return;
        if (r.status === 200) { showDry(r.body.job, r.body.outcomes); return; }
        if (r.status === 202 && r.body.job) { waitDry(r.body.job.id, my); return; }
        refused('The dry run was refused.', r);
      }).catch(function (err) { showError(String(err)); });
    }
    function open(action, selection, label, dry, group) {
      pending = { action: action, selection: selection, label: label, group: group, inDLQ: null, checked: false, count: 0 };
      if (byId('c-fanout')) byId('c-fanout').hidden = action !== 'replay';
      byId('c-move').hidden = action !== 'move';
      byId('c-delete').hidden = action !== 'delete';
      byId('c-check').hidden = action !== 'move';
      byId('c-typed').value = '';
      byId('c-ok').textContent = 'Confirm';
      byId('c-ok').classList.toggle('btn-danger', action === 'delete');
      byId('c-ok').classList.toggle('btn-primary', action !== 'delete');
      if (!dlg.open) dlg.showModal();
      if (action === 'delete') byId('c-typed').focus();
      if (action === 'move' && !dry) {
        reset(false);
        byId('c-dry').hidden = false;
        setText(byId('c-receipt'), 'Name the queue or topic to move the messages to, then check.');
        byId('c-target').focus();
        return;
      }
      if (dry) runDry(); else check();
    }
    root.addEventListener('click', function (e) {
      var b = e.target.closest('button[data-action]');
      if (!b || b.disabled) return;
      var action = b.getAttribute('data-action');
      if (action === 'native') { openNative(); return; }
      var dry = action === 'dryrun';
      if (dry) action = 'replay';
      var sel, label, group = false;
      if (b.hasAttribute('data-group')) { sel = { group: b.getAttribute('data-group') }; label = 'failure group ' + (b.getAttribute('data-group-label') || b.getAttribute('data-group')); group = true; }
      else if (b.hasAttribute('data-all')) { sel = { all: true }; label = 'every message'; }
      else if (b.hasAttribute('data-where')) { sel = { where: b.getAttribute('data-where') }; label = 'every message where ' + b.getAttribute('data-where'); group = true; }
      else { var ids = picked(); sel = { ids: ids }; label = exact(ids.length) + ' selected ' + plural(ids.length, 'message', 'messages'); }
      open(action, sel, label, dry, group);
    });
    // A native redrive has no dry run: its dialog says what the broker
    // will and will not do, and Start posts {mode: native} for everything.
    var ndlg = byId('native');
    function openNative() {
      if (!ndlg) return;
      var r = rate();
      setText(byId('n-rate'), r > 0 ? 'at most ' + exact(r) + '/s' : 'at its own pace (no rate set)');
      var e = byId('n-error');
      e.hidden = true;
      byId('n-ok').disabled = false;
      if (!ndlg.open) ndlg.showModal();
    }
    if (ndlg) {
      byId('n-cancel').addEventListener('click', function () { ndlg.close(); });
      byId('n-ok').addEventListener('click', function () {
        var ok = byId('n-ok');
        if (ok.disabled) return;
        ok.disabled = true;
        api('POST', replayAPI, { mode: 'native', selection: { all: true }, rate: rate() }).then(function (r) {
          if (r.status === 202 && r.body.job) {
            ndlg.close();
            follower.follow(r.body.job.id);
            return;
          }
          var msg = (r.body && r.body.error) || ('HTTP ' + r.status);
          if (r.status === 409 && r.body.job) msg += ' (job ' + r.body.job + ')';
          var e = byId('n-error');
          e.hidden = false;
          setText(e, msg);
          ok.disabled = false;
        }).catch(function (err) { var e = byId('n-error'); e.hidden = false; setText(e, String(err)); ok.disabled = false; });
      });
    }
    byId('c-check').addEventListener('click', check);
    byId('c-dry').addEventListener('click', function () { if (pending) runDry(); });
    if (byId('c-tomove')) byId('c-tomove').addEventListener('click', function () { if (pending) open('move', pending.selection, pending.label, false, pending.group); });
    byId('c-typed').addEventListener('input', updateOK);
    byId('c-target').addEventListener('keydown', function (e) { if (e.key === 'Enter') { e.preventDefault(); check(); } });
    byId('c-cancel').addEventListener('click', function () { pending = null; dlg.close(); });
    dlg.addEventListener('close', function () { pending = null; });
    byId('c-ok').addEventListener('click', function () {
      if (!pending || byId('c-ok').disabled) return;
      byId('c-ok').disabled = true;
      api('POST', replayAPI, request(false)).then(function (r) {
        if (r.status === 202 && r.body.job) {
          dlg.close();
          follower.follow(r.body.job.id);
          return;
        }
        var msg = (r.body && r.body.error) || ('HTTP ' + r.status);
        if (r.status === 409 && r.body.job) msg += ' (job ' + r.body.job + ')';
        showError(msg);
        updateOK();
      }).catch(function (err) { showError(String(err)); updateOK(); });
    });
  }

  // initSavedFilters saves the DLQ page's CEL filter under a name for
  // everyone (PUT), and deletes a saved one; the page then reloads.
  function initSavedFilters() {
    var box = byId('saved-filters');
    if (!box || !box.getAttribute('data-api')) return;
    var base = box.getAttribute('data-api');
    function done(r) {
      if (r.ok) { window.location.reload(); return; }
      var e = byId('filter-error');
      if (e) { e.textContent = (r.body && r.body.error) || ('HTTP ' + r.status); e.hidden = false; }
    }
    var save = byId('save-filter'), name = byId('filter-name');
    if (save && name) {
      var submit = function () {
        var n = name.value.trim();
        if (!n) { name.focus(); return; }
        api('PUT', base + '/' + encodeURIComponent(n), { where: name.getAttribute('data-where') }).then(done);
      };
      save.addEventListener('click', submit);
      name.addEventListener('keydown', function (e) { if (e.key === 'Enter') { e.preventDefault(); submit(); } });
    }
    box.addEventListener('click', function (e) {
      var b = e.target.closest('button.drop-filter');
      if (b) api('DELETE', base + '/' + encodeURIComponent(b.getAttribute('data-name'))).then(done);
    });
  }

  function initReplays() {
    var root = byId('replays');
    if (!root) return;
    root.addEventListener('click', function (e) {
      var b = e.target.closest('button[data-cancel]');
      if (!b) return;
      b.disabled = true;
      api('DELETE', '/api/v1/replays/' + encodeURIComponent(b.getAttribute('data-cancel'))).then(refresh);
    });
    var btn = byId('restore'), target = byId('restore-target'), out = byId('restore-result');
    if (!btn) return;
    var follower = new JobFollower(byId('jobbar'), function (j, text) {
      setText(out, '');
      window.setTimeout(function () { window.location.reload(); }, 2500);
    });
    var cancelBtn = byId('job-cancel');
    cancelBtn.addEventListener('click', function () {
      cancelBtn.disabled = true;
      api('DELETE', '/api/v1/replays/' + encodeURIComponent(follower.id));
    });
    var armed = false;
    function ids() {
      return Array.prototype.slice.call(root.querySelectorAll('input.apick:checked')).map(function (c) { return Number(c.value); });
    }
    function update() {
      var picks = root.querySelectorAll('input.apick:checked');
      setText(byId('arch-count'), exact(picks.length));
      if (picks.length && !target.value.trim()) target.value = picks[0].getAttribute('data-dlq');
      btn.disabled = picks.length === 0 || !target.value.trim();
      armed = false;
      btn.textContent = 'Restore…';
    }
    root.addEventListener('change', function (e) { if (e.target.classList.contains('apick')) update(); });
    target.addEventListener('input', update);
    btn.addEventListener('click', function () {
      var list = ids();
      if (!armed) {
        // Two steps, like a receipt: say exactly what will happen first.
        armed = true;
        btn.textContent = 'Confirm: restore ' + exact(list.length) + ' ' + plural(list.length, 'message', 'messages') + ' → ' + target.value.trim();
        return;
      }
      btn.disabled = true;
      var rv = byId('rate') ? byId('rate').value.trim() : '', rn = Number(rv);
      var body = { archive_ids: list, target: target.value.trim(), rate: rv === '' || !isFinite(rn) || rn <= 0 ? -1 : rn };
      api('POST', '/api/v1/archive/restore', body).then(function (r) {
        if (r.status === 202 && r.body.job) {
          // A restore is a job like a replay: follow its progress here;
          // the archive's "restored" column is fresh once the page reloads.
          setText(out, 'Restoring ' + exact(list.length) + ' ' + plural(list.length, 'message', 'messages') + ' → ' + target.value.trim() + '…');
          follower.follow(r.body.job.id);
        } else {
          setText(out, (r.body && r.body.error) || ('HTTP ' + r.status));
          update();
        }
      }).catch(function (err) { setText(out, String(err)); update(); });
    });
  }


  // initReset runs the group page's offset reset: a form → the plan the
  // server made, reviewed as before / after / Δ per partition → the group
  // name typed → apply → the receipt. Nothing is committed but a plan the
  // server issued, by its plan_id.
  function initReset() {
    var dlg = byId('reset');
    if (!dlg) return;
    var base = dlg.getAttribute('data-api'), group = dlg.getAttribute('data-group');
    // single: the reader reads one log (a JetStream consumer its stream),
    // so the plan speaks of it, not of partitions.
    var single = dlg.hasAttribute('data-single');
    var plan = null;
    function show(step) {
      ['form', 'review', 'receipt'].forEach(function (s) { byId('r-step-' + s).hidden = s !== step; });
      byId('r-plan').hidden = step !== 'form';
      byId('r-apply').hidden = step !== 'review';
      byId('r-back').hidden = step !== 'review';
      setText(byId('r-cancel'), step === 'receipt' ? 'Close' : 'Cancel');
    }
    function showError(msg) { var e = byId('r-error'); e.hidden = !msg; setText(e, msg || ''); }
    function syncForm() {
      var scope = byId('r-scope').value, kind = byId('r-kind').value;
      byId('r-topic-field').hidden = scope === 'all';
      byId('r-parts-field').hidden = scope !== 'partitions';
      byId('r-time-field').hidden = kind !== 'timestamp';
      byId('r-n-field').hidden = kind !== 'shift' && kind !== 'offset';
      byId('r-other-field').hidden = kind !== 'group';
      setText(byId('r-n-label'), kind === 'offset' ? (byId('r-n-field').getAttribute('data-offset-label') || 'Offset') : 'Records (negative re-reads, positive skips)');
    }
    // request is the plan request the form says, or a string saying what
    // is missing.
    function request() {
      var kind = byId('r-kind').value, to = kind;
      if (kind === 'timestamp') {
        var v = byId('r-time').value;
        if (!v) return 'Pick a time.';
        to = 'timestamp:' + new Date(v).toISOString();
      } else if (kind === 'shift' || kind === 'offset') {
        var n = byId('r-n').value.trim();
        if (!/^[-+]?\d+$/.test(n)) return 'Give a whole number.';
        to = kind + ':' + (kind === 'shift' && n.charAt(0) !== '-' && n.charAt(0) !== '+' ? '+' : '') + n;
      } else if (kind === 'group') {
        var g = byId('r-other').value.trim();
        if (!g) return 'Name the group to copy.';
        to = 'group:' + g;
      }
      var body = { to: to }, scope = byId('r-scope').value, topic = byId('r-topic').value;
      if (scope !== 'all') {
        if (!topic) return 'This group has no topic to choose.';
        var t = topic;
        if (scope === 'partitions') {
          var ps = byId('r-parts').value.replace(/\s+/g, '');
          if (!/^\d+(,\d+)*$/.test(ps)) return 'List partitions like 0,1,2.';
          t += ':' + ps;
        }
        body.topics = [t];
      }
      return body;
    }
    function cell(tr, text, cls, title) {
      var td = document.createElement('td');
      if (cls) td.className = cls;
      if (title) td.title = title;
      td.textContent = text;
      tr.appendChild(td);
      return td;
    }
    function num(v) { return v == null ? 'none' : exact(v); }
    function signed(v) { return v == null ? '—' : (v > 0 ? '+' : '') + exact(v); }
    function singleSummary(p) {
      var t = p.totals, x = p.partitions[0], s;
      if (!x || !t.changed) return 'Nothing changes: the consumer is already there.' + pending(p);
      if (t.reprocess > 0) s = 'Re-process ' + exact(t.reprocess) + ' ' + plural(t.reprocess, 'message', 'messages');
      else if (t.skip > 0) s = 'Skip ' + exact(t.skip) + ' ' + plural(t.skip, 'message', 'messages');
      else s = 'Move the consumer';
      return s + ': next sequence ' + num(x.current) + ' → ' + exact(x.target) + '.' + pending(p);
    }
    function summary(p) {
      if (single) return singleSummary(p);
      var t = p.totals, parts = function (n) { return exact(n) + ' ' + plural(n, 'partition', 'partitions'); };
      var re = p.partitions.filter(function (x) { return x.reprocess > 0; }).length;
      var sk = p.partitions.filter(function (x) { return x.skip > 0; }).length;
      var out = [];
      if (t.reprocess > 0) out.push('re-process ' + exact(t.reprocess) + ' ' + plural(t.reprocess, 'message', 'messages') + ' on ' + parts(re));
      if (t.skip > 0) out.push('skip ' + exact(t.skip) + ' ' + plural(t.skip, 'message', 'messages') + ' on ' + parts(sk));
      if (!out.length) return (t.changed > 0 ? 'Move ' + parts(t.changed) + ' (no message re-processed or skipped by this count).' : 'Nothing changes: every partition is already there.') + pending(p);
      var s = out.join(', and ');
      return s.charAt(0).toUpperCase() + s.slice(1) + ' — ' + parts(t.changed) + ' of ' + exact(t.partitions) + ' change; lag after ' + exact(t.lag_after) + '.' + pending(p);
    }
    // pending is the broker's own count of what the reader has to read,
    // before → after, where it gives one (JetStream's num_pending).
    function pending(p) {
      var b = 0, a = 0, known = p.partitions.length > 0;
      p.partitions.forEach(function (x) {
        if (x.pending_before == null || x.pending_after == null) { known = false; return; }
        b += x.pending_before; a += x.pending_after;
      });
      return known ? ' Pending ' + exact(b) + ' → ' + exact(a) + ' ' + plural(a, 'message', 'messages') + '.' : '';
    }
    function review(p) {
      plan = p;
      setText(byId('r-summary'), summary(p));
      var ref = byId('r-refused');
      ref.hidden = !p.apply_refused;
      setText(ref.querySelector('div'), p.apply_refused ? 'Apply will be refused: ' + p.apply_refused : '');
      var ul = byId('r-warnings');
      ul.textContent = '';
      (p.warnings || []).forEach(function (w) { var li = document.createElement('li'); li.textContent = '▲ ' + w; ul.appendChild(li); });
      var tb = byId('r-rows');
      tb.textContent = '';
      p.partitions.forEach(function (x) {
        var tr = document.createElement('tr');
        cell(tr, x.topic, 'name');
        cell(tr, String(x.partition), 'num');
        cell(tr, num(x.current), 'num' + (x.current == null ? ' muted' : ''));
        cell(tr, x.target == null ? 'unchanged' : exact(x.target), 'num' + (x.target == null ? ' muted' : ''), x.warning || '');
        cell(tr, signed(x.delta), 'num');
        cell(tr, x.reprocess ? exact(x.reprocess) : '—', 'num');
        cell(tr, x.skip ? exact(x.skip) : '—', 'num');
        var when = x.target_timestamp ? new Date(x.target_timestamp) : null;
        cell(tr, when ? humanSeconds(Math.max(0, (Date.now() - when.getTime()) / 1000)) + ' ago' : (x.target_timestamp_note || '—'), when ? '' : 'muted small', when ? when.toLocaleString() : '');
        tb.appendChild(tr);
      });
      setText(byId('r-plan-id'), p.plan_id);
      byId('r-typed').value = '';
      byId('r-typed-field').hidden = !!p.apply_refused;
      updateApply();
      show('review');
      if (!p.apply_refused) byId('r-typed').focus();
    }
    function updateApply() {
      byId('r-apply').disabled = !plan || !!plan.apply_refused || plan.totals.changed === 0 || byId('r-typed').value !== group;
      setText(byId('r-apply'), plan && plan.totals.changed && !single ? 'Apply to ' + exact(plan.totals.changed) + ' ' + plural(plan.totals.changed, 'partition', 'partitions') : 'Apply');
    }
    function receipt(r) {
      var ok = r.partitions.filter(function (x) { return x.result === 'committed'; }).length;
      var what = single && r.partitions.length === 1 ?
        (r.result === 'ok' ? '● Reset: the consumer delivers sequence ' + exact(r.partitions[0].target) + ' next' : '■ Failed: not reset') :
        (r.result === 'ok' ? '● Committed ' : r.result === 'partial' ? '▲ Partly committed: ' : '■ Failed: ') +
          exact(ok) + ' of ' + exact(r.partitions.length) + ' ' + plural(r.partitions.length, 'partition', 'partitions');
      setText(byId('r-result'), what + ' · ' + r.who + ' · plan ' + r.plan_id + (r.error ? ' · ' + r.error : ''));
      var tb = byId('r-receipt-rows');
      tb.textContent = '';
      r.partitions.forEach(function (x) {
        var tr = document.createElement('tr');
        cell(tr, x.topic, 'name');
        cell(tr, String(x.partition), 'num');
        cell(tr, exact(x.target), 'num');
        cell(tr, num(x.committed), 'num');
        cell(tr, x.result === 'committed' ? '● committed' : '■ failed' + (x.error ? ': ' + x.error : ''), 'res-' + x.result);
        tb.appendChild(tr);
      });
      show('receipt');
    }
    document.addEventListener('click', function (e) {
      if (!e.target.closest('[data-reset-open]')) return;
      plan = null;
      showError('');
      syncForm();
      show('form');
      if (!dlg.open) dlg.showModal();
    });
    byId('r-scope').addEventListener('change', syncForm);
    byId('r-kind').addEventListener('change', syncForm);
    byId('r-typed').addEventListener('input', updateApply);
    byId('r-cancel').addEventListener('click', function () { dlg.close(); });
    byId('r-back').addEventListener('click', function () { plan = null; showError(''); show('form'); });
    byId('r-plan').addEventListener('click', function () {
      var body = request();
      if (typeof body === 'string') { showError(body); return; }
      showError('');
      byId('r-plan').disabled = true;
      api('POST', base + '/plan', body).then(function (r) {
        byId('r-plan').disabled = false;
        if (r.ok) { review(r.body); return; }
        showError((r.body && r.body.error) || ('HTTP ' + r.status));
      }).catch(function (err) { byId('r-plan').disabled = false; showError(String(err)); });
    });
    byId('r-apply').addEventListener('click', function () {
      if (!plan || byId('r-apply').disabled) return;
      byId('r-apply').disabled = true;
      api('POST', base + '/apply', { plan_id: plan.plan_id }).then(function (r) {
        if (r.ok) { showError(''); receipt(r.body); return; }
        showError(((r.body && r.body.error) || ('HTTP ' + r.status)) + (r.status === 404 || r.status === 410 || r.status === 409 ? ' — change the plan or review it again.' : ''));
        updateApply();
      }).catch(function (err) { showError(String(err)); updateApply(); });
    });
  }

  // initRestart runs a Kafka Connect connector's Restart… dialog: it posts
  // to …/restart and reloads the page to show the server's answer.
  function initRestart() {
    var dlg = byId('restart');
    if (!dlg) return;
    function showError(msg) { var e = byId('rs-error'); e.hidden = !msg; setText(e, msg || ''); }
    document.addEventListener('click', function (e) {
      if (e.target.closest('[data-restart-open]')) {
        showError('');
        if (!dlg.open) dlg.showModal();
      }
    });
    byId('rs-cancel').addEventListener('click', function () { dlg.close(); });
    byId('rs-go').addEventListener('click', function () {
      var go = byId('rs-go');
      go.disabled = true;
      api('POST', dlg.getAttribute('data-api'), {}).then(function (r) {
        if (r.ok) { location.reload(); return; }
        go.disabled = false;
        showError((r.body && r.body.error) || ('HTTP ' + r.status));
      }).catch(function (err) { go.disabled = false; showError(String(err)); });
    });
  }

  // initPause runs a JetStream consumer's Pause… dialog (a deadline posted
  // to …/pause) and its Resume button (…/resume); both reload the page to
  // show the server's answer.
  function initPause() {
    var dlg = byId('pause');
    document.addEventListener('click', function (e) {
      var res = e.target.closest('[data-resume]');
      if (res) {
        res.disabled = true;
        api('POST', res.getAttribute('data-resume') + '/resume', {}).then(function (r) {
          if (r.ok) { location.reload(); return; }
          res.disabled = false;
          alert((r.body && r.body.error) || ('HTTP ' + r.status));
        });
        return;
      }
      if (dlg && e.target.closest('[data-pause-open]')) {
        byId('p-error').hidden = true;
        if (!dlg.open) dlg.showModal();
      }
    });
    if (!dlg) return;
    function showError(msg) { var e = byId('p-error'); e.hidden = !msg; setText(e, msg || ''); }
    byId('p-for').addEventListener('change', function () { byId('p-until-field').hidden = byId('p-for').value !== 'until'; });
    byId('p-cancel').addEventListener('click', function () { dlg.close(); });
    byId('p-go').addEventListener('click', function () {
      var v = byId('p-for').value, until;
      if (v === 'until') {
        if (!byId('p-until').value) { showError('Pick a time.'); return; }
        until = new Date(byId('p-until').value);
      } else {
        until = new Date(Date.now() + Number(v) * 1000);
      }
      if (until.getTime() <= Date.now()) { showError('Pick a time in the future.'); return; }
      byId('p-go').disabled = true;
      api('POST', dlg.getAttribute('data-api') + '/pause', { pause_until: until.toISOString() }).then(function (r) {
        byId('p-go').disabled = false;
        if (r.ok) { location.reload(); return; }
        showError((r.body && r.body.error) || ('HTTP ' + r.status));
      }).catch(function (err) { byId('p-go').disabled = false; showError(String(err)); });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    initTheme();
    initKeys();
    initFilter();
    initNav();
    initChart();
    initOutboxCharts();
    initDLQ();
    initSavedFilters();
    initReplays();
    initReset();
    initPause();
    initRestart();
  });
})();
