"""Terminal tables of the tracker: the live ``saturate watch`` view and ``saturate history``.
Names from the data go in as :class:`rich.text.Text` made safe by
:func:`~saturate.report.text.for_terminal`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table

from saturate.report.rows import VERDICT_STYLES, interval, prob, shorten_middle
from saturate.report.terminal_layout import (
    BOX,
    INDENT,
    NAMES,
    Layout,
    _cost,
    _header_width,
    cell,
    choose_layout,
    wrap_header,
)
from saturate.report.text import for_terminal
from saturate.results import CurveAnalysis


def _fmt(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.4g}"


_WATCH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "run"), ("metric", "metric"), ("verdict", "verdict"), ("p_pays", "P(pays)"),
    ("gain", "gain / doubling"), ("event", "last event"), ("points", "pts"),
    ("asymptote", "asymptote"), ("knee", "knee"), ("compute", "compute"))
_WATCH_REQUIRED = ("run", "metric", "verdict", "p_pays", "gain")
_WATCH_OPTIONAL = ("event", "points", "asymptote", "knee", "compute")  # in this order, as they fit
_WATCH_RIGHT = frozenset({"points", "p_pays", "gain", "knee", "compute"})


def _watch_cells(c: CurveAnalysis, event: str) -> dict[str, str]:
    return {"run": c.run, "metric": c.metric, "points": str(c.n_points), "verdict": c.verdict,
            "p_pays": prob(c.p_pays), "gain": interval(c.gain_per_doubling, 2),
            "event": event, "asymptote": interval(c.asymptote, 2), "knee": _fmt(c.knee),
            "compute": _fmt(c.compute_last)}


def watch_table(
    latest: Mapping[tuple[str, str, str], CurveAnalysis],
    last_event: Mapping[tuple[str, str, str], str],
    width: int = 120,
) -> RenderableType:
    """The current verdict and last event of every watched curve, one line each in ``width``
    columns, laid out as the report's table is
    (:func:`~saturate.report.terminal_layout.choose_layout`): names whole unless they cannot fit
    (then cut in the middle), each run as a heading over its curves when a run column would cut
    a name, the optional columns (last event first) while they fit; no word split."""
    keys = sorted(latest, key=lambda k: (latest[k].run, latest[k].metric))
    rows = [_watch_cells(latest[k], last_event.get(k, "")) for k in keys]
    heads = dict(_WATCH_COLUMNS)
    if not rows:
        empty = Table(title="saturate watch", box=box.SIMPLE_HEAD, show_edge=False)
        for key in (*_WATCH_REQUIRED, "event"):
            empty.add_column(heads[key])
        return empty
    curves = [latest[k] for k in keys]
    layout = choose_layout(rows, heads, [k for k, _ in _WATCH_COLUMNS], width,
                           [(c.run_id, c.run) for c in curves], required=_WATCH_REQUIRED,
                           optional=_WATCH_OPTIONAL)
    parts: list[RenderableType] = [cell("saturate watch", "bold")]
    parts += [cell(f"Every {what} name starts with {prefix!r}: left out below.", "dim")
              for what in NAMES if (prefix := layout.prefixes.get(what))]
    parts += [cell(f"Every {what} is {name!r}: left out below.", "dim")
              for what, name in layout.same.items()]
    if "run" in layout.columns:
        return Group(*parts, _watch_grid(layout, heads, curves, rows, header=True))
    parts.append(Padding(_watch_grid(layout, heads, [], [], header=True), (0, 0, 0, INDENT),
                         expand=False))
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and curves[j].run_id == curves[i].run_id:
            j += 1
        run = curves[i].run.removeprefix(layout.prefixes.get("run", ""))
        parts.append(cell(shorten_middle(for_terminal(run), width), "bold"))
        parts.append(Padding(_watch_grid(layout, heads, curves[i:j], rows[i:j], header=False),
                             (0, 0, 0, INDENT), expand=False))
        i = j
    return Group(*parts)


def _watch_grid(layout: Layout, heads: Mapping[str, str], curves: Sequence[CurveAnalysis],
                rows: Sequence[Mapping[str, str]], *, header: bool) -> Table:
    table = Table(header_style="bold", show_header=header, **BOX)
    for key in layout.columns:
        table.add_column(wrap_header(heads[key], layout.widths[key]), width=layout.widths[key],
                         no_wrap=True, overflow="ellipsis",
                         justify="right" if key in _WATCH_RIGHT else "left")
    for c, row in zip(curves, rows, strict=True):
        shown = {**row, **layout.labels_for(row)}
        table.add_row(*(cell(shown[k], VERDICT_STYLES.get(c.verdict, "") if k == "verdict"
                              else "") for k in layout.columns))
    return table


_HISTORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("time", "time (UTC)"), ("run", "run"), ("metric", "metric"), ("event", "event"),
    ("before", "from"), ("after", "to"), ("compute", "compute"))


def _history_cells(e: Any) -> dict[str, str]:
    from saturate.report.rows import format_time

    return {"time": format_time(e.time), "run": e.run, "metric": e.metric, "event": e.kind,
            "before": e.before or "", "after": e.after or "", "compute": f"{e.compute:.4g}"}


def _history_table(rows: Sequence[Mapping[str, str]], keys: Sequence[str],
                   widths: Mapping[str, int], *, header: bool = True) -> Table:
    heads = dict(_HISTORY_COLUMNS)
    table = Table(header_style="bold", show_header=header, **BOX)
    for k in keys:
        table.add_column(wrap_header(heads[k], widths[k]), width=widths[k], no_wrap=True,
                         justify="right" if k == "compute" else "left")
    for row in rows:
        table.add_row(*(cell(row[k]) for k in keys))
    return table


def render_history(
    events: Sequence[Any], current: Sequence[CurveAnalysis], console: Console, *, title: str
) -> None:
    """The recorded events (``title`` says which), then each curve's current verdict, in the
    console's width with no word split: one table when every name fits whole; else each curve
    (run · metric) as a heading over its events; on a console too narrow even for that, each
    event as a line under its curve's heading (lines wrap between words)."""
    if not events:
        console.print(cell(f"no {title}"))
        return
    console.print(cell(title, "bold"))
    rows = [_history_cells(e) for e in events]
    heads = dict(_HISTORY_COLUMNS)
    widths = {k: max([_header_width(heads[k]), *(len(r[k]) for r in rows)]) for k in heads}
    keys = [k for k, _ in _HISTORY_COLUMNS]
    if _cost({k: widths[k] for k in keys}) <= console.width:
        console.print(_history_table(rows, keys, widths))
    else:
        _history_by_curve(console, rows, widths)
    if current:
        console.print(cell("current verdicts", "bold"))
    for c in current:
        line = cell(f"  {c.run} · {c.metric}: ")
        line.append(c.verdict, style=VERDICT_STYLES.get(c.verdict, ""))
        console.print(line)


