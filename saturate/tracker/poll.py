"""Incremental fetching: only the points logged after the last seen step of each curve, each
source read the way ``analyze`` reads it: tracking servers and backend databases fetch only the
curves whose latest step passed the cursor; ``mlruns/`` stores and files re-read only files whose
(mtime, size) changed; MLflow stores inside a folder get their own poller. An unreachable source
raises :class:`~saturate.errors.SourceError` (``watch`` retries); nothing here writes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypedDict, Unpack

import numpy as np
import pandas as pd

from saturate.errors import (
    PATH_LIMIT,
    InputError,
    NoCurvesError,
    SettingsError,
    SourceError,
    shorten,
)
from saturate.ingest.files import read_table_file
from saturate.ingest.folder import Found, Skipped, skipped_line, special_kind, walk, walk_folder
from saturate.ingest.mlflow import run_page
from saturate.ingest.mlflow_client import (
    Histories,
    RestReader,
    gather,
    search_experiments,
    search_runs,
)
from saturate.ingest.mlflow_common import (
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    check_filter,
    empty_points,
    filter_runs,
    filter_uses_metrics,
    is_mlflow_source,
    kept_tags,
    pick_experiments,
    points_frame,
    resolve_source,
    resolve_timeout,
)
from saturate.ingest.mlflow_filestore import (
    experiments_in,
    latest_values,
    metric_files,
    read_metric_file,
    runs_in,
)
from saturate.ingest.tensorboard import is_event_file, read_event_files
from saturate.ingest.wandb_files import (
    WandbRun,
    group_by_run_id,
    parse_run,
    run_table,
    warn_of,
)
from saturate.table.curves import (
    AXIS_METRICS,
    PARAM_PREFIX,
    TAG_PREFIX,
    DataWarning,
    concat,
    empty_table,
    tidy,
)
from saturate.table.run_table import RUN_URL
from saturate.table.selection import Offered
from saturate.tracker.state import CurveKey, RunRecord, after_cursors, curve_keys


@dataclass(frozen=True)
class PollResult:
    """What one poll found: new points (tidy rows after the cursors), run facts, counters.

    ``fetched`` counts the points received (what a poll costs); ``file_stamps`` are the (mtime_ns,
    size) of the files read, stored with the points; ``seen`` the last step received per curve
    (so points dropped as NaN are not fetched again).
    """

    points: pd.DataFrame
    runs: tuple[RunRecord, ...] = ()
    fetched: int = 0
    curves_checked: int = 0
    file_stamps: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    seen: Mapping[CurveKey, int] = field(default_factory=dict)


def merge_results(results: Sequence[PollResult]) -> PollResult:
    """Several polls as one."""
    return PollResult(
        concat([r.points for r in results]) if results else empty_table(),
        tuple(run for r in results for run in r.runs),
        sum(r.fetched for r in results),
        sum(r.curves_checked for r in results),
        {k: v for r in results for k, v in r.file_stamps.items()},
        {k: v for r in results for k, v in r.seen.items()},
    )


class Poller(Protocol):
    """Anything with a ``label`` and ``poll(cursors, file_stamps) -> PollResult``."""

    label: str

    def poll(
        self, cursors: Mapping[CurveKey, int], file_stamps: Mapping[str, tuple[int, int]]
    ) -> PollResult: ...


def globs_match(value: str, patterns: Sequence[str] | None) -> bool:
    """True when no patterns are given or ``value`` matches one of them."""
    return not patterns or any(fnmatch.fnmatchcase(value, p) for p in patterns)


def _tuple(x: Sequence[str] | str | None) -> tuple[str, ...] | None:
    if x is None:
        return None
    return (x,) if isinstance(x, str) else tuple(x) or None


@dataclass(frozen=True)
class PollSelection:
    """Experiments (names or ids), an MLflow filter, metric and run globs, the compute metric;
    where the tracker's web UI is served (``--tracker-url``), for each run's page; ``offered``
    hears of every metric and run the pollers were offered (what a miss lists)."""

    experiment: tuple[str, ...] | None = None
    filter: str | None = None
    metric: tuple[str, ...] | None = None
    run: tuple[str, ...] | None = None
    compute: str | None = None
    tracker_url: str | None = None
    offered: Offered = field(default_factory=Offered, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        experiment: Sequence[str] | str | None = None,
        filter: str | None = None,  # noqa: A002 - the CLI's option name
        metric: Sequence[str] | str | None = None,
        run: Sequence[str] | str | None = None,
        compute: str | None = None,
        tracker_url: str | None = None,
        offered: Offered | None = None,
    ) -> PollSelection:
        """The selection from the CLI's options (a single string counts as one pattern); a bad
        MLflow filter fails here, before any reading."""
        check_filter(filter)
        return cls(_tuple(experiment), filter or None, _tuple(metric), _tuple(run), compute,
                   tracker_url, offered or Offered())

    def wants_metric(self, key: str) -> bool:
        """The selected metrics, the compute metric, and the axis metrics when none is named."""
        self.offered.metric(key)
        return (key == self.compute or globs_match(key, self.metric)
                or (self.compute is None and globs_match(key, AXIS_METRICS)))  # fmt: skip

    def wants_run(self, name: str, run_id: str) -> bool:
        self.offered.run(name, run_id)
        return globs_match(name, self.run) or globs_match(run_id, self.run)

    def mlflow_runs(self) -> Selection:
        """The ingest selection of the runs (experiments and filter; metrics are chosen here)."""
        return Selection(experiment=self.experiment, filter=self.filter)


def changed_curves(
    label: str,
    selection: PollSelection,
    latest: Iterable[tuple[str, Iterable[tuple[str, tuple[int, Any]]]]],
    cursors: Mapping[CurveKey, int],
) -> tuple[list[tuple[str, str, tuple[int, Any], int | None]], int]:
    """The selected curves whose latest step passed their cursor, as (run_id, metric, latest,
    cursor), and how many were checked; ``latest``: each run's id and (metric, (step, ...))."""
    changed = []
    checked = 0
    for run_id, items in latest:
        for key, last in items:
            if not selection.wants_metric(key):
                continue
            checked += 1
            cursor = cursors.get((label, run_id, key))
            if cursor is None or last[0] > cursor:
                changed.append((run_id, key, last, cursor))
    return changed, checked


