"""Terminal tables of the tracker: the live ``saturate watch`` view and ``saturate history``.
Names from the data go in as :class:`rich.text.Text` made safe by
:func:`~saturate.report.text.for_terminal`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from saturate.report.rows import interval, prob, unique_labels
from saturate.report.table_layout import NAMES, cell
from saturate.results import CurveAnalysis


def _fmt(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.4g}"


_WATCH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "run"), ("metric", "metric"), ("points", "pts"), ("verdict", "verdict"),
    ("p_pays", "P(pays)"), ("gain", "gain / doubling"), ("event", "last event"),
    ("asymptote", "asymptote"), ("knee", "knee"), ("compute", "compute"))
_WATCH_OPTIONAL = ("points", "knee", "asymptote", "compute")  # shown in this order while they fit
_WATCH_NAME_LEAST = 10
_WATCH_NAME_ROOM = 40  # what run and metric names together get before an optional column shows
_WATCH_EVENT = 16  # the last event is cut to this (its new verdict is in the verdict column)


def _watch_cells(c: CurveAnalysis, event: str) -> dict[str, str]:
    return {"run": c.run, "metric": c.metric, "points": str(c.n_points), "verdict": c.verdict,
            "p_pays": prob(c.p_pays), "gain": interval(c.gain_per_doubling, 2),
            "event": event, "asymptote": interval(c.asymptote, 2), "knee": _fmt(c.knee),
            "compute": _fmt(c.compute_last)}


def watch_table(
    latest: Mapping[tuple[str, str, str], CurveAnalysis],
    last_event: Mapping[tuple[str, str, str], str],
    width: int = 120,
) -> Table:
    """The current verdict and last event of every watched curve, one line each in ``width``
    columns: names shortened on separators, the optional columns shown while they fit."""
    keys = sorted(latest, key=lambda k: (latest[k].run, latest[k].metric))
    rows = [_watch_cells(latest[k], last_event.get(k, "")) for k in keys]
    if not rows:
        rows_empty = Table(title="saturate watch", box=box.SIMPLE_HEAD, show_edge=False)
        for _, head in _WATCH_COLUMNS[:7]:
            rows_empty.add_column(head)
        return rows_empty
    natural = {key: max([len(head), *(len(r[key]) for r in rows)]) for key, head in _WATCH_COLUMNS}
    natural["event"] = min(natural["event"], _WATCH_EVENT)
    shown = [key for key, _ in _WATCH_COLUMNS if key not in _WATCH_OPTIONAL]

    def room(columns: list[str]) -> int:  # what the two names may take
        return width - sum(natural[k] for k in columns if k not in NAMES) - 3 * (len(columns) - 1)

    for extra in _WATCH_OPTIONAL:
        wanted = [*shown, extra]
        if room(wanted) >= min(natural["run"] + natural["metric"], _WATCH_NAME_ROOM):
            shown = wanted
    labels = _fit_names(rows, max(room(shown), 2 * _WATCH_NAME_LEAST))
    table = Table(title="saturate watch", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    heads = dict(_WATCH_COLUMNS)
    widths = {**natural, **{k: max([len(v) for v in labels[k].values()] + [len(k)]) for k in NAMES}}
    over = sum(widths[k] for k in shown) + 3 * (len(shown) - 1) - width
    if over > 0:  # names that must grow to stay distinct take it from the last event
        widths["event"] = max(widths["event"] - over, len("last"))
    for key in shown:
        numeric = key in ("points", "p_pays", "knee", "compute")
        table.add_column(heads[key], no_wrap=True, overflow="ellipsis", width=widths[key],
                         justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(cell(labels[k][row[k]] if k in NAMES else row[k]) for k in shown))
    return table


def _fit_names(rows: Sequence[Mapping[str, str]], room: int) -> dict[str, dict[str, str]]:
    """Run and metric names shortened (distinct names stay distinct) to fit ``room`` together:
    the metric gets half or what it needs, the run the rest."""
    runs, metrics = [r["run"] for r in rows], [r["metric"] for r in rows]
    metric_labels, metric_width = unique_labels(metrics, min(max(map(len, metrics)), room // 2))
    run_labels, _ = unique_labels(runs, max(room - metric_width, 1))
    return {"run": dict(zip(runs, run_labels, strict=True)),
            "metric": dict(zip(metrics, metric_labels, strict=True))}


def render_history(
    events: Sequence[Any], current: Sequence[CurveAnalysis], console: Console, *, title: str
) -> None:
    """The recorded events (``title`` says which) as a table, then each curve's current verdict."""
    from saturate.report.rows import format_time

    if not events:
        console.print(cell(f"no {title}"))
        return
    table = Table(title=cell(title))
    table.add_column("time (UTC)", no_wrap=True, min_width=len("2026-01-01T00:00:00Z"))
    for col in ("run", "metric", "event", "from", "to"):  # names wrap, a time never
        table.add_column(col, overflow="fold")
    table.add_column("compute", no_wrap=True)
    for e in events:
        table.add_row(format_time(e.time), *(cell(x) for x in (
            e.run, e.metric, e.kind, e.before or "", e.after or "")), f"{e.compute:.4g}")
    console.print(table)
    now = ", ".join(f"{c.run}/{c.metric}: {c.verdict}" for c in current)
    if now:
        console.print(cell(f"current: {now}"))