def _history_by_curve(console: Console, rows: Sequence[Mapping[str, str]],
                      widths: Mapping[str, int]) -> None:
    """Each run of consecutive events of one curve under its ``run · metric`` heading (cut in
    the middle only when wider than the console), as rows of one table layout, else as lines."""
    keys = [k for k, _ in _HISTORY_COLUMNS if k not in NAMES]
    fits = _cost({k: widths[k] for k in keys}) + INDENT <= console.width
    if fits:
        console.print(Padding(_history_table([], keys, widths), (0, 0, 0, INDENT),
                              expand=False))
    groups: list[list[Mapping[str, str]]] = []
    for row in rows:
        if groups and all(groups[-1][0][k] == row[k] for k in NAMES):
            groups[-1].append(row)
        else:
            groups.append([row])
    for group in groups:
        head = f"{group[0]['run']} · {group[0]['metric']}"
        console.print(cell(shorten_middle(for_terminal(head), console.width), "bold"))
        if fits:
            console.print(Padding(_history_table(group, keys, widths, header=False),
                                  (0, 0, 0, INDENT), expand=False))
            continue
        for r in group:
            change = f" {r['before'] or '–'} → {r['after'] or '–'}" if r["before"] or r[
                "after"] else ""
            console.print(Padding(cell(f"{r['time']} {r['event']}{change} at compute "
                                       f"{r['compute']}"), (0, 0, 0, INDENT), expand=False))