def rows_table(rows: Mapping[str, Sequence]) -> pd.DataFrame:
    """Columns of points (step as the x axis) as the tidy table; empty when there are none."""
    if not len(rows["run_id"]):
        return empty_table()
    df = pd.DataFrame(rows)
    df["compute"] = df["step"].astype(float)
    return tidy(df, compute_name="step", allow_empty=True, origin=str(rows["source"][0]))


def mlflow_result(
    label: str,
    exps: Sequence[Experiment],
    runs: Sequence[RunMeta],
    points: pd.DataFrame,
    checked: int,
    cursors: Mapping[CurveKey, int] | None = None,
    ui: str | None = None,
) -> PollResult:
    """A poll of an MLflow store: its points (``mlflow_common.points_frame``, all received) as
    tidy rows after each curve's cursor, with the runs' facts (each run's page in the MLflow UI
    at ``ui``, when there is one); ``seen`` from every point."""
    names = {e.id: e.name for e in exps}
    last_steps = points.groupby(["run_id", "metric"], sort=False)["step"].max()
    seen = {(label, r, k): int(s) for (r, k), s in last_steps.items()}
    fetched = len(points)
    if cursors:
        points = after_cursors(points, [(label, r, k) for r, k in zip(
            points["run_id"], points["metric"], strict=True)], cursors)
    by_id = {r.run_id: r for r in runs}
    exp_of = {i: names.get(r.experiment_id, r.experiment_id) for i, r in by_id.items()}
    records = tuple(RunRecord.of(label, r.run_id, r.display_name, exp_of[r.run_id], r.status,
                                 r.params, kept_tags(r.tags),
                                 url=run_page(ui, r) if ui else None) for r in runs)  # fmt: skip
    run_ids = points["run_id"]
    table = rows_table({
        "source": [label] * len(points),
        "experiment": run_ids.map(exp_of).to_numpy(),
        "run_id": run_ids.to_numpy(),
        "run": run_ids.map({i: r.display_name for i, r in by_id.items()}).to_numpy(),
        "metric": points["metric"].to_numpy(),
        "step": points["step"].to_numpy(),
        "value": points["value"].to_numpy(),
        "timestamp": points["timestamp"].to_numpy() / 1000.0,
        "run_status": run_ids.map({i: r.status for i, r in by_id.items()}).to_numpy(),
    })  # fmt: skip
    return PollResult(table, records, fetched, checked, seen=seen)


