"""``saturate watch``: follow live runs, re-analyse what changed, print one line per event.

On a terminal a live table (rich) shows the current verdicts; otherwise each event is one line
on stdout (``--format text`` or ``json``), so scripts and CI can read them. Status (passes,
an unreachable source, its return) goes to stderr.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from saturate.cli import app
from saturate.cli.common import (
    Compute,
    Confidence,
    Experiment,
    Filter,
    Metric,
    MinGain,
    NBoot,
    Run,
    Seed,
    Sources,
    handle_errors,
)
from saturate.cli.common import ConfigPath as Config
from saturate.errors import SettingsError

State = Annotated[
    Path,
    typer.Option("--state", help="The watch history file (SQLite).", show_default=True),
]
_HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": "15",
                  "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}  # fmt: skip


def analysis_options(config: Path | None, **given: Any) -> tuple[dict[str, Any], Any]:
    """Selection and AnalysisSettings from the settings file and the command line."""
    from saturate.tracker.options import resolve_options

    if given.get("min_gain") is not None:
        from saturate.config import parse_gain

        given["min_gain"] = parse_gain(given["min_gain"])
    if given.get("confidence") is not None:
        from saturate.config import parse_confidence

        given["confidence"] = parse_confidence(given["confidence"])
    return resolve_options(config if config is not None else True, **given)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the watcher like Ctrl-C (a pass in progress is committed or not at all)."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _fmt(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.4g}"


def _table(latest: dict[tuple[str, str, str], Any], last_event: dict[tuple[str, str, str], str]):
    from rich.table import Table
    from rich.text import Text

    from saturate.results import format_estimate
    from saturate.text import for_terminal

    table = Table(title="saturate watch", expand=False)
    for col in ("run", "metric", "points", "compute", "verdict", "gain/doubling", "asymptote",
                "knee", "last event"):  # fmt: skip
        table.add_column(col)
    for key in sorted(latest, key=lambda k: (latest[k].run, latest[k].metric)):
        c = latest[key]
        table.add_row(Text(for_terminal(c.run)), Text(for_terminal(c.metric)), str(c.n_points),
                      _fmt(c.compute_last), c.verdict,
                      format_estimate(c.gain_per_doubling), format_estimate(c.asymptote),
                      _fmt(c.knee), Text(for_terminal(last_event.get(key, ""))))  # fmt: skip
    return table


@app.command()
@handle_errors
def watch(
    sources: Sources = None,
    experiment: Experiment = None,
    filter: Filter = None,
    metric: Metric = None,
    run: Run = None,
    compute: Compute = None,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between polls.")] = 60.0,
    once: Annotated[bool, typer.Option("--once", help="One pass, then exit (cron, CI).")] = False,
    state: State = Path(".saturate/history.db"),
    fmt: Annotated[str, typer.Option("--format", help="Event lines: text or json.")] = "text",
    log_back: Annotated[bool, typer.Option(
        "--log-back", help="Write verdict tags, report and figures to the analysed MLflow runs.",
    )] = False,  # fmt: skip
    min_gain: MinGain = None,
    confidence: Confidence = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    config: Config = None,
    retries: Annotated[int | None, typer.Option(
        "--retries", help="Give up after this many failed polls in a row (default: never; 3 with "
        "--once).", show_default=False)] = None,  # fmt: skip
    max_passes: Annotated[int | None, typer.Option(
        "--max-passes", help="Stop after this many passes.", show_default=False, hidden=True,
    )] = None,  # fmt: skip
) -> None:
    """Follow runs as they train: poll, re-analyse changed curves, print one line per event.

    Events: verdict_changed, knee_crossed, collapse_detected, stop_point_reached,
    stop_point_moved, run_finished. The history (and where to resume) is kept in --state.
    """
    from rich.console import Console
    from rich.live import Live

    from saturate.text import for_message
    from saturate.tracker.poll import make_poller
    from saturate.tracker.state import HistoryStore
    from saturate.tracker.watch import Backoff, PassInterrupted, Watcher, run_watch

    if fmt not in ("text", "json"):
        raise SettingsError(f"--format must be text or json, got {fmt!r}")
    if retries is not None and retries < 0:
        raise SettingsError(f"--retries must be >= 0, got {retries}")
    for key, value in _HTTP_DEFAULTS.items():
        os.environ.setdefault(key, value)
    selection, settings = analysis_options(
        config, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        min_gain=min_gain, confidence=confidence, n_boot=n_boot, seed=seed,
    )  # fmt: skip
    poller = make_poller(sources or None, **selection)
    err = Console(stderr=True, soft_wrap=True, highlight=False)
    live_view = err.is_terminal and sys.stdout.isatty()
    store = HistoryStore(state)
    on_analysed = None
    if log_back:
        from saturate.tracker.writeback import log_back as write

        def on_analysed(curves: tuple[Any, ...]) -> Any:
            return write(curves, settings=_settings_dict(settings))

    watcher = Watcher(poller, store, settings, compute=selection["compute"],
                      metric=selection["metric"], run=selection["run"],
                      on_analysed=on_analysed)  # fmt: skip
    latest = {(c.source, c.run_id, c.metric): c for c in store.latest_analyses()}
    last_event: dict[tuple[str, str, str], str] = {}
    passes = [0]
    live: Live | None = None

    def status(msg: str) -> None:
        (live.console if live is not None else err).print(f"watch: {for_message(msg)}",
                                                          markup=False, highlight=False)

    def on_pass(result: Any) -> None:
        passes[0] += 1
        for e in result.events:
            text = e.json_line() if fmt == "json" else e.line()
            key = (e.source, e.run_id, e.metric)
            last_event[key] = f"{e.kind} {e.after or ''}".strip()
            if live is not None:
                live.console.print(text, markup=False, highlight=False)
            else:
                print(text, flush=True)
        for c in result.analyses:
            latest[(c.source, c.run_id, c.metric)] = c
        wb = "" if result.writeback is None else f"; {result.writeback.summary()}"
        if live is not None:
            live.update(_table(latest, last_event))
        else:
            status(f"pass {passes[0]}: {result.summary()}{wb}")

    try:
        with _sigterm_as_interrupt(), contextlib.ExitStack() as stack:
            if live_view:
                live = stack.enter_context(Live(_table(latest, last_event), console=err,
                                                refresh_per_second=2, transient=False))
            status(f"watching {poller.label} (state {state}); Ctrl-C stops")
            run_watch(watcher, interval=interval, once=once, max_passes=max_passes,
                      retries=retries, backoff=Backoff(initial=min(max(interval, 0.5), 2.0)),
                      on_pass=on_pass, on_status=status)  # fmt: skip
    except KeyboardInterrupt as exc:
        live = None
        status(f"stopped after {passes[0]} pass(es); history in {state}")
        if isinstance(exc, PassInterrupted):
            status(str(exc))
            raise typer.Exit(130) from None
    finally:
        store.close()


def _settings_dict(settings: Any) -> dict[str, Any]:
    from dataclasses import asdict

    from saturate.results import jsonable

    return json.loads(json.dumps(jsonable(asdict(settings))))


__all__ = ["watch", "analysis_options"]
