"""``saturate history``: what ``saturate watch`` recorded, per run and metric."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from saturate.cli.app import command
from saturate.cli.common import format_option, handle_errors
from saturate.cli.watch import state_option
from saturate.settings.checks import check_choice

FORMATS = ("table", "lines", "json")

_PARAMS = [
    state_option(),
    click.Option(["--run", "-r"], metavar="RUN", help="Run name or id."),
    click.Option(["--metric", "-m"], metavar="METRIC", help="Metric name."),
    click.Option(["--all", "all_events"], is_flag=True, default=False,
                 help="Every event, not only verdict changes."),
    format_option(FORMATS),
]


@command(_PARAMS)
@handle_errors
def history(
    state: Path,
    run: str | None,
    metric: str | None,
    all_events: bool,
    fmt: str,
) -> None:
    """List the verdict changes (or, with --all, every event) the watcher recorded."""
    from rich.console import Console

    from saturate.report.tracker_tables import render_history
    from saturate.tracker.state import HistoryStore

    fmt = check_choice(fmt, "--format", FORMATS)
    with HistoryStore(state, readonly=True) as store:
        store.check_names(run, metric)
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
    what = "events" if all_events else "verdict changes"
    render_history(events, latest, Console(file=sys.stdout, soft_wrap=False),
                   title=f"{what} recorded in {state}")