class RestPoller:
    """Polls a tracking server (``http(s)://``); ``timeout`` bounds each request (default
    ``$SATURATE_TIMEOUT``, else 120 s)."""

    def __init__(self, source: MlflowSource, selection: PollSelection,
                 timeout: float | None = None, max_workers: int = 4) -> None:  # fmt: skip
        self.label = source.label
        self.selection = selection
        self.rest = RestReader(source, timeout)
        self.ui = source.target  # a tracking server serves its UI at its own address
        self.max_workers = max_workers

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        sel = self.selection
        self.rest.server.reset()
        exps = search_experiments(self.rest, sel.mlflow_runs())
        found = [(meta, latest) for meta, latest in search_runs(self.rest, exps, sel.filter)
                 if sel.wants_run(meta.display_name, meta.run_id)]  # fmt: skip
        runs = [meta for meta, _ in found]
        changed, checked = changed_curves(
            self.label, sel, [(meta.run_id, latest.items()) for meta, latest in found], cursors)
        wanted: dict[str, dict[str, tuple[int, int]]] = {}
        for run_id, key, last, _cursor in changed:
            wanted.setdefault(key, {})[run_id] = last
        jobs = Histories(self.rest, bulk=True).jobs(wanted)
        points = gather(jobs, self.max_workers, self.rest.server.stop)
        return mlflow_result(self.label, exps, runs, points, checked, cursors,
                             ui=sel.tracker_url or self.ui)


class DbPoller:
    """Polls an MLflow backend database with read-only SQL; the store is never written."""

    def __init__(self, source: MlflowSource, selection: PollSelection) -> None:
        self.source = source
        self.path = source.sqlite_path
        self.label = source.label
        self.selection = selection

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        # The SQL readers load SQLAlchemy (about 0.2 s): imported by the first poll of a sqlite
        # store rather than with the tracker package (``saturate history`` and ``timeline``).
        from saturate.ingest.mlflow_db import (
            UnsupportedSchema,
            checked_connection,
            points_after,
            select_runs,
        )

        if self.path is not None and not Path(self.path).is_file():
            raise SourceError(f"{self.label}: database file {self.path} is not there")
        try:
            with checked_connection(self.source) as (_engine, conn):
                exps, runs, latest = select_runs(
                    conn, self.selection.mlflow_runs(), self.label, with_latest=True
                )
                runs = [r for r in runs if self.selection.wants_run(r.display_name, r.run_id)]
                changed, checked = changed_curves(self.label, self.selection, [
                    (r.run_id, sorted(latest.get(r.run_id, {}).items())) for r in runs], cursors)
                points = points_after(conn, {(r, k): c for r, k, _last, c in changed})
        except UnsupportedSchema as why:
            # Raised while MLflow is still creating its tables, too: the watcher retries.
            raise SourceError(f"{self.label}: not an MLflow store saturate can read ({why})") from None
        return mlflow_result(self.label, exps, runs, points, checked,
                             ui=self.selection.tracker_url)


def _read_points(files: Iterable[tuple[str, str, Path]]) -> pd.DataFrame:
    """The points of MLflow metric files given as (run_id, metric, path)."""
    parts = []
    for run_id, key, path in files:
        steps, values, stamps, _malformed = read_metric_file(path)  # a half-written line: later
        n = len(steps)
        parts.append(points_frame([run_id] * n, [key] * n, steps, values, stamps))
    return pd.concat(parts, ignore_index=True) if parts else empty_points()


class FileStorePoller:
    """Polls an ``mlruns/`` folder; re-reads only the metric files that changed."""

    def __init__(self, root: str | Path, label: str, selection: PollSelection) -> None:
        self.root = Path(root)
        self.label = label
        self.selection = selection

    def _runs(self) -> tuple[list, list[tuple[RunMeta, Path]]]:
        """The selected experiments and their selected runs (with folders)."""
        sel = self.selection
        found = experiments_in(self.root)
        if not found:
            return [], []
        exps = pick_experiments([e for e, _ in found], sel.experiment, self.label)
        folders = {e.id: f for e, f in found if e.active}
        runs = [pair for e in exps for pair in runs_in(e, folders[e.id])]
        runs = [(r, f) for r, f in runs if sel.wants_run(r.display_name, r.run_id)]
        if sel.filter:
            latest = None
            if filter_uses_metrics(sel.filter):
                latest = latest_values(_read_points(
                    (r.run_id, k, p) for r, f in runs for k, p in metric_files(f).items()))
            kept = {r.run_id for r in filter_runs([r for r, _ in runs], sel.filter, latest)}
            runs = [(r, f) for r, f in runs if r.run_id in kept]
        return exps, runs

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        file_stamps = file_stamps or {}
        if not self.root.is_dir():
            raise SourceError(f"{self.label}: the MLflow file store is not there (any more)")
        exps, runs = self._runs()
        if not exps:
            return PollResult(empty_table())
        files: list[tuple[str, str, Path]] = []
        stamps: dict[str, tuple[int, int]] = {}
        checked = 0
        for meta, folder in runs:
            for key, path in sorted(metric_files(folder).items()):
                if not self.selection.wants_metric(key):
                    continue
                checked += 1
                if (changed := _changed_file(path, file_stamps)) is not None:
                    files.append((meta.run_id, key, path))
                    stamps[changed[0]] = changed[1]
        points = _read_points(files)
        result = mlflow_result(self.label, exps, [r for r, _ in runs], points, checked, cursors,
                               ui=self.selection.tracker_url)
        return dataclasses.replace(result, file_stamps=stamps)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return int(st.st_mtime_ns), int(st.st_size)


