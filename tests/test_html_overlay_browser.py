"""The HTML report's runs on one chart in a real headless Chromium: every run drawn, a run's
legend checkbox hides and shows it, the verdict and run filters hide the runs and the summary
table's rows that do not match, and the page's one script does it under the report's CSP.

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

PROBE = """<script>
window.addEventListener('load', function () {
  function runs() {
    return Array.prototype.filter.call(document.querySelectorAll('g.ov-run'), function (g) {
      return g.style.display !== 'none' && g.getBoundingClientRect().width > 0;
    }).map(function (g) { return g.getAttribute('data-run'); }).sort();
  }
  function rows() {
    return Array.prototype.filter.call(document.getElementById('curves').tBodies[0].rows,
      function (r) { return r.style.display !== 'none'; })
      .map(function (r) { return r.cells[0].textContent; }).sort();
  }
  function set(el, value, kind) { el.value = value; el.dispatchEvent(new Event(kind)); }
  var seen = { all: runs(), rows: rows() };
  var first = document.querySelector('.ov-legend label[data-i="0"]');
  seen.first = first.getAttribute('data-run');
  first.querySelector('input').click(); seen.unchecked = runs();
  first.querySelector('input').click(); seen.rechecked = runs();
  var verdict = document.getElementById('ov-verdict'), run = document.getElementById('ov-run');
  set(verdict, "scaling", "change"); seen.scaling = runs(); seen.scalingRows = rows();
  set(verdict, '', 'change'); set(run, 'seed1', 'input');
  seen.seed1 = runs(); seen.seed1Rows = rows();
  seen.charts = Array.prototype.map.call(document.querySelectorAll('svg.overlay'), function (s) {
    return s.getBoundingClientRect().width; });
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify(seen);
  document.body.appendChild(out);
});
</script>"""

RUNS = {"ppo-seed0": "flat", "ppo-seed1": "flat", "grpo-seed0": "grow", "grpo-seed1": "grow"}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("overlay-browser")
    c = np.geomspace(1, 1000, 40)
    rng = np.random.default_rng(0)
    rows = []
    for run, shape in RUNS.items():
        y = 0.1 * np.log2(c) if shape == "grow" else 1 - np.exp(-c / 20)
        y = y + rng.normal(0, 0.01, c.size)
        rows += [{"run": run, "metric": "reward", "step": i, "compute": float(x), "value": float(v)}
                 for i, (x, v) in enumerate(zip(c, y, strict=True))]
    pd.DataFrame(rows).to_csv(tmp / "runs.csv", index=False)
    analysis = saturate.api.analyze(tmp / "runs.csv", n_boot=20)
    assert {c.run: c.verdict for c in analysis.curves} == {
        "ppo-seed0": "saturated", "ppo-seed1": "saturated", "grpo-seed0": "scaling",
        "grpo-seed1": "scaling"}  # a steady log-linear gain holds: scaling
    out = tmp / "report.html"
    out.write_text(render_html(analysis), encoding="utf-8")
    return out


def test_the_legend_toggles_a_run_and_the_filters_hide_what_does_not_match(page, tmp_path):
    text = page.read_text(encoding="utf-8")
    probed = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    target = tmp_path / "probed.html"
    target.write_text(probed.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    res = _chromium(tmp_path, "--window-size=1280,1600", "--dump-dom", target.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, f"no probe output; chromium exit {res.returncode}: {res.stderr[-2000:]}"
    seen = json.loads(html.unescape(m.group(1)))
    every = sorted(RUNS)
    assert seen["all"] == every and seen["rows"] == every
    assert seen["charts"] and all(w >= 500 for w in seen["charts"])
    assert seen["unchecked"] == sorted(set(every) - {seen["first"]})
    assert seen["rechecked"] == every
    assert seen["scaling"] == seen["scalingRows"] == ["grpo-seed0", "grpo-seed1"]
    assert seen["seed1"] == seen["seed1Rows"] == ["grpo-seed1", "ppo-seed1"]


def test_the_page_script_runs_under_its_own_csp(page, tmp_path):
    res = _chromium(tmp_path, "--dump-dom", page.as_uri())
    root = re.search(r"<html[^>]*>", res.stdout)
    assert root, res.stderr[-2000:]
    assert 'data-overlay="on"' in root[0] and 'data-sortable="on"' in root[0], root[0]
