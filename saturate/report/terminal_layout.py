"""Which columns of the terminal tables show, and how wide, for a console of a given width, and
what every terminal table shares (its box, indent, cells of data as safe text, the console
widened while it prints).

The widths are pure text arithmetic (``n`` columns cost ``3 (n - 1)`` characters besides their
cells). Run, metric, verdict, P(pays) and gain always show, numbers never cut and names shortened
in the middle (a shared prefix said once above) only when they cannot fit; the names get their
full length before any other column, so a wider console never shows a name shorter than a
narrower one; then the reason (as wide as its longest word at least: words wrap whole, never
split), then the other columns in :data:`PRIORITY` order while they fit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from saturate.report.rows import common_prefix, unique_labels
from saturate.report.text import for_terminal

NAMES: tuple[str, ...] = ("run", "metric")
REQUIRED: tuple[str, ...] = ("run", "metric", "verdict", "p_pays", "gain")
PRIORITY: tuple[str, ...] = ("forecast", "value_last", "asymptote", "roi", "stop", "knee",
                             "points", "compute_last", "threshold")
"""The optional columns, the most wanted first (the reason, ``why``, comes before all of them)."""
COMFORT: dict[str, int] = {"run": 24, "metric": 20}
"""The width names get before any optional column is considered."""
LEAST_NAME = 10
"""Names are never shortened below this (more when that is needed to keep them distinct)."""
LEAST_WHY = 26
"""Below this width the reasons go under the table instead of into a column (where they wrap)."""
BOX: dict[str, Any] = {"box": box.MINIMAL, "padding": (0, 1), "pad_edge": False,
                       "show_edge": False}
"""The frame of the report's tables (keywords of :class:`rich.table.Table`)."""
INDENT = 2
"""Rows under a run heading are indented this far."""


def cell(text: Any, style: str = "") -> Text:
    """Data as terminal text: literal (never console markup), one line, control characters
    escaped (:func:`~saturate.report.text.for_terminal`)."""
    return Text(for_terminal(str(text)), style=style)


def print_fitted(console: Console, table: Table, rows: Sequence[Sequence[Any]],
                 headers: Sequence[str]) -> None:
    """Print ``table`` (one line per row, every column ``no_wrap``) when it fits the console at
    its natural width; else each row as a block, its first cell as a heading over ``header:
    cell`` pairs that wrap between words. Either way no cell is squeezed and no word split."""
    for column in table.columns:
        column.no_wrap = True
    unbounded = console.options.update_width(10_000)  # rich caps a measure at the width given
    if Measurement.get(console, unbounded, table).maximum <= console.width:
        console.print(table)
        return
    if table.title:
        console.print(table.title)
    for row in rows:
        console.print(cell(row[0], "bold"))
        pairs = [f"{h}: {for_terminal(str(v))}" for h, v in zip(headers[1:], row[1:], strict=True)]
        console.print(Padding(Text(" · ".join(pairs)), (0, 0, 0, INDENT)))


@contextmanager
def at_least(console: Console, width: int) -> Iterator[None]:
    """The console at least ``width`` wide while a table prints (rich never prints wider than
    its console; ``--wide`` asks for exactly that)."""
    saved = console.width
    console.width = max(saved, width)
    try:
        yield
    finally:
        console.width = saved


@dataclass(frozen=True)
class Layout:
    """The columns shown (display order), their widths, and how the names were shortened."""

    columns: tuple[str, ...]
    widths: dict[str, int]
    prefixes: dict[str, str] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()
    same: dict[str, str] = field(default_factory=dict)  # the name every row has: said once

    @property
    def total(self) -> int:
        """Characters the table takes on a line."""
        return sum(self.widths[k] for k in self.columns) + 3 * (len(self.columns) - 1)

    def shortened(self, key: str = "") -> bool:
        """Whether any name (of column ``key``, or of any) is shown shortened in the middle."""
        return any(full.removeprefix(self.prefixes.get(k, "")) != lab
                   for k in ((key,) if key else NAMES)
                   for full, lab in self.labels.get(k, {}).items())

    def labels_for(self, row: Mapping[str, str]) -> dict[str, str]:
        """The run and metric of a row as the table shows them (those it has columns for)."""
        return {k: self.labels[k][row[k]] for k in NAMES if k in self.labels}


def _cost(widths: Mapping[str, int]) -> int:
    return sum(widths.values()) + 3 * (len(widths) - 1)


def _header_width(header: str) -> int:
    """Headers of two or more words may wrap: their longest word is what they need."""
    return max(len(w) for w in header.split())


def _names(cells: Sequence[Mapping[str, str]], key: str) -> tuple[str, list[str]]:
    full = [row[key] for row in cells]
    prefix = common_prefix(full)
    return prefix, [n[len(prefix):] for n in full]


def _label_width(names: list[str], width: int) -> int:
    return unique_labels(names, width)[1] if names else width


