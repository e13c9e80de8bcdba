"""``saturate watch``: follow live runs, re-analyse what changed, print one line per event.

On a terminal a live table (rich) shows the current verdicts; otherwise each event is one line
on stdout (``--format text`` or ``json``), so scripts and CI can read them. Status (passes,
an unreachable source, its return) goes to stderr.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from saturate.cli.common import (
    INTEGER,
    NUMBER,
    check_sources_listening,
    flag,
    format_option,
    sources_argument,
)
from saturate.cli.options import settings_command
from saturate.report.text import for_message
from saturate.settings import Settings
from saturate.settings.checks import check_choice, check_int, check_seconds
from saturate.settings.fields import DEFAULT_STATE


def state_option() -> click.Option:
    """``--state``: the watch history file."""
    return click.Option(["--state"], type=click.Path(path_type=Path), default=DEFAULT_STATE,
                        show_default=True, metavar="PATH",
                        help="The watch history file (SQLite).")


FORMATS = ("text", "json")
_HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": "15",
                  "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}  # fmt: skip


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[Callable[[float], None]]:
    """SIGTERM stops the watcher like Ctrl-C (a pass in progress is committed or not at all).
    Yields the sleep between passes: it stops there too when the signal came and its exception
    was lost (Python drops an exception raised while a destructor or callback runs)."""
    came: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    def sleep(seconds: float) -> None:
        if came:
            raise KeyboardInterrupt
        time.sleep(seconds)

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield time.sleep
        return
    try:
        yield sleep
    finally:
        signal.signal(signal.SIGTERM, old)


class _Display:
    """Where watch output goes: event lines on stdout (or above the live table on a terminal),
    status on stderr, the live table of current verdicts when both ends are terminals."""

    def __init__(self, fmt: str, latest: dict[tuple[str, str, str], Any]) -> None:
        from rich.console import Console

        self.fmt, self.latest = fmt, latest
        self.last_event: dict[tuple[str, str, str], str] = {}
        self.err = Console(stderr=True, soft_wrap=True, highlight=False)
        self.live: Any = None
        self.passes = 0

    def start_live(self, stack: contextlib.ExitStack) -> None:
        from rich.live import Live

        from saturate.report.tracker_tables import watch_table

        if self.err.is_terminal and sys.stdout.isatty():
            self.live = stack.enter_context(Live(watch_table(self.latest, self.last_event, self.err.width),
                                                 console=self.err, refresh_per_second=2))

    def status(self, msg: str, prefix: str = "watch") -> None:
        (self.live.console if self.live is not None else self.err).print(
            f"{prefix}: {for_message(msg)}", markup=False, highlight=False)

    def warning(self, msg: str) -> None:
        """A ``warning:`` line (a message not delivered): every time, unlike Python's warnings,
        which say a repeated one once."""
        self.status(msg, prefix="warning")

    def on_pass(self, result: Any) -> None:
        self.passes += 1
        for e in result.events:
            text = e.json_line() if self.fmt == "json" else e.line()
            self.last_event[(e.source, e.run_id, e.metric)] = f"{e.kind} {e.after or ''}".strip()
            if self.live is not None:
                self.live.console.print(text, markup=False, highlight=False)
            else:
                print(text, flush=True)
        for c in result.analyses:
            self.latest[(c.source, c.run_id, c.metric)] = c
        if self.live is not None:
            from saturate.report.tracker_tables import watch_table

            self.live.update(watch_table(self.latest, self.last_event, self.err.width))
        else:
            wb = "" if result.writeback is None else f"; {result.writeback.summary()}"
            self.status(f"pass {self.passes}: {result.summary()}{wb}")


class _Outputs:
    """Where a pass is told besides the terminal: the webhook (``--notify``) and the page
    (``--html``)."""

    def __init__(self, hook: Any, page: Any) -> None:
        self.hook, self.page = hook, page

    @staticmethod
    def webhook(url: str | None, timeout: str) -> Any:
        """The ``--notify`` webhook, its URL checked (before anything is read or written)."""
        if url is None:
            return None
        from saturate.tracker.notify import Webhook

        return Webhook(url, timeout=check_seconds(timeout, "--notify-timeout"))

    @staticmethod
    def check_page(html: Path | None, sources: list[str] | None, settings: Settings,
                   state: Path) -> None:
        """Refuse, before the history is opened, an ``--html`` that is an input, the history or
        a file kept beside it (its lock)."""
        from saturate.report.output import check_not_inputs, settings_inputs
        from saturate.tracker.state import state_files

        check_not_inputs({"--html": html}.items(), [*(sources or ()), *settings_inputs(settings)],
                         kept=state_files(state))

    @classmethod
    def of(cls, hook: Any, html: Path | None, label: str, interval: float) -> _Outputs:
        page = None
        if html is not None:
            from saturate.tracker.watch import LivePage

            page = LivePage(html, label, refresh=max(int(interval), 5))
            page.check()
        return cls(hook, page)

    def after(self, show: _Display) -> Any:
        """The ``on_pass`` of run_watch: the display first, then the webhook and the page."""

        def on_pass(result: Any) -> None:
            show.on_pass(result)
            if self.hook is not None:
                delivery = self.hook.notify(result.events, result.analyses)
                if delivery.failed:
                    show.warning(delivery.summary(self.hook.host))
                elif delivery.sent:
                    show.status(delivery.summary(self.hook.host))
            if self.page is not None:
                self.page.write(show.latest.values(), at=result.time)

        return on_pass


_PARAMS = [
    sources_argument(),
    click.Option(["--interval"], type=NUMBER, default=60.0, show_default=True, metavar="SECONDS",
                 help="Seconds between polls."),
    flag("--once", "One pass, then exit (cron, CI)."),
    state_option(),
    format_option(FORMATS, "Event lines"),
    flag("--log-back", "Write verdict tags, report and figures to the analysed MLflow runs."),
    click.Option(["--retries"], metavar="N", help="Give up after this many failed polls in a row "
                 "(default: never; 3 with --once)."),
    click.Option(["--max-passes"], type=INTEGER, hidden=True, help="Stop after this many passes."),
    click.Option(["--notify"], metavar="URL", help="Post each verdict change, collapse and stop "
                 "point reached to this Slack or Microsoft Teams incoming webhook (JSON with a "
                 "text field)."),
    click.Option(["--notify-timeout"], default="10", show_default=True, metavar="SECONDS",
                 help="The most one pass waits for the webhook, retries included."),
    click.Option(["--html"], type=click.Path(path_type=Path), metavar="PATH",
                 help="Keep a self-refreshing HTML page of the current verdicts here, written "
                 "after every pass."),
]


@settings_command("selection", "analysis", exclude=("group_by",), params=_PARAMS)
def watch(
    settings: Settings,
    sources: list[str] | None,
    interval: float,
    once: bool,
    state: Path,
    fmt: str,
    log_back: bool,
    retries: str | None,
    max_passes: int | None,
    notify: str | None,
    notify_timeout: str,
    html: Path | None,
) -> None:
    """Follow runs as they train: poll, re-analyse changed curves, print one line per event.

    Events: verdict_changed, knee_crossed, collapse_detected, stop_point_reached,
    stop_point_moved, run_finished. The history (and where to resume) is kept in --state.
    """
    fmt = check_choice(fmt, "--format", FORMATS)
    interval = check_seconds(interval, "--interval", zero=True)
    tries = None if retries is None else check_int(retries, "--retries", 0)
    hook = _Outputs.webhook(notify, notify_timeout)
    _Outputs.check_page(html, sources, settings, state)
    if once and tries is None:  # a watcher that follows, or retries when told, waits for a
        check_sources_listening(sources)  # server that is not up yet or restarting
    from saturate.table.selection import Offered
    from saturate.tracker.poll import make_poller
    from saturate.tracker.state import HistoryStore
    from saturate.tracker.watch import Backoff, PassInterrupted, Watcher, run_watch

    for key, value in _HTTP_DEFAULTS.items():
        os.environ.setdefault(key, value)
    selection = settings.selection()
    offered = Offered()  # what the sources hold, for a --metric or --run that matches nothing
    poller = make_poller(sources or None, **selection, offered=offered)
    store = HistoryStore(state)
    on_analysed = None
    if log_back:
        from saturate.analysis.settings import settings_used
        from saturate.tracker.writeback import log_back as write

        def on_analysed(curves: tuple[Any, ...]) -> Any:
            return write(curves, settings=settings_used(settings, curves[0].compute_name))

    outputs = _Outputs.of(hook, html, poller.label, interval)
    watcher = Watcher(poller, store, settings, on_analysed=on_analysed, offered=offered,
                      wait_for_names=not once)
    show = _Display(fmt, {(c.source, c.run_id, c.metric): c for c in store.latest_analyses()})
    try:
        with _sigterm_as_interrupt() as sleep, contextlib.ExitStack() as stack:
            show.start_live(stack)
            show.status(f"watching {poller.label} (state {state}); Ctrl-C stops")
            run_watch(watcher, interval=interval, once=once, max_passes=max_passes,
                      retries=tries, backoff=Backoff(initial=min(max(interval, 0.5), 2.0)),
                      on_pass=outputs.after(show), on_status=show.status,
                      sleep=sleep)  # fmt: skip
    except KeyboardInterrupt as exc:
        show.live = None
        show.status(f"stopped after {show.passes} pass(es); history in {state}")
        if isinstance(exc, PassInterrupted):
            show.status(str(exc))
            raise click.exceptions.Exit(130) from None
    finally:
        store.close()

