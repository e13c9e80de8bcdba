"""The runs of a metric on one chart as inline SVG, for Jupyter (``Analysis.overlay()``, where
an output runs no script; the HTML pages draw their runs explorer in the browser instead): each
run's fit and band and each recipe's pooled curve, as ``saturate plot --overlay`` draws them,
less the points. Each run is its own ``<g class="ov-run">``; the pooled curves are in
``<g class="ov-pooled">``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from markupsafe import Markup

from saturate.report.plots.overlay import (
    MAX_RUNS_PER_OVERLAY,
    PALETTE,
    fit_line,
    pooled_curve,
    recipes,
)
from saturate.report.plots.style import interval, observed, short
from saturate.report.svg.chart import Chart, tag
from saturate.report.svg.curves import x_label
from saturate.report.svg.draw import _axes, _f, _layer, _x_scale, _y_scale
from saturate.results import CurveAnalysis

#: Points on each fitted line and band: enough for a smooth curve 700 px wide.
LINE_POINTS = 48


def run_color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def overlay_svg(curves: Sequence[CurveAnalysis], *, confidence: float = 0.9,
                width: float = 720, height: float = 320) -> str:  # fmt: skip
    """The overlay chart of ``curves`` (one metric) as one ``<svg class="overlay">``."""
    shown = list(curves)[:MAX_RUNS_PER_OVERLAY]
    chart = Chart(width, height, xlabel=x_label(shown[0]), ylabel=short(shown[0].metric, 40))
    groups: list[tuple[dict[str, object], int, int]] = []
    for i, curve in enumerate(shown):
        start, color = len(chart.items), run_color(i)
        line = fit_line(curve, LINE_POINTS)
        if line is not None:
            band = interval(curve.fit, line[0], confidence)
            if band is not None:
                chart.band(line[0], band[0], band[1], color, opacity=0.12)
            chart.line(*line, color, width=1.6)
        else:  # no fit: the points, so the run is on the chart
            chart.dots(*observed(curve), color, size=2.6, opacity=0.6)
        groups.append(({"class": "ov-run", "data_i": i, "data_run": curve.run,
                        "data_verdict": curve.verdict}, start, len(chart.items)))
    start = len(chart.items)
    for _, idx in recipes(shown):
        pooled = pooled_curve([shown[i] for i in idx], LINE_POINTS)
        if pooled is not None:
            chart.line(*pooled, run_color(idx[0]), dash="7 4", width=2.6, scale=False)
    groups.append(({"class": "ov-pooled"}, start, len(chart.items)))
    return _draw(chart, groups, f"{shown[0].metric}: {len(shown)} runs")


def _draw(chart: Chart, groups: list[tuple[dict[str, object], int, int]], title: str) -> str:
    w, h = chart.width, chart.height
    box = (58.0, 6.0, w - 8, h - 40)
    x0, y0, x1, y1 = box
    sx, xticks, _, _ = _x_scale(chart, x0, x1)
    sy, yticks = _y_scale(chart, y0, y1)
    body = "".join(tag("g", Markup("".join(_layer(it, sx, sy, box) for it in chart.items[a:b])),
                       **attrs) for attrs, a, b in groups)
    uid = "o" + hashlib.md5(body.encode(), usedforsecurity=False).hexdigest()[:10]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="overlay" viewBox="0 0 {_f(w)} '
            f'{_f(h)}" width="{_f(w)}" height="{_f(h)}" role="img" font-size="11" '
            f'fill="currentColor">{tag("title", title)}'
            f'<clipPath id="{uid}"><rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" '
            f'height="{_f(y1 - y0)}"/></clipPath>{_axes(chart, sx, sy, xticks, yticks, box, 6.1)}'
            f'<g clip-path="url(#{uid})">{body}</g></svg>')