def plan_columns(
    cells: Sequence[Mapping[str, str]],
    headers: Mapping[str, str],
    order: Sequence[str],
    width: int,
    *,
    wide: bool = False,
    required: Sequence[str] = REQUIRED,
    optional: Sequence[str] = PRIORITY,
) -> Layout:
    """The layout of a table of ``cells`` (one mapping per row) on a console ``width`` wide;
    ``wide`` shows every column at full width whatever the console; ``required`` always show,
    ``optional`` in their order while they fit. A name column whose rows all hold one name is
    left out (the name said once above, :attr:`Layout.same`) when the table cannot fit with
    it."""
    layout = _plan(cells, headers, order, width, wide, required, optional)
    if wide or layout.total <= width or len(cells) < 2:
        return layout
    same = {k: cells[0][k] for k in NAMES
            if k in layout.columns and len({r[k] for r in cells}) == 1}
    if not same:
        return layout
    rest = _plan(cells, headers, [k for k in order if k not in same], width, wide, required,
                 optional)
    return dataclasses.replace(rest, same=same)


def _plan(cells: Sequence[Mapping[str, str]], headers: Mapping[str, str], order: Sequence[str],
          width: int, wide: bool, required: Sequence[str], optional: Sequence[str]) -> Layout:
    natural = {k: max([_header_width(headers[k]), *(len(r[k]) for r in cells)]) for k in order}
    keys = tuple(k for k in NAMES if k in order)
    stripped = {k: _names(cells, k) for k in keys}
    for k in keys:
        natural[k] = max(len(headers[k]), *(len(n) for n in stripped[k][1])) if cells else 0
    word = max((len(w) for r in cells for w in r.get("why", "").split()), default=0)
    widths = dict(natural) if wide else _fit(natural, stripped, width, word, required, optional)
    labels = {}
    for k in keys:
        prefix, names = stripped[k]
        shown = unique_labels(names, widths[k])[0] if names else []
        labels[k] = dict(zip((prefix + n for n in names), shown, strict=True))
        widths[k] = max([len(headers[k]), *(len(s) for s in shown)])
    columns = tuple(k for k in order if k in widths)
    return Layout(
        columns=columns,
        widths=widths,
        prefixes={k: stripped[k][0] for k in keys},
        labels=labels,
        dropped=tuple(k for k in order if k not in widths and k != "why"),
    )


def choose_layout(
    cells: Sequence[Mapping[str, str]], headers: Mapping[str, str], order: Sequence[str],
    width: int, runs: Sequence[tuple[str, str]], *, wide: bool = False,
    required: Sequence[str] = REQUIRED, optional: Sequence[str] = PRIORITY,
) -> Layout:
    """:func:`plan_columns` with a run column when every name fits in full (or ``wide``); else,
    when runs (``(run_id, run)`` of each row) have several rows, each run as a heading over its
    rows (named once, in full; its layout has no run column), which leaves the other names the
    room the run column took: a wider console then never shows a name shorter."""
    flat = plan_columns(cells, headers, order, width, wide=wide, required=required,
                        optional=optional)
    if wide or len({run_id for run_id, _ in runs}) == len(runs):
        return flat
    grouped = plan_columns(cells, headers, [k for k in order if k != "run"], width - INDENT,
                           required=required, optional=optional)
    prefix = common_prefix([run for _, run in runs])
    grouped = dataclasses.replace(grouped, prefixes={**grouped.prefixes, "run": prefix})
    if flat.shortened() or ("why" in grouped.columns and "why" not in flat.columns):
        return grouped
    return flat


def _shrink(widths: dict[str, int], floor: Mapping[str, int], room: int) -> None:
    """Shorten the longer name, one character at a time, while ``room`` (the characters left
    free, negative when over) is below zero and a name is above its ``floor``."""
    while room < 0 and any(widths[k] > floor[k] for k in floor):
        k = max((k for k in floor if widths[k] > floor[k]), key=lambda k: widths[k])
        widths[k] -= 1
        room += 1


def _fit(natural: dict[str, int], stripped: dict[str, tuple[str, list[str]]], width: int,
         word: int = 0, required: Sequence[str] = REQUIRED,
         optional: Sequence[str] = PRIORITY) -> dict[str, int]:
    """Column widths (only of the columns shown) that fit ``width`` as the module says
    (``word``: the longest word of the reasons)."""
    names = tuple(stripped)
    least = {k: _label_width(stripped[k][1], min(LEAST_NAME, natural[k])) for k in names}
    widths = {k: natural[k] for k in required if k in natural}
    for k in names:
        widths[k] = max(least[k], min(natural[k], COMFORT[k]))
    _shrink(widths, least, width - _cost(widths))
    for k in names:  # the names back to full length as far as the width allows
        widths[k] = max(widths[k], min(natural[k], widths[k] + width - _cost(widths)))
    least_why = max(min(natural.get("why", 0), LEAST_WHY), word)
    if "why" in natural and _cost(widths) + 3 + least_why <= width:
        widths["why"] = min(natural["why"], width - _cost(widths) - 3)
    for k in optional:
        if k in natural and _cost(widths) + 3 + natural[k] <= width:
            widths[k] = natural[k]
    return widths


def wrap_header(header: str, width: int) -> str:
    """The header's words on as many lines as the column's width needs."""
    lines: list[str] = []
    for word in header.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)
