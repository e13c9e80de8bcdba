"""The HTML report: one self-contained page. A headline, a compact table of the curves (sorted by
clicking a column, with a sparkline per curve), the diagnostics with their figures, the settings,
then a section per curve with its charts (inline SVG), facts, reasons, forecasts and laws.

Every string that came from the data is escaped with :func:`html.escape`. The page carries a
Content-Security-Policy that lets only its own table-sorting script run (allowed by its hash) and
fetches nothing (:data:`saturate.report.html_assets.CSP`), as a second line of defence.
"""

from __future__ import annotations

import math
from typing import Any

from saturate.report.html_assets import (
    CSP,
    PAGE_CSS,
    SEVERITY_COLORS,
    SORT_SCRIPT,
    badge,
    breakable,
    esc,
    severity_badge,
)
from saturate.report.html_overlay import overlay_section
from saturate.report.html_sections import Progress, render_sections
from saturate.report.notebook import notebook_html
from saturate.report.rows import (
    DIAGNOSTIC_COLUMNS,
    DIAGNOSTIC_METRIC_COLUMNS,
    axis_text,
    curves_and_settings,
    diagnostic_row,
    diagnostic_rows,
    diagnostics_of,
    forecast_cell,
    headline,
    interval,
    num,
    prob,
    settings_items,
    short_reason,
)
from saturate.results import VERDICTS, CurveAnalysis

__all__ = ["render_html", "notebook_html", "diagnostics_html", "diagnostic_metrics_html", "CSP",
           "SEVERITY_COLORS"]

def _confidence(settings: dict[str, Any]) -> float:
    level = settings.get("confidence")
    return float(level) if isinstance(level, (int, float)) and 0 < level < 1 else 0.9


def _counts(curves: tuple[CurveAnalysis, ...]) -> str:
    parts = [f"<span>{badge(v)} {n}</span> " for v in VERDICTS
             if (n := sum(c.verdict == v for c in curves))]
    return f'<p class="counts">{"".join(parts)}</p>'


def _sort_value(x: float | None) -> str:
    return "" if x is None or not math.isfinite(x) else f"{x:.6g}"


