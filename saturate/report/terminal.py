"""The terminal report: a headline, a table of curves fitted to the console's width (the layout
is :mod:`.terminal_layout`'s), a one-line reason per curve, the diagnostics, and a footer explaining
the marks. Names from the data go in as :class:`rich.text.Text`
(:func:`~saturate.report.terminal_layout.cell`), so a run called ``[bold]x`` shows literally.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from saturate.report.rows import (
    VERDICT_STYLES,
    Analysed,
    axis_text,
    curves_and_settings,
    diagnostic_row,
    diagnostic_rows,
    diagnostics_of,
    forecast_cell,
    headline,
    num,
    short_reason,
    shorten_middle,
    summary_row,
)
from saturate.report.terminal_layout import (
    BOX,
    INDENT,
    NAMES,
    Layout,
    at_least,
    cell,
    choose_layout,
    wrap_header,
)
from saturate.report.text import for_terminal
from saturate.results import CurveAnalysis

SEVERITY_STYLES: dict[str, str] = {"error": "bold red", "warning": "bold yellow", "info": "cyan"}

# (key, header, right-aligned), in display order; the headers of numbers may wrap onto two lines.
TABLE_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("run", "run", False), ("metric", "metric", False), ("verdict", "verdict", False),
    ("p_pays", "P(pays)", True), ("gain", "gain / doubling", True), ("why", "why", False),
    ("forecast", "forecast", True), ("value_last", "last value", True),
    ("asymptote", "asymptote", True), ("roi", "ROI stage", False), ("stop", "stop point", True),
    ("knee", "knee", True), ("points", "points", True), ("compute_last", "last compute", True),
    ("threshold", "threshold", True))


def table_cells(curve: CurveAnalysis) -> dict[str, str]:
    """Every cell :data:`TABLE_COLUMNS` can show for ``curve``, as text."""
    row = summary_row(curve)
    row.update(why=short_reason(curve), forecast=forecast_cell(curve))
    return row


def _forecast_header(curves: Sequence[CurveAnalysis]) -> str:
    ats = {str(c.forecast[0].at) for c in curves if c.forecast}
    return f"forecast {ats.pop()}" if len(ats) == 1 else "forecast"


def _findings(found: Sequence[Any]) -> str:
    """``10 findings (8 errors, 2 warnings)``."""
    counts = Counter(d.severity for d in found)
    split = [f"{n} {sev}{'' if n == 1 else 's'}" for sev in ("error", "warning", "info")
             if (n := counts[sev])]
    return f"{len(found)} finding{'' if len(found) == 1 else 's'} ({', '.join(split)})"


def _layout(curves: Sequence[CurveAnalysis], cells: list[dict[str, str]],
            headers: dict[str, str], width: int, wide: bool) -> Layout:
    """:func:`~saturate.report.terminal_layout.choose_layout` of the report's columns."""
    return choose_layout(cells, headers, [k for k, _, _ in TABLE_COLUMNS], width,
                         [(c.run_id, c.run) for c in curves], wide=wide)


def _caption(layout: Layout, compute: str, confidence: float) -> list[Text]:
    lines = [cell(f"{compute} · intervals at {confidence:.0%}", "dim")]
    for what in NAMES:
        if prefix := layout.prefixes.get(what):
            lines.append(cell(f"Every {what} name starts with {prefix!r}: left out below.", "dim"))
        if what in layout.same:
            lines.append(cell(f"Every {what} is {layout.same[what]!r}: left out below.", "dim"))
    return lines


def _threshold_text(min_gain: Any) -> str:
    text = str(min_gain)
    return f"{text} of its observed range" if text.endswith("%") else text


