"""Incremental fetching: only the points logged after the last seen step of each curve.

Three pollers, one result (:class:`PollResult`):

* :class:`ClientPoller`, MLflow tracking servers (and other URIs MlflowClient opens):
  ``search_runs`` returns each run's latest metrics with their step, so only the curves whose
  latest step passed the stored cursor get their history fetched. New runs are simply new keys.
* :class:`SqlitePoller`, MLflow sqlite stores: the same idea in read-only SQL (``latest_metrics``
  to find changed curves, then ``metrics WHERE step > ?``); the store is never written.
* :class:`FilesPoller`, files and folders: only files whose size or modification time changed
  are re-read, and only their rows after the cursor are kept.

A source that cannot be reached raises :class:`~saturate.errors.SourceError`; the watch loop
retries it with backoff. Nothing here writes to a source or to the history store.
"""

from __future__ import annotations

import fnmatch
import os
import sqlite3
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from saturate.curves import PARAM_PREFIX, TAG_PREFIX, empty_table, tidy
from saturate.errors import InputError, SaturateError, SourceError
from saturate.tracker.state import RunRecord

__all__ = [
    "PollResult",
    "Poller",
    "ClientPoller",
    "SqlitePoller",
    "FilesPoller",
    "MultiPoller",
    "make_poller",
]

CurveKey = tuple[str, str, str]


@dataclass(frozen=True)
class PollResult:
    """What one poll found: new points (tidy rows after the cursors), run facts, counters.

    ``fetched`` counts the points received from the source (what a poll costs), ``points`` holds
    only those after each curve's cursor. ``file_stamps`` are the (mtime_ns, size) of the files
    read, to be stored once the points are; ``seen`` the last step received per curve (so
    points dropped as NaN are not fetched again).
    """

    points: pd.DataFrame
    runs: tuple[RunRecord, ...] = ()
    fetched: int = 0
    curves_checked: int = 0
    file_stamps: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    seen: Mapping[CurveKey, int] = field(default_factory=dict)


class Poller(Protocol):
    """Anything with a ``label`` and ``poll(cursors, file_stamps) -> PollResult``."""

    label: str

    def poll(
        self, cursors: Mapping[CurveKey, int], file_stamps: Mapping[str, tuple[int, int]]
    ) -> PollResult: ...


def _globs_match(value: str, patterns: Sequence[str] | None) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(value, p) for p in patterns)


@dataclass(frozen=True)
class _Selection:
    """Experiments (names or ids), an MLflow filter, metric and run globs, the compute metric."""

    experiment: tuple[str, ...] | None = None
    filter: str | None = None
    metric: tuple[str, ...] | None = None
    run: tuple[str, ...] | None = None
    compute: str | None = None

    def wants_metric(self, key: str) -> bool:
        from saturate.curves import AXIS_METRICS

        return (key == self.compute or _globs_match(key, self.metric)
                or (self.compute is None and _globs_match(key, AXIS_METRICS)))

    def wants_run(self, name: str, run_id: str) -> bool:
        return _globs_match(name, self.run) or _globs_match(run_id, self.run)


def _tuple(x: Sequence[str] | str | None) -> tuple[str, ...] | None:
    if x is None:
        return None
    return (x,) if isinstance(x, str) else tuple(x) or None


def _frame(rows: dict[str, list]) -> pd.DataFrame:
    if not rows["run_id"]:
        return empty_table()
    df = pd.DataFrame(rows)
    df["compute"] = df["step"].astype(float)
    return tidy(df, compute_name="step", allow_empty=True, origin=str(rows["source"][0]))


def _new_rows() -> dict[str, list]:
    return {k: [] for k in ("source", "experiment", "run_id", "run", "metric", "step", "value",
                            "timestamp", "run_status")}  # fmt: skip


def _record(label: str, run_id: str, name: str, experiment: str, status: str | None,
            params: Mapping[str, str], tags: Mapping[str, str]) -> RunRecord:
    from saturate.ingest.mlflow import kept_tags

    return RunRecord(source=label, run_id=run_id, run=name, experiment=experiment, status=status,
                     params=tuple(sorted(params.items())),
                     tags=tuple(sorted(kept_tags(tags).items())))  # fmt: skip