def _summary_table(curves: tuple[CurveAnalysis, ...], sparks: list[str]) -> str:
    """One row per curve: run, metric, verdict, P(pays), gain, why, first forecast, last value, sparkline;
    a click on a header sorts by that column."""
    at = next((str(c.forecast[0].at) for c in curves if c.forecast), "")
    heads = [("run", ""), ("metric", ""), ("verdict", ""), ("P(pays)", "n"),
             ("gain / doubling", "n"),
             ("why", ""), (f"forecast {at}".strip(), "n"), ("last value", "n"),
             ("curve", "nosort")]
    head = "".join(f'<th class="{cls}" scope="col">{esc(h)}</th>' for h, cls in heads)
    order = {v: i for i, v in enumerate(VERDICTS)}
    rows = []
    for i, (c, spark) in enumerate(zip(curves, sparks, strict=True)):
        f = c.forecast[0].value if c.forecast else None
        rows.append(
            "<tr>"
            f'<td class="name"><a href="#c{i}">{breakable(c.run)}</a></td>'
            f'<td class="name">{breakable(c.metric)}</td>'
            f'<td data-v="{order.get(c.verdict, 9)}">{badge(c.verdict)}</td>'
            f'<td class="n" data-v="{_sort_value(c.p_pays)}">{esc(prob(c.p_pays))}</td>'
            f'<td class="n" data-v="{_sort_value(c.gain_per_doubling.value)}">'
            f"{esc(interval(c.gain_per_doubling))}</td>"
            f'<td class="why">{esc(short_reason(c))}</td>'
            f'<td class="n" data-v="{_sort_value(f)}">{esc(forecast_cell(c))}</td>'
            f'<td class="n" data-v="{_sort_value(c.value_last)}">{esc(num(c.value_last, 4))}</td>'
            f"<td>{spark}</td></tr>"
        )
    return (f'<table class="sortable" id="curves"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _suite(analysis: Any, plots: bool) -> str:
    """The suite section (with a suite key), before the curves: it is the answer asked for."""
    suite = getattr(analysis, "suite", None)
    if suite is None:
        return ""
    from saturate.report.suite_html import suite_html

    return f"{suite_html(suite, plots=plots)}<h2 id='curves-head'>Curves (each run on its own)</h2>"


def diagnostics_html(analysis: Any, *, plots: bool = True) -> str:
    """The Diagnostics section: a table of every finding (errors first), then a figure for each
    divergence, sharpening and recipe comparison. Empty when there are no diagnostics."""
    from saturate.report.svg import diagnostic_svg

    found = diagnostics_of(analysis)
    if not found:
        return ""
    head = "".join(f'<th class="{"n" if k == "compute" else ""}">{esc(h)}</th>'
                   for k, h in DIAGNOSTIC_COLUMNS)
    rows, figures = [], []
    for i, d in enumerate(found):
        fig = diagnostic_svg(d, analysis) if plots else ""
        cells = []
        for key, text in diagnostic_row(d).items():
            if key == "severity":
                cells.append(f"<td>{severity_badge(d.severity)}</td>")
            elif key == "kind" and fig:
                cells.append(f'<td><a href="#d{i}">{esc(text)}</a></td>')
            else:
                cls = {"compute": "n", "message": "msg"}.get(key, "name")
                cells.append(f'<td class="{cls}">{esc(text)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
        if fig:
            figures.append(f'<section class="diag" id="d{i}"><h2>{esc(d.kind)}: {esc(d.run)} '
                           f"{severity_badge(d.severity)}</h2>{fig}<p>{esc(d.message)}</p>"
                           "</section>")
    return (
        f'<h2 id="diagnostics">Diagnostics ({len(found)})</h2>'
        "<p class='muted'>Findings across the metrics of a run and across runs: reward/benchmark "
        "divergence, pass@k sharpening, slices, instabilities, recipes, targets, cost. "
        "<code>from compute</code> is where the finding starts.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"{''.join(figures)}"
    )


def diagnostic_metrics_html(analysis: Any) -> str:
    """The "Diagnostic metrics" section: the metrics that get no verdict (empty when none)."""
    rows = diagnostic_rows(analysis)
    if not rows:
        return ""
    head = "".join(f"<th class='l'>{esc(h)}</th>" for _, h in DIAGNOSTIC_METRIC_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td class='l'>{esc(r[k])}</td>"
                                    for k, _ in DIAGNOSTIC_METRIC_COLUMNS) + "</tr>" for r in rows)
    return (f"<h2>Diagnostic metrics, no verdict ({len(rows)})</h2>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def render_html(analysis: Any, *, title: str = "saturate report", plots: bool = True,
                progress: Progress | None = None, workers: int = 1) -> str:
    """The whole report as one self-contained HTML page.

    ``progress(done, total)`` is called as the curves' sections are drawn; ``workers > 1`` draws
    them in that many processes.
    """
    curves, settings = curves_and_settings(analysis)
    confidence = _confidence(settings)
    table = getattr(analysis, "data", None)
    built = render_sections(curves, None if table is None else table.points, confidence, plots=plots, progress=progress,
                            workers=workers)
    items = settings_items(settings)
    settings_html = (
        "<details><summary>Settings used</summary><table><tbody>"
        + "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in items)
        + "</tbody></table></details>" if items else "")
    found = diagnostics_of(analysis)
    note = (f"<p><a href='#diagnostics'>{len(found)} finding(s) across metrics and runs</a>, "
            f"{sum(d.severity == 'error' for d in found)} error(s).</p>" if found else "")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{PAGE_CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><p class='headline'>{esc(headline(curves))}</p>"
        f"<p class='muted'>{esc(axis_text(analysis))}</p>{_counts(curves)}{note}"
        f"{_suite(analysis, plots)}"
        "<p class='muted'>Click a column to sort. Gain per doubling: the fitted change of the "
        "metric (better is positive) when compute doubles from the last point, with its interval "
        f"at {confidence:.0%} confidence; <code>?</code> marks a value the data cannot pin down. "
        "In the charts the solid line is the fit over the observed range, the dashed line the "
        "forecast as reported (with its band), the diamonds the forecasts asked for.</p>"
        f"{_summary_table(curves, [spark for _, spark in built])}"
        f"{overlay_section(curves, confidence) if plots else ''}"
        f"{diagnostic_metrics_html(analysis)}{diagnostics_html(analysis, plots=plots)}"
        f"{settings_html}"
        f"{''.join(section for section, _ in built)}"
        f"<script>{SORT_SCRIPT}</script></body></html>\n"
    )
