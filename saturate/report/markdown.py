"""The Markdown report, for a pull-request comment or ``$GITHUB_STEP_SUMMARY``. Text from the data
goes through :func:`escape_md`, so a run name can neither break the table, inject markup or
links, nor ping anyone; a run's name links to its page in the tracker when the source gave one
(``run_url``, :func:`~saturate.report.text.markdown_link`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from saturate.report.rows import (
    COLUMNS,
    DIAGNOSTIC_COLUMNS,
    DIAGNOSTIC_METRIC_COLUMNS,
    VERDICT_ICONS,
    Analysed,
    axis_text,
    curves_and_settings,
    diagnostic_row,
    diagnostic_rows,
    diagnostics_of,
    settings_items,
    settings_source,
    summary_row,
)
from saturate.report.text import for_markdown, markdown_link
from saturate.results import VERDICTS, CurveAnalysis, verdict_counts

if TYPE_CHECKING:
    from saturate.diagnostics.base import Diagnostic

SEVERITY_ICONS: dict[str, str] = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def escape_md(text: Any) -> str:
    """Text safe in a Markdown cell or paragraph (:func:`~saturate.report.text.for_markdown`)."""
    return for_markdown(text)


def _verdict(v: str) -> str:
    return f"{VERDICT_ICONS.get(v, '')} **{v}**".strip()


def _run(c: CurveAnalysis) -> str:
    """The run's name, a link to its page in the tracker when the source gave one."""
    return markdown_link(c.run, c.run_url)


