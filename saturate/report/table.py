"""The terminal report: a rich table, one row per curve, the diagnostics across metrics and runs,
and the verdict counts after them.

Every string from the data goes in through :func:`_text`: a :class:`rich.text.Text` (so a run
called ``[bold]x`` shows literally) of :func:`saturate.text.for_terminal` (so a newline, an ANSI
escape or a BEL in a name is shown escaped and every row stays one line per name).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from saturate.report.rows import (
    COLUMNS,
    DIAGNOSTIC_COLUMNS,
    DIAGNOSTIC_METRIC_COLUMNS,
    axis_text,
    curves_and_settings,
    diagnostic_row,
    diagnostic_rows,
    diagnostics_of,
    summary_row,
)
from saturate.results import verdict_counts
from saturate.text import for_terminal

__all__ = ["render_table", "render_diagnostics", "VERDICT_STYLES", "SEVERITY_STYLES"]

VERDICT_STYLES: dict[str, str] = {
    "scaling": "bold green",
    "slowing": "bold yellow",
    "saturated": "bold red",
    "regressing": "bold magenta",
    "inconclusive": "dim",
}
SEVERITY_STYLES: dict[str, str] = {"error": "bold red", "warning": "bold yellow", "info": "cyan"}
_LEFT = {"run", "metric", "verdict", "roi"}
# Below this console width the table drops the columns people need least (the JSON has them all).
_WIDE = 150
_OPTIONAL = {"value_last", "threshold", "stop"}


def _text(value: Any) -> Text:
    """The terminal boundary of the table: data as literal, one-line text."""
    return Text(for_terminal(value))


def render_table(analysis: Any, console: Console, *, reasons: bool = False) -> None:
    """Print the table of curves, the diagnostics and the one-line summary on ``console``.

    ``reasons=True`` adds each curve's reasons below the table.
    """
    curves, _ = curves_and_settings(analysis)
    table = Table(title=_text(f"saturate: {len(curves)} curve(s), {axis_text(analysis)}"),
                  title_justify="left", header_style="bold")
    columns = [(k, h) for k, h in COLUMNS if console.width >= _WIDE or k not in _OPTIONAL]
    for key, header in columns:
        table.add_column(header, justify="left" if key in _LEFT else "right",
                         overflow="fold", no_wrap=key not in ("run", "metric", "reasons"))
    for curve in curves:
        row = summary_row(curve)
        cells = [_text(row[key]) for key, _ in columns]
        cells[[k for k, _ in columns].index("verdict")].stylize(
            VERDICT_STYLES.get(curve.verdict, "")
        )
        table.add_row(*cells)
    console.print(table)
    render_diagnostics(analysis, console)
    _plain_table(console, "Diagnostic metrics (no verdict)", DIAGNOSTIC_METRIC_COLUMNS,
                 diagnostic_rows(analysis))
    if reasons:
        for curve in curves:
            head = _text(f"{curve.run} / {curve.metric}: ")
            head.append(curve.verdict, style=VERDICT_STYLES.get(curve.verdict, ""))
            console.print(head)
            for r in curve.reasons:
                console.print(_text(f"  - {r}"))
    console.print(Text(verdict_counts(curves)))


def render_diagnostics(analysis: Any, console: Console) -> None:
    """Print the diagnostics section (nothing when there are none), errors first."""
    found = diagnostics_of(analysis)
    if not found:
        return
    table = Table(title=Text(f"Diagnostics: {len(found)} finding(s) across metrics and runs"),
                  title_justify="left", header_style="bold")
    for key, header in DIAGNOSTIC_COLUMNS:
        table.add_column(header, justify="right" if key == "compute" else "left",
                         overflow="fold", no_wrap=key in ("severity", "kind", "compute"),
                         ratio=4 if key == "message" else None)
    for d in found:
        row = diagnostic_row(d)
        cells = [_text(row[key]) for key, _ in DIAGNOSTIC_COLUMNS]
        cells[0].stylize(SEVERITY_STYLES.get(d.severity, ""))
        table.add_row(*cells)
    console.print(table)


def _plain_table(console: Console, title: str, columns: Any, rows: list[dict[str, str]]) -> None:
    """A titled table of text rows (nothing when there are none)."""
    if rows:
        table = Table(title=Text(title), title_justify="left", header_style="bold")
        for _, header in columns:
            table.add_column(header, overflow="fold")
        for row in rows:
            table.add_row(*[Text(row[k]) for k, _ in columns])
        console.print(table)
