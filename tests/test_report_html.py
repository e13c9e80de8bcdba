"""The HTML report and the notebook views on real analyses of the sample runs: a size budget per
curve, well-formed inline SVG, a Content-Security-Policy that allows exactly the page's script,
forecast markers on the forecast line, seeds overlaid where curves are pooled, legends outside the
data, and badges whose text reads on their colour.

Speed is a benchmark (``benchmarks/bench_report.py``), never an assertion here."""

from __future__ import annotations

import base64
import hashlib
import re
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from test_report_data import N_BOOT

import saturate.api
from saturate.report.html import render_html
from saturate.report.html_assets import BADGE_COLORS, CSP, PAGE_SCRIPT, SEVERITY_COLORS, contrast
from saturate.report.svg import chart_svg
from saturate.report.svg.curves import curve_chart, seed_curves, thumbnail_chart, x_label

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
SVG = "{http://www.w3.org/2000/svg}"
BYTES_PER_CURVE = 25_000
"""53 sample curves must make a report under 1.5 MB: 25 kB a curve (charts, sparkline, facts,
reasons, laws), with room left for the diagnostics' figures and the page itself."""


@pytest.fixture(scope="module")
def analysis():
    files = [SAMPLES / "02_scaleup_20x.csv", SAMPLES / "06_pass_at_k.csv",
             SAMPLES / "03_saturated.csv"]
    return saturate.api.analyze(files, n_boot=N_BOOT, forecast_at=("2x", "4x"))


@pytest.fixture(scope="module")
def pooled():
    return saturate.api.analyze(SAMPLES / "08_recipe_comparison.csv", n_boot=N_BOOT,
                                group_by="recipe", metric="eval/*")


@pytest.fixture(scope="module")
def page(analysis) -> str:
    return render_html(analysis)


def test_size_budget_per_curve(analysis, page: str) -> None:
    assert len(page.encode("utf-8")) < BYTES_PER_CURVE * len(analysis.curves)


def test_every_svg_is_well_formed_and_there_is_one_chart_pair_per_curve(analysis, page) -> None:
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    for s in svgs:
        ET.fromstring(s)  # raises on malformed markup
    charts = [s for s in svgs if 'class="chart"' in s]
    sparks = [s for s in svgs if 'class="spark"' in s]
    n = len(analysis.curves)
    assert len(sparks) == n and len(charts) >= 2 * n
    assert "<img" not in page and "data:image" not in page  # nothing but inline vector charts


