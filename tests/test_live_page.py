"""The page ``watch --html`` keeps: the verdicts with the curves drawn (the overview, a sparkline
per row, the runs explorer), every name escaped (markup, control and bidi characters), the
report's Content-Security-Policy, its refresh; the curves restored from the watch's state
(no points) listed, not drawn. In headless Chromium: the curves are drawn under the page's CSP
with no console message, and the explorer's view survives the page's reload.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from test_html_browser import BROWSER, _chromium
from test_report_data import HOSTILE, N_BOOT, write_runs

import saturate.api
from saturate.report.html import render_live_page
from saturate.report.html_assets import CSP, PAGE_SCRIPT
from saturate.tracker.state import curve_from_dict

CONTROL = "bad\x1bname\u202e"


@pytest.fixture(scope="module")
def curves(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    runs = write_runs(tmp_path_factory.mktemp("live") / "runs.csv")
    analysis = saturate.api.analyze(runs, n_boot=N_BOOT)
    grow = analysis["grow", "reward"]
    object.__setattr__(grow, "run", CONTROL)  # a name with an escape and a bidi override
    return analysis.curves


@pytest.fixture(scope="module")
def page(curves) -> str:
    return render_live_page(curves, source="runs.csv <b>", updated=1.7e9, refresh=30)


def test_the_page_draws_the_curves(curves, page: str) -> None:
    assert '<meta http-equiv="refresh" content="30">' in page
    assert f'content="{CSP}"' in page
    assert re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S) == [PAGE_SCRIPT]
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="overview"') == 1
    assert page.count('class="spark"') == len(curves)  # a sparkline per row
    assert 'id="explorer"' in page and 'id="sat-data"' in page
    data = json.loads(html.unescape(re.search(r"data-json='([^']*)'", page).group(1)))
    assert len(data["curves"]) == len(curves)
    assert all(c["y"] for c in data["curves"])


def test_every_name_is_escaped(page: str) -> None:
    assert HOSTILE not in page and html.escape(HOSTILE) in page
    assert "runs.csv &lt;b&gt;" in page
    for raw in ("\x1b", "\u202e"):
        assert raw not in page
    assert "bad\\x1bname\\u202e" in page  # shown escaped, as every face shows it


def test_curves_restored_from_the_state_are_listed_not_drawn(curves) -> None:
    restored = [curve_from_dict(c.to_dict()) for c in curves]
    assert all(c.points is None for c in restored)
    page = render_live_page([*restored[:1], *curves[1:]], source="s", updated=0.0)
    assert "1 curve(s) carry no points yet" in page
    assert page.count('class="spark"') == len(curves) - 1
    empty = render_live_page([], source="s", updated=0.0)
    assert "no curve analysed yet" in empty and "waiting for the first pass" in empty
    assert 'id="explorer"' not in empty


PROBE = """<script>
window.addEventListener('load', function () {
  var svg = document.getElementById('ex-svg');
  if (!sessionStorage.getItem('probed')) {
    sessionStorage.setItem('probed', '1');
    var x = document.getElementById('ex-xscale');
    x.value = 'linear'; x.dispatchEvent(new Event('change'));
    location.reload();
    return;
  }
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({ xscale: svg.getAttribute('data-xscale'),
    runs: document.querySelectorAll('#ex-svg g.ex-run').length });
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.browser
@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found")
def test_in_chromium_the_curves_are_drawn_and_the_view_survives_a_reload(page: str,
                                                                        tmp_path: Path) -> None:
    target = tmp_path / "live.html"
    target.write_text(page, encoding="utf-8")
    res = _chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", target.as_uri())
    assert 'data-explorer="on"' in res.stdout and 'data-overview="on"' in res.stdout
    assert len(re.findall(r'<g class="ex-run"', res.stdout)) >= 2
    assert [ln for ln in res.stderr.splitlines() if ":CONSOLE" in ln] == []
    probed = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    target.write_text(probed.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    res = _chromium(tmp_path, "--dump-dom", target.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, res.stderr[-2000:]
    seen = json.loads(html.unescape(m.group(1)))
    assert seen["xscale"] == "linear" and seen["runs"] >= 2
