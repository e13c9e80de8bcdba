"""The HTML report: one self-contained page (headline, a sortable table of the curves with
sparklines, the diagnostics, the settings, then a section per curve with its inline SVG charts).

Every string from the data is escaped; the page's Content-Security-Policy
(:data:`~saturate.report.html_assets.CSP`) lets only its own sorting script run and fetches nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import pandas as pd

from saturate.report.html_assets import (
    CSP,
    PAGE_CSS,
    SORT_SCRIPT,
    badge,
    breakable,
    esc,
    severity_badge,
)
from saturate.report.plots.overlay import MAX_RUNS_PER_OVERLAY, overlay_groups
from saturate.report.rows import (
    DIAGNOSTIC_COLUMNS,
    DIAGNOSTIC_METRIC_COLUMNS,
    axis_text,
    confidence_level,
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
    settings_source,
    short_reason,
)
from saturate.report.svg.overlay import overlay_svg, run_color
from saturate.results import VERDICTS, CurveAnalysis


def _counts(curves: tuple[CurveAnalysis, ...]) -> str:
    parts = [f"<span>{badge(v)} {n}</span> " for v in VERDICTS
             if (n := sum(c.verdict == v for c in curves))]
    return f'<p class="counts">{"".join(parts)}</p>'


def _sort_value(x: float | None) -> str:
    return "" if x is None or not math.isfinite(x) else f"{x:.6g}"


def _summary_table(curves: tuple[CurveAnalysis, ...], sparks: list[str]) -> str:
    """One row per curve (run, metric, verdict, P(pays), gain, why, first forecast, last value,
    sparkline); a click on a header sorts by that column."""
    at = next((str(c.forecast[0].at) for c in curves if c.forecast), "")
    heads = [("run", ""), ("metric", ""), ("verdict", ""), ("P(pays)", "n"),
             ("gain / doubling", "n"), ("why", ""), (f"forecast {at}".strip(), "n"),
             ("last value", "n"), ("curve", "nosort")]
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
                progress: Progress | None = None, workers: int | None = None) -> str:
    """The whole report as one self-contained HTML page.

    ``progress(done, total)`` is called as the curves' sections are drawn; ``workers > 1`` draws
    them in that many processes (default: one per core where workers are forked, else one).
    """
    curves, settings = curves_and_settings(analysis)
    confidence = confidence_level(settings)
    pooled = any(len((c.group or {}).get("runs") or []) > 1 for c in curves)
    table = getattr(analysis, "data", None) if pooled else None  # rebuilt only to draw seeds
    if workers is None:
        from saturate.analysis.pool import forking
        from saturate.analysis.work import local_workers

        workers = local_workers() if forking() else 1
    built = render_sections(curves, None if table is None else table.points, confidence,
                            plots=plots, progress=progress, workers=workers)
    items = settings_items(settings)
    settings_html = (
        "<details><summary>Settings used</summary><table><tbody>"
        + "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in items)
        + "</tbody></table></details>" if items else "")
    found = diagnostics_of(analysis)
    source = f" · {esc(src)}" if (src := settings_source(analysis)) else ""
    note = (f"<p><a href='#diagnostics'>{len(found)} finding(s) across metrics and runs</a>, "
            f"{sum(d.severity == 'error' for d in found)} error(s).</p>" if found else "")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>{PAGE_CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><p class='headline'>{esc(headline(curves))}</p>"
        f"<p class='muted'>{esc(axis_text(analysis))}{source}</p>{_counts(curves)}{note}"
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


Progress = Callable[[int, int], None]
"""``progress(done, total)``, called as sections are drawn."""


def _facts(c: CurveAnalysis) -> str:
    items = [
        ("points", f"{c.n_points} ({c.compute_name} {num(c.compute_first)} – {num(c.compute_last)})"),
        ("last value", f"{num(c.value_last, 4)} ({c.direction} is better)"),
        ("P(pays)", prob(c.p_pays)),
        ("gain per doubling", interval(c.gain_per_doubling)),
        ("threshold", num(c.threshold)),
        ("asymptote", interval(c.asymptote)),
        ("headroom", interval(c.headroom)),
        ("ROI", f"{num(c.roi, 2)} ({c.roi_stage})"),
        ("knee", num(c.knee)),
        ("stop point", interval(c.stop_point) if c.stop_point is not None else "none in range"),
    ]
    if c.trend is not None:
        items.append(("recent trend / doubling",
                      f"{interval(c.trend.slope_per_doubling)} (p={num(c.trend.p_value, 2)})"))
    if c.collapse is not None:
        items.append(("collapse", f"at {num(c.collapse.compute)}, drop {num(c.collapse.drop)}"))
    if c.run_status:
        items.append(("run status", c.run_status))
    if c.group:
        items.append(("seeds averaged", str(c.group.get("n_seeds", ""))))
    if c.pooling is not None:
        p = c.pooling
        items.append(("pooled with" if p.pooled else "not pooled with",
                      f"{', '.join(p.runs)}" + ("" if p.pooled else
                                                f" (its own estimate lies {num(abs(p.disagreement), 2)} "
                                                "sd from theirs)")))
    if c.flags:
        items.append(("flags", ", ".join(c.flags)))
    return '<div class="facts">' + "".join(
        f"<div><b>{esc(k)}:</b> {esc(v)}</div>" for k, v in items) + "</div>"


def _forecast_table(c: CurveAnalysis) -> str:
    if not c.forecast:
        return ""
    rows = "".join(
        f"<tr><td>{esc(f.at)}</td><td class='n'>{esc(num(f.compute))}</td>"
        f"<td class='n'>{esc(num(f.value, 4))}</td><td class='n'>{esc(num(f.lo, 4))}</td>"
        f"<td class='n'>{esc(num(f.hi, 4))}</td><td>{'' if f.identified else 'not identified'}"
        "</td></tr>" for f in c.forecast)
    return ("<table><thead><tr><th>forecast at</th><th class='n'>compute</th>"
            "<th class='n'>value</th><th class='n'>lo</th><th class='n'>hi</th><th></th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


def _laws(c: CurveAnalysis) -> str:
    if not c.laws:
        return ""
    rows = []
    for law in sorted(c.laws, key=lambda x: -x.weight if math.isfinite(x.weight) else 0):
        params = ", ".join(f"{k} = {interval(v)}" for k, v in law.params.items())
        rows.append(f"<tr><td>{esc(law.name)}</td><td class='n'>{esc(num(law.weight, 2))}</td>"
                    f"<td>{esc(params)}</td></tr>")
    return ("<details><summary>Fitted laws and weights</summary><table><thead><tr>"
            "<th>law</th><th class='n'>weight</th><th>parameters</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></details>")


def curve_section(i: int, c: CurveAnalysis, confidence: float, plots: bool,
                  seeds: pd.DataFrame | None = None) -> tuple[str, str]:
    """The section of curve ``i`` and its sparkline (both HTML); ``seeds`` holds the rows of the
    runs pooled into it (``--group-by``), drawn behind the mean."""
    from saturate.report.svg import curve_svg, sparkline_svg

    charts = curve_svg(c, confidence=confidence, data=seeds) if plots else ""
    reasons = "".join(f"<li>{esc(r)}</li>" for r in c.reasons)
    section = (
        f'<section class="curve" id="c{i}"><h2>{esc(c.run)} / {esc(c.metric)} '
        f"{badge(c.verdict)}</h2><p class='lead'>{esc(short_reason(c))}</p>{charts}{_facts(c)}"
        f"<ul class='reasons'>{''.join(reasons)}</ul>{_forecast_table(c)}{_laws(c)}</section>"
    )
    return section, sparkline_svg(c) if plots else ""


def _seed_rows(curve: CurveAnalysis, data: pd.DataFrame | None) -> pd.DataFrame | None:
    """The table's rows of the runs pooled into ``curve`` (what its chart draws behind it)."""
    runs = (curve.group or {}).get("runs") or []
    if len(runs) < 2 or data is None or data.empty:
        return None
    rows = data[(data["metric"] == curve.metric) & data["run"].isin(runs)]
    return rows[[c for c in ("source", "run", "metric", "step", "compute", "value")
                 if c in rows.columns]]