def test_only_the_page_script_runs_and_nothing_is_fetched(page) -> None:
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S)
    assert scripts == [PAGE_SCRIPT]
    digest = base64.b64encode(hashlib.sha256(PAGE_SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in CSP and "default-src 'none'" in CSP
    assert f'content="{CSP}"' in page
    for url in re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", page):
        assert url.startswith("#"), url


def test_sortable_table_has_a_row_and_sort_keys_per_curve(analysis, page) -> None:
    table = page[page.index('<table class="sortable"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr\b[^>]*>.*?</tr>", table[table.index("<tbody>"):], re.S)
    assert len(rows) == len(analysis.curves)
    for row, c in zip(rows, analysis.curves, strict=True):
        keys = re.findall(r'data-v="([^"]*)"', row)
        assert keys[1] == ("" if c.p_pays is None else f"{c.p_pays:.6g}")  # P(pays)
        assert keys[2] == f"{c.gain_per_doubling.value:.6g}"


def test_forecast_markers_sit_on_the_forecast_line(analysis) -> None:
    checked = 0
    for c in analysis.curves:
        chart = curve_chart(c)
        line = next((i for i in chart.items if i.label == "forecast"), None)
        markers = [i for i in chart.items if i.kind == "marker"]
        if line is None:
            continue
        for m, f in zip(markers, c.forecast, strict=True):
            (x,), (y,) = m.x, m.y
            assert x == f.compute and y == f.value  # the reported forecast
            k = int(np.argmin(np.abs(line.x - x)))
            assert line.x[k] == pytest.approx(x) and line.y[k] == pytest.approx(y, abs=1e-12)
            checked += 1
    assert checked >= len(analysis.curves)


def test_pooled_curves_draw_their_seeds_and_spread(pooled) -> None:
    (curve, *_) = [c for c in pooled.curves if c.group and c.group.get("n_seeds", 0) > 1]
    seeds = seed_curves(curve, pooled.data.points)
    assert len(seeds) == curve.group["n_seeds"] == 3
    chart = curve_chart(curve, data=pooled.data.points)
    labels = [i.label for i in chart.items]
    assert labels.count("the 3 seeds") == 3 and "±1 sd across seeds" in labels
    assert "seed mean" in labels
    page = render_html(pooled)
    assert "the 3 seeds" in page


def test_legend_below_the_plot_and_y_range_from_the_data(analysis) -> None:
    c = analysis.curves[0]
    root = ET.fromstring(chart_svg(curve_chart(c)))
    frame = next(r for r in root.iter(f"{SVG}rect") if r.get("fill") == "none")
    bottom = float(frame.get("y")) + float(frame.get("height"))
    texts = {t.text: float(t.get("y")) for t in root.iter(f"{SVG}text") if t.get("y")}
    for label in ("observed", "fit", "forecast"):
        assert texts[label] > bottom + 20  # below the axis and its name, off the data
    for c in analysis.curves:  # thumbnails: the data's range, whatever the forecast band does
        y = c.points["value"].to_numpy(float)
        lo, hi = thumbnail_chart(c).y_range()
        pad = 0.05 * (y.max() - y.min())
        assert lo == pytest.approx(y.min() - pad) and hi == pytest.approx(y.max() + pad)
        chart = curve_chart(c)  # the detail chart: the data, fit, forecast line, not the bands
        drawn = np.concatenate([i.y for i in chart.items
                                if i.kind in ("dots", "line", "hline", "marker")])
        drawn = drawn[np.isfinite(drawn)]
        pad = 0.05 * (drawn.max() - drawn.min())
        assert chart.y_range() == pytest.approx((drawn.min() - pad, drawn.max() + pad))


def test_x_axis_names_its_unit_when_the_curve_has_one(analysis) -> None:
    with_unit = types.SimpleNamespace(compute_name="gpu_hours", compute_unit="GPU-hours")
    assert x_label(with_unit) == "gpu_hours (GPU-hours), log scale"
    assert x_label(analysis.curves[0]) == f"{analysis.curves[0].compute_name}, log scale"


def test_badges_read_on_their_colour() -> None:
    for color in (*BADGE_COLORS.values(), *SEVERITY_COLORS.values()):
        assert contrast(color, "#ffffff") >= 4.5, color


def test_progress_is_called_for_every_curve(analysis) -> None:
    seen: list[tuple[int, int]] = []
    render_html(analysis, progress=lambda done, total: seen.append((done, total)))
    n = len(analysis.curves)
    assert seen[-1] == (n, n) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_two_workers_draw_the_same_page(analysis, page) -> None:
    assert render_html(analysis, workers=2) == page


def test_notebook_views_of_analysis_curve_and_fit(analysis) -> None:
    frag = analysis._repr_html_()
    assert frag.startswith('<div class="saturate-nb"><style>') and "<script" not in frag
    assert frag.count('class="thumb"') == len(analysis.curves)
    curve = analysis.curves[0]
    card = curve._repr_html_()
    assert "saturate-nb" in card and card.count("<svg") == 2 and curve.reasons[0][:30] in card
    fit = curve.fit._repr_html_()
    assert "<svg" in fit and all(law.name in fit for law in curve.fit.laws)


def test_run_links_are_http_only_escaped_and_open_apart() -> None:
    from saturate.report.html_assets import run_url

    def curve(url: object) -> types.SimpleNamespace:
        return types.SimpleNamespace(run_url=url)

    for good in ("https://wandb.ai/team/proj/runs/abc", "http://mlflow:5000/#/experiments/1/runs/2"):
        assert run_url(curve(good)) == good
    for bad in ("javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "https://",
                "//evil.example/x", "https://a b", "https://x\n.y", None, 3, ""):
        assert run_url(curve(bad)) is None, bad
    assert run_url(types.SimpleNamespace()) is None  # a source that gives no link


def test_the_report_links_a_run_to_its_tracker_page(analysis) -> None:
    import dataclasses

    url = "https://tracker.example/r?a=1&b=<2>"
    first = dataclasses.replace(analysis.curves[0])
    object.__setattr__(first, "run_url", url)
    page = render_html(types.SimpleNamespace(curves=(first, *analysis.curves[1:]),
                                             settings=analysis.settings), plots=False)
    link = '<a class="ext" href="https://tracker.example/r?a=1&amp;b=&lt;2&gt;" '
    assert page.count(link + 'rel="noopener noreferrer" target="_blank"') == 2  # table, section
    assert "javascript:" not in page


def test_the_overview_draws_every_curve_at_its_p_and_escapes_names() -> None:
    from saturate.report.svg.overview import MAX_ROWS, overview_svg

    def curve(i: int, metric: str, p: float | None) -> types.SimpleNamespace:
        return types.SimpleNamespace(run=f"<r{i}>", metric=metric, p_pays=p,
                                     verdict="scaling" if (p or 0) >= 0.55 else "saturated")

    curves = [curve(i, "m<&>", i / 20) for i in range(21)] + [curve(21, "other", None)]
    svg = overview_svg(curves, (0.45, 0.55))
    root = ET.fromstring(svg)  # well-formed, the names escaped
    dots = [(a.get("data-show"), a.find(f"{SVG}circle")) for a in root.iter(f"{SVG}a")]
    assert sorted(int(i) for i, _ in dots) == list(range(22))
    xs = {int(i): float(c.get("cx")) for i, c in dots}
    assert all(xs[i] < xs[i + 1] for i in range(20))  # ordered by P(pays)
    assert xs[21] < xs[0]  # no P: its own lane, left of 0
    assert "m&lt;&amp;&gt;" in svg and "<r1>" not in svg
    many = [curve(i, f"metric{i}", 0.5) for i in range(MAX_ROWS + 5)]
    assert f"the {MAX_ROWS} of {MAX_ROWS + 5} metrics" in overview_svg(many)


def test_the_explorer_data_thins_rounds_and_leaves_gaps(analysis) -> None:
    import dataclasses

    import pandas as pd

    from saturate.report.chart_data import DIGITS, MAX_POINTS, curve_data, page_data

    c = analysis.curves[0]
    n = 5 * MAX_POINTS
    pts = pd.DataFrame({"step": np.arange(n), "compute": np.geomspace(1, 1e4, n),
                        "value": np.linspace(0, 1, n) / 3})
    pts.loc[7, "value"] = np.nan
    long = dataclasses.replace(c, points=pts)
    d = curve_data(0, long, 0.9)
    assert len(d["y"]) == len(d["x"]) == len(d["s"]) == MAX_POINTS
    assert d["s"][0] == 0 and d["s"][-1] == n - 1  # the first and the last point kept
    assert all(v == float(f"{v:.{DIGITS}g}") for v in d["y"])  # rounded for display
    assert None not in d["y"]
    short = curve_data(0, dataclasses.replace(c, points=pts.iloc[:20]), 0.9)
    assert len(short["y"]) == 19 and 7 not in short["s"]  # a point without a value is not drawn
    assert d["y"] == sorted(d["y"]) and d["y"][-1] == float(f"{1 / 3:.{DIGITS}g}")
    page = page_data(analysis.curves, 0.9)
    sizes = [len(g["curves"]) for g in page["groups"]]
    assert sizes == sorted(sizes, reverse=True) and sum(sizes) == len(analysis.curves)
    assert all(v is None or np.isfinite(v) for cd in page["curves"] for v in cd["y"])
