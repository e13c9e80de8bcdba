"""SVG charts of one analysed curve: :func:`curve_chart`, :func:`gain_chart`, a thumbnail for
notebooks and a sparkline for a table cell. The forecast beyond the data is the one the analysis
reports (:func:`~saturate.report.plots.style.forecast_path`), so its markers sit on the line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from saturate.report.plots.style import (
    VERDICT_COLORS,
    fit_paths,
    fitted_gain,
    measured_gains,
    observed,
    predict,
    short,
)
from saturate.report.svg.chart import Chart
from saturate.report.svg.draw import chart_svg
from saturate.results import CurveAnalysis

POINTS, BAND, SEEDS, FORECAST = "#4c72b0", "#4c72b0", "#8172b3", "#dd8452"
ASYMPTOTE, KNEE, STOP, THRESHOLD, GREY = "#55a868", "#c44e52", "#8172b3", "#cf222e", "#8c959f"


def x_label(curve: Any, *, scale: bool = True) -> str:
    """The x axis name with its unit when the curve has one: ``gpu_hours (GPU-hours), log``."""
    unit = getattr(curve, "compute_unit", None)
    name = f"{curve.compute_name} ({unit})" if unit else str(curve.compute_name)
    return f"{name}, log scale" if scale else name


def seed_curves(curve: CurveAnalysis, data: pd.DataFrame | None
                ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(run, compute, value) of each seed pooled into ``curve`` (``--group-by``), read from the
    analysis's table; none for a curve that is not pooled."""
    runs = (curve.group or {}).get("runs") or []
    if len(runs) < 2 or data is None or data.empty:
        return []
    rows = data[(data["metric"] == curve.metric) & data["run"].isin(runs)]
    if curve.source and "source" in rows.columns:
        rows = rows[rows["source"] == curve.source]
    out = []
    for run, g in rows.groupby("run", sort=False):
        g = g.sort_values(["compute", "step"], kind="stable")
        c, y = g["compute"].to_numpy(float), g["value"].to_numpy(float)
        keep = np.isfinite(c) & np.isfinite(y) & (c > 0)
        out.append((str(run), c[keep], y[keep]))
    return out


def _seeds(chart: Chart, curve: CurveAnalysis, data: pd.DataFrame | None) -> bool:
    """The seeds pooled into the curve (from ``data``) and their spread (from the curve's own
    points): says whether the curve is pooled."""
    seeds = seed_curves(curve, data)
    for _, c, y in seeds:
        chart.line(c, y, SEEDS, width=0.9, opacity=0.55, label=f"the {len(seeds)} seeds")
    n = int((curve.group or {}).get("n_seeds") or 0)
    pts = curve.points
    if n > 1 and pts is not None and "value_se" in pts.columns:
        pts = pts.sort_values("compute")
        c = pts["compute"].to_numpy(float)
        mean = pts["value"].to_numpy(float)
        sd = pts["value_se"].to_numpy(float) * math.sqrt(n)
        chart.band(c, mean - sd, mean + sd, SEEDS, label="±1 sd across seeds", opacity=0.16)
    return n > 1


def _fit(chart: Chart, curve: CurveAnalysis, c: np.ndarray, confidence: float) -> None:
    """The fit over the observed range with its band, then the forecast as reported."""
    paths = fit_paths(curve, c, confidence, 120)
    if paths is None:
        return
    if paths.band is not None:
        chart.band(paths.inside, *paths.band, BAND, opacity=0.12)
    if paths.forecast is not None:
        value, lo, hi = paths.forecast
        if np.isfinite(lo).any():
            chart.band(paths.ahead, lo, hi, BAND, label=f"{confidence:.0%} interval", opacity=0.22)
        chart.line(paths.ahead, value, "currentColor", dash="6 4", label="forecast")
    if paths.fitted is not None:
        chart.line(paths.inside, paths.fitted, "currentColor", width=1.9, label="fit")


def _marks(chart: Chart, curve: CurveAnalysis) -> None:
    """The forecasts asked for (on the forecast line), knee, stop point, collapse, asymptote."""
    for f in curve.forecast:
        if f.compute and f.compute > 0 and math.isfinite(f.value):
            chart.marker(f.compute, f.value, f.lo, f.hi, FORECAST, label="forecasts asked for",
                         text=str(f.at))
    if curve.knee is not None and math.isfinite(curve.knee) and curve.knee > 0:
        chart.vline(curve.knee, KNEE, label=f"knee {curve.knee:.3g}", dash="2 3")
    sp = curve.stop_point
    if sp is not None and math.isfinite(sp.value) and sp.value > 0:
        if math.isfinite(sp.lo) and math.isfinite(sp.hi) and sp.hi > sp.lo > 0:
            chart.vspan(sp.lo, sp.hi, STOP)
        chart.vline(sp.value, STOP, label=f"stop point {sp.value:.3g}")
    col = curve.collapse
    if col is not None and col.compute > 0:
        chart.vline(col.compute, "#8250df", label=f"collapse at {col.compute:.4g}", dash="")
    a = curve.asymptote
    rng = chart.y_range()
    if a is None or not math.isfinite(a.value) or rng is None:
        return
    label = f"asymptote {a.value:.3g}" + ("" if a.identified else " (not identified)")
    span = rng[1] - rng[0]
    if not rng[0] - span <= a.value <= rng[1] + span:
        chart.note(f"{label}: {'above' if a.value > rng[1] else 'below'}, off scale")
        return
    if a.identified and math.isfinite(a.lo) and math.isfinite(a.hi):
        chart.hspan(a.lo, a.hi, ASYMPTOTE)
    chart.hline(a.value, ASYMPTOTE, label=label, dash="7 3 2 3" if a.identified else "2 3",
                scale=True)