def _changed_file(path: Path, file_stamps: Mapping[str, tuple[int, int]]
                  ) -> tuple[str, tuple[int, int]] | None:  # fmt: skip
    """The resolved path and (mtime_ns, size) of ``path`` when it changed since
    ``file_stamps``; None when it did not, or is gone (resolved only when there)."""
    stamp = _stamp(path)
    if stamp is None or file_stamps.get(where := str(path.resolve())) == stamp:
        return None
    return where, stamp


def _read(path: Path, into: WandbRun | None) -> WandbRun:
    try:
        data = path.read_bytes()
        run = parse_run(data, into)
    except OSError:
        return into or WandbRun()  # gone between the walk and the read: next pass
    except InputError as exc:
        if len(data) < 8:  # created, header not written yet
            return into or WandbRun()
        raise InputError(f"{shorten(path, PATH_LIMIT)}: {exc}") from None
    warn_of(path, run, cut_short=False)  # a log ending inside a record is still being written
    if not run.run_id:
        run.run_id = path.stem.removeprefix("run-")
    return run


def read_changed_runs(
    files: Iterable[Path], label: str, file_stamps: Mapping[str, tuple[int, int]],
    app: str | None = None,
) -> tuple[list[pd.DataFrame], dict[str, tuple[int, int]], int]:
    """Read the runs of ``files`` any of whose logs changed since ``file_stamps`` (every log of
    such a run: a resumed run's earlier folders too), as points from ``label`` (run facts on every
    row; pages in the W&B app at ``app``); with the stamps of the files read and the points read
    (what the poll cost)."""
    parts: list[pd.DataFrame] = []
    stamps: dict[str, tuple[int, int]] = {}
    fetched = 0
    for run_files in group_by_run_id(files).values():
        now = {str(f.resolve()): _stamp(f) for f in run_files}
        if all(s is None or file_stamps.get(k) == s for k, s in now.items()):
            continue
        run: WandbRun | None = None
        for f in run_files:
            run = _read(f, run)
        stamps.update({k: s for k, s in now.items() if s is not None})
        if run is None or not run.rows:
            continue
        fetched += len(run.rows)
        parts.append(run_table(run, label, app).to_frame())
    return parts, stamps, fetched


