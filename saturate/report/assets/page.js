/* saturate's page script: the only script its pages run (their Content-Security-Policy allows it
   by its hash). Names from the data only ever become text (textContent, setAttribute), never
   markup. Each part runs on its own: one that fails leaves the others working. */
(function () {
  'use strict';
  var doc = document, NS = 'http://www.w3.org/2000/svg';

  function each(list, fn) { Array.prototype.forEach.call(list || [], fn); }
  function el(tag, attrs, text) {
    var e = doc.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function svgEl(tag, attrs) {
    var e = doc.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function badge(verdict, colors) {
    var b = el('span', { 'class': 'badge' }, verdict);
    b.style.background = colors[verdict] || '#656d76';
    return b;
  }
  function part(name, fn) {
    try { fn(); doc.documentElement.setAttribute('data-' + name, 'on'); } catch (err) {
      doc.documentElement.setAttribute('data-' + name, 'failed');
      if (window.console) { window.console.error('saturate page, ' + name + ':', err); }
    }
  }

  var holder = doc.getElementById('sat-data');
  var DATA = holder ? JSON.parse(holder.getAttribute('data-json')) : null;
  var hooks = { filter: [], show: [] };  /* what the explorer listens to */

  /* ---- the summary table: a click on a header sorts by that column ------------------------ */
  part('sortable', function () {
    function key(cell, numeric) {
      var v = cell.getAttribute('data-v');
      if (numeric) { var x = parseFloat(v); return isNaN(x) ? -Infinity : x; }
      return (v === null ? cell.textContent : v).toLowerCase();
    }
    function sort(table, th, i) {
      var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
      var numeric = th.classList.contains('n');
      each(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[i], numeric), y = key(b.cells[i], numeric);
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    each(doc.querySelectorAll('table.sortable'), function (table) {
      each(table.tHead.rows[0].cells, function (th, i) {
        if (th.classList.contains('nosort')) { return; }
        th.tabIndex = 0;
        th.addEventListener('click', function () { sort(table, th, i); });
        th.addEventListener('keydown', function (e) {
          if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(table, th, i); }
        });
      });
    });
  });

  /* ---- the filters: a verdict and part of a run name hide the table's rows and the runs ---- */
  part('overlay', function () {
    var verdict = doc.getElementById('ov-verdict'), run = doc.getElementById('ov-run');
    if (!verdict || !run) { return; }
    function shown(name, v) {
      var want = verdict.value, text = run.value.toLowerCase();
      return (!want || v === want) && (!text || name.toLowerCase().indexOf(text) >= 0);
    }
    function apply() {
      var table = doc.getElementById('curves');
      if (table) {
        each(table.tBodies[0].rows, function (r) {
          var ok = shown(r.getAttribute('data-run') || r.cells[0].textContent,
                         r.getAttribute('data-verdict') || r.cells[2].textContent.trim());
          r.style.display = ok ? '' : 'none';
        });
      }
      hooks.filter.forEach(function (fn) { fn(shown); });
    }
    verdict.addEventListener('change', apply);
    run.addEventListener('input', apply);
    hooks.applyFilter = apply;
  });

  /* ---- a link to a curve's section opens it ----------------------------------------------- */
  part('details', function () {
    function open(hash) {
      if (!hash || hash.length < 2) { return; }
      var target = doc.getElementById(decodeURIComponent(hash.slice(1)));
      if (target && target.tagName !== 'DETAILS') { target = target.querySelector(':scope > details'); }
      if (target) { target.open = true; }
    }
    doc.addEventListener('click', function (e) {
      var a = e.target.closest ? e.target.closest('a[href^="#"]') : null;
      if (a) { open(a.getAttribute('href')); }
    });
    window.addEventListener('hashchange', function () { open(location.hash); });
    open(location.hash);
    each(doc.querySelectorAll('button[data-details]'), function (b) {
      b.addEventListener('click', function () {
        var on = b.getAttribute('data-details') === 'open';
        each(doc.querySelectorAll('details.curve'), function (d) { d.open = on; });
      });
    });
  });

  /* ---- the overview: the values of a dot on hover; a click shows its run among the others -- */
  part('overview', function () {
    var svg = doc.querySelector('svg.overview');
    if (!svg || !DATA) { return; }
    var box = svg.parentNode, tip = el('div', { 'class': 'tip', id: 'ov-tip' });
    tip.hidden = true;
    box.style.position = 'relative';
    box.appendChild(tip);
    each(svg.querySelectorAll('a[data-show] title'), function (t) { t.parentNode.removeChild(t); });
    function show(a, e) {
      var c = DATA.curves[+a.getAttribute('data-show')];
      if (!c) { return; }
      tip.textContent = '';
      tip.appendChild(el('div', { 'class': 'head' }, c.run));
      tip.appendChild(el('div', {}, c.metric));
      var line = el('div', {});
      line.appendChild(badge(c.verdict, DATA.verdicts));
      line.appendChild(doc.createTextNode(' P(pays) ' + c.p + ' · gain / doubling ' + c.gain));
      tip.appendChild(line);
      var r = box.getBoundingClientRect();
      var x = e.clientX - r.left + 14, y = e.clientY - r.top + 14;
      tip.hidden = false;
      tip.style.left = Math.min(x, r.width - tip.offsetWidth - 4) + 'px';
      tip.style.top = y + 'px';
    }
    each(svg.querySelectorAll('a[data-show]'), function (a) {
      a.addEventListener('mousemove', function (e) { show(a, e); });
      a.addEventListener('focus', function () {
        var b = a.getBoundingClientRect();
        show(a, { clientX: b.left + b.width, clientY: b.top + b.height });
      });
      a.addEventListener('mouseleave', function () { tip.hidden = true; });
      a.addEventListener('blur', function () { tip.hidden = true; });
    });
    doc.addEventListener('click', function (e) {
      var a = e.target.closest ? e.target.closest('[data-show]') : null;
      if (a) { hooks.show.forEach(function (fn) { fn(+a.getAttribute('data-show')); }); }
    });
  });

  /* ---- the runs explorer -------------------------------------------------------------------- */
  part('explorer', function () {
    var root = doc.getElementById('explorer');
    if (!root || !DATA || !DATA.groups.length) { return; }
    explorer(root, DATA);
  });

  function explorer(root, data) {
    var W = 760, H = 400, M = { l: 64, r: 14, t: 12, b: 46 };
    var X0 = M.l, X1 = W - M.r, Y0 = M.t, Y1 = H - M.b;
    var $ = function (id) { return doc.getElementById(id); };
    var svg = $('ex-svg'), legend = $('ex-legend'), tip = $('ex-tip'), note = $('ex-note');
    var ctl = {
      group: $('ex-group'), x: $('ex-x'), xscale: $('ex-xscale'), yscale: $('ex-yscale'),
      smooth: $('ex-smooth'), fit: $('ex-fit'), forecast: $('ex-forecast'), raw: $('ex-raw'),
      color: $('ex-color')
    };
    var st = { g: 0, on: {}, page: 0, focus: null, view: null, shown: null };
    var scale = null, drawnSeries = [], drag = null;

    /* numbers and ticks, as the report's static charts make them */
    function label(v) {
      if (v === 0) { return '0'; }
      var a = Math.abs(v), units = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
      for (var k = 0; k < units.length; k++) {
        if (a >= units[k][0] && a < 1e3 * units[k][0]) { return fmt(v / units[k][0], 3) + units[k][1]; }
      }
      if (a >= 1e12 || a < 1e-3) { return v.toExponential(1); }
      return fmt(v, 3);
    }
    function fmt(v, digits) { return String(parseFloat(v.toPrecision(digits))); }
    function value(v) { return v === null || v === undefined ? '–' : fmt(v, 5); }
    function logTicks(lo, hi) {
      var a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
      var sets = [[1], [1, 2, 5], [1, 2, 3, 5, 7]];
      for (var s = 0; s < sets.length; s++) {
        if (sets[s].length === 1 && b - a < 3) { continue; }
        var out = [];
        for (var k = a; k <= b; k++) {
          sets[s].forEach(function (m) {
            var t = m * Math.pow(10, k);
            if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) { out.push(t); }
          });
        }
        if (out.length >= 3) { return out; }
      }
      return [lo, Math.sqrt(lo * hi), hi];
    }
    function linTicks(lo, hi, n) {
      var span = hi - lo;
      if (!(span > 0)) { return [lo]; }
      var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
      var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * p; })
        .filter(function (s) { return s >= raw; })[0];
      var out = [], first = Math.ceil(lo / step - 1e-9) * step;
      for (var t = first; t <= hi + step * 1e-9; t += step) { out.push(Math.round(t / step) * step); }
      return out;
    }

    function group() { return data.groups[st.g]; }
    function curve(i) { return data.curves[i]; }
    function onStep() { return ctl.x.value === 'step'; }
    function color(i) {
      if (ctl.color.value === 'verdict') { return data.verdicts[curve(i).verdict] || '#656d76'; }
      var k = group().curves.indexOf(i);
      return data.palette[(k < 0 ? 0 : k) % data.palette.length];
    }
    function matching() {
      return group().curves.filter(function (i) { return !st.shown || st.shown(curve(i).run, curve(i).verdict); });
    }
    function visible() { return matching().filter(function (i) { return st.on[i]; }); }
    function setPage(k) {
      var runs = matching(), n = Math.max(1, Math.ceil(runs.length / data.page));
      st.page = Math.min(Math.max(0, k), n - 1);
      st.on = {};
      runs.slice(st.page * data.page, (st.page + 1) * data.page).forEach(function (i) { st.on[i] = true; });
    }

    /* a run's points on the x axis asked for, smoothed for display (TensorBoard's debiased EMA) */
    function series(i) {
      var c = curve(i), xs = onStep() ? c.s : c.x, w = +ctl.smooth.value, out = [];
      var last = 0, weight = 0;
      for (var k = 0; k < c.y.length; k++) {
        var y = c.y[k], x = xs[k];
        if (y === null || x === null) { continue; }
        last = last * w + (1 - w) * y;
        weight = weight * w + (1 - w);
        out.push([x, y, w > 0 ? last / weight : y]);
      }
      out.sort(function (a, b) { return a[0] - b[0]; });
      return out;
    }
    function lines(i) {
      var c = curve(i), out = [];
      if (ctl.fit.checked && c.fy) { out.push({ x: onStep() ? c.fs : c.fx, y: c.fy, kind: 'fit' }); }
      if (ctl.forecast.checked && c.ay && !onStep()) {
        out.push({ x: c.ax, y: c.ay, lo: c.alo, hi: c.ahi, kind: 'forecast' });
      }
      return out;
    }

    function extent(vis, all) {
      var xl = ctl.xscale.value === 'log', yl = ctl.yscale.value === 'log';
      var xs = [], ys = [], dropped = 0;
      function add(x, y) {
        if (x === null || y === null || !isFinite(x) || !isFinite(y)) { return; }
        if ((xl && x <= 0) || (yl && y <= 0)) { dropped += 1; return; }
        xs.push(x);
        ys.push(y);
      }
      var raw = ctl.raw.checked, smooth = +ctl.smooth.value > 0 || !raw;
      vis.forEach(function (i) {
        all[i].pts.forEach(function (p) {
          if (raw) { add(p[0], p[1]); }
          if (smooth) { add(p[0], p[2]); }
        });
        all[i].lines.forEach(function (l) { l.x.forEach(function (x, k) { add(x, l.y[k]); }); });
      });
      var xr = range(xs, xl, 0.02), yr = range(ys, yl, 0.05);
      if (st.view) {
        xr = st.view.x;
        if (st.view.y) { yr = st.view.y; } else {
          var inside = [];
          vis.forEach(function (i) {
            all[i].pts.forEach(function (p) {
              if (p[0] >= xr[0] && p[0] <= xr[1]) {
                if (raw) { inside.push(p[1]); }
                if (smooth) { inside.push(p[2]); }
              }
            });
          });
          inside = inside.filter(function (y) { return !yl || y > 0; });
          if (inside.length) { yr = range(inside, yl, 0.05); }
        }
      }
      return { x: xr, y: yr, xlog: xl, ylog: yl, dropped: dropped };
    }
    function range(v, log, pad) {
      if (!v.length) { return log ? [1, 10] : [0, 1]; }
      var lo = Infinity, hi = -Infinity;
      v.forEach(function (x) { if (x < lo) { lo = x; } if (x > hi) { hi = x; } });
      if (log) {
        if (hi <= lo) { return [lo / 2, hi * 2]; }
        var r = Math.log10(hi / lo) * pad;
        return [lo / Math.pow(10, r), hi * Math.pow(10, r)];
      }
      if (hi <= lo) { var d = Math.abs(hi) * 0.05 || 1e-9; return [lo - d, hi + d]; }
      return [lo - (hi - lo) * pad, hi + (hi - lo) * pad];
    }
    function scaler(r, log, p0, p1) {
      var a = log ? Math.log10(r[0]) : r[0], b = log ? Math.log10(r[1]) : r[1];
      var f = function (v) {
        if (v === null || (log && v <= 0)) { return NaN; }
        return p0 + ((log ? Math.log10(v) : v) - a) / (b - a) * (p1 - p0);
      };
      f.inv = function (p) { var t = a + (p - p0) / (p1 - p0) * (b - a); return log ? Math.pow(10, t) : t; };
      return f;
    }
    function path(xs, ys, sx, sy) {
      var d = '', pen = false;
      for (var k = 0; k < xs.length; k++) {
        var px = sx(xs[k]), py = sy(ys[k]);
        if (!isFinite(px) || !isFinite(py)) { pen = false; continue; }
        py = Math.max(-2000, Math.min(2000, py));
        d += (pen ? 'L' : 'M') + px.toFixed(1) + ' ' + py.toFixed(1);
        pen = true;
      }
      return d;
    }

    function axes(ext, sx, sy) {
      var g = svgEl('g', { 'class': 'ex-axes' }), grid = '';
      var xt = ext.xlog ? logTicks(ext.x[0], ext.x[1]) : linTicks(ext.x[0], ext.x[1], 6);
      var yt = ext.ylog ? logTicks(ext.y[0], ext.y[1]) : linTicks(ext.y[0], ext.y[1], 5);
      var free = -Infinity;
      xt.forEach(function (t) {
        var px = sx(t);
        if (!(px >= X0 - 0.5 && px <= X1 + 0.5)) { return; }
        grid += 'M' + px.toFixed(1) + ' ' + Y0 + 'V' + Y1;
        var text = label(t), half = text.length * 3.2;
        if (px - half > free + 4) {
          var tx = svgEl('text', { x: px.toFixed(1), y: Y1 + 15, 'text-anchor': 'middle', 'class': 'ex-xtick' });
          tx.textContent = text; g.appendChild(tx); free = px + half;
        }
      });
      yt.forEach(function (t) {
        var py = sy(t);
        if (!(py >= Y0 - 0.5 && py <= Y1 + 0.5)) { return; }
        grid += 'M' + X0 + ' ' + py.toFixed(1) + 'H' + X1;
        var tx = svgEl('text', { x: X0 - 5, y: (py + 4).toFixed(1), 'text-anchor': 'end', 'class': 'ex-ytick' });
        tx.textContent = label(t); g.appendChild(tx);
      });
      g.insertBefore(svgEl('path', { d: grid, stroke: 'currentColor', 'stroke-opacity': '.12' }), g.firstChild);
      g.appendChild(svgEl('rect', { x: X0, y: Y0, width: X1 - X0, height: Y1 - Y0, fill: 'none',
                                    stroke: 'currentColor', 'stroke-opacity': '.35' }));
      var xl = svgEl('text', { x: (X0 + X1) / 2, y: H - 8, 'text-anchor': 'middle', 'class': 'ex-xlabel' });
      xl.textContent = (onStep() ? 'step' : group().xname) + (ext.xlog ? ', log scale' : '');
      var yl = svgEl('text', { transform: 'translate(13 ' + ((Y0 + Y1) / 2) + ') rotate(-90)', 'text-anchor': 'middle', 'class': 'ex-ylabel' });
      yl.textContent = group().metric + (ext.ylog ? ', log scale' : '');
      g.appendChild(xl); g.appendChild(yl);
      return g;
    }

    function runLayer(i, s, sx, sy) {
      var c = curve(i), col = color(i), smooth = +ctl.smooth.value > 0;
      var g = svgEl('g', { 'class': 'ex-run', 'data-i': i, 'data-run': c.run });
      if (st.focus !== null && st.focus !== i) { g.setAttribute('opacity', '.25'); }
      var xs = s.pts.map(function (p) { return p[0]; });
      if (ctl.raw.checked) {
        g.appendChild(svgEl('path', { d: path(xs, s.pts.map(function (p) { return p[1]; }), sx, sy),
          fill: 'none', stroke: col, 'stroke-width': 1, 'stroke-opacity': smooth ? 0.25 : 0.55,
          'class': 'ex-raw' }));
      }
      if (smooth || !ctl.raw.checked) {
        g.appendChild(svgEl('path', { d: path(xs, s.pts.map(function (p) { return p[2]; }), sx, sy),
          fill: 'none', stroke: col, 'stroke-width': 1.4, 'stroke-opacity': 0.9, 'class': 'ex-smooth' }));
      }
      s.lines.forEach(function (l) {
        if (l.kind === 'forecast' && l.lo) {
          var top = path(l.x, l.hi, sx, sy), bottom = path(l.x.slice().reverse(), l.lo.slice().reverse(), sx, sy);
          if (top && bottom) {
            g.appendChild(svgEl('path', { d: top + 'L' + bottom.slice(1) + 'Z', fill: col,
              'fill-opacity': '.1', stroke: 'none', 'class': 'ex-band' }));
          }
        }
        g.appendChild(svgEl('path', { d: path(l.x, l.y, sx, sy), fill: 'none', stroke: col,
          'stroke-width': i === st.focus ? 3 : 2, 'stroke-dasharray': l.kind === 'fit' ? '' : '6 4',
          'class': 'ex-' + l.kind }));
      });
      return g;
    }

    function draw() {
      var vis = visible(), all = {};
      vis.forEach(function (i) { all[i] = { pts: series(i), lines: lines(i) }; });
      var ext = extent(vis, all);
      var sx = scaler(ext.x, ext.xlog, X0, X1), sy = scaler(ext.y, ext.ylog, Y1, Y0);
      scale = { sx: sx, sy: sy, ext: ext };
      while (svg.firstChild) { svg.removeChild(svg.firstChild); }
      var clip = svgEl('clipPath', { id: 'ex-clip' });
      clip.appendChild(svgEl('rect', { x: X0, y: Y0, width: X1 - X0, height: Y1 - Y0 }));
      svg.appendChild(clip);
      svg.appendChild(axes(ext, sx, sy));
      var body = svgEl('g', { 'clip-path': 'url(#ex-clip)' });
      vis.forEach(function (i) { body.appendChild(runLayer(i, all[i], sx, sy)); });
      if (ctl.fit.checked && !onStep()) {
        group().pooled.forEach(function (p) {
          var shown = p.runs.filter(function (i) { return vis.indexOf(i) >= 0; });
          if (!shown.length) { return; }
          body.appendChild(svgEl('path', { d: path(p.x, p.y, sx, sy), fill: 'none', stroke: color(shown[0]),
            'stroke-width': 2.6, 'stroke-dasharray': '8 4', 'stroke-opacity': '.8', 'class': 'ex-pooled' }));
        });
      }
      svg.appendChild(body);
      svg.appendChild(svgEl('g', { 'class': 'ex-hover' }));
      svg.appendChild(svgEl('rect', { 'class': 'ex-brush', fill: 'currentColor', 'fill-opacity': '.08',
        stroke: 'currentColor', 'stroke-opacity': '.4', visibility: 'hidden' }));
      drawnSeries = vis.map(function (i) { return { i: i, pts: all[i].pts }; });
      svg.setAttribute('data-group', st.g);
      svg.setAttribute('data-x', ctl.x.value);
      svg.setAttribute('data-xscale', ctl.xscale.value);
      svg.setAttribute('data-yscale', ctl.yscale.value);
      svg.setAttribute('data-smoothing', ctl.smooth.value);
      svg.setAttribute('data-view', [ext.x[0], ext.x[1], ext.y[0], ext.y[1]].map(function (v) { return +v.toPrecision(6); }).join(' '));
      svg.setAttribute('data-zoomed', st.view ? 'yes' : 'no');
      var notes = [];
      if (onStep() && ctl.forecast.checked) { notes.push('forecasts and pooled curves are drawn on the compute axis only'); }
      if (ext.dropped) { notes.push(ext.dropped + ' values at or below 0 are left out on the log scale'); }
      note.textContent = notes.join('; ');
      drawLegend();
      save();
    }

    function drawLegend() {
      var runs = matching(), n = Math.max(1, Math.ceil(runs.length / data.page));
      var on = visible().length;
      $('ex-page').textContent = runs.length
        ? 'page ' + (st.page + 1) + ' of ' + n + ' · ' + on + ' of ' + runs.length + ' runs shown'
        : 'no run matches the filters';
      $('ex-prev').disabled = st.page <= 0;
      $('ex-next').disabled = st.page >= n - 1;
      while (legend.firstChild) { legend.removeChild(legend.firstChild); }
      runs.forEach(function (i) {
        var c = curve(i), li = el('li', { 'data-i': i, 'data-run': c.run, 'data-verdict': c.verdict });
        if (i === st.focus) { li.className = 'focus'; }
        var box = el('input', { type: 'checkbox', 'aria-label': 'show ' + c.run });
        box.checked = !!st.on[i];
        box.addEventListener('change', function () { st.on[i] = box.checked; draw(); });
        var sw = el('span', { 'class': 'sw' });
        sw.style.background = color(i);
        var name = el('span', { 'class': 'nm' }), link;
        if (c.url) {
          link = el('a', { href: c.url, 'class': 'ext', rel: 'noopener noreferrer', target: '_blank' }, c.run);
        } else if (data.sections) {
          link = el('a', { href: '#c' + i }, c.run);
        } else {
          link = el('span', {}, c.run);
        }
        name.appendChild(link);
        li.appendChild(box); li.appendChild(sw); li.appendChild(name);
        li.appendChild(badge(c.verdict, data.verdicts));
        li.appendChild(el('span', { 'class': 'p', title: 'P(pays)' }, c.p));
        li.addEventListener('mouseenter', function () { if (st.on[i]) { focus(i); } });
        li.addEventListener('mouseleave', function () { focus(null); });
        legend.appendChild(li);
      });
    }
    function focus(i) {
      if (st.focus === i) { return; }
      st.focus = i;
      each(svg.querySelectorAll('g.ex-run'), function (g) {
        var me = +g.getAttribute('data-i');
        if (i === null || me === i) { g.removeAttribute('opacity'); } else { g.setAttribute('opacity', '.25'); }
      });
      each(legend.children, function (li) { li.className = +li.getAttribute('data-i') === i ? 'focus' : ''; });
    }

    /* values on hover: each drawn run's point nearest the cursor's x */
    function pointer(e) {
      var r = svg.getBoundingClientRect();
      return { x: (e.clientX - r.left) * W / r.width, y: (e.clientY - r.top) * H / r.height };
    }
    function nearest(pts, x) {
      var lo = 0, hi = pts.length - 1;
      if (hi < 0) { return -1; }
      while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (pts[mid][0] < x) { lo = mid; } else { hi = mid; } }
      return Math.abs(pts[lo][0] - x) <= Math.abs(pts[hi][0] - x) ? lo : hi;
    }
    function hover(p) {
      var layer = svg.querySelector('g.ex-hover');
      while (layer.firstChild) { layer.removeChild(layer.firstChild); }
      if (!scale || p.x < X0 || p.x > X1 || p.y < Y0 || p.y > Y1) { tip.hidden = true; return; }
      var x = scale.sx.inv(p.x), rows = [], smooth = +ctl.smooth.value > 0;
      drawnSeries.forEach(function (s) {
        var k = nearest(s.pts, x);
        if (k < 0) { return; }
        var pt = s.pts[k], px = scale.sx(pt[0]), py = scale.sy(pt[2]);
        if (!isFinite(px) || !isFinite(py) || Math.abs(px - p.x) > 40) { return; }
        rows.push({ i: s.i, pt: pt, px: px, py: py, d: Math.abs(py - p.y) + Math.abs(px - p.x) / 4 });
      });
      layer.appendChild(svgEl('path', { d: 'M' + p.x.toFixed(1) + ' ' + Y0 + 'V' + Y1, stroke: 'currentColor', 'stroke-opacity': '.35' }));
      if (!rows.length) { tip.hidden = true; return; }
      var near = rows.reduce(function (a, b) { return b.d < a.d ? b : a; });
      rows.sort(function (a, b) { return b.pt[2] - a.pt[2]; });
      rows.forEach(function (r) {
        layer.appendChild(svgEl('circle', { cx: r.px.toFixed(1), cy: r.py.toFixed(1), r: r === near ? 4.5 : 3,
          fill: color(r.i), stroke: 'currentColor', 'stroke-width': r === near ? 1.5 : 0.5 }));
      });
      tip.textContent = '';
      tip.appendChild(el('div', { 'class': 'head' }, (onStep() ? 'step ' : group().xname + ' ') + value(near.pt[0])));
      var table = el('table', {}), shown = rows.slice(0, 14);
      if (shown.indexOf(near) < 0) { shown[shown.length - 1] = near; }
      shown.forEach(function (r) {
        var tr = el('tr', { 'data-i': r.i });
        if (r === near) { tr.className = 'near'; }
        var sw = el('span', { 'class': 'sw' }); sw.style.background = color(r.i);
        var td = el('td', {}); td.appendChild(sw);
        tr.appendChild(td);
        tr.appendChild(el('td', {}, curve(r.i).run));
        tr.appendChild(el('td', { 'class': 'n' }, value(r.pt[2])));
        if (smooth) { tr.appendChild(el('td', { 'class': 'n muted' }, 'raw ' + value(r.pt[1]))); }
        table.appendChild(tr);
      });
      if (rows.length > shown.length) { tip.appendChild(el('div', { 'class': 'muted' }, (rows.length - shown.length) + ' more')); }
      tip.appendChild(table);
      tip.hidden = false;
      var box = svg.getBoundingClientRect(), k = box.width / W;
      var left = p.x * k + 16;
      if (left + tip.offsetWidth > box.width) { left = Math.max(0, p.x * k - tip.offsetWidth - 16); }
      tip.style.left = left + 'px';
      tip.style.top = Math.max(0, Math.min(p.y * k - 10, box.height - tip.offsetHeight)) + 'px';
    }

    /* zoom: drag a box (or along x) to zoom in, double-click or "reset zoom" to go back;
       Alt/Ctrl + wheel zooms around the cursor */
    function zoomTo(xa, xb, ya, yb) {
      var sx = scale.sx, sy = scale.sy;
      var x = [sx.inv(Math.min(xa, xb)), sx.inv(Math.max(xa, xb))];
      var y = yb === undefined ? null : [sy.inv(Math.max(ya, yb)), sy.inv(Math.min(ya, yb))];
      st.view = { x: x, y: y };
      draw();
    }
    function reset() { st.view = null; draw(); }
    svg.addEventListener('mousedown', function (e) {
      var p = pointer(e);
      if (e.button !== 0 || p.x < X0 || p.x > X1 || p.y < Y0 || p.y > Y1) { return; }
      e.preventDefault();
      drag = { x: p.x, y: p.y };
    });
    window.addEventListener('mousemove', function (e) {
      if (!drag) { return; }
      var p = pointer(e), b = svg.querySelector('rect.ex-brush');
      var x = Math.max(X0, Math.min(X1, p.x)), y = Math.max(Y0, Math.min(Y1, p.y));
      var tall = Math.abs(y - drag.y) > 10;
      b.setAttribute('x', Math.min(x, drag.x)); b.setAttribute('width', Math.abs(x - drag.x));
      b.setAttribute('y', tall ? Math.min(y, drag.y) : Y0); b.setAttribute('height', tall ? Math.abs(y - drag.y) : Y1 - Y0);
      b.setAttribute('visibility', 'visible');
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) { return; }
      var p = pointer(e), start = drag;
      drag = null;
      svg.querySelector('rect.ex-brush').setAttribute('visibility', 'hidden');
      var x = Math.max(X0, Math.min(X1, p.x)), y = Math.max(Y0, Math.min(Y1, p.y));
      if (Math.abs(x - start.x) < 6) { return; }
      if (Math.abs(y - start.y) > 10) { zoomTo(start.x, x, start.y, y); } else { zoomTo(start.x, x); }
    });
    svg.addEventListener('mousemove', function (e) { if (!drag) { hover(pointer(e)); } });
    svg.addEventListener('mouseleave', function () { tip.hidden = true; hover({ x: -1, y: -1 }); });
    svg.addEventListener('dblclick', reset);
    svg.addEventListener('wheel', function (e) {
      if (!(e.altKey || e.ctrlKey || e.metaKey) || !scale) { return; }
      e.preventDefault();
      var p = pointer(e), f = e.deltaY > 0 ? 1.25 : 0.8;
      var xa = p.x - (p.x - X0) * f, xb = p.x + (X1 - p.x) * f;
      var keepY = st.view && st.view.y;
      if (keepY) { zoomTo(xa, xb, p.y + (Y1 - p.y) * f, p.y - (p.y - Y0) * f); } else { zoomTo(xa, xb); }
    }, { passive: false });
    $('ex-reset').addEventListener('click', reset);

    /* the controls */
    function changed() { draw(); }
    ctl.group.addEventListener('change', function () {
      st.g = +ctl.group.value; st.view = null; st.focus = null; setPage(0); draw();
    });
    [ctl.x, ctl.xscale].forEach(function (c) { c.addEventListener('change', function () { st.view = null; draw(); }); });
    ctl.yscale.addEventListener('change', function () { if (st.view) { st.view.y = null; } draw(); });
    [ctl.fit, ctl.forecast, ctl.raw, ctl.color].forEach(function (c) { c.addEventListener('change', changed); });
    ctl.smooth.addEventListener('input', function () { $('ex-smooth-v').textContent = (+ctl.smooth.value).toFixed(2); draw(); });
    $('ex-prev').addEventListener('click', function () { setPage(st.page - 1); draw(); });
    $('ex-next').addEventListener('click', function () { setPage(st.page + 1); draw(); });
    $('ex-all').addEventListener('click', function () { matching().forEach(function (i) { st.on[i] = true; }); draw(); });
    $('ex-none').addEventListener('click', function () { st.on = {}; draw(); });
    hooks.filter.push(function (shown) { st.shown = shown; setPage(0); draw(); });
    hooks.show.push(function (i) {
      var g = -1;
      data.groups.forEach(function (gr, k) { if (g < 0 && gr.curves.indexOf(i) >= 0) { g = k; } });
      if (g < 0) { return; }
      if (g !== st.g) { st.g = g; ctl.group.value = String(g); st.view = null; }
      var runs = matching(), k = runs.indexOf(i);
      if (k < 0) { st.shown = null; runs = matching(); k = runs.indexOf(i); }
      setPage(Math.floor(k / data.page));
      st.focus = i;
      draw();
    });

    /* the view survives a reload (the watch page refreshes itself) */
    var KEY = 'saturate-explorer:' + location.pathname;
    function save() {
      try {
        window.sessionStorage.setItem(KEY, JSON.stringify({
          g: group().label, x: ctl.x.value, xscale: ctl.xscale.value, yscale: ctl.yscale.value,
          smooth: ctl.smooth.value, fit: ctl.fit.checked, forecast: ctl.forecast.checked,
          raw: ctl.raw.checked, color: ctl.color.value, page: st.page, view: st.view }));
      } catch (err) { /* no storage (a private window): the view is not kept */ }
    }
    function restore() {
      var s = null;
      try { s = JSON.parse(window.sessionStorage.getItem(KEY) || 'null'); } catch (err) { s = null; }
      if (!s) { setPage(0); return; }
      data.groups.forEach(function (gr, k) { if (gr.label === s.g) { st.g = k; } });
      ctl.group.value = String(st.g);
      ctl.x.value = s.x; ctl.xscale.value = s.xscale; ctl.yscale.value = s.yscale;
      ctl.smooth.value = s.smooth; ctl.fit.checked = s.fit; ctl.forecast.checked = s.forecast;
      ctl.raw.checked = s.raw; ctl.color.value = s.color;
      $('ex-smooth-v').textContent = (+ctl.smooth.value).toFixed(2);
      setPage(s.page || 0);
      st.view = s.view || null;
    }
    restore();
    draw();
  }
})();
