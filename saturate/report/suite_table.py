"""The suite section of the terminal report, printed before the table of curves (the suite is
the answer asked for) and fitted to the console's width like it: the group, its verdict and gain
always show (numbers never cut, names shortened in the middle), the other columns while they
fit; then each group's why, the per-task verdicts as a grid when it fits (else one line per
group), the comparisons, the method and the notes. Names from the data go through
:func:`~saturate.report.text.for_terminal` as :class:`rich.text.Text`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from saturate.report.rows import VERDICT_STYLES, short_reason, unique_labels
from saturate.report.suite import (
    SUITE_COLUMNS,
    comparison_text,
    suite_group_row,
    suite_notes,
    task_grid,
)
from saturate.report.terminal_layout import BOX, INDENT, _cost, at_least, cell, wrap_header
from saturate.report.terminal_layout import _header_width as _word
from saturate.report.text import for_terminal
from saturate.results import VERDICTS

if TYPE_CHECKING:  # types only: suites.result renders itself through the report modules
    from saturate.suites.result import SuiteAnalysis

REQUIRED: tuple[str, ...] = ("group", "verdict", "gain")
PRIORITY: tuple[str, ...] = ("p_pays", "paying", "level", "forecast", "first", "regressing",
                             "tasks", "threshold")
"""The optional columns, the most wanted first."""
_RIGHT = frozenset({"gain", "p_pays", "paying", "level", "forecast", "tasks", "threshold"})
LEAST_NAME = 10
"""Group and task names are never shortened below this (more to keep them distinct)."""


def plan_suite_columns(
    rows: Sequence[Mapping[str, str]], headers: Mapping[str, str], width: int, *,
    wide: bool = False,
) -> dict[str, int]:
    """``{column: width}`` of the group table on a console ``width`` wide, in display order: the
    required columns (the group name shortened down to :data:`LEAST_NAME` when needed), then the
    optional ones in :data:`PRIORITY` order while they fit."""
    order = [k for k, _ in SUITE_COLUMNS]
    natural = {k: max([_word(headers[k]), *(len(r[k]) for r in rows)]) for k in order}
    natural["group"] = max([len(headers["group"]), *(len(r["group"]) for r in rows)])
    if wide:
        return natural
    widths = {k: natural[k] for k in REQUIRED}
    least = max(len(headers["group"]), min(LEAST_NAME, natural["group"]))
    widths["group"] = max(least, natural["group"] - max(0, _cost(widths) - width))
    for k in PRIORITY:
        if _cost(widths) + 3 + natural[k] <= width:
            widths[k] = natural[k]
    return {k: widths[k] for k in order if k in widths}


def _group_table(suite: SuiteAnalysis, width: int, wide: bool) -> tuple[Table, int, list[str]]:
    """The table of groups, its width, and the columns left out."""
    headers = dict(SUITE_COLUMNS)
    rows = [suite_group_row(suite, g) for g in suite.groups]
    widths = plan_suite_columns(rows, headers, width, wide=wide)
    labels, _ = unique_labels([r["group"] for r in rows], widths["group"])
    widths["group"] = max([len(headers["group"]), *map(len, labels)])
    table = Table(header_style="bold", **BOX)
    for k, w in widths.items():
        table.add_column(wrap_header(headers[k], w), width=w, no_wrap=True, overflow="fold",
                         justify="right" if k in _RIGHT else "left")
    for g, row, label in zip(suite.groups, rows, labels, strict=True):
        shown = {**row, "group": label}
        table.add_row(*(cell(shown[k], VERDICT_STYLES.get(g.verdict, "") if k == "verdict"
                              else "") for k in widths))
    dropped = [headers[k] for k, _ in SUITE_COLUMNS if k not in widths]
    return table, _cost(widths), dropped


def _grid(suite: SuiteAnalysis, width: int) -> Table | None:
    """The per-task verdicts as a grid (tasks x groups), or None when it does not fit."""
    tasks, groups, cells = task_grid(suite)
    words = max([len(v) for v in cells.values()] + [1])
    col = max(words, min(max(len(g) for g in groups), 16))
    room = width - len(groups) * (col + 3)
    natural = max([4, *map(len, tasks)])
    if room < min(natural, LEAST_NAME):
        return None
    task_labels, task_w = unique_labels(tasks, min(natural, room))
    group_labels, _ = unique_labels(groups, col)
    if task_w > room:
        return None
    grid = Table(header_style="bold", **BOX)
    grid.add_column("task", width=max(4, task_w), no_wrap=True, overflow="fold")
    for label in group_labels:
        grid.add_column(for_terminal(label), width=col, no_wrap=True, overflow="fold")
    for t, label in zip(tasks, task_labels, strict=True):
        row = [cell(label)]
        for name in groups:
            v = cells.get((t, name), "")
            row.append(cell(v or "–", VERDICT_STYLES.get(v, "")))
        grid.add_row(*row)
    return grid


def _tasks_by_verdict(suite: SuiteAnalysis) -> list[Text]:
    """One line per group: its tasks grouped by verdict (the grid's narrow form)."""
    out = []
    for g in suite.groups:
        line = cell(f"{g.group}: ")
        parts = [(v, [t.task for t in g.task_results if t.verdict == v]) for v in VERDICTS]
        for i, (v, names) in enumerate(p for p in parts if p[1]):
            line.append("; " if i else "")
            line.append(f"{len(names)} {v}", style=VERDICT_STYLES.get(v, ""))
            line.append(for_terminal(f" ({', '.join(names)})"))
        out.append(line)
    return out


def render_suite_table(suite: SuiteAnalysis, console: Console, *, reasons: bool = False,
                       wide: bool = False) -> None:
    """Print the suite section on ``console``, fitted to its width (``wide``: every column at
    full width): the groups, why, the per-task verdicts, comparisons, method and notes;
    ``reasons=True`` adds each group's full reasons."""
    n_tasks = len({t for g in suite.groups for t in g.tasks})
    console.print(cell(f"Suite {suite.suite}: {suite.statistic.upper()} over {n_tasks} tasks "
                        f"and their seeds of {suite.metric}, one verdict per group", "bold"))
    table, total, dropped = _group_table(suite, console.width, wide)
    with at_least(console, total):
        console.print(table)
    for g in suite.groups:
        line = cell(f"  {g.group}: ")
        line.append(g.verdict, style=VERDICT_STYLES.get(g.verdict, ""))
        line.append(for_terminal(f", {short_reason(g.analysis)}"))
        console.print(line)
        if reasons:
            for r in g.analysis.reasons:
                console.print(Padding(cell(f"- {r}"), (0, 0, 0, 2 * INDENT), expand=False))
    if any(g.task_results for g in suite.groups):
        console.print(Text("Per-task verdicts (each task's seeds pooled; the tasks holding the "
                           "suite back first)", style="bold"))
        grid = _grid(suite, console.width - INDENT)
        if grid is not None:
            console.print(Padding(grid, (0, 0, 0, INDENT), expand=False))
        else:
            for line in _tasks_by_verdict(suite):
                console.print(Padding(line, (0, 0, 0, INDENT), expand=False))
    for c in suite.comparisons:
        console.print(cell(comparison_text(c)))
    console.print(cell(f"Method: {suite.method()}", "dim"))
    for n in suite_notes(suite):
        console.print(cell(f"note: {n}", "dim"))
    if dropped:
        console.print(Text(f"Left out of the suite table to fit {console.width} columns: "
                           f"{', '.join(dropped)}.", style="dim"))
