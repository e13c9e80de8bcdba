"""Figures of the diagnostics a picture explains best: a benchmark that stops following the
reward (:func:`plot_divergence`), pass@k sharpening (:func:`plot_sharpening`) and two recipes'
forecasts (:func:`plot_recipe`); :func:`diagnostic_figure` picks one by kind. What they draw
is computed here for them and for the SVG twins (:mod:`saturate.report.svg.diagnostics`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from saturate.report.plots.style import (
    FORECAST_SPAN,
    axes_or_new,
    confidence_of,
    curves_of,
    fmt,
    interval,
    new_figure,
    observed,
    predict,
    short,
)
from saturate.report.rows import Analysed
from saturate.results import CurveAnalysis
from saturate.vocabulary.names import axis_label

if TYPE_CHECKING:  # matplotlib is imported where a figure is made: the SVG reports read this too
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from saturate.diagnostics.base import Diagnostic

_REWARD, _BENCH, _SINCE = "#c44e52", "#4c72b0", "#8250df"
RECIPE_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#8172b3")
DIAGNOSTIC_PLOTS = ("divergence", "sharpening", "recipe")
"""Diagnostic kinds that have a figure (:func:`diagnostic_figure`)."""


def curve_points(analysis: Analysed, source: str, run_id: str,
                 metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(compute, value) of one curve, sorted, compute > 0: from its analysis, else from the data."""
    for c in curves_of(analysis):
        if c.run_id == run_id and c.metric == metric and (not source or c.source == source):
            return observed(c)
    table = getattr(analysis, "data", None)
    data = None if table is None else table.points
    if data is None or data.empty:
        return np.empty(0), np.empty(0)
    g = data[(data["run_id"] == run_id) & (data["metric"] == metric)]
    if source:
        g = g[g["source"] == source]
    g = g.sort_values(["compute", "step"], kind="stable")
    c, y = g["compute"].to_numpy(float), g["value"].to_numpy(float)
    keep = np.isfinite(c) & np.isfinite(y) & (c > 0)
    return c[keep], y[keep]


def curve_of(analysis: Analysed, run_id: str, metric: str) -> CurveAnalysis | None:
    for c in curves_of(analysis):
        if c.run_id == run_id and c.metric == metric:
            return c
    return None


