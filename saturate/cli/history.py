"""``saturate history``: what ``saturate watch`` recorded, per run and metric."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from saturate.cli import app
from saturate.cli.common import handle_errors
from saturate.cli.watch import State
from saturate.errors import SettingsError


@app.command()
@handle_errors
def history(
    state: State = Path(".saturate/history.db"),
    run: Annotated[str | None, typer.Option("--run", "-r", help="Run name or id.",
                                            show_default=False)] = None,
    metric: Annotated[str | None, typer.Option("--metric", "-m", help="Metric name.",
                                               show_default=False)] = None,
    all_events: Annotated[bool, typer.Option(
        "--all", help="Every event, not only verdict changes.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="table, lines or json.")] = "table",
) -> None:
    """List the verdict changes (or, with --all, every event) the watcher recorded."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from saturate.text import for_terminal
    from saturate.tracker.events import format_time
    from saturate.tracker.state import HistoryStore

    if fmt not in ("table", "lines", "json"):
        raise SettingsError(f"--format must be table, lines or json, got {fmt!r}")
    with HistoryStore(state, readonly=True) as store:
        kinds = None if all_events else ["verdict_changed"]
        events = store.events(run=run, metric=metric, kind=kinds)
        latest = [c for c in store.latest_analyses()
                  if (run is None or run in (c.run, c.run_id))
                  and (metric is None or c.metric == metric)]
    if fmt == "json":
        doc = {"state": str(state), "events": [e.to_dict() for e in events],
               "current": [{"run": c.run, "run_id": c.run_id, "metric": c.metric,
                            "verdict": c.verdict, "compute": c.compute_last} for c in latest]}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    if fmt == "lines":
        for e in events:
            print(e.line())
        return
    console = Console(file=sys.stdout, soft_wrap=True)
    if not events:
        console.print(f"no {'events' if all_events else 'verdict changes'} recorded in {state}")
        return
    table = Table(title=f"{'events' if all_events else 'verdict changes'} recorded in {state}")
    for col in ("time (UTC)", "run", "metric", "event", "from", "to", "compute"):
        table.add_column(col)
    for e in events:
        table.add_row(format_time(e.time), *(Text(for_terminal(x)) for x in (
            e.run, e.metric, e.kind, e.before or "", e.after or "")), f"{e.compute:.4g}")
    console.print(table)
    now = ", ".join(f"{c.run}/{c.metric}: {c.verdict}" for c in latest)
    if now:
        console.print(Text(for_terminal(f"current: {now}")))
