"""The HTML report: one self-contained page (PNG plots embedded as base64, inline CSS, no scripts,
no network fetches), and the compact fragment Jupyter shows for an Analysis.

Every string that came from the data is escaped with :func:`html.escape`; the page also carries a
Content-Security-Policy that forbids scripts and any fetch, as a second line of defence.
"""

from __future__ import annotations

import base64
import html
import math
from typing import Any

from saturate.report.plots import (
    VERDICT_COLORS,
    curve_figure,
    diagnostic_figure,
    figure_bytes,
    sparkline_figure,
)
from saturate.report.rows import (
    COLUMNS,
    DIAGNOSTIC_COLUMNS,
    DIAGNOSTIC_METRIC_COLUMNS,
    axis_text,
    curves_and_settings,
    diagnostic_row,
    diagnostic_rows,
    diagnostics_of,
    interval,
    num,
    settings_items,
)
from saturate.report.rows import summary_row as _row
from saturate.results import VERDICTS, CurveAnalysis, verdict_counts

__all__ = ["render_html", "notebook_html", "diagnostics_html", "diagnostic_metrics_html", "CSP",
           "SEVERITY_COLORS"]

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

SEVERITY_COLORS: dict[str, str] = {"error": "#cf222e", "warning": "#9a6700", "info": "#0969da"}

_CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: #1f2328; margin: 0 auto; padding: 24px 32px 48px; max-width: 1200px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 8px; word-break: break-word; }
.lead { color: #57606a; margin: 0 0 16px; }
.counts span { margin-right: 10px; white-space: nowrap; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { padding: 5px 9px; border-bottom: 1px solid #d0d7de; text-align: right;
         vertical-align: top; }
th { background: #f6f8fa; position: sticky; top: 0; }
td.l, th.l { text-align: left; }
td.name { max-width: 260px; word-break: break-word; }
tr:hover td { background: #f6f8fa; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
         font-weight: 600; font-size: 12px; white-space: nowrap; }
.curve { border: 1px solid #d0d7de; border-radius: 8px; padding: 14px 16px; margin: 18px 0; }
.curve img { width: 100%; height: auto; display: block; margin: 6px 0 10px; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr));
         gap: 4px 18px; margin: 0 0 8px; }
.facts div { font-size: 13px; } .facts b { color: #57606a; font-weight: 600; }
ul.reasons { margin: 4px 0 8px; padding-left: 20px; }
.muted { color: #57606a; font-size: 12px; }
details { margin: 8px 0; } summary { cursor: pointer; color: #0969da; }
code { background: #f6f8fa; padding: 0 4px; border-radius: 4px; }
td.msg { text-align: left; max-width: 560px; }
.diag { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 14px; margin: 12px 0; }
.diag img { width: 100%; max-width: 820px; height: auto; display: block; margin: 6px 0; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _badge(verdict: str) -> str:
    color = VERDICT_COLORS.get(verdict, "#6e7781")
    return f'<span class="badge" style="background:{color}">{_e(verdict)}</span>'


def _png(fig: Any, dpi: int) -> str:
    data = base64.b64encode(figure_bytes(fig, "png", dpi=dpi)).decode("ascii")
    return f"data:image/png;base64,{data}"


def _confidence(settings: dict[str, Any]) -> float:
    level = settings.get("confidence")
    return float(level) if isinstance(level, (int, float)) and 0 < level < 1 else 0.9


def _counts(curves: tuple[CurveAnalysis, ...]) -> str:
    parts = []
    for v in VERDICTS:
        n = sum(c.verdict == v for c in curves)
        if n:
            parts.append(f"<span>{_badge(v)} {n}</span>")
    return f'<p class="counts">{"".join(parts)}</p>'


def _summary_table(curves: tuple[CurveAnalysis, ...], *, links: bool) -> str:
    left = {"run", "metric", "verdict", "roi"}
    head = "".join(f'<th class="{"l" if k in left else ""}">{_e(h)}</th>' for k, h in COLUMNS)
    rows = []
    for i, c in enumerate(curves):
        cells = []
        for key, text in _row(c).items():
            if key == "verdict":
                cells.append(f'<td class="l">{_badge(c.verdict)}</td>')
            elif key == "run" and links:
                cells.append(f'<td class="l name"><a href="#c{i}">{_e(text)}</a></td>')
            elif key in ("run", "metric"):
                cells.append(f'<td class="l name">{_e(text)}</td>')
            else:
                cells.append(f'<td class="{"l" if key in left else ""}">{_e(text)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _severity(severity: str) -> str:
    color = SEVERITY_COLORS.get(severity, "#6e7781")
    return f'<span class="badge" style="background:{color}">{_e(severity)}</span>'


def diagnostics_html(analysis: Any, *, plots: bool = True) -> str:
    """The Diagnostics section: a table of every finding (errors first), then a figure for each
    divergence, sharpening and recipe comparison. Empty when there are no diagnostics."""
    found = diagnostics_of(analysis)
    if not found:
        return ""
    head = "".join(
        f'<th class="{"" if k == "compute" else "l"}">{_e(h)}</th>' for k, h in DIAGNOSTIC_COLUMNS
    )
    rows = []
    figures = []
    for i, d in enumerate(found):
        fig = diagnostic_figure(d, analysis) if plots else None
        cells = []
        for key, text in diagnostic_row(d).items():
            if key == "severity":
                cells.append(f'<td class="l">{_severity(d.severity)}</td>')
            elif key == "kind" and fig is not None:
                cells.append(f'<td class="l"><a href="#d{i}">{_e(text)}</a></td>')
            elif key == "compute":
                cells.append(f"<td>{_e(text)}</td>")
            elif key == "message":
                cells.append(f'<td class="msg">{_e(text)}</td>')
            else:
                cells.append(f'<td class="l name">{_e(text)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
        if fig is not None:
            alt = f"{d.kind} in {d.run}: {', '.join(d.metrics)}"
            figures.append(
                f'<section class="diag" id="d{i}"><h2>{_e(d.kind)}: {_e(d.run)} '
                f'{_severity(d.severity)}</h2><img src="{_png(fig, 96)}" alt="{_e(alt)}">'
                f"<p>{_e(d.message)}</p></section>"
            )
    return (
        f"<h2>Diagnostics ({len(found)})</h2>"
        "<p class='muted'>Findings across the metrics of a run and across runs: reward/benchmark "
        "divergence, pass@k sharpening, slices, instabilities, recipes, targets, cost. "
        "<code>from compute</code> is where the finding starts.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"{''.join(figures)}"
    )


def _facts(c: CurveAnalysis) -> str:
    items = [
        ("points", f"{c.n_points} ({c.compute_name} {num(c.compute_first)} – {num(c.compute_last)})"),
        ("last value", f"{num(c.value_last, 4)} ({c.direction} is better)"),
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
        items.append(("pooled seeds", str(c.group.get("n_seeds", ""))))
    if c.flags:
        items.append(("flags", ", ".join(c.flags)))
    return '<div class="facts">' + "".join(
        f"<div><b>{_e(k)}:</b> {_e(v)}</div>" for k, v in items
    ) + "</div>"


def _forecast_table(c: CurveAnalysis) -> str:
    if not c.forecast:
        return ""
    rows = "".join(
        f"<tr><td class='l'>{_e(f.at)}</td><td>{_e(num(f.compute))}</td>"
        f"<td>{_e(num(f.value, 4))}</td><td>{_e(num(f.lo, 4))}</td><td>{_e(num(f.hi, 4))}</td></tr>"
        for f in c.forecast
    )
    return ("<table><thead><tr><th class='l'>forecast at</th><th>compute</th><th>value</th>"
            f"<th>lo</th><th>hi</th></tr></thead><tbody>{rows}</tbody></table>")


def _laws(c: CurveAnalysis) -> str:
    if not c.laws:
        return ""
    rows = []
    for law in sorted(c.laws, key=lambda x: -x.weight if math.isfinite(x.weight) else 0):
        params = ", ".join(f"{k} = {interval(v)}" for k, v in law.params.items())
        rows.append(f"<tr><td class='l'>{_e(law.name)}</td><td>{_e(num(law.weight, 2))}</td>"
                    f"<td class='l'>{_e(params)}</td></tr>")
    return ("<details><summary>Fitted laws and weights</summary><table><thead><tr>"
            "<th class='l'>law</th><th>weight</th><th class='l'>parameters</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></details>")


def _curve_section(i: int, c: CurveAnalysis, confidence: float, plots: bool) -> str:
    img = ""
    if plots:
        fig = curve_figure(c, confidence=confidence)
        alt = f"plot of {c.run} / {c.metric}"
        img = f'<img src="{_png(fig, 96)}" alt="{_e(alt)}">'
    reasons = "".join(f"<li>{_e(r)}</li>" for r in c.reasons)
    return (
        f'<section class="curve" id="c{i}"><h2>{_e(c.run)} / {_e(c.metric)} {_badge(c.verdict)}'
        f"</h2>{img}{_facts(c)}<ul class='reasons'>{reasons}</ul>{_forecast_table(c)}{_laws(c)}"
        "</section>"
    )


def diagnostic_metrics_html(analysis: Any) -> str:
    """The "Diagnostic metrics" section: the metrics that get no verdict (empty when none)."""
    rows = diagnostic_rows(analysis)
    if not rows:
        return ""
    head = "".join(f"<th class='l'>{_e(h)}</th>" for _, h in DIAGNOSTIC_METRIC_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td class='l'>{_e(r[k])}</td>"
                                    for k, _ in DIAGNOSTIC_METRIC_COLUMNS) + "</tr>" for r in rows)
    return (f"<h2>Diagnostic metrics, no verdict ({len(rows)})</h2>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def render_html(analysis: Any, *, title: str = "saturate report", plots: bool = True) -> str:
    """The whole report as one self-contained HTML page."""
    curves, settings = curves_and_settings(analysis)
    confidence = _confidence(settings)
    items = settings_items(settings)
    settings_html = (
        "<details><summary>Settings used</summary><table><tbody>"
        + "".join(f"<tr><td class='l'>{_e(k)}</td><td class='l'>{_e(v)}</td></tr>" for k, v in items)
        + "</tbody></table></details>"
        if items else ""
    )
    sections = "".join(_curve_section(i, c, confidence, plots) for i, c in enumerate(curves))
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p class='lead'>{_e(verdict_counts(curves))}; "
        f"{_e(axis_text(analysis))}</p>{_counts(curves)}"
        f"{_summary_table(curves, links=True)}{diagnostics_html(analysis, plots=plots)}"
        f"{diagnostic_metrics_html(analysis)}{settings_html}"
        "<p class='muted'>Gain per doubling: the fitted change of the metric (better is positive) "
        "when compute doubles from the last point, with its interval at "
        f"{confidence:.0%} confidence; <code>?</code> marks a value the data cannot pin down. "
        "In the plots the solid line is the fit over the observed range, the dashed line the "
        "forecast with its interval band.</p>"
        f"{sections}</body></html>\n"
    )


def notebook_html(analysis: Any, *, max_plots: int = 50) -> str:
    """A compact fragment for Jupyter: the counts and one table row per curve with a small plot."""
    curves, settings = curves_and_settings(analysis)
    confidence = _confidence(settings)
    head = "".join(f"<th style='text-align:left'>{_e(h)}</th>" for h in
                   ("plot", "run", "metric", "verdict", "gain / doubling", "asymptote",
                    "ROI stage", "knee", "last value"))
    rows = []
    for i, c in enumerate(curves):
        r = _row(c)
        img = ""
        if i < max_plots:
            img = f'<img src="{_png(sparkline_figure(c, confidence=confidence), 80)}" alt="">'
        cells = [img, _e(r["run"]), _e(r["metric"]), _badge(c.verdict), _e(r["gain"]),
                 _e(r["asymptote"]), _e(r["roi"]), _e(r["knee"]), _e(r["value_last"])]
        rows.append("<tr>" + "".join(f"<td style='text-align:left'>{x}</td>" for x in cells)
                    + "</tr>")
    more = (f"<p>plots shown for the first {max_plots} of {len(curves)} curves</p>"
            if len(curves) > max_plots else "")
    found = diagnostics_of(analysis)
    diag = ""
    if found:
        items = "".join(
            f"<li>{_severity(d.severity)} <b>{_e(d.kind)}</b> {_e(d.run)}: {_e(d.message)}</li>"
            for d in found
        )
        diag = f"<p><b>Diagnostics ({len(found)})</b></p><ul>{items}</ul>"
    return (f"<div><p><b>{_e(verdict_counts(curves))}</b></p><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>{more}{diag}</div>")
