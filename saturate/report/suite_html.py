"""The suite section in HTML and its figure: :func:`suite_chart` / :func:`suite_svg` (each group's
aggregate with its band, fit and forecast as reported, as inline SVG), :func:`plot_suite` (the
same with matplotlib, for files and ``SuiteAnalysis.plot()``) and :func:`suite_html` (the group
table, chart, per-task grid, comparisons and notes). Every string from the data is escaped.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

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
from saturate.report.text import for_html

_PALETTE = PALETTE[:10]
_CSS = (
    ".suite-grid td.v { color: #fff; font-weight: 600; text-align: center; font-size: 12px; "
    "padding: 3px 8px; }"
)

if TYPE_CHECKING:  # types only: suites.result renders itself through this module
    from saturate.suites.result import SuiteAnalysis, SuiteGroup


_e = for_html  # control and bidi characters escaped, then HTML's


def _badge(verdict: str) -> str:
    color = VERDICT_COLORS.get(verdict, "#6e7781")
    return (f'<span class="badge" style="display:inline-block;padding:1px 8px;border-radius:10px;'
            f'color:#fff;font-weight:600;background:{color}">{_e(verdict)}</span>')


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


def _group_table(suite: SuiteAnalysis) -> str:
    head = "".join(f"<th class='l'>{_e(h)}</th>" for _, h in SUITE_COLUMNS)
    rows = []
    for g in suite.groups:
        row = suite_group_row(suite, g)
        cells = [(_badge(g.verdict) if k == "verdict" else _e(row[k])) for k, _ in SUITE_COLUMNS]
        rows.append("<tr>" + "".join(f"<td class='l'>{c}</td>" for c in cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _task_grid(suite: SuiteAnalysis) -> str:
    tasks, groups, cells = task_grid(suite)
    if not tasks:
        return ""
    head = "<th class='l'>task</th>" + "".join(f"<th>{_e(g)}</th>" for g in groups)
    rows = []
    for t in tasks:
        tds = []
        for g in groups:
            v = cells.get((t, g), "")
            color = VERDICT_COLORS.get(v, "#d0d7de")
            tds.append(f"<td class='v' style='background:{color}' title='{_e(t)} / {_e(g)}: "
                       f"{_e(v or 'not run')}'>{_e(v or '–')}</td>")
        rows.append(f"<tr><td class='l'>{_e(t)}</td>{''.join(tds)}</tr>")
    return ("<p><b>Per-task verdicts</b> (each task's seeds pooled, tasks holding the suite back "
            f"first)</p><table class='suite-grid'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _comparisons(suite: SuiteAnalysis) -> str:
    items = "".join(f"<li>{_e(comparison_text(c))}</li>" for c in suite.comparisons)
    return f"<p><b>Comparisons</b></p><ul>{items}</ul>" if items else ""


def _notes(suite: SuiteAnalysis) -> str:
    return "".join(f"<p class='muted'>note: {_e(n)}</p>" for n in suite_notes(suite))


def suite_html(suite: SuiteAnalysis, *, plots: bool = True, width: float = 720) -> str:
    """The suite section of the HTML report (a ``<section id="suite">`` with its own small
    style); ``plots=False`` leaves the chart out."""
    img = suite_svg(suite, width=width) if plots else ""
    reasons = "".join(
        f"<p><b>{_e(g.group)}</b> {_badge(g.verdict)}</p><ul class='reasons'>"
        + "".join(f"<li>{_e(r)}</li>" for r in g.analysis.reasons) + "</ul>"
        for g in suite.groups
    )
    return (f"<section class='suite' id='suite'><style>{_CSS}</style>"
            f"<h2>Suite {_e(suite.suite)}</h2><p class='muted'>{_e(suite.method())}</p>"
            f"{_group_table(suite)}{img}{_task_grid(suite)}{_comparisons(suite)}"
            f"<details><summary>Why</summary>{reasons}</details>{_notes(suite)}</section>")
