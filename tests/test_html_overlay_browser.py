"""The HTML report's pictures in a real headless Chromium: the overview of every curve comes before
the table; the runs explorer reaches every run of a 48-run metric (by its pages, and all at
once), zooms on a dragged box and back on a double-click, shows the values under the cursor,
switches log/linear and step/compute, smooths for display only (the table and the page's data do
not change), follows the filters and the overview's clicks; hostile names never run a script,
run links are http(s) only with ``rel="noopener noreferrer"``, and no script error is logged,
with the page's own Content-Security-Policy in force.

Needs a Chromium binary, as tests/test_html_browser.py does (skipped without one).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_html_browser import BROWSER, _chromium

import saturate.api
from saturate.report.html import render_html

pytestmark = [pytest.mark.browser, pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found")]

HOSTILE = ('<img src=x onerror="alert(1)">', "</script><script>alert(2)</script>")
URL = "https://tracker.example/runs/r00?x=1&y=<2>"

# Runs first in <head> (the page's CSP taken out): catches errors and alerts; after load drives
# the explorer as a user would and writes what it saw into the DOM.
PROBE = """<script>
window.__errors = []; window.__alerts = 0;
window.alert = function () { window.__alerts += 1; };
window.addEventListener('error', function (e) { window.__errors.push(String(e.message)); });
var __log = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, ' ')); __log.apply(console, arguments); };
window.addEventListener('load', function () {
  var seen = { steps: [] };
  function $(id) { return document.getElementById(id); }
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function drawn() { return all('#ex-svg g.ex-run').map(function (g) { return g.getAttribute('data-run'); }); }
  function set(el, value, kind) { el.value = value; el.dispatchEvent(new Event(kind, { bubbles: true })); }
  function at(kind, fx, fy, target) {  /* an event at a fraction of the plot box */
    var svg = $('ex-svg'), r = svg.getBoundingClientRect(), k = r.width / 760;
    var x = r.left + (64 + fx * (760 - 64 - 14)) * k, y = r.top + (12 + fy * (400 - 12 - 46)) * k;
    (target || svg).dispatchEvent(new MouseEvent(kind, { clientX: x, clientY: y, button: 0, bubbles: true }));
  }
  function ticks() { return all('#ex-svg text.ex-xtick').map(function (t) { return t.textContent; }); }
  function view() { return $('ex-svg').getAttribute('data-view').split(' ').map(Number); }
  function wiggle(cls) {  /* how rough a path is: its second differences, summed over its runs */
    return all('#ex-svg path.' + cls).reduce(function (sum, p) {
      var n = (p.getAttribute('d').match(/-?[0-9.]+/g) || []).map(Number), s = 0;
      for (var k = 5; k < n.length; k += 2) { s += Math.abs(n[k] - 2 * n[k - 2] + n[k - 4]); }
      return sum + s; }, 0);
  }
  function step(name, fn) { try { fn(); seen.steps.push(name); } catch (e) { window.__errors.push(name + ': ' + e); } }
  var data = JSON.parse($('sat-data').getAttribute('data-json'));
  step('order', function () {
    seen.order = ['overview', 'curves', 'overlays'].map(function (id) { return $(id).getBoundingClientRect().top; });
  });
  step('pages', function () {
    seen.group = $('ex-group').selectedOptions[0].textContent;
    seen.firstPage = drawn().length;
    var reached = drawn(), pages = 1;
    while (!$('ex-next').disabled && pages < 50) { $('ex-next').click(); reached = reached.concat(drawn()); pages += 1; }
    seen.pages = pages; seen.reached = reached.filter(function (r, i) { return reached.indexOf(r) === i; }).sort();
    $('ex-all').click(); seen.allAtOnce = drawn().length;
    $('ex-none').click(); seen.none = drawn().length;
    $('ex-prev').click(); seen.back = drawn().length;
  });
  step('hover', function () {
    at('mousemove', 0.5, 0.5);
    var rows = all('#ex-tip tr');
    seen.tipShown = !$('ex-tip').hidden; seen.tipRows = rows.length;
    seen.tipHead = $('ex-tip').querySelector('.head').textContent;
    seen.tipValuesOk = rows.every(function (tr) {
      var c = data.curves[+tr.getAttribute('data-i')], v = parseFloat(tr.cells[2].textContent);
      return c.run === tr.cells[1].textContent && c.y.some(function (y) {
        return y !== null && Math.abs(y - v) <= 1e-4 * Math.abs(y) + 1e-12; });
    });
    seen.nearRows = all('#ex-tip tr.near').length;
  });
  step('zoom', function () {
    seen.view0 = view(); seen.ticks0 = ticks();
    at('mousedown', 0.2, 0.1); at('mousemove', 0.6, 0.9, window); at('mouseup', 0.6, 0.9, window);
    seen.view1 = view(); seen.zoomed = $('ex-svg').getAttribute('data-zoomed'); seen.ticks1 = ticks();
    at('dblclick', 0.5, 0.5);
    seen.view2 = view(); seen.unzoomed = $('ex-svg').getAttribute('data-zoomed');
    at('mousedown', 0.2, 0.5); at('mouseup', 0.7, 0.5, window);  /* along x only */
    seen.view3 = view();
    $('ex-reset').click(); seen.view4 = view();
  });
  step('scales', function () {
    seen.logTicks = ticks();
    set($('ex-xscale'), 'linear', 'change'); seen.linTicks = ticks();
    seen.xscale = $('ex-svg').getAttribute('data-xscale');
    set($('ex-xscale'), 'log', 'change');
    set($('ex-yscale'), 'log', 'change'); seen.yscale = $('ex-svg').getAttribute('data-yscale');
    seen.yTicksLog = all('#ex-svg text.ex-ytick').map(function (t) { return t.textContent; });
    set($('ex-yscale'), 'linear', 'change');
  });
  step('axis', function () {
    seen.computeView = view(); seen.computeLabel = document.querySelector('#ex-svg text.ex-xlabel').textContent;
    set($('ex-x'), 'step', 'change');
    seen.stepView = view(); seen.stepLabel = document.querySelector('#ex-svg text.ex-xlabel').textContent;
    seen.forecastsOnStep = all('#ex-svg path.ex-forecast').length;
    set($('ex-x'), 'compute', 'change');
    seen.forecasts = all('#ex-svg path.ex-forecast').length;
  });
  step('smoothing', function () {
    var table = $('curves').innerHTML, held = $('sat-data').getAttribute('data-json');
    seen.rawWiggle = wiggle('ex-raw'); seen.smoothBefore = all('#ex-svg path.ex-smooth').length;
    set($('ex-smooth'), '0.9', 'input');
    seen.smoothPaths = all('#ex-svg path.ex-smooth').length; seen.runsDrawn = drawn().length;
    seen.smoothWiggle = wiggle('ex-smooth'); seen.smoothing = $('ex-svg').getAttribute('data-smoothing');
    at('mousemove', 0.5, 0.5);
    seen.tipRaw = all('#ex-tip tr').every(function (tr) { return /^raw /.test(tr.cells[3].textContent); });
    seen.tableSame = $('curves').innerHTML === table; seen.dataSame = $('sat-data').getAttribute('data-json') === held;
    set($('ex-smooth'), '0', 'input');
  });
  step('filters', function () {
    set($('ov-verdict'), 'scaling', 'change');
    seen.legendVerdicts = all('#ex-legend li').map(function (li) { return li.getAttribute('data-verdict'); })
      .filter(function (v, i, a) { return a.indexOf(v) === i; });
    seen.rowVerdicts = all('#curves tbody tr').filter(function (r) { return r.style.display !== 'none'; })
      .map(function (r) { return r.getAttribute('data-verdict'); }).filter(function (v, i, a) { return a.indexOf(v) === i; });
    seen.drawnScaling = drawn().every(function (name) { return data.curves.some(function (c) { return c.run === name && c.verdict === 'scaling'; }); });
    set($('ov-verdict'), '', 'change');
  });
  step('overview', function () {
    var dots = all('svg.overview a[data-show]');
    seen.dots = dots.length;
    var dot = dots[dots.length - 1], i = +dot.getAttribute('data-show');
    dot.dispatchEvent(new MouseEvent('mousemove', { clientX: 10, clientY: 10, bubbles: true }));
    seen.overviewTip = $('ov-tip').hidden ? '' : $('ov-tip').textContent;
    seen.overviewRun = data.curves[i].run;
    dot.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    var focus = document.querySelector('#ex-legend li.focus');
    seen.focused = focus ? +focus.getAttribute('data-i') : null; seen.clicked = i;
    seen.focusDrawn = drawn().indexOf(data.curves[i].run) >= 0;
  });
  step('names', function () {
    seen.legendText = $('ex-legend').textContent;
    seen.images = document.images.length;
    seen.links = all('a[href]').filter(function (a) { return !/^#/.test(a.getAttribute('href')); })
      .map(function (a) { return [a.getAttribute('href'), a.getAttribute('rel')]; });
  });
  seen.errors = window.__errors; seen.alerts = window.__alerts;
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify(seen);
  document.body.appendChild(out);
});
</script>"""


def _runs() -> pd.DataFrame:
    """48 runs of one metric (16 recipes, 3 seeds): half still gaining, half saturated; two with
    hostile names. The step axis is not the compute axis."""
    c = np.geomspace(1, 1000, 24)
    rng = np.random.default_rng(0)
    rows = []
    for k in range(16):
        for seed in range(3):
            run = f"r{k:02d}-seed{seed}"
            if (k, seed) in ((3, 1), (9, 2)):
                run = HOSTILE[(k, seed) == (9, 2)]
            y = 0.1 * np.log2(c) if k % 2 else 1 - np.exp(-c / (10 + k))
            y = y + rng.normal(0, 0.02, c.size) + 0.05 * k
            rows += [{"run": run, "metric": "reward", "step": 10 * i, "compute": float(x),
                      "value": float(v)} for i, (x, v) in enumerate(zip(c, y, strict=True))]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    tmp = tmp_path_factory.mktemp("explorer-browser")
    _runs().to_csv(tmp / "runs.csv", index=False)
    analysis = saturate.api.analyze(tmp / "runs.csv", n_boot=20)
    assert len(analysis.curves) == 48
    assert {"scaling", "saturated"} <= {c.verdict for c in analysis.curves}
    # a run's link on its tracker (an attribute of the curve once the source gives it): one
    # http(s) link, one that must never become a link
    object.__setattr__(analysis.curves[0], "run_url", URL)
    object.__setattr__(analysis.curves[1], "run_url", "javascript:alert(3)")
    out = tmp / "report.html"
    out.write_text(render_html(analysis), encoding="utf-8")
    return out, analysis


def _probe(page: Path, tmp_path: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    probed = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert probed != text
    target = tmp_path / "probed.html"
    target.write_text(probed.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    res = _chromium(tmp_path, "--window-size=1280,1200", "--dump-dom", target.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, f"no probe output; chromium exit {res.returncode}: {res.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


@pytest.fixture(scope="module")
def seen(page, tmp_path_factory) -> dict:
    return _probe(page[0], tmp_path_factory.mktemp("probe"))


def test_no_script_error_and_every_step_ran(seen) -> None:
    assert seen["errors"] == [] and seen["alerts"] == 0
    assert seen["steps"] == ["order", "pages", "hover", "zoom", "scales", "axis", "smoothing",
                             "filters", "overview", "names"]


def test_the_overview_comes_first_then_the_table_then_the_runs(seen) -> None:
    overview, table, runs = seen["order"]
    assert overview < table < runs
    assert seen["dots"] == 48  # every curve a dot


def test_every_run_of_48_is_reachable(page, seen) -> None:
    _, analysis = page
    names = sorted(c.run for c in analysis.curves)
    assert seen["group"].startswith("reward") and "(48 runs)" in seen["group"]
    assert seen["firstPage"] == 12 and seen["pages"] == 4
    assert seen["reached"] == names  # page by page
    assert seen["allAtOnce"] == 48 and seen["none"] == 0 and seen["back"] == 12


def test_values_on_hover_are_the_runs_own(seen) -> None:
    assert seen["tipShown"] and 0 < seen["tipRows"] <= 14 and seen["nearRows"] == 1
    assert seen["tipHead"].startswith("compute ")
    assert seen["tipValuesOk"]


def test_a_dragged_box_zooms_and_a_double_click_goes_back(seen) -> None:
    x0, x1, y0, y1 = seen["view0"]
    a0, a1, b0, b1 = seen["view1"]
    assert seen["zoomed"] == "yes" and x0 < a0 < a1 < x1 and y0 < b0 < b1 < y1
    assert seen["ticks1"] != seen["ticks0"]
    assert seen["view2"] == seen["view0"] and seen["unzoomed"] == "no"
    c0, c1, _, _ = seen["view3"]
    assert x0 < c0 < c1 < x1  # along x only
    assert seen["view4"] == seen["view0"]


def _value(label: str) -> float:
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}
    return float(label[:-1]) * scale[label[-1]] if label[-1] in scale else float(label)


def test_log_and_linear(seen) -> None:
    log = [_value(t) for t in seen["logTicks"]]
    lin = [_value(t) for t in seen["linTicks"]]
    assert seen["xscale"] == "linear" and len(lin) >= 3 and len(log) >= 3
    assert len({round(b - a, 9) for a, b in zip(lin, lin[1:], strict=False)}) == 1  # even steps
    assert len({round(b / a, 9) for a, b in zip(log, log[1:], strict=False)}) == 1  # decades
    assert seen["yscale"] == "log" and seen["yTicksLog"]


def test_step_and_compute(seen) -> None:
    assert seen["computeLabel"].startswith("compute") and seen["stepLabel"].startswith("step")
    assert seen["computeView"][1] > 1000  # the forecast runs past the last compute
    assert seen["stepView"][1] < 300  # steps go to 230
    assert seen["forecasts"] > 0 and seen["forecastsOnStep"] == 0


def test_smoothing_is_for_display_only(seen) -> None:
    assert seen["smoothBefore"] == 0 and seen["smoothPaths"] == seen["runsDrawn"] == 12
    assert seen["smoothing"] == "0.9" and seen["smoothWiggle"] < 0.5 * seen["rawWiggle"]
    assert seen["tipRaw"]  # the hover shows the raw value beside the smoothed one
    assert seen["tableSame"] and seen["dataSame"]  # the numbers and verdicts do not move


def test_filters_and_the_overview_lead_to_the_runs(seen) -> None:
    assert seen["legendVerdicts"] == ["scaling"] and seen["rowVerdicts"] == ["scaling"]
    assert seen["drawnScaling"]
    assert seen["overviewRun"] in seen["overviewTip"]
    assert seen["focused"] == seen["clicked"] and seen["focusDrawn"]


def test_hostile_names_stay_text_and_links_are_http_only(seen) -> None:
    for name in HOSTILE:
        assert name in seen["legendText"]
    assert seen["images"] == 0 and seen["alerts"] == 0
    links = [tuple(x) for x in seen["links"]]
    assert links and {href for href, _ in links} == {URL}  # table and legend; never javascript:
    assert all(rel == "noopener noreferrer" for _, rel in links)


def test_the_page_as_written_runs_its_script_under_its_csp_without_a_console_message(
        page, tmp_path) -> None:
    res = _chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", page[0].as_uri())
    root = re.search(r"<html[^>]*>", res.stdout)
    assert root, res.stderr[-2000:]
    for part in ("sortable", "overlay", "details", "overview", "explorer"):
        assert f'data-{part}="on"' in root[0], root[0]
    assert 'class="ex-run"' in res.stdout  # the explorer drew
    console = [ln for ln in res.stderr.splitlines() if ":CONSOLE" in ln]
    assert console == []
    assert "<script>alert(2)" not in res.stdout.split("<body", 1)[1]
