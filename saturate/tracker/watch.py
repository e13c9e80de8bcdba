"""The watch loop: poll, re-analyse only the curves that changed, record, emit events (through
callbacks, so the CLI decides how they look). A pass is one transaction of the history: cut short,
it leaves nothing and is read again next time. The first pass of a new history is a baseline,
summed up in one line rather than one event per curve. Test hook: with
``SATURATE_TEST_PAUSE_AFTER_POINTS=<file>`` set, a pass creates ``<file>`` after storing its points
and waits up to a minute, so a test can interrupt it between its two writes.
"""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from saturate.errors import (
    PATH_LIMIT,
    InputError,
    SaturateError,
    SettingsError,
    SourceError,
    shorten,
)
from saturate.ingest import axis_join
from saturate.ingest.redaction import redact
from saturate.report.html import render_live_page
from saturate.report.output import check_not_inputs, write_atomic
from saturate.results import CurveAnalysis, verdict_counts
from saturate.results.codec import Written, derived
from saturate.table import curves
from saturate.table.curves import PARAM_PREFIX
from saturate.table.selection import Offered, is_slip, selection_miss
from saturate.table.table import Table
from saturate.tracker.events import Event, detect_events
from saturate.tracker.poll import Poller, globs_match
from saturate.tracker.state import HistoryStore, PollRecord


@dataclass(frozen=True)
class LivePage:
    """The page at ``path``, refreshing every ``refresh`` seconds, for the watch of ``source``."""

    path: Path
    source: str
    refresh: int = 60

    def check(self) -> None:
        """A clear error before the first pass when the page cannot be written where asked."""
        if self.path.is_dir():
            raise InputError(f"--html {shorten(self.path, PATH_LIMIT)}: is a folder, not a file")
        if not self.path.parent.is_dir():
            raise InputError(f"--html {shorten(self.path, PATH_LIMIT)}: no such folder "
                             f"{shorten(self.path.parent, PATH_LIMIT)}")

    def write(self, curves: Iterable[CurveAnalysis], at: float | None = None) -> None:
        """Write the page of ``curves`` (the last pass at ``at``, default now); never over a
        file they were read from (one found in a folder watched)."""
        curves = list(curves)
        check_not_inputs([("--html", self.path)], sorted({c.source for c in curves}))
        text = render_live_page(curves, source=self.source,
                                updated=time.time() if at is None else at, refresh=self.refresh)
        write_atomic(self.path, text, what="--html")


PAUSE_ENV = "SATURATE_TEST_PAUSE_AFTER_POINTS"


class PassInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM arrived during a pass: nothing of it was recorded (exit non-zero)."""


def _pause_for_tests() -> None:
    """The documented test hook (see the module docstring); a no-op unless the variable is set."""
    marker = os.environ.get(PAUSE_ENV)
    if not marker:
        return
    Path(marker).write_text(str(os.getpid()))
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        time.sleep(0.05)


@dataclass(frozen=True)
class PassResult(Written):
    """One watch pass: counters, the curves re-analysed and the events they raised; ``to_dict()``
    counts the analyses (``analysed``) rather than holding them."""

    _json_order: ClassVar[tuple[str, ...]] = (
        "time", "fetched", "new_points", "curves_changed", "analysed", "baseline")

    time: float
    fetched: int
    new_points: int
    curves_changed: int
    analyses: tuple[CurveAnalysis, ...] = field(default=(), compare=False)  # not written
    events: tuple[Event, ...] = ()
    writeback: Any = field(default=None, compare=False)
    baseline: bool = False

    @derived(key="analysed")
    def _analysed(self) -> int:
        return len(self.analyses)

    def summary(self) -> str:
        """One line; for the baseline pass it sums up the verdicts instead of listing events."""
        head = (f"fetched {self.fetched} point(s), {self.new_points} new in "
                f"{self.curves_changed} curve(s)")
        if not self.baseline:
            return f"{head}; analysed {len(self.analyses)}; {len(self.events)} event(s)"
        collapsed = sum(c.collapse is not None for c in self.analyses)
        extra = f"; {collapsed} with a collapse" if collapsed else ""
        return (f"{head}; baseline of {verdict_counts(self.analyses)}{extra}; changes are "
                "reported as events from the next pass on")


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: ``initial * 2**(n-1)`` seconds after the n-th failure, at most ``max``."""

    initial: float = 1.0
    maximum: float = 60.0

    def delay(self, failures: int) -> float:
        return float(min(self.maximum, self.initial * 2.0 ** max(0, failures - 1)))