class FilesPoller:
    """Polls files and folders: re-reads only files whose (mtime, size) changed. Files a walk
    skips (not regular files, never opened; files that hold no curves) are named in one warning
    each time the set of them changes, not on every pass."""

    def __init__(self, source: str | os.PathLike, selection: PollSelection,
                 stores: Callable[[Path], Any] | None = None) -> None:  # fmt: skip
        self.label = os.fspath(source)
        self.root = Path(self.label).expanduser()
        self.selection = selection
        self._make_store = stores
        self._stores: dict[Path, Any] = {}
        self._held_none: dict[Path, Skipped] = {}  # read, and found to hold no curves
        self._told: frozenset[Skipped] = frozenset()

    def _files(self) -> Found:
        """Table files, event files, MLflow stores, W&B run logs and what was skipped (see
        :func:`~saturate.ingest.folder.walk_folder`)."""
        if not self.root.exists():
            raise SourceError(f"{self.label}: no such file or folder (any more)")
        if self.root.is_dir():
            return walk_folder(self.root)
        if (kind := special_kind(self.root)) is not None:
            raise InputError(f"{shorten(self.label, PATH_LIMIT)}: not a file ({kind})")
        if self.root.suffix == ".wandb":
            return Found(runs=[self.root])
        return Found(events=[self.root]) if is_event_file(self.root) else Found(tables=[self.root])

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        file_stamps = file_stamps or {}
        found = self._files()
        own = self._poll_files(found.tables, found.events, found.runs, cursors, file_stamps)
        self._tell_skipped(found)
        if not found.stores or self._make_store is None:
            return own
        for store in found.stores:
            if store not in self._stores:
                self._stores[store] = self._make_store(store)
        results = [self._stores[s].poll(cursors, file_stamps) for s in found.stores]
        return merge_results([own, *results])

    def _tell_skipped(self, found: Found) -> None:
        """Warn of the files skipped, once for each new set of them."""
        tables = set(found.tables)
        held_none = [s for p, s in self._held_none.items() if p in tables]
        skipped = frozenset([*found.skipped, *held_none])
        if skipped and skipped != self._told:
            warnings.warn(skipped_line(list(skipped)), DataWarning, stacklevel=3)
        self._told = skipped

    def _poll_files(self, tables: list[Path], events: list[Path], runs: list[Path],
                    cursors: Mapping[CurveKey, int],
                    file_stamps: Mapping[str, tuple[int, int]]) -> PollResult:  # fmt: skip
        """The points after the cursors in the changed tables, event files and W&B runs."""
        parts, stamps, fetched = read_changed_runs(runs, self.label, file_stamps,
                                                   self.selection.tracker_url)
        for group, is_events in ((tables, False), (events, True)):
            for path in group:
                if (changed := _changed_file(path, file_stamps)) is None:
                    continue
                key, stamp = changed
                df = self._read_file(path, is_events, stamp[1])
                if df is not None:
                    stamps[key] = stamp
                    fetched += len(df)
                    parts.append(df)
                elif path in self._held_none:
                    stamps[key] = stamp  # holds no curves: read again only once it changes
        if not parts:
            return PollResult(empty_table(), (), 0, 0, stamps)
        df = concat(parts)
        df = self._select(df)
        keys = curve_keys(df)
        new = after_cursors(df, keys, cursors)
        records = tuple(_file_runs(df))
        return PollResult(new, records, fetched, len(set(keys)), stamps)

    def _read_file(self, path: Path, is_events: bool, size: int) -> pd.DataFrame | None:
        """The points of one changed file; None when it is being written (read it next time)
        or, found by walking, holds no curves (remembered, and named by :meth:`_tell_skipped`)."""
        try:
            if is_events:
                df = read_event_files([path], self.root if self.root.is_dir()
                                      else path.parent, source=self.label).to_frame()  # fmt: skip
            else:
                source = self.label if self.root.is_file() else str(path)
                df = read_table_file(path, source=source).to_frame()
        except InputError as exc:
            if path.stat().st_size == 0 or _growing(path, size):
                return None  # being written; read it next time
            if isinstance(exc, NoCurvesError) and self.root.is_dir():
                self._held_none[path] = Skipped(path, exc.why.removeprefix("holds no curves: "),
                                                "content")
                return None
            raise
        self._held_none.pop(path, None)
        return df

    def _select(self, df: pd.DataFrame) -> pd.DataFrame:
        """The selected points (each distinct name asked about once, as the sources offer it)."""
        sel = self.selection
        metrics = {m: sel.wants_metric(m) for m in pd.unique(df["metric"].to_numpy())}
        mask = np.array(df["metric"].map(metrics), dtype=bool)
        runs = df[["run", "run_id"]].drop_duplicates()
        wanted = {(r, i) for r, i in zip(runs["run"], runs["run_id"], strict=True)
                  if sel.wants_run(r, i)}
        if len(wanted) < len(runs):
            pairs = zip(df["run"], df["run_id"], strict=True)
            mask &= np.fromiter((p in wanted for p in pairs), dtype=bool, count=len(df))
        if sel.experiment:
            offered = pd.unique(df["experiment"].to_numpy())
            sel.offered.experiments.update(map(str, offered))
            chosen = {e for e in offered if globs_match(e, sel.experiment)}
            mask &= df["experiment"].isin(chosen).to_numpy()
        return df.loc[mask].reset_index(drop=True)