def _footer(layout: Layout, cells: list[dict[str, str]], headers: dict[str, str], width: int,
            min_gain: Any) -> list[str]:
    lines = ["P(pays): the probability that the next doubling of compute gains at least the "
             "threshold; the verdict follows it.",
             "gain / doubling: the expected change of the metric (better is positive) when "
             "compute doubles from the last point, with its interval. A curve still pays when "
             f"that gain clears the threshold ({_threshold_text(min_gain)}): scaling and slowing "
             "pay (the gain per doubling holds, or shrinks past the knee), saturated does not, "
             "regressing fell, inconclusive cannot say."]
    if any("?" in row[k] for row in cells for k in layout.columns):
        lines.append("? after a value: the data cannot pin it down (not identified). – : none.")
    if layout.shortened():
        lines.append(f"Names are shortened in the middle (…) to fit {width} columns.")
    if layout.dropped:
        lines.append(f"Left out to fit {width} columns: "
                     f"{', '.join(headers[k] for k in layout.dropped)} (--wide shows every "
                     "column; --format json or html has everything).")
    return lines


def render_table(analysis: Analysed, console: Console, *, reasons: bool = False,
                 wide: bool = False) -> None:
    """Print the report on ``console``, fitted to its width (``wide=True``: every column at full
    width); ``reasons=True`` adds each curve's full reasons."""
    curves, settings = curves_and_settings(analysis)
    confidence = settings.get("confidence") or 0.9
    cells = [table_cells(c) for c in curves]
    headers = {k: h for k, h, _ in TABLE_COLUMNS}
    headers["forecast"] = _forecast_header(curves)
    layout = _layout(curves, cells, headers, console.width, wide)
    console.print(Text(headline(curves), style="bold"))
    if settings.get("config"):  # which settings file decided, when one did
        console.print(Text(f"settings from {for_terminal(settings['config'])}", style="dim"))
    found = diagnostics_of(analysis)
    if found:
        console.print(Text(f"{_findings(found)} across metrics and runs: see Diagnostics below."))
    _print_suite(console, getattr(analysis, "suite", None), reasons=reasons, wide=wide)
    for line in _caption(layout, axis_text(analysis), float(confidence)):
        console.print(line)
    _print_curves(console, curves, cells, layout, headers)
    if "why" not in layout.columns:
        _print_why(console, curves, cells, layout)
    render_diagnostics(analysis, console)
    _print_diagnostic_metrics(console, diagnostic_rows(analysis))
    if reasons:
        _print_reasons(console, curves)
    for note in _footer(layout, cells, headers, console.width, settings.get("min_gain", "3%")):
        console.print(Text(note, style="dim"))


def _print_suite(console: Console, suite: Any, *, reasons: bool, wide: bool) -> None:
    """The suite section (with ``--suite``), between the headline and the curves."""
    if suite is None:
        return
    from saturate.report.suite_table import render_suite_table

    console.print()
    render_suite_table(suite, console, reasons=reasons, wide=wide)
    console.print()
    console.print(Text("Curves (each run on its own)", style="bold"))


def _table(layout: Layout, headers: dict[str, str], *, header: bool) -> Table:
    right = {k for k, _, r in TABLE_COLUMNS if r}
    table = Table(header_style="bold", show_header=header, **BOX)
    for key in layout.columns:
        table.add_column(wrap_header(headers[key], layout.widths[key]),
                         justify="right" if key in right else "left",
                         width=layout.widths[key], no_wrap=key != "why", overflow="fold")
    return table


def _add_row(table: Table, layout: Layout, curve: CurveAnalysis, row: dict[str, str]) -> None:
    shown = {**row, **layout.labels_for(row)}
    style = VERDICT_STYLES.get(curve.verdict, "")
    table.add_row(*(cell(shown[k], style if k == "verdict" else "") for k in layout.columns))


def _print_curves(console: Console, curves: Sequence[CurveAnalysis], cells: list[dict[str, str]],
                  layout: Layout, headers: dict[str, str]) -> None:
    """The table: one row per curve; without a run column, each run's name over its rows."""
    if "run" in layout.columns:
        table = _table(layout, headers, header=True)
        for curve, row in zip(curves, cells, strict=True):
            _add_row(table, layout, curve, row)
        with at_least(console, layout.total):
            console.print(table)
        return
    groups: dict[str, list[int]] = {}
    for i, curve in enumerate(curves):
        groups.setdefault(curve.run_id, []).append(i)
    with at_least(console, layout.total + INDENT):
        console.print(Padding(_table(layout, headers, header=True), (0, 0, 0, INDENT)))
        for members in groups.values():
            run = curves[members[0]].run.removeprefix(layout.prefixes.get("run", ""))
            console.print(cell(shorten_middle(run, console.width), "bold"))
            table = _table(layout, headers, header=False)
            for i in members:
                _add_row(table, layout, curves[i], cells[i])
            console.print(Padding(table, (0, 0, 0, INDENT)))


