"""Figures of analysed curves (matplotlib ``Figure`` objects, never pyplot: no window opens, no
global figure registry to leak, and a notebook's own backend is left alone; files render with Agg).

* :func:`plot_curve`: the observed points, the fitted curve over the observed range, the forecast
  beyond it with its interval band, the asymptote, the knee and the stop point, on a log compute axis.
* :func:`plot_gain`: the marginal gain per doubling of compute: the fitted one, the one measured
  between successive doublings of the data, and the threshold.
* :func:`plot_analysis`: both, for every selected curve, in one figure.
* :func:`plot_divergence`, :func:`plot_sharpening`, :func:`plot_recipe`: the diagnostics a picture
  explains best (:func:`diagnostic_figure` picks one by kind).

Every function takes ``ax=None`` (a new figure) or an Axes to draw on, and returns what it drew on.
"""

from __future__ import annotations

import fnmatch
import math
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from saturate.errors import InputError, SettingsError
from saturate.results import CurveAnalysis

__all__ = [
    "VERDICT_COLORS",
    "plot_curve",
    "plot_gain",
    "plot_analysis",
    "curve_figure",
    "save_curve_figures",
    "figure_bytes",
    "sparkline_figure",
    "MAX_CURVES_PER_FIGURE",
    "DIAGNOSTIC_PLOTS",
    "plot_divergence",
    "plot_sharpening",
    "plot_recipe",
    "diagnostic_figure",
    "save_diagnostic_figures",
]

VERDICT_COLORS: dict[str, str] = {
    "scaling": "#1a7f37",
    "slowing": "#b08800",
    "saturated": "#cf222e",
    "regressing": "#8250df",
    "inconclusive": "#6e7781",
}
MAX_CURVES_PER_FIGURE = 24
_POINTS = "#4c72b0"
_FIT = "#222222"
_BAND = "#4c72b0"
_FORECAST_SPAN = 4.0  # forecast drawn to this multiple of the last compute when none is asked
_SIZE = (6.4, 3.8)


def _figure(figsize: tuple[float, float] = _SIZE, layout: str | None = "constrained") -> Figure:
    # A Figure not registered with pyplot: nothing to close, no leak when many are drawn.
    # Figures drawn by the dozen use fixed margins: constrained layout doubles the drawing time.
    return Figure(figsize=figsize, layout=layout)


def _axes(ax: Axes | None, figsize: tuple[float, float] = _SIZE) -> Axes:
    return ax if ax is not None else _figure(figsize).add_subplot()


def _observed(curve: CurveAnalysis) -> tuple[np.ndarray, np.ndarray]:
    """Observed (compute, value) with compute > 0 (the log axis cannot show the rest)."""
    if curve.points is None or len(curve.points) == 0:
        return np.empty(0), np.empty(0)
    c = np.asarray(curve.points["compute"], dtype=float)
    y = np.asarray(curve.points["value"], dtype=float)
    keep = np.isfinite(c) & np.isfinite(y) & (c > 0)
    order = np.argsort(c[keep], kind="stable")
    return c[keep][order], y[keep][order]


def _predict(fit: Any, grid: np.ndarray) -> np.ndarray | None:
    if fit is None or grid.size == 0:
        return None
    p = np.asarray(fit.predict(grid), dtype=float).reshape(-1)
    return p if p.shape == grid.shape and np.isfinite(p).any() else None


def _interval(fit: Any, grid: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray] | None:
    if fit is None or grid.size == 0 or not hasattr(fit, "interval"):
        return None
    lo, hi = fit.interval(grid, confidence)
    lo = np.asarray(lo, dtype=float).reshape(-1)
    hi = np.asarray(hi, dtype=float).reshape(-1)
    if lo.shape != grid.shape or hi.shape != grid.shape or not np.isfinite(lo).any():
        return None
    return lo, hi