@dataclass
class Watcher:
    """Polls a source into a :class:`HistoryStore` and re-analyses the curves that changed.

    ``settings``: the :class:`~saturate.settings.Settings` of ``analyze``; changed runs and their
    seeds go through :func:`saturate.api.analyze_read`, so a curve gets the verdict ``analyze``
    gives it. ``on_analysed`` gets each pass's analyses (``--log-back``); its return value is
    kept in :attr:`PassResult.writeback`.
    """

    poller: Poller
    store: HistoryStore
    settings: Any = None
    on_analysed: Callable[[tuple[CurveAnalysis, ...]], Any] | None = None
    clock: Callable[[], float] = field(default=time.time)
    offered: Offered | None = None  # what the poller's sources offered (make_poller's)
    #: A ``--metric``/``--run`` that matches nothing offered and is no slip: wait for it (a
    #: metric logged later), or (False, as with ``--once``) stop with the error.
    wait_for_names: bool = True

    def __post_init__(self) -> None:
        from saturate.settings import Settings

        if self.settings is None:
            self.settings = Settings()
        if not isinstance(self.settings, Settings):
            raise SettingsError("Watcher: settings must be a saturate.settings.Settings, got "
                                f"{type(self.settings).__name__}")
        from saturate.analysis.settings import AnalysisSettings

        if AnalysisSettings.from_settings(self.settings).group_by:
            raise SettingsError("watch analyses runs one by one; --group-by PARAM is not "
                                "supported here (--group-by none is: it turns pooling off)")
        if self.settings.suite is not None:  # a suite key of the settings file: runs one by one
            self.settings = dataclasses.replace(self.settings, suite=None)
        from saturate.ingest.stream import check_gpus_axis

        self._on_steps = check_gpus_axis(self.settings)  # GPU-hours from wall time, from steps

    @property
    def compute(self) -> str | None:
        return self.settings.compute

    def poll_once(self) -> PassResult:
        """Fetch what is new, store it, re-analyse the changed curves, record analyses and events,
        all in one transaction; a :class:`SourceError` when the source cannot be read."""
        store = self.store
        result = self.poller.poll(store.cursors(), store.file_stamps())
        if (miss := self.selection_miss()) is not None and (miss[1] or not self.wait_for_names):
            raise miss[0]  # before anything is recorded: a corrected selection reads it all
        now = self.clock()
        with store.transaction():
            baseline = not store.has_analyses()
            finished = store.upsert_runs(result.runs)
            added = store.add_points(result.points)
            store.advance(dict(result.seen))
            store.set_file_stamps(dict(result.file_stamps))
            _pause_for_tests()
            status_runs = {(r.source, r.run_id) for r in finished}
            axis_runs = {(s, r) for s, r, m in added if self._is_axis(m)}
            analyses, events = self._analyse(added, status_runs, axis_runs, now, baseline)
            writeback = self.on_analysed(tuple(analyses)) if self.on_analysed and analyses else None
            store.record_poll(PollRecord(now, self.poller.label, result.fetched,
                                         sum(added.values()), len(added), len(analyses),
                                         len(events)))  # fmt: skip
        return PassResult(now, result.fetched, sum(added.values()), len(added), tuple(analyses),
                          tuple(events), writeback, baseline)  # fmt: skip

    def selection_miss(self) -> tuple[InputError, bool] | None:
        """While the history holds no curve and the sources offered some: the error of a
        ``--metric``/``--run`` (or, for files, ``--experiment``: an MLflow store checks its
        own) that matches nothing they offered, and whether it is a slip (a name close to one
        there is); None otherwise."""
        if self.offered is None or self.store.cursors():
            return None
        kinds = ("metric", "run", "experiment") if self.offered.experiments else ("metric", "run")
        chosen = {k: v for k, v in self.settings.selection().items() if k in kinds}
        if not (self.offered.metrics or self.offered.runs):
            return None
        miss = selection_miss(self.offered, **chosen, where=self.poller.label)
        return None if miss is None else (miss, is_slip(self.offered, **chosen))

    def _analyse(
        self,
        added: dict[tuple[str, str, str], int],
        status_runs: set[tuple[str, str]],
        axis_runs: set[tuple[str, str]],
        now: float,
        baseline: bool,
    ) -> tuple[list[CurveAnalysis], list[Event]]:
        """Analyse the curves that moved (with the curves they pool with), record each analysis
        and its events (none for the baseline)."""
        store = self.store
        changed_runs = {(s, r) for s, r, _ in added} | status_runs
        analyses: list[CurveAnalysis] = []
        events: list[Event] = []
        if not changed_runs:
            return analyses, events
        table = self._prepare(store.points(sorted(self._with_siblings(changed_runs))))
        for new in self._judged(table):
            key = (new.source, new.run_id, new.metric)
            prev = store.last_analysis(key)
            if not (key in added or key[:2] in status_runs or key[:2] in axis_runs
                    or _differs(prev, new)):
                continue  # a sibling whose call did not move: nothing to record
            found = () if baseline else detect_events(
                prev, new, at=now, stop_reached=store.has_event(key, "stop_point_reached"))
            store.record_analysis(new, at=now)
            store.record_events(found)
            analyses.append(new)
            events.extend(found)
        return analyses, events

    def _with_siblings(self, runs: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """``runs`` and the stored runs their curves pool with (their seeds)."""
        from saturate.analysis.analyse_table import sibling_runs
        from saturate.analysis.settings import AnalysisSettings

        if not AnalysisSettings.from_settings(self.settings).decision.pool:
            return runs
        facts = self.store.runs()
        rows = [
            {"source": s, "experiment": facts[s, r].experiment, "run_id": r, "run": facts[s, r].run,
             "metric": m, "step": 0, "compute": 0.0, "value": 0.0,
             **{f"{PARAM_PREFIX}{k}": v for k, v in facts[s, r].params}}
            for s, r, m in self.store.cursors() if (s, r) in facts
        ]  # one row per stored curve: what its sibling key reads
        return sibling_runs(pd.DataFrame(rows), runs) if len(rows) > 1 else runs

    def _judged(self, table: Table) -> tuple[CurveAnalysis, ...]:
        """The objectives of ``table`` through the one verdict path (no diagnostics), on
        GPU-hours from wall time with ``--gpus``."""
        if table.empty:
            return ()
        from saturate.api import analyze_read

        try:
            if self._on_steps:
                table = axis_join.gpu_hours(table, self.settings.gpus)
            return analyze_read(table, self.settings, diagnostics=False).curves
        except SaturateError as exc:
            warnings.warn(f"not analysed ({exc})", stacklevel=2)
            return ()

    def _is_axis(self, metric: str) -> bool:
        """True for a metric other curves of its run use as their x axis."""
        if self.compute:
            return metric == self.compute
        return globs_match(metric, curves.AXIS_METRICS)

    def _prepare(self, points: pd.DataFrame) -> Table:
        """The stored points on the x axis and selected, as ``saturate analyze`` reads them
        (GPU-hours from wall time are made from the steps in :meth:`_judged`)."""
        table = Table.of(points)
        if table.empty:
            return table
        with warnings.catch_warnings():
            # A run whose compute metric has not caught up yet loses its newest points until it does.
            warnings.simplefilter("ignore", curves.DataWarning)
            try:
                if self.compute and not self._on_steps:
                    table = axis_join.set_compute(table, self.compute)
                elif not self._on_steps:
                    table = axis_join.auto_compute(table)
            except SaturateError:
                if self.compute and not (points["metric"] == self.compute).any():
                    return table.with_points(table.points.iloc[0:0])
                raise
        selection = self.settings.selection()
        return table.with_points(curves.select(table.points, metric=selection["metric"],
                                               run=selection["run"]))


def _differs(prev: CurveAnalysis | None, new: CurveAnalysis) -> bool:
    """Whether a curve's call moved since its last recorded analysis (its verdict, P(pays) or
    gain per doubling): a curve re-analysed only because a sibling changed is recorded then."""
    if prev is None:
        return True
    return (prev.verdict != new.verdict or prev.p_pays != new.p_pays
            or prev.gain_per_doubling.value != new.gain_per_doubling.value)


def run_watch(
    watcher: Watcher,
    *,
    interval: float = 60.0,
    once: bool = False,
    max_passes: int | None = None,
    retries: int | None = None,
    backoff: Backoff = Backoff(),
    on_pass: Callable[[PassResult], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Repeat :meth:`Watcher.poll_once` every ``interval`` seconds; returns the passes made.

    An unreachable source is retried after :class:`Backoff` delays (``on_status`` hears of it and
    of its return), at most ``retries`` times in a row (default: unbounded, 3 with ``once``).
    Ctrl-C during a pass or a retry's wait is raised as :class:`PassInterrupted`.
    """
    if interval < 0:
        raise SettingsError(f"--interval must be >= 0 seconds, got {interval!r}")
    if retries is None and once:
        retries = 3
    say = on_status or (lambda _msg: None)
    passes = failures = 0
    told = ""
    while True:
        try:
            result = watcher.poll_once()
        except SourceError as exc:
            failures += 1
            if retries is not None and failures > retries:
                raise
            delay = backoff.delay(failures)
            say(f"source unreachable ({redact(exc)}); retry {failures} in {delay:g}s")
            try:
                sleep(delay)
            except KeyboardInterrupt:
                raise PassInterrupted(f"interrupted while retrying pass {passes + 1}") from None
            continue
        except KeyboardInterrupt:
            raise PassInterrupted(
                f"interrupted during pass {passes + 1}: nothing of it was recorded; the next "
                "pass reads it again"
            ) from None
        if failures:
            say(f"source reachable again after {failures} failed attempt(s)")
            failures = 0
        told = _check_selection(watcher, say, told)
        passes += 1
        if on_pass is not None:
            on_pass(result)
        if once or (max_passes is not None and passes >= max_passes):
            return passes
        sleep(interval)


def _check_selection(watcher: Watcher, say: Callable[[str], None], told: str) -> str:
    """A ``--metric``/``--run`` that matches nothing the sources offer and that the watcher
    waits for (:attr:`Watcher.wait_for_names`; a slip stopped the pass): said once per change.
    Returns what was said."""
    found = watcher.selection_miss()
    if found is None:
        return told
    line = f"{found[0]} (nothing to analyse yet; still watching)"
    if line != told:
        say(line)
    return line