def _print_why(console: Console, curves: Sequence[CurveAnalysis], cells: list[dict[str, str]],
               layout: Layout) -> None:
    """The one-line reasons under the table, when the table has no room for them."""
    console.print(Text("why", style="bold"))
    for curve, row in zip(curves, cells, strict=True):
        labels = {"run": curve.run.removeprefix(layout.prefixes.get("run", "")),
                  **layout.labels_for(row)}
        line = cell(f"  {labels['run']} · {labels.get('metric', curve.metric)}: ")
        line.append(curve.verdict, style=VERDICT_STYLES.get(curve.verdict, ""))
        line.append(for_terminal(f", {row['why']}"))
        console.print(line)


def _print_diagnostic_metrics(console: Console, rows: list[dict[str, str]]) -> None:
    """The metrics with the diagnostic role (KL, entropy, timing...): no verdict, one line each."""
    if not rows:
        return
    console.print(Text(f"Diagnostic metrics (no verdict): {len(rows)}", style="bold"))
    for row in rows:
        line = (f"{row['run']} · {row['metric']}: {row['value']} over {row['points']} points, "
                f"recent change per doubling {row['trend']} ({row['role']}: {row['rule']})")
        console.print(Padding(cell(line), (0, 0, 0, INDENT)))


def _print_reasons(console: Console, curves: Sequence[CurveAnalysis]) -> None:
    for curve in curves:
        head = cell(f"{curve.run} / {curve.metric}: ")
        head.append(curve.verdict, style=VERDICT_STYLES.get(curve.verdict, ""))
        console.print(head)
        for r in curve.reasons:
            console.print(cell(f"  - {r}"))


def render_diagnostics(analysis: Analysed, console: Console) -> None:
    """Print the diagnostics section (nothing when there are none), errors first: a table when
    the console leaves the messages room, else one block per finding."""
    found = diagnostics_of(analysis)
    if not found:
        return
    console.print(Text(f"Diagnostics: {_findings(found)} across metrics and runs", style="bold"))
    rows = [diagnostic_row(d) for d in found]
    fixed = {k: max(len(h), *(len(r[k]) for r in rows))
             for k, h in (("severity", "severity"), ("kind", "kind"), ("run", "run"),
                          ("compute", "from compute"))}
    room = console.width - sum(fixed.values()) - 3 * len(fixed)
    if room < 60:
        _print_findings(console, found, rows)
        return
    table = Table(header_style="bold", **BOX)
    for key, header in (("severity", "severity"), ("kind", "kind"), ("run", "run"),
                        ("compute", "from compute"), ("message", "message")):
        table.add_column(header, justify="right" if key == "compute" else "left",
                         width=fixed.get(key, room), no_wrap=key != "message", overflow="fold")
    for d, row in zip(found, rows, strict=True):
        table.add_row(cell(row["severity"], SEVERITY_STYLES.get(d.severity, "")),
                      cell(row["kind"]), cell(row["run"]), cell(row["compute"]),
                      cell(row["message"]))
    console.print(table)


def _print_findings(console: Console, found: Sequence[Any], rows: list[dict[str, str]]) -> None:
    """Each finding as a heading line and its message below, for a narrow console."""
    for d, row in zip(found, rows, strict=True):
        head = cell(f"{row['severity']:<8}", SEVERITY_STYLES.get(d.severity, ""))
        head.append(f"{row['kind']} · {row['run']}")
        if d.compute is not None:
            head.append(f" · from {num(d.compute, 4)}")
        console.print(head)
        console.print(Padding(cell(row["message"]), (0, 0, 0, INDENT)))