# ----------------------------------------------------------------------------- MLflow client


def _source_error(label: str, exc: BaseException) -> SaturateError:
    """A client failure as the right domain error: bad request -> InputError, else SourceError."""
    from mlflow.exceptions import MlflowException

    if isinstance(exc, MlflowException) and exc.error_code in (
        "INVALID_PARAMETER_VALUE", "RESOURCE_DOES_NOT_EXIST", "BAD_REQUEST",
    ):  # fmt: skip
        return InputError(f"{label}: {exc.message}")
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return SourceError(f"{label}: cannot read from the tracking source ({text[:300]})")


class ClientPoller:
    """Polls through ``MlflowClient`` (a tracking server over REST, or any URI MLflow opens).

    The client's own HTTP retries are governed by ``MLFLOW_HTTP_REQUEST_MAX_RETRIES`` /
    ``MLFLOW_HTTP_REQUEST_TIMEOUT``; ``saturate watch`` lowers them so its own backoff decides.
    """

    def __init__(self, uri: str, *, label: str | None = None, experiment=None, filter=None,
                 metric=None, run=None, compute: str | None = None) -> None:  # fmt: skip
        from mlflow import MlflowClient

        from saturate.ingest.mlflow import check_filter, redact

        self.uri = uri
        self.label = label or redact(uri)
        check_filter(filter)
        self.selection = _Selection(_tuple(experiment), filter or None, _tuple(metric),
                                    _tuple(run), compute)  # fmt: skip
        self.client = MlflowClient(tracking_uri=uri)

    def _experiments(self) -> dict[str, str]:
        from mlflow.entities import ViewType

        from saturate.ingest.mlflow import Experiment, pick_experiments

        found, token = [], None
        while True:
            page = self.client.search_experiments(view_type=ViewType.ALL, max_results=1000,
                                                  page_token=token)  # fmt: skip
            found += [Experiment(e.experiment_id, e.name, e.lifecycle_stage == "active")
                      for e in page]  # fmt: skip
            token = page.token
            if not token:
                break
        picked = pick_experiments(found, self.selection.experiment, self.label)
        return {e.id: e.name for e in picked}

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        try:
            return self._poll(cursors)
        except SaturateError:
            raise
        except Exception as exc:  # noqa: BLE001 - any client/transport failure is a source error
            raise _source_error(self.label, exc) from exc

    def _poll(self, cursors: Mapping[CurveKey, int]) -> PollResult:
        from mlflow.entities import ViewType

        sel = self.selection
        experiments = self._experiments()
        rows = _new_rows()
        runs: list[RunRecord] = []
        fetched = checked = 0
        seen: dict[CurveKey, int] = {}
        if not experiments:
            return PollResult(empty_table())
        token = None
        while True:
            page = self.client.search_runs(
                list(experiments), filter_string=sel.filter or "",
                run_view_type=ViewType.ACTIVE_ONLY, max_results=1000, page_token=token,
            )  # fmt: skip
            for run in page:
                info = run.info
                tags = dict(run.data.tags)
                name = tags.get("mlflow.runName") or info.run_name or info.run_id
                if not sel.wants_run(name, info.run_id):
                    continue
                exp = experiments.get(info.experiment_id, info.experiment_id)
                runs.append(_record(self.label, info.run_id, name, exp, info.status,
                                    dict(run.data.params), tags))  # fmt: skip
                for latest in run.data.to_proto().metrics:
                    if not sel.wants_metric(latest.key):
                        continue
                    checked += 1
                    last = cursors.get((self.label, info.run_id, latest.key))
                    if last is not None and latest.step <= last:
                        continue
                    history = self.client.get_metric_history(info.run_id, latest.key)
                    fetched += len(history)
                    if history:
                        seen[(self.label, info.run_id, latest.key)] = max(m.step for m in history)
                    for m in history:
                        if last is not None and m.step <= last:
                            continue
                        for col, v in (("source", self.label), ("experiment", exp),
                                       ("run_id", info.run_id), ("run", name),
                                       ("metric", m.key), ("step", m.step), ("value", m.value),
                                       ("timestamp", m.timestamp / 1000.0),
                                       ("run_status", info.status)):  # fmt: skip
                            rows[col].append(v)
            token = page.token
            if not token:
                break
        return PollResult(_frame(rows), tuple(runs), fetched, checked, seen=seen)


