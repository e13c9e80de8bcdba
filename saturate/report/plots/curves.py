"""Figures of analysed curves: :func:`plot_curve` (points, fit, forecast band, asymptote, knee,
stop point on a log compute axis), :func:`plot_gain` (fitted and measured gain per doubling
against the threshold), and :func:`curve_figure`, :func:`plot_analysis`,
:func:`sparkline_figure` built from them; :func:`plot_analysis` makes one figure per metric
(:class:`Figures`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from saturate.errors import InputError
from saturate.report.plots.style import (
    BAND,
    FIT,
    POINTS,
    VERDICT_COLORS,
    axes_or_new,
    confidence_of,
    curves_of,
    error_bar,
    fit_paths,
    fitted_gain,
    fmt,
    measured_gains,
    new_figure,
    observed,
    pyplot_figure,
    select,
    short,
)
from saturate.report.rows import Analysed
from saturate.results import CurveAnalysis
from saturate.vocabulary.names import axis_label

if TYPE_CHECKING:  # matplotlib is imported where a figure is made: the SVG reports read this too
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_CURVES_PER_FIGURE = 12
"""Curves in one figure of :func:`plot_analysis` at most (a grid three across)."""


def _asymptote(ax: Axes, curve: CurveAnalysis) -> None:
    """The asymptote line; one far off the data would squash the curve, so it is noted instead."""
    a = curve.asymptote
    if a is None or not math.isfinite(a.value):
        return
    label = f"asymptote {fmt(a.value)}" + ("" if a.identified else " (not identified)")
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


def _fit_and_forecast(ax: Axes, curve: CurveAnalysis, c: np.ndarray, confidence: float) -> bool:
    """The fit over the observed range, the forecast beyond it and their interval bands
    (:func:`~saturate.report.plots.style.fit_paths`); says whether a fit line was drawn."""
    paths = fit_paths(curve, c, confidence, 160)
    if paths is None:
        return False
    if paths.band is not None:
        ax.fill_between(paths.inside, *paths.band, color=BAND, alpha=0.12, lw=0)
    if paths.forecast is not None:
        value, lo, hi = paths.forecast
        if np.isfinite(lo).any():
            ax.fill_between(paths.ahead, lo, hi, color=BAND, alpha=0.25, lw=0,
                            label=f"{confidence:.0%} interval")
        ax.plot(paths.ahead, value, "--", color=FIT, lw=1.6, label="forecast", zorder=4)
    if paths.fitted is not None:
        ax.plot(paths.inside, paths.fitted, "-", color=FIT, lw=1.8, label="fit", zorder=4)
    return paths.fitted is not None


def _marks(ax: Axes, curve: CurveAnalysis) -> None:
    """The forecasts asked for, the asymptote, the knee, the stop point and the collapse."""
    for f in curve.forecast:
        if f.compute and f.compute > 0 and math.isfinite(f.value):
            ax.errorbar([f.compute], [f.value], yerr=error_bar(f.value, f.lo, f.hi), fmt="D",
                        ms=5, color="#dd8452", capsize=3, zorder=5)
            ax.annotate(str(f.at), (f.compute, f.value), textcoords="offset points",
                        xytext=(5, 5), fontsize=8, color="#dd8452")
    _asymptote(ax, curve)
    if curve.knee is not None and math.isfinite(curve.knee) and curve.knee > 0:
        ax.axvline(curve.knee, color="#c44e52", ls=":", lw=1.3, label=f"knee {fmt(curve.knee)}")
    sp = curve.stop_point
    if sp is not None and math.isfinite(sp.value) and sp.value > 0:
        ax.axvline(sp.value, color="#8172b3", ls="--", lw=1.3, label=f"stop point {fmt(sp.value)}")
        if math.isfinite(sp.lo) and math.isfinite(sp.hi) and sp.hi > sp.lo > 0:
            ax.axvspan(sp.lo, sp.hi, color="#8172b3", alpha=0.08, lw=0)
    col = curve.collapse
    if col is not None and col.compute > 0:
        ax.axvline(col.compute, color="#8250df", lw=1.0, alpha=0.7, label="collapse")


def plot_curve(curve: CurveAnalysis, ax: Axes | None = None, *, confidence: float = 0.9,
               title: bool = True, legend: bool = True) -> Axes:
    """The curve with its fit, forecast band, asymptote, knee and stop point (log compute axis);
    without a fit only the points and marks, and the title says so."""
    ax = axes_or_new(ax)
    c, y = observed(curve)
    if c.size:
        ax.plot(c, y, "o", ms=3.5, color=POINTS, alpha=0.75, mec="none", label="observed", zorder=3)
    drew_fit = _fit_and_forecast(ax, curve, c, confidence)
    _marks(ax, curve)
    if c.size or drew_fit:
        ax.set_xscale("log")
    ax.set_xlabel(f"{axis_label(curve.compute_name)} (log scale)")
    ax.set_ylabel(f"{short(curve.metric, 40)} ({curve.direction} is better)")
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.08)
    if title:
        note = "" if curve.fit is not None else " (no fit)"
        ax.set_title(f"{short(curve.run, 40)} / {short(curve.metric, 40)}: {curve.verdict}{note}",
                     fontsize=10, color=VERDICT_COLORS.get(curve.verdict, "black"), loc="left")
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def plot_gain(curve: CurveAnalysis, ax: Axes | None = None, *, title: bool = True,
              legend: bool = True) -> Axes:
    """Gain per doubling ``f(2c) - f(c)`` (better is positive) against compute: fitted, measured
    between octaves of the data, and at the last compute with its interval; threshold and zero."""
    ax = axes_or_new(ax)
    c, y = observed(curve)
    last = c[-1] if c.size else curve.compute_last
    fitted = fitted_gain(curve, c, last, 200)
    if fitted is not None:
        grid, g, inside = fitted
        ax.plot(grid[inside], g[inside], "-", color=FIT, lw=1.8, label="fitted gain")
        ax.plot(grid[~inside], g[~inside], "--", color=FIT, lw=1.6, label="forecast gain")
    at, gain = measured_gains(c, y, curve.direction)
    if at.size:
        ax.plot(at, gain, "s", ms=4, color=POINTS, alpha=0.8, label="measured (octave means)")
    e = curve.gain_per_doubling
    if e is not None and math.isfinite(e.value) and last > 0:
        ax.errorbar([last], [e.value], yerr=error_bar(e.value, e.lo, e.hi), fmt="o", ms=6,
                    capsize=4, color=VERDICT_COLORS.get(curve.verdict, "black"), zorder=5,
                    label=f"gain at last compute {fmt(e.value)}")
    if math.isfinite(curve.threshold):
        ax.axhline(curve.threshold, color="#cf222e", ls="--", lw=1.2,
                   label=f"threshold {fmt(curve.threshold)}")
    ax.axhline(0.0, color="grey", lw=0.8)
    if c.size or (math.isfinite(last) and last > 0):
        ax.set_xscale("log")
    ax.set_xlabel(f"{axis_label(curve.compute_name)} (log scale)")
    ax.set_ylabel("gain per doubling")
    ax.grid(True, which="major", alpha=0.3)
    if title:
        ax.set_title("marginal gain per doubling of compute", fontsize=10, loc="left")
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best", framealpha=0.8)
    return ax


def curve_figure(curve: CurveAnalysis, *, confidence: float = 0.9) -> Figure:
    """One figure per curve: the curve (left) and its gain per doubling (right)."""
    fig = new_figure((11.0, 3.9), layout=None)
    fig.subplots_adjust(left=0.065, right=0.99, bottom=0.13, top=0.92, wspace=0.2)
    left, right = fig.subplots(1, 2, width_ratios=[1.25, 1])
    plot_curve(curve, left, confidence=confidence)
    plot_gain(curve, right)
    return fig


class Figures(dict):
    """What :meth:`saturate.api.Analysis.plot` returns: one matplotlib ``Figure`` per metric, in
    the order the metrics come, keyed by the metric's name; a metric of more curves than a figure
    holds (:data:`MAX_CURVES_PER_FIGURE`) gets a figure per page, keyed ``"metric (2/3)"``.

    A ``dict``: ``figs["train/reward"].savefig("reward.png")``, ``for name, fig in
    figs.items()``. Jupyter shows each figure once, inline, in order.
    """

    def _ipython_display_(self) -> None:
        from IPython.display import display

        for fig in self.values():
            display(fig)

    def __repr__(self) -> str:
        names = ", ".join(map(repr, self))
        return f"<Figures: {len(self)} figure{'' if len(self) == 1 else 's'}: {names}>"


def _metric_figure(curves: list[CurveAnalysis], confidence: float, title: str,
                   pyplot: bool, alone: bool) -> Figure:  # fmt: skip
    """One metric's curves: its only curve (``alone``) and its gain side by side; else a grid of
    curves (three across), each titled by its run and coloured by its verdict."""
    if alone:
        fig = pyplot_figure((11.0, 3.9)) if pyplot else new_figure((11.0, 3.9))
        left, right = fig.subplots(1, 2, width_ratios=[1.25, 1])
        plot_curve(curves[0], left, confidence=confidence)
        plot_gain(curves[0], right, title=False)
        return fig
    cols = min(3, len(curves))
    rows = math.ceil(len(curves) / cols)
    size = (11.0, 0.5 + 3.0 * rows)
    fig = pyplot_figure(size) if pyplot else new_figure(size)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for k, (ax, curve) in enumerate(zip(axes, curves, strict=False)):
        plot_curve(curve, ax, confidence=confidence, title=False, legend=k == 0)
        ax.set_title(f"{short(curve.run, 38)}: {curve.verdict}", fontsize=9, loc="left",
                     color=VERDICT_COLORS.get(curve.verdict, "black"))
        if k % cols:
            ax.set_ylabel("")
        if k < len(curves) - cols:
            ax.set_xlabel("")
    for ax in axes[len(curves):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11, x=0.01, ha="left")
    return fig


def plot_analysis(analysis: Analysed, run: str | None = None, metric: str | None = None, *,
                  pyplot: bool = False, per_figure: int = MAX_CURVES_PER_FIGURE) -> Figures:
    """The curves ``run`` and ``metric`` (globs) select, one figure per metric
    (:class:`Figures`): a metric's only curve beside its gain per doubling, several in a grid,
    ``per_figure`` at most to a figure (then a figure per page). ``pyplot=True`` makes the
    figures through pyplot (see :meth:`saturate.api.Analysis.plot`)."""
    curves = select(curves_of(analysis), run, metric)
    if not curves:
        raise InputError(f"no analysed curve matches run={run!r}, metric={metric!r}")
    if per_figure < 1:
        raise InputError(f"per_figure must be 1 or more, got {per_figure!r}")
    confidence = confidence_of(analysis)
    by: dict[str, list[CurveAnalysis]] = {}
    for c in curves:
        by.setdefault(c.metric, []).append(c)
    figures = Figures()
    for name, group in by.items():
        pages = [group[k:k + per_figure] for k in range(0, len(group), per_figure)]
        for n, page in enumerate(pages, 1):
            key = name if len(pages) == 1 else f"{name} ({n}/{len(pages)})"
            figures[key] = _metric_figure(page, confidence, f"{key}: {len(page)} curve"
                                          f"{'' if len(page) == 1 else 's'}", pyplot,
                                          alone=len(group) == 1)
    return figures


def sparkline_figure(curve: CurveAnalysis, *, confidence: float = 0.9) -> Figure:
    """A small figure for a table cell: points, fit and forecast band, no labels."""
    fig = new_figure((2.4, 0.95), layout=None)
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