def _table(curves: tuple[CurveAnalysis, ...]) -> list[str]:
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |"]
    lines.append("|" + "|".join(":---" if k in ("run", "metric", "verdict", "roi") else "---:"
                                for k, _ in COLUMNS) + "|")
    for c in curves:
        row = summary_row(c)
        cells = [_verdict(c.verdict) if k == "verdict" else _run(c) if k == "run"
                 else escape_md(row[k]) for k, _ in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def diagnostics_markdown(diagnostics: Analysed | Sequence[Diagnostic]) -> list[str]:
    """The ``### Diagnostics`` section of an Analysis or a list of diagnostics, as lines (none
    when there are no diagnostics)."""
    found = diagnostics_of(diagnostics)
    if not found:
        return []
    lines = ["### Diagnostics", ""]
    lines.append("| " + " | ".join(h for _, h in DIAGNOSTIC_COLUMNS) + " |")
    lines.append("|" + "|".join("---:" if k == "compute" else ":---"
                                for k, _ in DIAGNOSTIC_COLUMNS) + "|")
    for d in found:
        row = diagnostic_row(d)
        cells = {k: escape_md(row[k]) for k, _ in DIAGNOSTIC_COLUMNS}
        cells["severity"] = f"{SEVERITY_ICONS.get(d.severity, '')} {cells['severity']}".strip()
        cells["kind"] = f"**{cells['kind']}**"
        lines.append("| " + " | ".join(cells.values()) + " |")
    lines.append("")
    return lines


def diagnostic_metrics_markdown(analysis: Analysed) -> list[str]:
    """The ``### Diagnostic metrics`` section: the metrics that get no verdict (KL, entropy,
    timing...), as lines (none when none)."""
    rows = diagnostic_rows(analysis)
    if not rows:
        return []
    lines = ["### Diagnostic metrics (no verdict)", "",
             "Health signals and compute measures: no better direction, no verdict, not gated; "
             "the diagnostics above read them.", ""]
    lines.append("| " + " | ".join(h for _, h in DIAGNOSTIC_METRIC_COLUMNS) + " |")
    lines.append("|" + "|".join("---:" if k in ("points", "value", "trend") else ":---"
                                for k, _ in DIAGNOSTIC_METRIC_COLUMNS) + "|")
    for row in rows:
        lines.append("| " + " | ".join(escape_md(row[k]) for k, _ in DIAGNOSTIC_METRIC_COLUMNS)
                     + " |")
    lines.append("")
    return lines


def _order(curves: tuple[CurveAnalysis, ...]) -> list[CurveAnalysis]:
    """Failing verdicts first, so the reasons a reviewer needs are at the top."""
    rank = {v: i for i, v in enumerate(("regressing", "saturated", "inconclusive", "slowing",
                                        "scaling"))}
    return sorted(curves, key=lambda c: rank.get(c.verdict, len(VERDICTS)))


#: Characters a report may take: a GitHub comment or step summary holds 65,536; the rest is left
#: for what a caller adds around it.
MAX_CHARS = 60_000


def render_markdown(analysis: Analysed, *, title: str = "saturate report", reasons: bool = True,
                    max_chars: int = MAX_CHARS) -> str:
    """The report as GitHub-flavoured Markdown: heading, counts, suite, table, diagnostics, reasons
    (folded), settings. At most ``max_chars`` characters: rows and reasons that do not fit (the
    passing curves' first) are left out, and a line says how many."""
    curves, settings = curves_and_settings(analysis)
    out = [f"## {escape_md(title)}", "", f"**{escape_md(verdict_counts(curves))}**", "",
           escape_md(axis_text(analysis)), ""]
    if settings_source(analysis):
        out[-1:] = ["", escape_md(settings_source(analysis)), ""]
    suite = getattr(analysis, "suite", None)
    if suite is not None:  # the suite first: it is the answer asked for
        from saturate.report.suite import suite_markdown

        out += [*suite_markdown(suite, reasons=reasons), "### Curves (each run on its own)", ""]
    middle = diagnostics_markdown(analysis) + diagnostic_metrics_markdown(analysis)
    tail: list[str] = []
    items = settings_items(settings)
    if items:
        tail += ["<details><summary>Settings used</summary>", ""]
        tail += [f"- {escape_md(k)}: {escape_md(v)}" for k, v in items]
        tail += ["", "</details>", ""]
    tail.append("Gain per doubling: the fitted change of the metric (better is positive) when "
                "compute doubles from the last point, with its interval; `?` marks a value the "
                "data cannot pin down.")
    budget = max_chars - _size(out) - _size(middle) - _size(tail) - 400  # 400: what was left
    ordered = _order(curves)
    if curves:
        rows = _table(curves)
        kept = _fitting(rows[2:], budget - _size(rows[:2]))
        if kept < len(curves):  # the failing curves are the ones to keep
            rows = _table(tuple(ordered))
        out += [*rows[:2 + kept], ""]
        budget -= _size(rows[:2 + kept])
        if kept < len(curves):
            out += [f"{len(curves) - kept} more curve(s) are in the HTML and JSON reports "
                    "(`--format html`), left out to keep this report within a GitHub comment.",
                    ""]
    out += middle
    if reasons and curves:
        blocks = [_reasons(c) for c in ordered]
        kept = _fitting(blocks, budget - 100)
        out += ["### Reasons", "", "<details><summary>Per curve, failing verdicts first</summary>",
                "", *blocks[:kept]]
        if kept < len(blocks):
            out.append(f"- the reasons of {len(blocks) - kept} more curve(s) are in the HTML and "
                       "JSON reports (`--format html`), left out to keep this report within a "
                       "GitHub comment.")
        out += ["", "</details>", ""]
    return "\n".join(out + tail) + "\n"


def _reasons(c: CurveAnalysis) -> str:
    """One curve's reasons as a list item (its lines joined)."""
    lines = [f"- {_verdict(c.verdict)}: {_run(c)} / {escape_md(c.metric)}"]
    lines += [f"  - {escape_md(r)}" for r in c.reasons]
    if c.flags:
        lines.append(f"  - flags: {escape_md(', '.join(c.flags))}")
    return "\n".join(lines)


def _size(lines: list[str]) -> int:
    return sum(len(ln) + 1 for ln in lines)


def _fitting(lines: list[str], budget: int) -> int:
    """How many of ``lines``, from the first, fit in ``budget`` characters."""
    used = 0
    for i, line in enumerate(lines):
        used += len(line) + 1
        if used > budget:
            return i
    return len(lines)