def _horizon(curve: CurveAnalysis, last: float) -> float:
    """Where the forecast line ends: the furthest forecast asked for, else 4x the last compute."""
    ats = [f.compute for f in curve.forecast if f.compute and math.isfinite(f.compute)]
    return max([last * _FORECAST_SPAN if not ats else last * 1.05, *ats])


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _asymptote(ax: Axes, curve: CurveAnalysis) -> None:
    """The asymptote line; one far off the data would squash the curve, so it is noted instead."""
    a = curve.asymptote
    if a is None or not math.isfinite(a.value):
        return
    label = f"asymptote {_fmt(a.value)}" + ("" if a.identified else " (not identified)")
    lo, hi = ax.get_ylim() if ax.has_data() else (a.value, a.value)
    span = hi - lo
    if ax.has_data() and span > 0 and not (lo - span <= a.value <= hi + span):
        above = a.value > hi
        ax.annotate(f"{label} {'above' if above else 'below'}, off scale",
                    xy=(0.01, 0.98 if above else 0.02), xycoords="axes fraction",
                    ha="left", va="top" if above else "bottom", fontsize=7, color="#55a868")
        return
    ax.axhline(a.value, ls="-." if a.identified else ":", color="#55a868", lw=1.3, label=label)
    in_view = span <= 0 or (a.lo >= lo - span and a.hi <= hi + span)
    if a.identified and math.isfinite(a.lo) and math.isfinite(a.hi) and in_view:
        ax.axhspan(a.lo, a.hi, color="#55a868", alpha=0.08, lw=0)