def _growing(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size != size
    except OSError:
        return True


def _file_runs(df: pd.DataFrame) -> Iterable[RunRecord]:
    cols = [c for c in df.columns if c.startswith((PARAM_PREFIX, TAG_PREFIX))]
    has_status = "run_status" in df.columns
    has_url = RUN_URL in df.columns
    for (source, run_id), g in df.groupby(["source", "run_id"], sort=True):
        first = g.iloc[0]
        params = {c[len(PARAM_PREFIX):]: str(first[c]) for c in cols
                  if c.startswith(PARAM_PREFIX) and pd.notna(first[c])}  # fmt: skip
        tags = {c[len(TAG_PREFIX):]: str(first[c]) for c in cols
                if c.startswith(TAG_PREFIX) and pd.notna(first[c])}  # fmt: skip
        status = str(first["run_status"]) if has_status and pd.notna(first["run_status"]) else None
        url = str(first[RUN_URL]) if has_url and pd.notna(first[RUN_URL]) else None
        yield RunRecord.of(str(source), str(run_id), str(first["run"]), str(first["experiment"]),
                           status, params, tags, url=url)


class MultiPoller:
    """Several sources polled one after the other as one."""

    def __init__(self, pollers: Sequence[Poller]) -> None:
        self.pollers = list(pollers)
        self.label = ", ".join(p.label for p in self.pollers)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        return merge_results([p.poll(cursors, file_stamps or {}) for p in self.pollers])


class _Selecting(TypedDict):
    """What :func:`make_poller` hands every poller it makes: which curves, and where they are
    shown."""

    experiment: Sequence[str] | str | None
    metric: Sequence[str] | str | None
    run: Sequence[str] | str | None
    compute: str | None
    tracker_url: str | None
    offered: Offered


def make_poller(
    source: str | os.PathLike | Sequence[str | os.PathLike] | None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
    timeout: float | None = None,
    tracker_url: str | None = None,
    offered: Offered | None = None,
) -> Poller:
    """The poller for a source (None: ``MLFLOW_TRACKING_URI``) or a list of sources.

    ``compute`` names a metric used as the x axis, so it is fetched with the selected metrics;
    ``timeout`` bounds each request to a tracking server (default ``$SATURATE_TIMEOUT``, 120 s);
    ``tracker_url``: where the tracker's web UI is served, for each run's page;
    ``offered`` hears of the metrics and runs every source offers (for a selection miss).
    """
    if source is None:
        source = os.environ.get("MLFLOW_TRACKING_URI")
        if not source:
            raise InputError("no source given and MLFLOW_TRACKING_URI is not set")
    opts: _Selecting = {"experiment": experiment, "metric": metric, "run": run, "compute": compute,
            "tracker_url": tracker_url, "offered": offered or Offered()}
    if not isinstance(source, (str, os.PathLike)):  # a list of sources
        if not source:
            raise InputError("no source given")
        pollers = [make_poller(s, filter=filter, timeout=timeout, **opts) for s in source]
        return pollers[0] if len(pollers) == 1 else MultiPoller(pollers)
    text = os.fspath(source)
    if text.startswith("wandb://"):
        raise SettingsError("watch follows W&B run folders (wandb/, run-*/); a wandb:// project "
                            "is read by analyze, not followed by watch")
    if is_mlflow_source(text):
        return _store_poller(text, filter=filter, timeout=timeout, **opts)
    path = Path(text).expanduser()
    if not path.exists():
        raise InputError(f"{text}: no such file or directory")
    if not path.is_dir() and (kind := special_kind(path)) is not None:
        raise InputError(f"{shorten(text, PATH_LIMIT)}: not a file ({kind})")  # never opened
    if filter and not (path.is_dir() and walk(path)[2]):
        raise SettingsError(f"--filter is an MLflow search filter; {text} is not an MLflow source")
    return FilesPoller(text, PollSelection.of(**opts), lambda p: _store_poller(
        str(p), filter=filter, timeout=timeout, **opts))


def _store_poller(text: str, *, filter: str | None, timeout: float | None,  # noqa: A002
                  **opts: Unpack[_Selecting]) -> Poller:  # fmt: skip
    """The poller of one MLflow store, read the way ``analyze`` reads it: a database locked by
    another writer is waited on for ``timeout`` seconds, as a server's answer is."""
    src = resolve_source(text)
    if src.kind == "db":
        src = dataclasses.replace(src, timeout=resolve_timeout(timeout))
    selection = PollSelection.of(filter=filter, **opts)
    if src.kind == "db":
        return DbPoller(src, selection)
    if src.kind == "files":
        return FileStorePoller(Path(src.target), src.label, selection)
    return RestPoller(src, selection, timeout)
