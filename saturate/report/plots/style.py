"""What every figure shares: colours, sizes, a pyplot-free ``Figure``, short labels, and the
numbers a figure reads from an analysed curve (observed points, predictions, intervals, the fit
and forecast paths, gains per doubling), computed once for the matplotlib figures and the inline
SVG charts (:mod:`saturate.report.svg`)."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np

from saturate.report.rows import Analysed
from saturate.results import CurveAnalysis

if TYPE_CHECKING:  # matplotlib is imported where a figure is made: the SVG reports read this too
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from saturate.fit.result import CurveFit

VERDICT_COLORS: dict[str, str] = {
    "scaling": "#1a7f37", "slowing": "#b08800", "saturated": "#cf222e", "regressing": "#8250df",
    "inconclusive": "#6e7781"}
POINTS = "#4c72b0"
FIT = "#222222"
BAND = "#4c72b0"
FORECAST_SPAN = 4.0  # forecast drawn to this multiple of the last compute when none is asked
SIZE = (6.4, 3.8)


def new_figure(figsize: tuple[float, float] = SIZE,
               layout: Literal["constrained", "compressed", "tight"] | None = "constrained",
               ) -> Figure:
    """A Figure not registered with pyplot: nothing to close, no leak when many are drawn."""
    # Figures drawn by the dozen use fixed margins: constrained layout doubles the drawing time.
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout=layout)


def pyplot_figure(figsize: tuple[float, float]) -> Figure:
    """A figure made through pyplot and closed there at once: pyplot's import sets up how the
    notebook shows figures (inline, as the cell's value), and closing keeps it from showing the
    figure a second time at the end of the cell (and from holding it in memory)."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=figsize, layout="constrained")
    plt.close(fig)
    return fig


def axes_or_new(ax: Axes | None, figsize: tuple[float, float] = SIZE) -> Axes:
    return ax if ax is not None else new_figure(figsize).add_subplot()


def short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def fmt(x: float) -> str:
    return f"{x:.3g}"


def observed(curve: CurveAnalysis) -> tuple[np.ndarray, np.ndarray]:
    """Observed (compute, value) with compute > 0 (the log axis cannot show the rest)."""
    if curve.points is None or len(curve.points) == 0:
        return np.empty(0), np.empty(0)
    c = np.asarray(curve.points["compute"], dtype=float)
    y = np.asarray(curve.points["value"], dtype=float)
    keep = np.isfinite(c) & np.isfinite(y) & (c > 0)
    order = np.argsort(c[keep], kind="stable")
    return c[keep][order], y[keep][order]


def predict(fit: CurveFit | None, grid: np.ndarray) -> np.ndarray | None:
    """The fit's prediction on ``grid``, or ``None`` when it has none worth drawing."""
    if fit is None or grid.size == 0:
        return None
    p = np.asarray(fit.predict(grid), dtype=float).reshape(-1)
    return p if p.shape == grid.shape and np.isfinite(p).any() else None


def interval(fit: CurveFit | None, grid: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The fit's (lo, hi) band on ``grid``, or ``None`` when it has none worth drawing."""
    if fit is None or grid.size == 0 or not hasattr(fit, "interval"):
        return None
    lo, hi = fit.interval(grid, confidence)
    lo = np.asarray(lo, dtype=float).reshape(-1)
    hi = np.asarray(hi, dtype=float).reshape(-1)
    if lo.shape != grid.shape or hi.shape != grid.shape or not np.isfinite(lo).any():
        return None
    return lo, hi


def forecast_path(
    curve: CurveAnalysis, grid: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The forecast on ``grid`` (computes past the last) as the analysis reports it: (value, lo,
    hi), or ``None`` without a fit.

    Not the raw fit: the reported forecasts carry the measured extrapolation error and shrink
    toward the current level (:func:`saturate.measure.quantities.honest_forecast`), so drawing
    the raw fit would put the forecast markers off the line and overstate the confidence.
    """
    fit = curve.fit
    if fit is None or grid.size == 0:
        return None
    from saturate.analysis.curve import projected_path

    called = projected_path(curve, grid)  # the forecasts of the call (saturate.analysis.curve)
    if called is not None:
        return called
    from saturate.analysis.curve import seed_doubling_se
    from saturate.measure.quantities import honest_forecast
    from saturate.results import ForecastPoint

    last = float(curve.compute_last)
    value = predict(fit, grid)
    band = interval(fit, grid, confidence)
    if value is None:
        return None
    lo, hi = band if band is not None else (np.full(grid.size, np.nan),) * 2
    extrap = fit.extrapolation_se
    seeds = seed_doubling_se(curve.points) if curve.points is not None else 0.0
    extra = math.hypot(seeds, extrap if math.isfinite(extrap) else 0.0)
    level = float(fit.predict(np.array([last]))[0])
    raw = tuple(ForecastPoint(at=float(c), compute=float(c), value=float(v), lo=float(a),
                              hi=float(b)) for c, v, a, b in zip(grid, value, lo, hi, strict=True))
    honest = honest_forecast(raw, last, level, extra, confidence)
    return tuple(  # type: ignore[return-value]
        np.array([getattr(f, k) for f in honest], dtype=float) for k in ("value", "lo", "hi"))


def forecast_grid(curve: CurveAnalysis, last: float, n: int = 60) -> np.ndarray:
    """Computes from the last one to the end of the forecast, log-spaced, with the computes of
    the reported forecasts among them (so their markers sit on the line's vertices)."""
    grid = np.geomspace(last, forecast_end(curve, last), n)
    asked = [f.compute for f in curve.forecast if f.compute and f.compute > last]
    return np.unique(np.concatenate([grid, np.asarray(asked, dtype=float)]))


def forecast_end(curve: CurveAnalysis, last: float) -> float:
    """Where the forecast line ends: the furthest forecast asked for, else 4x the last compute."""
    ats = [f.compute for f in curve.forecast if f.compute and math.isfinite(f.compute)]
    return max([last * FORECAST_SPAN if not ats else last * 1.05, *ats])


class FitPaths(NamedTuple):
    """What a chart of a fitted curve draws: the fit over the observed range (``inside``) with its
    band, and the forecast beyond it (``ahead``) as reported, (value, lo, hi)."""

    inside: np.ndarray
    band: tuple[np.ndarray, np.ndarray] | None
    fitted: np.ndarray | None
    ahead: np.ndarray
    forecast: tuple[np.ndarray, np.ndarray, np.ndarray] | None


def fit_paths(curve: CurveAnalysis, c: np.ndarray, confidence: float, n: int) -> FitPaths | None:
    """The fit on ``n`` points over the observed computes ``c`` (sorted) and the forecast past
    them (:func:`forecast_path`); ``None`` without a fit or data."""
    if curve.fit is None or not c.size or c[0] <= 0 or c[-1] <= 0:
        return None
    first, last = c[0], c[-1]
    inside = np.geomspace(first, last, n) if last > first else np.array([last])
    ahead = forecast_grid(curve, last)
    return FitPaths(inside, interval(curve.fit, inside, confidence), predict(curve.fit, inside),
                    ahead, forecast_path(curve, ahead, confidence))


def fitted_gain(curve: CurveAnalysis, c: np.ndarray, last: float, n: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The fitted gain per doubling ``f(2c) - f(c)`` (better is positive) on ``n`` points from the
    first observed compute to the end of the forecast: (compute, gain, within the data), or
    ``None`` without a fit or data."""
    if curve.fit is None or not c.size or c[0] <= 0 or last <= 0:
        return None
    grid = np.geomspace(c[0], forecast_end(curve, last), n)
    p1, p2 = predict(curve.fit, grid), predict(curve.fit, 2 * grid)
    if p1 is None or p2 is None:
        return None
    sign = -1.0 if curve.direction == "lower" else 1.0
    return grid, sign * (p2 - p1), grid <= last


def measured_gains(c: np.ndarray, y: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """Gain per doubling measured from the data (larger is better): the mean of each octave
    ``[2^k, 2^(k+1))`` of compute (relative to the first point) minus the previous one's, placed
    at the geometric centre of the two octaves' mean computes."""
    if c.size < 4:
        return np.empty(0), np.empty(0)
    k = np.floor(np.log2(c / c[0])).astype(int)
    octaves = np.unique(k)
    mc = np.array([np.exp(np.mean(np.log(c[k == o]))) for o in octaves])
    my = np.array([np.mean(y[k == o]) for o in octaves])
    if direction == "lower":
        my = -my
    steps = np.diff(octaves)
    gain = np.diff(my) / steps  # a gap of two octaves is two doublings
    at = np.sqrt(mc[1:] * mc[:-1])
    return at, gain


def error_bar(value: float, lo: float, hi: float) -> list[list[float]] | None:
    """The ``yerr`` of a matplotlib error bar at ``value`` for the interval (lo, hi), ``None``
    when the interval is not finite."""
    if math.isfinite(lo) and math.isfinite(hi):
        return [[max(value - lo, 0.0)], [max(hi - value, 0.0)]]
    return None


def curves_of(analysis: Analysed) -> tuple[CurveAnalysis, ...]:
    """The curves of an analysis, a sequence of curves, or one curve."""
    if isinstance(analysis, CurveAnalysis):
        return (analysis,)
    return tuple(getattr(analysis, "curves", analysis))


def confidence_of(analysis: Analysed) -> float:
    """The confidence the analysis was run at (0.9 when it does not say)."""
    settings = getattr(analysis, "settings", None) or {}
    level = settings.get("confidence") if isinstance(settings, dict) else None
    return float(level) if isinstance(level, (int, float)) and 0 < level < 1 else 0.9


def select(curves: Sequence[CurveAnalysis], run: str | None, metric: str | None) -> list:
    """The curves whose run (name or id) and metric match the glob patterns (``None``: any)."""

    def ok(value: str, pattern: str | None) -> bool:
        return pattern is None or fnmatch.fnmatchcase(value, pattern)

    return [c for c in curves if (ok(c.run, run) or ok(c.run_id, run)) and ok(c.metric, metric)]
