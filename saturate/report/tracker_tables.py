"""Terminal tables of the tracker: the live ``saturate watch`` view and ``saturate history``.

Names from the data go in as :class:`rich.text.Text` (so a run called ``[bold]x`` shows literally)
made safe for a terminal by :func:`saturate.report.text.for_terminal` (control characters shown escaped).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from saturate.report.rows import prob
from saturate.report.text import for_terminal
from saturate.results import CurveAnalysis, format_estimate


def _safe(text: str) -> Text:
    return Text(for_terminal(text))


def _fmt(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.4g}"


def watch_table(
    latest: Mapping[tuple[str, str, str], CurveAnalysis],
    last_event: Mapping[tuple[str, str, str], str],
) -> Table:
    """The current verdict of every watched curve and the last event it raised."""
    table = Table(title="saturate watch", expand=False)
    for col in ("run", "metric", "points", "compute", "verdict", "P(pays)", "gain/doubling",
                "asymptote", "knee", "last event"):  # fmt: skip
        table.add_column(col)
    for key in sorted(latest, key=lambda k: (latest[k].run, latest[k].metric)):
        c = latest[key]
        table.add_row(_safe(c.run), _safe(c.metric), str(c.n_points), _fmt(c.compute_last),
                      c.verdict, prob(c.p_pays), format_estimate(c.gain_per_doubling),
                      format_estimate(c.asymptote), _fmt(c.knee),
                      _safe(last_event.get(key, "")))  # fmt: skip
    return table


def render_history(
    events: Sequence[Any], current: Sequence[CurveAnalysis], console: Console, *, title: str
) -> None:
    """The recorded events (``title`` says which) as a table, then each curve's current verdict."""
    from saturate.report.rows import format_time

    if not events:
        console.print(_safe(f"no {title}"))
        return
    table = Table(title=_safe(title))
    for col in ("time (UTC)", "run", "metric", "event", "from", "to", "compute"):
        table.add_column(col)
    for e in events:
        table.add_row(format_time(e.time), *(_safe(x) for x in (
            e.run, e.metric, e.kind, e.before or "", e.after or "")), f"{e.compute:.4g}")
    console.print(table)
    now = ", ".join(f"{c.run}/{c.metric}: {c.verdict}" for c in current)
    if now:
        console.print(_safe(f"current: {now}"))
