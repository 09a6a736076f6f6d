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

  // CSRF: every htmx request carries the token from the page's meta tag
  // (double submit; the cookie is HttpOnly).
  function csrfToken() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute('content') : '';
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
    var t = csrfToken();
    if (t) e.detail.headers['X-CSRF-Token'] = t;
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
      var f = document.getElementById('filter');
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

  // ---- group chart (uPlot) ----
  var RANGES = { '15m': 900, '1h': 3600, '6h': 21600 };

  function cssVar(name) { return getComputedStyle(root).getPropertyValue(name).trim(); }

  function humanCount(n) {
    if (n == null) return '—';
    var a = Math.abs(n);
    if (a < 10000) return Math.round(n).toLocaleString('en-US');
    if (a < 1e6) return (n / 1e3).toFixed(1).replace(/\.0$/, '') + 'k';
    if (a < 1e9) return (n / 1e6).toFixed(1).replace(/\.0$/, '') + 'M';
    return (n / 1e9).toFixed(1).replace(/\.0$/, '') + 'G';
  }
  function humanSeconds(s) {
    if (s == null) return '—';
    s = Math.floor(s);
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + (s % 60 ? ' ' + (s % 60) + 's' : '');
    if (s < 172800) return Math.floor(s / 3600) + 'h' + (Math.floor(s / 60) % 60 ? ' ' + (Math.floor(s / 60) % 60) + 'm' : '');
    return Math.floor(s / 86400) + 'd' + (Math.floor(s / 3600) % 24 ? ' ' + (Math.floor(s / 3600) % 24) + 'h' : '');
  }

  function GroupChart(el) {
    this.el = el;
    this.url = el.getAttribute('data-url');
    this.range = RANGES[el.getAttribute('data-range')] ? el.getAttribute('data-range') : '1h';
    this.data = [[], [], []];
    this.plot = null;
  }
  GroupChart.prototype.build = function () {
    if (this.plot) { this.plot.destroy(); this.plot = null; }
    var grid = { stroke: cssVar('--line'), width: 1 };
    var axis = { stroke: cssVar('--muted'), grid: grid, ticks: { stroke: cssVar('--line'), width: 1 } };
    var opts = {
      width: Math.max(320, this.el.clientWidth),
      height: 220,
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, lag: { range: function (u, mn, mx) { return [0, Math.max(1, mx * 1.1)]; } }, sec: { range: function (u, mn, mx) { return [0, Math.max(1, mx * 1.1)]; } } },
      series: [
        {},
        { label: 'total lag', scale: 'lag', stroke: cssVar('--link'), width: 1.5, fill: cssVar('--lagfill'), value: function (u, v) { return humanCount(v); } },
        { label: 'max lag time', scale: 'sec', stroke: cssVar('--warn'), width: 1.5, dash: [4, 3], value: function (u, v) { return humanSeconds(v); } }
      ],
      axes: [
        Object.assign({}, axis),
        Object.assign({}, axis, { scale: 'lag', size: 56, values: function (u, vals) { return vals.map(humanCount); } }),
        Object.assign({}, axis, { scale: 'sec', side: 1, size: 72, grid: { show: false }, values: function (u, vals) { return vals.map(humanSeconds); } })
      ]
    };
    this.el.textContent = '';
    this.plot = new window.uPlot(opts, this.windowed(), this.el);
  };
  GroupChart.prototype.windowed = function () {
    var xs = this.data[0];
    if (!xs.length) return this.data;
    var from = Date.now() / 1000 - RANGES[this.range];
    var i = 0;
    while (i < xs.length && xs[i] < from) i++;
    return [xs.slice(i), this.data[1].slice(i), this.data[2].slice(i)];
  };
  GroupChart.prototype.load = function () {
    var self = this;
    return fetch(this.url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) throw new Error('history ' + r.status); return r.json(); })
      .then(function (j) {
        var h = j.history || [];
        var xs = [], lag = [], sec = [];
        for (var k = 0; k < h.length; k++) {
          xs.push(Date.parse(h[k].at) / 1000);
          lag.push(h[k].lag);
          sec.push(h[k].lag_seconds);
        }
        self.data = [xs, lag, sec];
        if (!self.plot) self.build(); else self.plot.setData(self.windowed());
        self.el.classList.toggle('chart-empty', xs.length === 0);
      })
      .catch(function (err) { self.el.setAttribute('data-error', String(err)); });
  };
  GroupChart.prototype.setRange = function (r) {
    if (!RANGES[r]) return;
    this.range = r;
    if (this.plot) this.plot.setData(this.windowed());
    var u = new URL(window.location.href);
    if (r === '1h') u.searchParams.delete('range'); else u.searchParams.set('range', r);
    window.history.replaceState(null, '', u.pathname + u.search);
  };

  function initChart() {
    var el = document.querySelector('[data-chart="group"]');
    if (!el || !window.uPlot) return;
    var chart = new GroupChart(el);
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

  document.addEventListener('DOMContentLoaded', function () {
    initTheme();
    initKeys();
    initFilter();
    initNav();
    initChart();
  });
})();
