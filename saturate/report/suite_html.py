"""The suite section in HTML and its figure: :func:`suite_chart` / :func:`suite_svg` (each group's
aggregate with its band, fit and forecast as reported, as inline SVG), :func:`plot_suite` (the
same with matplotlib, for files and ``SuiteAnalysis.plot()``) and :func:`suite_html` (the group
table, chart, per-task grid, comparisons and notes), rendered from the Jinja template
``templates/_suite.html``: autoescape escapes every string from the data.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from saturate.report.html_assets import render_template
from saturate.report.plots import VERDICT_COLORS
from saturate.report.plots.overlay import PALETTE
from saturate.report.plots.style import error_bar, forecast_grid, forecast_path, short
from saturate.report.suite import (
    SUITE_COLUMNS,
    comparison_text,
    suite_group_row,
    suite_notes,
    task_grid,
)
from saturate.report.svg import Chart, chart_svg

_PALETTE = PALETTE[:10]
_CSS = (
    ".suite-grid td.v { color: #fff; font-weight: 600; text-align: center; font-size: 12px; "
    "padding: 3px 8px; }"
)

if TYPE_CHECKING:  # types only: suites.result renders itself through this module
    from saturate.suites.result import SuiteAnalysis, SuiteGroup


def _aggregate(g: SuiteGroup, statistic: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(compute, statistic, lo, hi, within the analysed stretch) of a group's aggregate."""
    a = g.aggregate
    c = np.asarray(a.compute, float)
    start, stop = a.analysed
    inside = np.zeros(c.size, bool)
    inside[start:stop] = True
    y, lo, hi = (np.asarray(getattr(a, f"{statistic}{k}"), float) for k in ("", "_lo", "_hi"))
    return c, y, lo, hi, inside


def _draw_group(ax: Axes, g: SuiteGroup, statistic: str, color: str, confidence: float) -> None:
    c, y, lo, hi, inside = _aggregate(g, statistic)
    shown = np.isfinite(y) & (c > 0)
    ax.fill_between(c[shown], lo[shown], hi[shown], color=color, alpha=0.18, lw=0)
    ax.plot(c[shown & ~inside], y[shown & ~inside], ".", ms=3, color=color, alpha=0.5)
    ax.plot(c[inside], y[inside], "o-", ms=3, lw=1.2, color=color,
            label=f"{g.group}: {g.verdict} ({len(g.tasks)} tasks)")
    path = _forecast(g, confidence)
    if path is not None:
        ahead, value, f_lo, f_hi = path
        if np.isfinite(f_lo).any():
            ax.fill_between(ahead, f_lo, f_hi, color=color, alpha=0.10, lw=0)
        ax.plot(ahead, value, "--", lw=1.4, color=color)
    for f in g.analysis.forecast:
        if f.compute > 0 and math.isfinite(f.value):
            ax.errorbar([f.compute], [f.value], yerr=error_bar(f.value, f.lo, f.hi), fmt="D", ms=4,
                        color=color, capsize=3)


def _forecast(g: SuiteGroup, confidence: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The aggregate's forecast as reported (computes, value, lo, hi), None without a fit."""
    a = g.analysis
    if a.fit is None or not a.compute_last > 0:
        return None
    ahead = forecast_grid(a, a.compute_last)
    path = forecast_path(a, ahead, confidence)
    return None if path is None else (ahead, *path)


def plot_suite(suite: SuiteAnalysis, ax: Axes | None = None) -> Axes:
    """Every group's aggregate with its band (shaded), the analysed stretch joined, the forecast
    dashed with the 2x/4x forecasts and their intervals; returns the Axes drawn on."""
    ax = ax if ax is not None else Figure(figsize=(7.0, 4.0), layout="constrained").add_subplot()
    for i, g in enumerate(suite.groups):
        _draw_group(ax, g, suite.statistic, _PALETTE[i % len(_PALETTE)], suite.confidence)
    ax.set_xscale("log")
    ax.set_xlabel(f"{suite.compute_name} (log scale)")
    ax.set_ylabel(f"{suite.statistic.upper()} of normalised {suite.metric}")
    ax.set_title(f"Suite {suite.suite}: {suite.statistic.upper()} with {suite.confidence:.0%} "
                 "band; dashed: forecast", fontsize=10, loc="left")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.8)
    return ax


def suite_chart(suite: SuiteAnalysis, *, width: float = 720, height: float = 320) -> Chart:
    """Every group's aggregate (the analysed stretch joined, points outside it dotted) with its
    bootstrap band, and its forecast as reported, with the forecasts asked for."""
    stat = suite.statistic
    chart = Chart(width, height, xlabel=f"{suite.compute_name}, log scale",
                  ylabel=f"{stat.upper()} of normalised {short(suite.metric, 30)}")
    for i, g in enumerate(suite.groups):
        color = _PALETTE[i % len(_PALETTE)]
        c, y, lo, hi, inside = _aggregate(g, stat)
        chart.band(c, lo, hi, color, label=f"{suite.confidence:.0%} band", opacity=0.16)
        if (~inside & np.isfinite(y)).any():
            chart.dots(c[~inside], y[~inside], color, size=2.5, opacity=0.5,
                       label="fewer tasks (not analysed)")
        chart.line(c[inside], y[inside], color, width=2.0,
                   label=f"{short(g.group, 30)}: {g.verdict} ({len(g.tasks)} tasks)")
        path = _forecast(g, suite.confidence)
        if path is not None:
            ahead, value, lo, hi = path
            if np.isfinite(lo).any():
                chart.band(ahead, lo, hi, color, opacity=0.08)
            chart.line(ahead, value, color, dash="6 4", label="forecast")
        for f in g.analysis.forecast:
            if f.compute and f.compute > 0 and math.isfinite(f.value):
                chart.marker(f.compute, f.value, f.lo, f.hi, color, text=str(f.at),
                             label="forecasts asked for")
    return chart


def suite_svg(suite: SuiteAnalysis, *, width: float = 720, height: float = 320) -> str:
    """:func:`suite_chart` as an inline ``<svg>`` element."""
    return chart_svg(suite_chart(suite, width=width, height=height),
                     title=f"aggregate curves of suite {suite.suite}")


def suite_html(suite: SuiteAnalysis, *, plots: bool = True, width: float = 720) -> str:
    """The suite section of the HTML report (a ``<section id="suite">`` with its own small
    style), from the template ``templates/_suite.html``; ``plots=False`` leaves the chart out."""
    tasks, grid_groups, cells = task_grid(suite)
    return render_template(
        "_suite.html", css=Markup(_CSS), name=suite.suite, method=suite.method(),
        colors=VERDICT_COLORS, columns=SUITE_COLUMNS,
        groups=[(suite_group_row(suite, g), g.verdict) for g in suite.groups],
        chart=Markup(suite_svg(suite, width=width)) if plots else "",
        tasks=tasks, grid_groups=grid_groups, cells=cells,
        comparisons=[comparison_text(c) for c in suite.comparisons],
        why=[(g.group, g.verdict, g.analysis.reasons) for g in suite.groups],
        notes=suite_notes(suite)).strip()