def sharpening_changes(diagnostic: Diagnostic) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(k, change, lo, hi) of pass@k since the first checkpoint of a sharpening diagnostic, by k
    (NaN where unknown)."""
    changes = sorted(diagnostic.details.get("changes", ()), key=lambda ch: ch["k"])
    k = np.array([ch["k"] for ch in changes], dtype=float)
    value, lo, hi = (np.array([np.nan if ch["delta"][key] is None else ch["delta"][key]
                               for ch in changes], dtype=float) for key in ("value", "lo", "hi"))
    return k, value, lo, hi


def recipe_forecasts(diagnostic: Diagnostic, analysis: Analysed
                     ) -> tuple[list[tuple[str, CurveAnalysis | None]], dict | None, float]:
    """The (label, curve) of each recipe of a recipe diagnostic, the crossing of their forecasts,
    and where the forecasts end: 4x the last compute, past the crossing, at most 64x."""
    metric = diagnostic.metrics[0]
    crossing = (diagnostic.details.get("pair") or {}).get("crossing") or None
    curves = [(r.get("label", "?"), curve_of(analysis, r.get("run_id", ""), metric))
              for r in diagnostic.details.get("recipes", ())]
    last = max((c.compute_last for _, c in curves if c is not None), default=math.nan)
    end = last * FORECAST_SPAN
    if crossing and crossing.get("value") is not None:
        end = max(end, 1.3 * float(crossing["value"]))
    end = min(end, 64.0 * last) if math.isfinite(last) else end
    return curves, crossing, end


def recipe_line(
    curve: CurveAnalysis, c: np.ndarray, end: float, confidence: float, n: int
) -> tuple[np.ndarray, np.ndarray | None, tuple[np.ndarray, np.ndarray] | None] | None:
    """A recipe's fit from its first observed compute (of ``c``) to ``end`` on ``n`` points:
    (compute, prediction, band); ``None`` without a fit or data."""
    if curve.fit is None or not c.size:
        return None
    grid = np.geomspace(c[0], max(end, c[-1] * 1.01), n)
    return grid, predict(curve.fit, grid), interval(curve.fit, grid, confidence)


def plot_divergence(diagnostic: Diagnostic, analysis: Analysed, ax: Axes | None = None) -> Axes:
    """Reward (left axis) and benchmark (right axis) against compute, with a vertical line where
    the benchmark stopped following the reward. Returns the left Axes (the right is its twin)."""
    ax = axes_or_new(ax)
    reward, bench = diagnostic.metrics[0], diagnostic.metrics[1]
    d = diagnostic
    rc, ry = curve_points(analysis, d.source, d.run_id, reward)
    bc, by = curve_points(analysis, d.source, d.run_id, bench)
    ax.plot(rc, ry, ".", ms=3, color=_REWARD, alpha=0.7, label=short(reward, 40))
    ax.set_ylabel(short(reward, 40), color=_REWARD)
    ax.tick_params(axis="y", colors=_REWARD)
    right = ax.twinx()
    right.plot(bc, by, "o-", ms=3.5, lw=1.0, color=_BENCH, alpha=0.85, label=short(bench, 40))
    right.set_ylabel(short(bench, 40), color=_BENCH)
    right.tick_params(axis="y", colors=_BENCH)
    if d.compute is not None and math.isfinite(d.compute) and d.compute > 0:
        ax.axvline(d.compute, color=_SINCE, ls="--", lw=1.4,
                   label=f"stopped following at {fmt(d.compute)}")
    if rc.size or bc.size:
        ax.set_xscale("log")
    compute_name = getattr(curve_of(analysis, d.run_id, reward), "compute_name", "compute")
    ax.set_xlabel(f"{axis_label(compute_name)} (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    verb = "falls" if d.details.get("benchmark_falls") else "flattens"
    ax.set_title(f"{short(d.run, 40)}: {short(bench, 40)} {verb} while the reward climbs",
                 fontsize=10, loc="left", color="#cf222e" if d.severity == "error" else "#9a6700")
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    if handles:
        ax.legend(handles, [str(h.get_label()) for h in handles], fontsize=7, loc="lower right",
                  framealpha=0.8)
    return ax


def plot_sharpening(diagnostic: Diagnostic, ax: Axes | None = None) -> Axes:
    """Change of pass@k from the first checkpoint against k (log2 axis), with its interval, zero,
    and the k at which the run falls behind its first checkpoint."""
    ax = axes_or_new(ax)
    k, v, lo, hi = sharpening_changes(diagnostic)
    err = np.vstack([np.where(np.isfinite(lo), v - lo, 0.0),
                     np.where(np.isfinite(hi), hi - v, 0.0)])
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
    ax.set_title(f"{short(diagnostic.run, 40)}: sharpening of {short(family, 40)}",
                 fontsize=10, loc="left")
    ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def plot_recipe(diagnostic: Diagnostic, analysis: Analysed, ax: Axes | None = None,
                *, confidence: float = 0.9) -> Axes:
    """Both recipes' points and forecasts (with interval bands) on one log-compute axis, the
    crossing of the forecasts marked with its interval."""
    ax = axes_or_new(ax)
    metric = diagnostic.metrics[0]
    curves, crossing, end = recipe_forecasts(diagnostic, analysis)
    for i, (label, curve) in enumerate(curves):
        color = RECIPE_COLORS[i % len(RECIPE_COLORS)]
        if curve is None:
            continue
        c, y = observed(curve)
        ax.plot(c, y, ".", ms=2.5, alpha=0.5, color=color)
        line = recipe_line(curve, c, end, confidence, 200)
        if line is None:
            continue
        grid, p, band = line
        if band is not None:
            ax.fill_between(grid, band[0], band[1], color=color, alpha=0.12, lw=0)
        if p is not None:
            inside = grid <= c[-1]
            ax.plot(grid[inside], p[inside], "-", color=color, lw=1.8, label=str(label))
            ax.plot(grid[~inside], p[~inside], "--", color=color, lw=1.5)
    if crossing and crossing.get("value") is not None and crossing["value"] > 0:
        x = float(crossing["value"])
        ax.axvline(x, color="#cf222e", ls=":", lw=1.4, label=f"forecasts cross at {fmt(x)}")
        lo, hi = crossing.get("lo"), crossing.get("hi")
        if lo is not None and hi is not None and 0 < lo < hi:
            ax.axvspan(lo, hi, color="#cf222e", alpha=0.07, lw=0)
    if ax.has_data():
        ax.set_xscale("log")
    name = next((c.compute_name for _, c in curves if c is not None), "compute")
    ax.set_xlabel(f"{axis_label(name)} (log scale)")
    ax.set_ylabel(short(metric, 40))
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"{short(diagnostic.run, 50)}: {short(metric, 40)}", fontsize=10, loc="left")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def diagnostic_figure(diagnostic: Diagnostic, analysis: Analysed) -> Figure | None:
    """The figure of a diagnostic whose kind is in :data:`DIAGNOSTIC_PLOTS`, else ``None``."""
    kind = diagnostic.kind
    if kind not in DIAGNOSTIC_PLOTS or (kind == "divergence" and len(diagnostic.metrics) < 2):
        return None
    fig = new_figure((8.0, 3.6))
    ax = fig.add_subplot()
    if kind == "divergence":
        plot_divergence(diagnostic, analysis, ax)
    elif kind == "sharpening":
        plot_sharpening(diagnostic, ax)
    else:
        plot_recipe(diagnostic, analysis, ax, confidence=confidence_of(analysis))
    return fig
