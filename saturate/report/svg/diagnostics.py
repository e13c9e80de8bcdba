"""SVG figures of the diagnostics a picture explains best, for the HTML report: divergence (reward
and benchmark stacked on one compute axis), pass@k sharpening and two recipes' forecasts; the
matplotlib twins are in :mod:`saturate.report.plots.diagnostics`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from saturate.report.plots.diagnostics import (
    DIAGNOSTIC_PLOTS,
    RECIPE_COLORS,
    curve_of,
    curve_points,
    recipe_forecasts,
    recipe_line,
    sharpening_changes,
)
from saturate.report.plots.style import confidence_of, observed, short
from saturate.report.rows import Analysed
from saturate.report.svg.chart import Chart
from saturate.report.svg.curves import x_label
from saturate.report.svg.draw import chart_svg

if TYPE_CHECKING:
    from saturate.diagnostics.base import Diagnostic

_REWARD, _BENCH, _SINCE, _CROSS = "#c44e52", "#4c72b0", "#8250df", "#cf222e"


def _divergence(d: Diagnostic, analysis: Analysed) -> str:
    reward, bench = d.metrics[0], d.metrics[1]
    rc, ry = curve_points(analysis, d.source, d.run_id, reward)
    bc, by = curve_points(analysis, d.source, d.run_id, bench)
    both = np.concatenate([rc, bc])
    if not both.size:
        return ""
    xlim = (float(both.min()), float(both.max()))
    curve = curve_of(analysis, d.run_id, reward)
    out = []
    for metric, c, y, color, xlabel in ((reward, rc, ry, _REWARD, ""),
                                        (bench, bc, by, _BENCH, x_label(curve) if curve else
                                         "compute, log scale")):
        chart = Chart(640, 170 if not xlabel else 200, xlabel=xlabel, ylabel=short(metric, 28),
                      xlim=xlim, left=64.0)
        chart.line(c, y, color, width=1.3, label=metric)
        if d.compute is not None and math.isfinite(d.compute) and d.compute > 0:
            chart.vline(d.compute, _SINCE, label=f"stopped following at {d.compute:.4g}")
        out.append(chart_svg(chart, title=f"{d.kind} in {d.run}: {metric}"))
    return "".join(out)


def _sharpening(d: Diagnostic) -> str:
    k, value, lo, hi = sharpening_changes(d)
    if not k.size:
        return ""
    chart = Chart(640, 240, xlabel="k (log scale)", ylabel="pass@k: end - first", xbase2=True)
    for point in zip(k, value, lo, hi, strict=True):
        chart.marker(*point, _BENCH, label="change since the first checkpoint")
    chart.line(k, value, _BENCH, width=1.2)
    chart.hline(0.0, "#8c959f", dash="", scale=True)
    kx = d.details.get("crossover_k_interpolated")
    if kx is not None and math.isfinite(kx) and kx > 0:
        chart.vline(kx, _CROSS, label=f"falls behind from k ≈ {kx:.3g}")
    return chart_svg(chart, title=f"sharpening in {d.run}")


def _recipe(d: Diagnostic, analysis: Analysed) -> str:
    metric = d.metrics[0]
    found, crossing, end = recipe_forecasts(d, analysis)
    curves = [(label, c) for label, c in found if c is not None]
    if not curves:
        return ""
    conf = confidence_of(analysis)
    chart = Chart(640, 280, xlabel=x_label(curves[0][1]), ylabel=short(metric, 40))
    for i, (label, curve) in enumerate(curves):
        color = RECIPE_COLORS[i % len(RECIPE_COLORS)]
        c, y = observed(curve)
        chart.dots(c, y, color, size=2.6, opacity=0.5)
        line = recipe_line(curve, c, end, conf, 160)
        if line is None:
            continue
        grid, p, band = line
        if band is not None:
            chart.band(grid, band[0], band[1], color, opacity=0.12)
        if p is not None:
            inside = grid <= c[-1]
            chart.line(grid[inside], p[inside], color, width=1.8, label=str(label))
            chart.line(grid[~inside], p[~inside], color, dash="6 4", scale=False)
    if crossing and crossing.get("value") is not None and crossing["value"] > 0:
        x = float(crossing["value"])
        lo, hi = crossing.get("lo"), crossing.get("hi")
        if lo is not None and hi is not None and 0 < lo < hi:
            chart.vspan(lo, hi, _CROSS, opacity=0.07)
        chart.vline(x, _CROSS, label=f"forecasts cross at {x:.3g}", dash="2 3")
    return chart_svg(chart, title=f"recipes in {d.run}: {metric}")


def diagnostic_svg(diagnostic: Diagnostic, analysis: Analysed) -> str:
    """The figure of a diagnostic whose kind is in :data:`DIAGNOSTIC_PLOTS` as SVG, else ``""``."""
    kind = diagnostic.kind
    if kind not in DIAGNOSTIC_PLOTS:
        return ""
    if kind == "divergence":
        return _divergence(diagnostic, analysis) if len(diagnostic.metrics) >= 2 else ""
    if kind == "sharpening":
        return _sharpening(diagnostic)
    return _recipe(diagnostic, analysis)
