"""The HTML report in a real headless Chromium: it renders, its images decode, and a run named
``<script>alert(1)</script>`` stays text (no script runs).

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
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium binary found (install the 'chromium' package or set SATURATE_CHROMIUM)",
)

# Runs first in <head>: counts alert() calls, then after load writes what it saw into the DOM.
PROBE = """<script>
window.__alerts = 0; window.alert = function () { window.__alerts += 1; };
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({
    images: imgs.length,
    decoded: imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
    widths: imgs.map(function (i) { return i.naturalWidth; }),
    alerts: window.__alerts,
    scripts: document.scripts.length,
    hostileShown: document.body.innerText.indexOf(HOSTILE_JSON) >= 0,
    rows: document.querySelectorAll('tbody tr').length
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


def test_report_renders_with_images_and_hostile_name_as_text(report, tmp_path: Path) -> None:
    page, analysis = report
    text = page.read_text(encoding="utf-8")
    # The probe needs scripts, which the report's own CSP forbids: take the CSP out, so this also
    # proves the escaping alone keeps the hostile name from running.
    probed = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    assert probed != text
    probed = probed.replace("<head>", "<head>" + PROBE, 1)
    target = tmp_path / "probed.html"
    target.write_text(probed, encoding="utf-8")
    res = _chromium(tmp_path, "--dump-dom", target.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, f"no probe output; chromium exit {res.returncode}: {res.stderr[-2000:]}"
    seen = json.loads(html.unescape(m.group(1)))
    n = len(analysis.curves)
    assert seen["images"] == n and seen["decoded"] == n, seen
    assert all(w >= 500 for w in seen["widths"]), seen
    assert seen["alerts"] == 0 and seen["scripts"] == 1, seen  # only the probe itself
    assert seen["hostileShown"] is True
    assert seen["rows"] >= n


def test_report_as_written_renders_under_its_csp(report, tmp_path: Path) -> None:
    page, _ = report
    shot = tmp_path / "shot.png"
    res = _chromium(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 20_000, res.stderr[-2000:]