# ----------------------------------------------------------------------------- MLflow sqlite


class SqlitePoller:
    """Polls an MLflow sqlite store with read-only SQL; the file is never written."""

    def __init__(self, path: str | Path, *, label: str, experiment=None, filter=None, metric=None,
                 run=None, compute: str | None = None) -> None:  # fmt: skip
        from saturate.ingest.mlflow import check_filter

        self.path = Path(path)
        self.label = label
        check_filter(filter)
        self.selection = _Selection(_tuple(experiment), filter or None, _tuple(metric),
                                    _tuple(run), compute)  # fmt: skip

    def _connect(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise SourceError(f"{self.label}: database file {self.path} is not there")
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
        return sqlite3.connect(uri, uri=True, timeout=10)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        try:
            conn = self._connect()
        except sqlite3.Error as exc:
            raise SourceError(f"{self.label}: cannot open the database ({exc})") from exc
        try:
            return self._poll(conn, cursors)
        except sqlite3.Error as exc:
            raise SourceError(f"{self.label}: cannot read the database ({exc})") from exc
        finally:
            conn.close()

    def _poll(self, conn: sqlite3.Connection, cursors: Mapping[CurveKey, int]) -> PollResult:
        from saturate.ingest.mlflow import (
            Experiment,
            RunMeta,
            filter_runs,
            filter_uses_metrics,
            pick_experiments,
            restore_values,
        )

        sel = self.selection
        exps = [Experiment(str(i), n, s == "active") for i, n, s in conn.execute(
            "SELECT experiment_id, name, lifecycle_stage FROM experiments")]  # fmt: skip
        picked = {e.id: e.name for e in pick_experiments(exps, sel.experiment, self.label)}
        if not picked:
            return PollResult(empty_table())
        marks = ", ".join("?" * len(picked))
        metas: dict[str, RunMeta] = {}
        for rid, name, status, eid in conn.execute(
            "SELECT run_uuid, name, status, experiment_id FROM runs WHERE lifecycle_stage = "
            f"'active' AND experiment_id IN ({marks})", [int(i) for i in picked],
        ):  # fmt: skip
            metas[rid] = RunMeta(rid, str(eid), name or "", status)
        params: dict[str, dict[str, str]] = {r: {} for r in metas}
        tags: dict[str, dict[str, str]] = {r: {} for r in metas}
        latest: dict[str, dict[str, tuple[int, float]]] = {r: {} for r in metas}
        for table, target in (("params", params), ("tags", tags)):
            for key, value, rid in conn.execute(f"SELECT key, value, run_uuid FROM {table}"):
                if rid in target:
                    target[rid][key] = value
        for key, value, step, rid in conn.execute(
            "SELECT key, value, step, run_uuid FROM latest_metrics"
        ):
            if rid in latest:
                latest[rid][key] = (int(step), float(value))
        runs = [RunMeta(m.run_id, m.experiment_id, m.name, m.status, params[m.run_id],
                        tags[m.run_id]) for m in metas.values()]  # fmt: skip
        if sel.filter:
            values = ({r: {k: v for k, (_, v) in d.items()} for r, d in latest.items()}
                      if filter_uses_metrics(sel.filter) else None)  # fmt: skip
            runs = filter_runs(runs, sel.filter, values)
        rows = _new_rows()
        records: list[RunRecord] = []
        fetched = checked = 0
        seen: dict[CurveKey, int] = {}
        for meta in runs:
            name = meta.display_name
            if not sel.wants_run(name, meta.run_id):
                continue
            exp = picked.get(meta.experiment_id, meta.experiment_id)
            records.append(_record(self.label, meta.run_id, name, exp, meta.status,
                                   meta.params, meta.tags))  # fmt: skip
            for key, (step, _) in sorted(latest[meta.run_id].items()):
                if not sel.wants_metric(key):
                    continue
                checked += 1
                last = cursors.get((self.label, meta.run_id, key))
                if last is not None and step <= last:
                    continue
                got = conn.execute(
                    "SELECT step, value, is_nan, timestamp FROM metrics WHERE run_uuid = ? AND "
                    "key = ? AND step > ? ORDER BY step, timestamp",
                    (meta.run_id, key, -(2**63) if last is None else last),
                ).fetchall()
                fetched += len(got)
                if not got:
                    continue
                seen[(self.label, meta.run_id, key)] = int(got[-1][0])
                arr = np.array([(s, v, n, t) for s, v, n, t in got], dtype=float)
                values = restore_values(arr[:, 1], arr[:, 2].astype(bool))
                n = len(got)
                rows["source"] += [self.label] * n
                rows["experiment"] += [exp] * n
                rows["run_id"] += [meta.run_id] * n
                rows["run"] += [name] * n
                rows["metric"] += [key] * n
                rows["step"] += [int(r[0]) for r in got]
                rows["value"] += values.tolist()
                rows["timestamp"] += (arr[:, 3] / 1000.0).tolist()
                rows["run_status"] += [meta.status] * n
        return PollResult(_frame(rows), tuple(records), fetched, checked, seen=seen)


# ----------------------------------------------------------------------------- files


class FilesPoller:
    """Polls files and folders: re-reads only files whose (mtime, size) changed."""

    def __init__(self, source: str | os.PathLike, *, experiment=None, metric=None, run=None,
                 compute: str | None = None) -> None:  # fmt: skip
        self.label = os.fspath(source)
        self.root = Path(self.label).expanduser()
        self.selection = _Selection(_tuple(experiment), None, _tuple(metric), _tuple(run), compute)

    def _files(self) -> tuple[list[Path], list[Path]]:
        from saturate.ingest import walk
        from saturate.ingest.tensorboard import is_event_file

        if not self.root.exists():
            raise SourceError(f"{self.label}: no such file or folder (any more)")
        if self.root.is_file():
            return ([], [self.root]) if is_event_file(self.root) else ([self.root], [])
        tables, events, _stores = walk(self.root)  # MLflow stores are polled by their own poller
        return tables, events

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        from saturate.ingest.files import read_table_file
        from saturate.ingest.tensorboard import read_event_files

        file_stamps = file_stamps or {}
        tables, events = self._files()
        stamps: dict[str, tuple[int, int]] = {}
        parts: list[pd.DataFrame] = []
        fetched = 0
        for group, is_events in ((tables, False), (events, True)):
            for path in group:
                try:
                    st = path.stat()
                except OSError:
                    continue
                stamp = (int(st.st_mtime_ns), int(st.st_size))
                key = str(path.resolve())
                if file_stamps.get(key) == stamp:
                    continue
                try:
                    if is_events:
                        df = read_event_files([path], self.root if self.root.is_dir()
                                              else path.parent, source=self.label)  # fmt: skip
                    else:
                        source = self.label if self.root.is_file() else str(path)
                        df = read_table_file(path, source=source)
                except InputError:
                    if path.stat().st_size == 0 or _growing(path, st):
                        continue  # being written; read it next time
                    raise
                stamps[key] = stamp
                fetched += len(df)
                parts.append(df)
        if not parts:
            return PollResult(empty_table(), (), 0, 0, stamps)
        from saturate.curves import concat

        df = concat(parts)
        df = self._select(df)
        keys = list(zip(df["source"], df["run_id"], df["metric"], strict=True))
        last = np.array([cursors.get(k, np.iinfo(np.int64).min) for k in keys], dtype=np.int64)
        new = df.loc[df["step"].to_numpy() > last].reset_index(drop=True)
        new.attrs = dict(df.attrs)
        runs = tuple(_file_runs(df))
        return PollResult(new, runs, fetched, len(set(keys)), stamps)

    def _select(self, df: pd.DataFrame) -> pd.DataFrame:
        sel = self.selection
        mask = np.array([sel.wants_metric(m) for m in df["metric"]], dtype=bool)
        mask &= np.array([sel.wants_run(r, i) for r, i in zip(df["run"], df["run_id"], strict=True)],
                         dtype=bool)  # fmt: skip
        if sel.experiment:
            mask &= np.array([_globs_match(e, sel.experiment) for e in df["experiment"]], dtype=bool)
        out = df.loc[mask].reset_index(drop=True)
        out.attrs = dict(df.attrs)
        return out


def _growing(path: Path, before: os.stat_result) -> bool:
    try:
        return path.stat().st_size != before.st_size
    except OSError:
        return True


def _file_runs(df: pd.DataFrame) -> Iterable[RunRecord]:
    cols = [c for c in df.columns if c.startswith((PARAM_PREFIX, TAG_PREFIX))]
    has_status = "run_status" in df.columns
    for (source, run_id), g in df.groupby(["source", "run_id"], sort=True):
        first = g.iloc[0]
        params = {c[len(PARAM_PREFIX):]: str(first[c]) for c in cols
                  if c.startswith(PARAM_PREFIX) and pd.notna(first[c])}  # fmt: skip
        tags = {c[len(TAG_PREFIX):]: str(first[c]) for c in cols
                if c.startswith(TAG_PREFIX) and pd.notna(first[c])}  # fmt: skip
        status = str(first["run_status"]) if has_status and pd.notna(first["run_status"]) else None
        yield RunRecord(str(source), str(run_id), str(first["run"]), str(first["experiment"]),
                        status, tuple(sorted(params.items())), tuple(sorted(tags.items())))


# ----------------------------------------------------------------------------- dispatch


class MultiPoller:
    """Several sources polled one after the other as one."""

    def __init__(self, pollers: Sequence[Poller]) -> None:
        self.pollers = list(pollers)
        self.label = ", ".join(p.label for p in self.pollers)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        from saturate.curves import concat

        results = [p.poll(cursors, file_stamps or {}) for p in self.pollers]
        return PollResult(
            concat([r.points for r in results]),
            tuple(run for r in results for run in r.runs),
            sum(r.fetched for r in results),
            sum(r.curves_checked for r in results),
            {k: v for r in results for k, v in r.file_stamps.items()},
            {k: v for r in results for k, v in r.seen.items()},
        )


def make_poller(
    source: str | os.PathLike | Sequence[str | os.PathLike] | None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
) -> Poller:
    """The poller for a source (None: ``MLFLOW_TRACKING_URI``) or a list of sources.

    ``compute`` names a metric used as the x axis, so it is fetched with the selected metrics.
    """
    if source is None:
        source = os.environ.get("MLFLOW_TRACKING_URI")
        if not source:
            raise InputError("no source given and MLFLOW_TRACKING_URI is not set")
    if isinstance(source, (list, tuple)):
        if not source:
            raise InputError("no source given")
        pollers = [make_poller(s, experiment=experiment, filter=filter, metric=metric, run=run,
                               compute=compute) for s in source]  # fmt: skip
        return pollers[0] if len(pollers) == 1 else MultiPoller(pollers)
    from saturate.ingest.mlflow import is_mlflow_source, resolve_source

    text = os.fspath(source)
    opts = {"experiment": experiment, "metric": metric, "run": run, "compute": compute}
    if is_mlflow_source(text):
        src = resolve_source(text)
        if src.kind == "db" and src.sqlite_path is not None:
            return SqlitePoller(src.sqlite_path, label=src.label, filter=filter, **opts)
        return ClientPoller(src.target, label=src.label, filter=filter, **opts)
    if filter:
        from saturate.errors import SettingsError

        raise SettingsError(f"--filter is an MLflow search filter; {text} is not an MLflow source")
    if not Path(text).expanduser().exists():
        raise InputError(f"{text}: no such file or directory")
    return FilesPoller(text, **opts)