def curve_chart(curve: CurveAnalysis, *, confidence: float = 0.9, data: pd.DataFrame | None = None,
                width: float = 640, height: float = 300) -> Chart:
    """The curve: its points (and pooled seeds with their spread), the fit, the forecast with its
    band, the forecasts asked for, the asymptote, the knee, the stop point and a collapse."""
    chart = Chart(width, height, xlabel=x_label(curve),
                  ylabel=f"{short(curve.metric, 40)} ({curve.direction} is better)")
    pooled = _seeds(chart, curve, data)
    c, y = observed(curve)
    _fit(chart, curve, c, confidence)
    chart.dots(c, y, POINTS, label="seed mean" if pooled else "observed", size=3.6)
    _marks(chart, curve)
    return chart


def gain_chart(curve: CurveAnalysis, *, width: float = 640, height: float = 220) -> Chart:
    """The gain per doubling ``f(2c) - f(c)`` (better is positive): fitted over the data and
    beyond, measured between octaves of the data, at the last compute with its interval, against
    the threshold and zero."""
    chart = Chart(width, height, xlabel=x_label(curve), ylabel="gain per doubling")
    c, y = observed(curve)
    last = c[-1] if c.size else curve.compute_last
    fitted = fitted_gain(curve, c, last, 160)
    if fitted is not None:
        grid, g, inside = fitted
        chart.line(grid[inside], g[inside], "currentColor", width=1.9, label="fitted gain")
        chart.line(grid[~inside], g[~inside], "currentColor", dash="6 4", scale=False,
                   label="fitted gain beyond the data")
    at, gain = measured_gains(c, y, curve.direction)
    if at.size:
        chart.dots(at, gain, POINTS, size=5, label="measured (octave means)")
    e = curve.gain_per_doubling
    if e is not None and math.isfinite(e.value) and last > 0:
        chart.marker(last, e.value, e.lo, e.hi, VERDICT_COLORS.get(curve.verdict, GREY),
                     label=f"gain at the last compute {e.value:.3g}")
    if math.isfinite(curve.threshold):
        chart.hline(curve.threshold, THRESHOLD, label=f"threshold {curve.threshold:.3g}",
                    scale=True)
    chart.hline(0.0, GREY, dash="", scale=True)
    return chart


def curve_svg(curve: CurveAnalysis, *, confidence: float = 0.9,
              data: pd.DataFrame | None = None) -> str:
    """The curve chart over its gain chart, as two ``<svg>`` elements."""
    title = f"{curve.run} / {curve.metric}: {curve.verdict}"
    return (chart_svg(curve_chart(curve, confidence=confidence, data=data), title=title)
            + chart_svg(gain_chart(curve), title=f"gain per doubling of {title}"))


def thumbnail_chart(curve: CurveAnalysis, *, confidence: float = 0.9, width: float = 220,
                    height: float = 90) -> Chart:
    """A small chart: the points, the fit and the forecast, its y range the data's (the
    forecast and its band are clipped, never stretching the axis)."""
    chart = Chart(width, height, yticks=3)
    c, y = observed(curve)
    _fit(chart, curve, c, confidence)
    chart.dots(c, y, POINTS, size=2.2, opacity=0.6)
    chart.restrict_y(y)
    return chart


def thumbnail_svg(curve: CurveAnalysis, *, confidence: float = 0.9) -> str:
    """:func:`thumbnail_chart` as SVG with a few readable ticks and no legend."""
    return chart_svg(thumbnail_chart(curve, confidence=confidence), legend=False,
                     css_class="thumb", font=9, title=f"{curve.run} / {curve.metric}")


def sparkline_svg(curve: CurveAnalysis, *, width: float = 110, height: float = 26) -> str:
    """A bare line of the curve for a table cell: its points and fit, coloured by verdict."""
    chart = Chart(width, height)
    c, y = observed(curve)
    if c.size > 80:  # a table cell shows no more than this
        idx = np.unique(np.linspace(0, c.size - 1, 80).astype(int))
        c, y = c[idx], y[idx]
    chart.line(c, y, POINTS, width=1.0, opacity=0.6)
    if curve.fit is not None and c.size > 1 and c[0] > 0:
        grid = np.geomspace(c[0], c[-1], 40)
        p = predict(curve.fit, grid)
        if p is not None:
            chart.line(grid, p, VERDICT_COLORS.get(curve.verdict, GREY), width=1.6, scale=False)
    return chart_svg(chart, axes=False, legend=False, css_class="spark")