def _draw(tasks: Sequence[tuple[Any, ...]]) -> list[tuple[int, tuple[str, str]]]:
    return [(t[0], curve_section(*t)) for t in tasks]


def render_sections(curves: Sequence[CurveAnalysis], data: pd.DataFrame | None,
                    confidence: float, *, plots: bool = True, progress: Progress | None = None,
                    workers: int = 1) -> list[tuple[str, str]]:
    """(section, sparkline) of every curve, in order. ``workers > 1`` draws them in that many
    processes (in chunks, each curve with only its own points and fit sent over)."""
    tasks = [(i, c, confidence, plots, _seed_rows(c, data)) for i, c in enumerate(curves)]
    total = len(tasks)
    out: list[tuple[str, str]] = [("", "")] * total
    done = 0
    if workers <= 1 or total < 4 * workers:
        for task in tasks:
            out[task[0]] = curve_section(*task)
            done += 1
            if progress is not None:
                progress(done, total)
        return out
    size = max(1, min(8, total // (4 * workers)))
    chunks = [tasks[k:k + size] for k in range(0, total, size)]
    from saturate.analysis.pool import forked_pool, forking

    with forked_pool(workers) if forking() else ProcessPoolExecutor(max_workers=workers) as pool:
        for future in as_completed([pool.submit(_draw, chunk) for chunk in chunks]):
            for i, drawn in future.result():
                out[i] = drawn
                done += 1
            if progress is not None:
                progress(done, total)
    return out


def _legend(curves: Sequence[CurveAnalysis]) -> str:
    labels = []
    for i, c in enumerate(curves[:MAX_RUNS_PER_OVERLAY]):
        labels.append(
            f'<label data-i="{i}" data-run="{esc(c.run)}" data-verdict="{esc(c.verdict)}">'
            f'<input type="checkbox" checked> <span class="ov-swatch" '
            f'style="background:{run_color(i)}"></span> {esc(c.run)} ({esc(c.verdict)})</label>')
    return f'<div class="ov-legend">{"".join(labels)}</div>'


def overlay_section(curves: Sequence[CurveAnalysis], confidence: float) -> str:
    """The section (empty when no metric of a source has two runs)."""
    groups = overlay_groups(curves)
    if not groups:
        return ""
    options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in VERDICTS)
    parts = [
        '<h2 id="overlays">Runs on one chart</h2>',
        "<p class='muted'>Per metric, the runs of a source together: each run's fit and band in its "
        "colour (its points are in its own chart below), and each recipe's pooled curve (dashed: "
        "the mean of its seeds' fits where they all have data). A run's checkbox shows or hides "
        "it; the filters below also hide the summary table's rows that do not match.</p>",
        '<p><label>verdict <select id="ov-verdict"><option value="">all</option>'
        f'{options}</select></label> <label>run <input id="ov-run" type="search" '
        'placeholder="part of a run name"></label></p>',
    ]
    for (source, metric), group in groups.items():
        more = (f" (the first {MAX_RUNS_PER_OVERLAY} of {len(group)})"
                if len(group) > MAX_RUNS_PER_OVERLAY else "")
        parts.append(f'<section class="ov-group"><h3>{esc(metric)} · {esc(Path(source).name)}: '
                     f"{len(group)} runs{more}</h3>{overlay_svg(group, confidence=confidence)}"
                     f"{_legend(group)}</section>")
    return "".join(parts)
