"""The HTML report in a real headless Chromium: the curves' sections are closed until opened (a
link to one opens it), every chart is drawn, clicking a column header sorts the table, the page's
own script runs under its Content-Security-Policy (allowed by its hash), and a run named
``<script>alert(1)</script>`` stays text (no script of it runs).

Needs a Chromium binary (Debian: ``apt-get install chromium``; or set ``SATURATE_CHROMIUM``).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_report_data import HOSTILE, N_BOOT, write_runs

import saturate.api
from saturate.report.html import render_html

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome",
          "headless_shell")


def _browser() -> str | None:
    env = os.environ.get("SATURATE_CHROMIUM")
    if env:
        return env
    return next((p for p in map(shutil.which, _NAMES) if p), None)


BROWSER = _browser()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium binary found (install the 'chromium' package or set SATURATE_CHROMIUM)",
)]

# Runs first in <head>: counts alert() calls; after load, measures every chart, clicks the
# "gain / doubling" header twice and the "run" header once, and writes what it saw into the DOM.
PROBE = """<script>
window.__alerts = 0; window.alert = function () { window.__alerts += 1; };
window.addEventListener('load', function () {
  function column(table, i) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      var c = r.cells[i]; var v = c.getAttribute('data-v');
      return v === null ? c.textContent : v;
    });
  }
  var table = document.getElementById('curves');
  var sections = Array.prototype.slice.call(document.querySelectorAll('details.curve'));
  var closed = sections.filter(function (d) { return !d.open; }).length;
  var link = table.tBodies[0].rows[1].querySelector('a[href^="#c"]');
  link.click();
  var opened = document.getElementById(link.getAttribute('href').slice(1)).open;
  document.querySelector('button[data-details="open"]').click();
  var heads = table.tHead.rows[0].cells;
  var gain = Array.prototype.findIndex.call(heads, function (h) {
    return h.textContent.indexOf('gain') === 0; });
  var seen = { before: column(table, gain) };
  heads[gain].click(); seen.up = column(table, gain);
  heads[gain].click(); seen.down = column(table, gain);
  heads[0].click(); seen.runs = column(table, 0);
  var svgs = Array.prototype.slice.call(document.querySelectorAll('svg'));
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({
    svgs: svgs.length,
    drawn: svgs.filter(function (s) {
      var b = s.getBoundingClientRect();
      return b.width > 40 && b.height > 10 && s.querySelector('path') !== null;
    }).length,
    chartWidths: svgs.filter(function (s) { return s.classList.contains('chart'); })
      .map(function (s) { return s.getBoundingClientRect().width; }),
    images: document.images.length,
    alerts: window.__alerts,
    scripts: document.scripts.length,
    hostileShown: document.body.innerText.indexOf(HOSTILE_JSON) >= 0,
    rows: table.tBodies[0].rows.length,
    sections: sections.length, closedAtFirst: closed, linkOpens: opened,
    allOpen: sections.every(function (d) { return d.open; }),
    sort: seen
  });
  document.body.appendChild(out);
});
</script>""".replace(
    "HOSTILE_JSON", json.dumps(HOSTILE).replace("</", "<\\/")  # "</script>" would end the probe
)


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'profile'}",
           "--virtual-time-budget=5000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    tmp = tmp_path_factory.mktemp("browser")
    runs = write_runs(tmp / "runs.csv", names=("grow", HOSTILE, "short"))
    analysis = saturate.api.analyze(runs, n_boot=N_BOOT)
    page = tmp / "report.html"
    page.write_text(render_html(analysis), encoding="utf-8")
    return page, analysis


def _probe(report, tmp_path: Path) -> dict:
    page, _ = report
    text = page.read_text(encoding="utf-8")
    # The probe is a script the report's own CSP does not allow: take the CSP out, so this also
    # proves that the escaping alone keeps the hostile name from running.
    probed = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert probed != text
    probed = probed.replace("<head>", "<head>" + PROBE, 1)
    target = tmp_path / "probed.html"
    target.write_text(probed, encoding="utf-8")
    res = _chromium(tmp_path, "--window-size=1280,1600", "--dump-dom", target.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, f"no probe output; chromium exit {res.returncode}: {res.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


def test_charts_render_and_hostile_name_stays_text(report, tmp_path: Path) -> None:
    seen = _probe(report, tmp_path)
    n = len(report[1].curves)
    assert seen["svgs"] >= 3 * n and seen["drawn"] == seen["svgs"], seen  # every chart drawn
    assert all(w >= 500 for w in seen["chartWidths"]), seen
    assert seen["images"] == 0
    assert seen["alerts"] == 0 and seen["scripts"] == 2, seen  # the probe and the page's own
    assert seen["hostileShown"] is True
    assert seen["rows"] == n
    # each curve's section is closed until opened: by a link to it, or "open all"
    assert seen["sections"] == seen["closedAtFirst"] == n
    assert seen["linkOpens"] is True and seen["allOpen"] is True


def test_clicking_a_header_sorts_the_table(report, tmp_path: Path) -> None:
    sort = _probe(report, tmp_path)["sort"]

    def keys(column: list[str]) -> list[float]:
        return [float(v) if v else float("-inf") for v in column]

    assert sorted(keys(sort["before"])) == keys(sort["up"]) != keys(sort["before"])
    assert keys(sort["down"]) == sorted(keys(sort["before"]), reverse=True)
    assert sort["runs"] == sorted(sort["runs"], key=str.lower)


def test_report_as_written_runs_only_its_own_script_under_its_csp(report, tmp_path: Path) -> None:
    page, _ = report
    res = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert 'data-sortable="on"' in res.stdout, res.stderr[-2000:]  # the hashed script ran
    assert "<script>alert(1)</script>" not in res.stdout.split("<body", 1)[1]
    shot = tmp_path / "shot.png"
    res = _chromium(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 20_000, res.stderr[-2000:]