def plot_curve(
    curve: CurveAnalysis,
    ax: Axes | None = None,
    *,
    confidence: float = 0.9,
    title: bool = True,
    legend: bool = True,
) -> Axes:
    """The curve with its fit, forecast band, asymptote, knee and stop point (log compute axis).

    Works without a fit (``curve.fit is None``): then only the points and the marks the analysis
    found are drawn, and the title says there is no fit.
    """
    ax = _axes(ax)
    c, y = _observed(curve)
    fit = curve.fit
    last = c[-1] if c.size else curve.compute_last
    first = c[0] if c.size else curve.compute_first
    if c.size:
        ax.plot(c, y, "o", ms=3.5, color=_POINTS, alpha=0.75, mec="none", label="observed", zorder=3)
    drew_fit = False
    if fit is not None and c.size and first > 0 and last > 0:
        horizon = _horizon(curve, last)
        inside = np.geomspace(first, last, 160) if last > first else np.array([last])
        beyond = np.geomspace(last, horizon, 80)
        band = _interval(fit, np.concatenate([inside, beyond]), confidence)
        p_in, p_out = _predict(fit, inside), _predict(fit, beyond)
        if band is not None:
            lo, hi = band
            n = inside.size
            ax.fill_between(inside, lo[:n], hi[:n], color=_BAND, alpha=0.12, lw=0)
            ax.fill_between(beyond, lo[n:], hi[n:], color=_BAND, alpha=0.25, lw=0,
                            label=f"{confidence:.0%} interval")
        if p_in is not None:
            ax.plot(inside, p_in, "-", color=_FIT, lw=1.8, label="fit", zorder=4)
            drew_fit = True
        if p_out is not None:
            ax.plot(beyond, p_out, "--", color=_FIT, lw=1.6, label="forecast", zorder=4)
    for f in curve.forecast:
        if f.compute and f.compute > 0 and math.isfinite(f.value):
            err = None
            if math.isfinite(f.lo) and math.isfinite(f.hi):
                err = [[max(f.value - f.lo, 0.0)], [max(f.hi - f.value, 0.0)]]
            ax.errorbar([f.compute], [f.value], yerr=err, fmt="D", ms=5, color="#dd8452",
                        capsize=3, zorder=5)
            ax.annotate(str(f.at), (f.compute, f.value), textcoords="offset points",
                        xytext=(5, 5), fontsize=8, color="#dd8452")
    _asymptote(ax, curve)
    if curve.knee is not None and math.isfinite(curve.knee) and curve.knee > 0:
        ax.axvline(curve.knee, color="#c44e52", ls=":", lw=1.3, label=f"knee {_fmt(curve.knee)}")
    sp = curve.stop_point
    if sp is not None and math.isfinite(sp.value) and sp.value > 0:
        ax.axvline(sp.value, color="#8172b3", ls="--", lw=1.3, label=f"stop point {_fmt(sp.value)}")
        if math.isfinite(sp.lo) and math.isfinite(sp.hi) and sp.hi > sp.lo > 0:
            ax.axvspan(sp.lo, sp.hi, color="#8172b3", alpha=0.08, lw=0)
    col = curve.collapse
    if col is not None and col.compute > 0:
        ax.axvline(col.compute, color="#8250df", lw=1.0, alpha=0.7, label="collapse")
    if c.size or drew_fit:
        ax.set_xscale("log")
    ax.set_xlabel(f"{curve.compute_name} (log scale)")
    ax.set_ylabel(f"{_short(curve.metric, 40)} ({curve.direction} is better)")
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.08)
    if title:
        note = "" if fit is not None else " (no fit)"
        ax.set_title(f"{_short(curve.run, 40)} / {_short(curve.metric, 40)}: {curve.verdict}{note}",
                     fontsize=10, color=VERDICT_COLORS.get(curve.verdict, "black"), loc="left")
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def _measured_gains(c: np.ndarray, y: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """Gain per doubling measured from the data: mean of each octave of compute minus the previous.

    Octaves are ``[2^k, 2^(k+1))`` of compute relative to the first point; each gain is placed at the
    geometric centre between the two octaves' mean computes. Larger-is-better scale.
    """
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


def plot_gain(
    curve: CurveAnalysis,
    ax: Axes | None = None,
    *,
    title: bool = True,
    legend: bool = True,
) -> Axes:
    """Marginal gain per doubling of compute, ``f(2c) - f(c)`` (better-is-positive), against compute.

    Shows the fitted gain over the observed range and beyond, the gain measured between octaves of
    the data, the analysis's gain at the last compute with its interval, the threshold and zero.
    """
    ax = _axes(ax)
    c, y = _observed(curve)
    sign = -1.0 if curve.direction == "lower" else 1.0
    last = c[-1] if c.size else curve.compute_last
    first = c[0] if c.size else curve.compute_first
    if curve.fit is not None and c.size and first > 0 and last > 0:
        horizon = _horizon(curve, last)
        grid = np.geomspace(first, horizon, 200)
        p1, p2 = _predict(curve.fit, grid), _predict(curve.fit, 2 * grid)
        if p1 is not None and p2 is not None:
            g = sign * (p2 - p1)
            inside = grid <= last
            ax.plot(grid[inside], g[inside], "-", color=_FIT, lw=1.8, label="fitted gain")
            ax.plot(grid[~inside], g[~inside], "--", color=_FIT, lw=1.6, label="forecast gain")
    at, gain = _measured_gains(c, y, curve.direction)
    if at.size:
        ax.plot(at, gain, "s", ms=4, color=_POINTS, alpha=0.8, label="measured (octave means)")
    e = curve.gain_per_doubling
    if e is not None and math.isfinite(e.value) and last > 0:
        err = None
        if math.isfinite(e.lo) and math.isfinite(e.hi):
            err = [[max(e.value - e.lo, 0.0)], [max(e.hi - e.value, 0.0)]]
        ax.errorbar([last], [e.value], yerr=err, fmt="o", ms=6, capsize=4,
                    color=VERDICT_COLORS.get(curve.verdict, "black"), zorder=5,
                    label=f"gain at last compute {_fmt(e.value)}")
    if math.isfinite(curve.threshold):
        ax.axhline(curve.threshold, color="#cf222e", ls="--", lw=1.2,
                   label=f"threshold {_fmt(curve.threshold)}")
    ax.axhline(0.0, color="grey", lw=0.8)
    if c.size or (math.isfinite(last) and last > 0):
        ax.set_xscale("log")
    ax.set_xlabel(f"{curve.compute_name} (log scale)")
    ax.set_ylabel("gain per doubling")
    ax.grid(True, which="major", alpha=0.3)
    if title:
        ax.set_title("marginal gain per doubling of compute", fontsize=10, loc="left")
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def curve_figure(curve: CurveAnalysis, *, confidence: float = 0.9) -> Figure:
    """One figure per curve: the curve (left) and its gain per doubling (right)."""
    fig = _figure((11.0, 3.9), layout=None)
    fig.subplots_adjust(left=0.065, right=0.99, bottom=0.13, top=0.92, wspace=0.2)
    left, right = fig.subplots(1, 2, width_ratios=[1.25, 1])
    plot_curve(curve, left, confidence=confidence)
    plot_gain(curve, right)
    return fig


def _curves_of(analysis: Any) -> tuple[CurveAnalysis, ...]:
    if isinstance(analysis, CurveAnalysis):
        return (analysis,)
    return tuple(getattr(analysis, "curves", analysis))


def _confidence(analysis: Any) -> float:
    settings = getattr(analysis, "settings", None) or {}
    level = settings.get("confidence") if isinstance(settings, dict) else None
    return float(level) if isinstance(level, (int, float)) and 0 < level < 1 else 0.9


def _select(curves: Sequence[CurveAnalysis], run: str | None, metric: str | None) -> list:
    def ok(value: str, pattern: str | None) -> bool:
        return pattern is None or fnmatch.fnmatchcase(value, pattern)

    return [c for c in curves if (ok(c.run, run) or ok(c.run_id, run)) and ok(c.metric, metric)]


def plot_analysis(analysis: Any, run: str | None = None, metric: str | None = None) -> Figure:
    """A figure with one row per selected curve: curve plot and gain plot side by side.

    ``run`` and ``metric`` are glob patterns (run name or id). At most
    :data:`MAX_CURVES_PER_FIGURE` rows are drawn; a warning says when some were left out.
    """
    curves = _select(_curves_of(analysis), run, metric)
    if not curves:
        raise InputError(f"no analysed curve matches run={run!r}, metric={metric!r}")
    if len(curves) > MAX_CURVES_PER_FIGURE:
        warnings.warn(
            f"plotting the first {MAX_CURVES_PER_FIGURE} of {len(curves)} curves; "
            "narrow the selection with run= or metric=",
            UserWarning,
            stacklevel=2,
        )
        curves = curves[:MAX_CURVES_PER_FIGURE]
    confidence = _confidence(analysis)
    fig = Figure(figsize=(11.0, 3.6 * len(curves)), layout="constrained")
    axes = fig.subplots(len(curves), 2, squeeze=False, width_ratios=[1.25, 1])
    for (left, right), curve in zip(axes, curves, strict=True):
        plot_curve(curve, left, confidence=confidence)
        plot_gain(curve, right, title=False)
    return fig


def figure_bytes(fig: Figure, fmt: str = "png", dpi: int = 96) -> bytes:
    """The figure encoded as PNG or SVG bytes."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _slug(text: str, n: int = 60) -> str:
    return (_UNSAFE.sub("_", text).strip("._") or "x")[:n]


def save_curve_figures(
    analysis: Any,
    out_dir: str | Path,
    formats: Iterable[str] = ("png",),
    *,
    run: str | None = None,
    metric: str | None = None,
    dpi: int = 120,
) -> list[Path]:
    """Write one figure per curve to ``out_dir`` as ``<run>__<metric>.<fmt>``; return the paths.

    File names keep only ``[A-Za-z0-9._-]`` of the run and metric names; clashes get ``-2``, ``-3``.
    """
    formats = tuple(dict.fromkeys(f.lower().lstrip(".") for f in formats))
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        raise SettingsError(f"--format: expected png, svg or pdf, got {', '.join(bad) or 'none'}")
    curves = _select(_curves_of(analysis), run, metric)
    if not curves:
        raise InputError(f"no analysed curve matches run={run!r}, metric={metric!r}")
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    confidence = _confidence(analysis)
    used: set[str] = set()
    written: list[Path] = []
    for curve in curves:
        stem = f"{_slug(curve.run)}__{_slug(curve.metric)}"
        name, i = stem, 1
        while name in used:
            i += 1
            name = f"{stem}-{i}"
        used.add(name)
        fig = curve_figure(curve, confidence=confidence)
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, format=fmt, dpi=dpi)
            written.append(path)
    return written


def sparkline_figure(curve: CurveAnalysis, *, confidence: float = 0.9) -> Figure:
    """A small figure for a table cell: points, fit and forecast band, no labels."""
    fig = _figure((2.4, 0.95), layout=None)
    fig.subplots_adjust(left=0.13, right=0.98, bottom=0.2, top=0.95)
    ax = fig.add_subplot()
    plot_curve(curve, ax, confidence=confidence, title=False, legend=False)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(labelsize=5, length=2, pad=1)
    ax.grid(False)
    for line in ax.get_lines():
        line.set_markersize(min(line.get_markersize(), 2.0))
    return fig


# ------------------------------------------------------------------------------------------------
# Diagnostics: the findings where a picture says more than the message.

_REWARD = "#c44e52"
_BENCH = "#4c72b0"
_SINCE = "#8250df"
DIAGNOSTIC_PLOTS = ("divergence", "sharpening", "recipe")
"""Diagnostic kinds that have a figure (:func:`diagnostic_figure`)."""


def _points(analysis: Any, source: str, run_id: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(compute, value) of one curve, sorted, compute > 0: from its analysis, else from the data."""
    for c in _curves_of(analysis):
        if c.run_id == run_id and c.metric == metric and (not source or c.source == source):
            return _observed(c)
    data = getattr(analysis, "data", None)
    if data is None or data.empty:
        return np.empty(0), np.empty(0)
    g = data[(data["run_id"] == run_id) & (data["metric"] == metric)]
    if source:
        g = g[g["source"] == source]
    g = g.sort_values(["compute", "step"], kind="stable")
    c, y = g["compute"].to_numpy(float), g["value"].to_numpy(float)
    keep = np.isfinite(c) & np.isfinite(y) & (c > 0)
    return c[keep], y[keep]


def _curve_of(analysis: Any, run_id: str, metric: str) -> CurveAnalysis | None:
    for c in _curves_of(analysis):
        if c.run_id == run_id and c.metric == metric:
            return c
    return None


def plot_divergence(diagnostic: Any, analysis: Any, ax: Axes | None = None) -> Axes:
    """Reward (left axis) and benchmark (right axis) against compute, with a vertical line where
    the benchmark stopped following the reward. Returns the left Axes (the right is its twin)."""
    ax = _axes(ax)
    reward, bench = diagnostic.metrics[0], diagnostic.metrics[1]
    d = diagnostic
    rc, ry = _points(analysis, d.source, d.run_id, reward)
    bc, by = _points(analysis, d.source, d.run_id, bench)
    ax.plot(rc, ry, ".", ms=3, color=_REWARD, alpha=0.7, label=_short(reward, 40))
    ax.set_ylabel(_short(reward, 40), color=_REWARD)
    ax.tick_params(axis="y", colors=_REWARD)
    right = ax.twinx()
    right.plot(bc, by, "o-", ms=3.5, lw=1.0, color=_BENCH, alpha=0.85, label=_short(bench, 40))
    right.set_ylabel(_short(bench, 40), color=_BENCH)
    right.tick_params(axis="y", colors=_BENCH)
    if d.compute is not None and math.isfinite(d.compute) and d.compute > 0:
        ax.axvline(d.compute, color=_SINCE, ls="--", lw=1.4,
                   label=f"stopped following at {_fmt(d.compute)}")
    if rc.size or bc.size:
        ax.set_xscale("log")
    compute_name = getattr(_curve_of(analysis, d.run_id, reward), "compute_name", "compute")
    ax.set_xlabel(f"{compute_name} (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    verb = "falls" if d.details.get("benchmark_falls") else "flattens"
    ax.set_title(f"{_short(d.run, 40)}: {_short(bench, 40)} {verb} while the reward climbs",
                 fontsize=10, loc="left", color="#cf222e" if d.severity == "error" else "#9a6700")
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    if handles:
        ax.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="lower right",
                  framealpha=0.8)
    return ax


def plot_sharpening(diagnostic: Any, ax: Axes | None = None) -> Axes:
    """Change of pass@k from the first checkpoint against k (log2 axis), with its interval, zero,
    and the k at which the run falls behind its first checkpoint."""
    ax = _axes(ax)
    changes = sorted(diagnostic.details.get("changes", ()), key=lambda ch: ch["k"])
    k = np.array([ch["k"] for ch in changes], dtype=float)
    delta = [ch["delta"] for ch in changes]
    v = np.array([np.nan if e["value"] is None else e["value"] for e in delta], dtype=float)
    lo = np.array([np.nan if e["lo"] is None else e["lo"] for e in delta], dtype=float)
    hi = np.array([np.nan if e["hi"] is None else e["hi"] for e in delta], dtype=float)
    err = np.vstack([np.where(np.isfinite(lo), v - lo, 0.0), np.where(np.isfinite(hi), hi - v, 0.0)])
    ax.errorbar(k, v, yerr=np.clip(err, 0.0, None), fmt="o-", ms=5, capsize=3, color=_BENCH,
                label="change since the first checkpoint")
    ax.axhline(0.0, color="grey", lw=0.9)
    kx = diagnostic.details.get("crossover_k_interpolated")
    if kx is not None and math.isfinite(kx) and kx > 0:
        ax.axvline(kx, color="#cf222e", ls="--", lw=1.3, label=f"falls behind from k ≈ {kx:.3g}")
    if k.size:
        ax.set_xscale("log", base=2)
        ax.set_xticks(k, [f"{int(x)}" for x in k])
    ax.set_xlabel("k (log scale)")
    ax.set_ylabel("pass@k: end - first checkpoint")
    ax.grid(True, which="major", alpha=0.3)
    family = str(diagnostic.details.get("family") or "pass@k")
    ax.set_title(f"{_short(diagnostic.run, 40)}: sharpening of {_short(family, 40)}",
                 fontsize=10, loc="left")
    ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def plot_recipe(diagnostic: Any, analysis: Any, ax: Axes | None = None,
                *, confidence: float = 0.9) -> Axes:
    """Both recipes' points and forecasts (with interval bands) on one log-compute axis, the
    crossing of the forecasts marked with its interval."""
    ax = _axes(ax)
    metric = diagnostic.metrics[0]
    recipes = diagnostic.details.get("recipes", ())
    crossing = (diagnostic.details.get("pair") or {}).get("crossing") or None
    curves = [(r.get("label", "?"), _curve_of(analysis, r.get("run_id", ""), metric))
              for r in recipes]
    last = max((c.compute_last for _, c in curves if c is not None), default=math.nan)
    end = last * _FORECAST_SPAN
    if crossing and crossing.get("value") is not None:
        end = max(end, 1.3 * float(crossing["value"]))
    end = min(end, 64.0 * last) if math.isfinite(last) else end
    colors = ("#4c72b0", "#dd8452", "#55a868", "#8172b3")
    for i, (label, curve) in enumerate(curves):
        color = colors[i % len(colors)]
        if curve is None:
            continue
        c, y = _observed(curve)
        ax.plot(c, y, ".", ms=2.5, alpha=0.5, color=color)
        if curve.fit is None or not c.size:
            continue
        grid = np.geomspace(c[0], max(end, c[-1] * 1.01), 200)
        p = _predict(curve.fit, grid)
        band = _interval(curve.fit, grid, confidence)
        if band is not None:
            ax.fill_between(grid, band[0], band[1], color=color, alpha=0.12, lw=0)
        if p is not None:
            inside = grid <= c[-1]
            ax.plot(grid[inside], p[inside], "-", color=color, lw=1.8, label=str(label))
            ax.plot(grid[~inside], p[~inside], "--", color=color, lw=1.5)
    if crossing and crossing.get("value") is not None and crossing["value"] > 0:
        x = float(crossing["value"])
        ax.axvline(x, color="#cf222e", ls=":", lw=1.4, label=f"forecasts cross at {_fmt(x)}")
        lo, hi = crossing.get("lo"), crossing.get("hi")
        if lo is not None and hi is not None and 0 < lo < hi:
            ax.axvspan(lo, hi, color="#cf222e", alpha=0.07, lw=0)
    if ax.has_data():
        ax.set_xscale("log")
    name = next((c.compute_name for _, c in curves if c is not None), "compute")
    ax.set_xlabel(f"{name} (log scale)")
    ax.set_ylabel(_short(metric, 40))
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"{_short(diagnostic.run, 50)}: {_short(metric, 40)}", fontsize=10, loc="left")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def diagnostic_figure(diagnostic: Any, analysis: Any) -> Figure | None:
    """The figure of a diagnostic whose kind is in :data:`DIAGNOSTIC_PLOTS`, else ``None``."""
    kind = diagnostic.kind
    if kind not in DIAGNOSTIC_PLOTS or (kind == "divergence" and len(diagnostic.metrics) < 2):
        return None
    fig = _figure((8.0, 3.6))
    ax = fig.add_subplot()
    if kind == "divergence":
        plot_divergence(diagnostic, analysis, ax)
    elif kind == "sharpening":
        plot_sharpening(diagnostic, ax)
    else:
        plot_recipe(diagnostic, analysis, ax, confidence=_confidence(analysis))
    return fig


def save_diagnostic_figures(
    analysis: Any, out_dir: str | Path, formats: Iterable[str] = ("png",), *, dpi: int = 120
) -> list[Path]:
    """Write the figure of every diagnostic that has one to ``out_dir`` as
    ``diagnostic__<kind>__<run>__<metric>.<fmt>``; return the paths (none when no diagnostic
    has a figure)."""
    formats = tuple(dict.fromkeys(f.lower().lstrip(".") for f in formats))
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        raise SettingsError(f"--format: expected png, svg or pdf, got {', '.join(bad) or 'none'}")
    out = Path(out_dir)
    used: set[str] = set()
    written: list[Path] = []
    for d in getattr(analysis, "diagnostics", ()) or ():
        fig = diagnostic_figure(d, analysis)
        if fig is None:
            continue
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
        what = d.metrics[-1] if d.metrics else ""
        stem = f"diagnostic__{d.kind}__{_slug(d.run)}__{_slug(what)}"
        name, i = stem, 1
        while name in used:
            i += 1
            name = f"{stem}-{i}"
        used.add(name)
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, format=fmt, dpi=dpi)
            written.append(path)
    return written
