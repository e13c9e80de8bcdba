"""Read-only fast path for MLflow's database backends (sqlite, PostgreSQL, MySQL).

MLflow's client costs one request per (run, metric); here the ``metrics`` table is read with two
queries per batch of runs (curve sizes, then bare numbers), through ADBC's Arrow columns for
sqlite when ``adbc-driver-sqlite`` is installed (:mod:`~saturate.ingest.mlflow_db_rows`).
Connections are read-only and only SELECTs are issued (:mod:`~saturate.ingest.mlflow_db`). The
tables and columns needed are checked first; if they are not what this code expects, or
``fast=False``, the MlflowClient route is taken instead, which never touches the user's store
either (:mod:`~saturate.ingest.mlflow_db_client`).

The tracker's sqlite poller reads through the same queries: :func:`select_runs` for the runs and
their latest steps, :func:`points_after` for the points past its cursors.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import sqlalchemy as sa

from saturate.errors import SourceError
from saturate.ingest.mlflow_common import (
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    empty_points,
    filter_runs,
    filter_uses_metrics,
    pick_experiments,
    points_frame,
    restore_values,
)
from saturate.ingest.mlflow_db import (
    TABLES,
    UnsupportedSchema,
    checked_connection,
    connect,
    not_mlflow,
)
from saturate.ingest.mlflow_db_client import read_via_client
from saturate.ingest.mlflow_db_rows import Rows, row_reader

__all__ = [
    "read_database", "iter_database", "select_runs", "latest_metrics", "points_after", "RUN_BATCH", "POINT_CHUNK",
]

RUN_BATCH = 400  # runs per metrics query: IN lists stay far below sqlite's parameter limit
POINT_CHUNK = 250_000  # points per numbers query (their rows are Python tuples until converted)
# {run_id: {metric key: (step, value) of its latest point}}
Latest = dict[str, dict[str, tuple[int, float]]]


def _batches(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


# ----------------------------------------------------------------------------- runs


def _experiments(conn: sa.Connection) -> list[Experiment]:
    e = TABLES["experiments"].c
    rows = conn.execute(sa.select(e.experiment_id, e.name, e.lifecycle_stage)).all()
    return [Experiment(str(i), str(n), (s or "active") == "active") for i, n, s in rows]


def _runs(conn: sa.Connection, exp_ids: Sequence[str]) -> list[RunMeta]:
    r = TABLES["runs"].c
    stmt = sa.select(
        r.run_uuid, r.name, r.status, r.start_time, r.end_time, r.user_id, r.artifact_uri,
        r.experiment_id,
    ).where(
        r.experiment_id.in_([int(i) if i.isdigit() else i for i in exp_ids]),
        sa.or_(r.lifecycle_stage.is_(None), r.lifecycle_stage != "deleted"),
    )  # fmt: skip
    rows = conn.execute(stmt).all()
    run_ids = [row[0] for row in rows]
    params = _key_values(conn, "params", run_ids)
    tags = _key_values(conn, "tags", run_ids)
    return [
        RunMeta(
            run_id=str(uid), experiment_id=str(exp), name=name or "", status=status or "",
            params=params.get(uid, {}), tags=tags.get(uid, {}), start_time=int(start or 0),
            end_time=None if end is None else int(end), user_id=user or "",
            artifact_uri=art or "",
        )  # fmt: skip
        for uid, name, status, start, end, user, art, exp in rows
    ]


def _key_values(conn: sa.Connection, table: str, run_ids: Sequence[str]) -> dict[str, dict]:
    t = TABLES[table].c
    out: dict[str, dict[str, str]] = {}
    for batch in _batches(run_ids, RUN_BATCH):
        stmt = sa.select(t.run_uuid, t.key, t.value).where(t.run_uuid.in_(batch))
        for uid, key, value in conn.execute(stmt):
            out.setdefault(uid, {})[key] = "" if value is None else str(value)
    return out


def latest_metrics(conn: sa.Connection, run_ids: Sequence[str]) -> Latest:
    """Each run's latest (step, value) per metric, from MLflow's ``latest_metrics`` table."""
    t = TABLES["latest_metrics"].c
    out: Latest = {}
    for batch in _batches(run_ids, RUN_BATCH):
        stmt = sa.select(t.run_uuid, t.key, t.step, t.value, t.is_nan).where(t.run_uuid.in_(batch))
        for uid, key, step, value, is_nan in conn.execute(stmt):
            v = restore_values(np.array([value], dtype=float), np.array([bool(is_nan)]))[0]
            out.setdefault(uid, {})[key] = (int(step or 0), float(v))
    return out


def select_runs(
    conn: sa.Connection, selection: Selection, label: str, *, with_latest: bool = False
) -> tuple[list[Experiment], list[RunMeta], Latest]:
    """The experiments picked, their active runs that pass the filter, and the runs' latest
    (step, value) per metric when ``with_latest`` (else only what a metrics clause needed)."""
    exps = pick_experiments(_experiments(conn), selection.experiment, label)
    runs = _runs(conn, [e.id for e in exps]) if exps else []
    by_metrics = filter_uses_metrics(selection.filter)
    latest: Latest = {}
    if runs and (with_latest or by_metrics):
        latest = latest_metrics(conn, [r.run_id for r in runs])
    values = {r: {k: v for k, (_, v) in d.items()} for r, d in latest.items()} if by_metrics else None
    return exps, filter_runs(runs, selection.filter, values), latest


# ----------------------------------------------------------------------------- points


def _metric_keys(conn: sa.Connection, run_ids: list[str], selection: Selection) -> list[str] | None:
    """The metric keys to read (None = all of them, no key condition needed)."""
    if selection.metric is None:
        return None
    m = TABLES["metrics"].c
    stmt = sa.select(m.key).distinct().where(m.run_uuid.in_(run_ids))
    return sorted(k for (k,) in conn.execute(stmt) if selection.wants_metric(k))


def _points(reader: Rows, run_ids: list[str], selection: Selection) -> pd.DataFrame:
    """All points of a batch of runs (:func:`_iter_points` gathered)."""
    parts = list(_iter_points(reader, run_ids, selection))
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0] if parts else (
        empty_points()
    )


def _iter_points(
    reader: Rows, run_ids: list[str], selection: Selection, attempt: int = 0
) -> Iterator[pd.DataFrame]:
    """The points of a batch of runs, whole runs at a time: curve sizes, then bare numbers, no
    per-row text.

    Curve sizes come from the (run_uuid, key, step) index; the point rows carry only numbers in
    the same (run_uuid, key) order, so run ids and keys are expanded from the sizes. The numbers
    are read for consecutive runs holding at most ``POINT_CHUNK`` points together (a longer run
    alone), each such chunk yielded as it is read, so memory stays bounded however long the runs
    are. A writer committing between the queries shows up as a size mismatch, and the chunk's
    runs are read again (three times at most).
    """
    keys = _metric_keys(reader.conn, run_ids, selection)
    if keys is not None and not keys:
        return
    m = TABLES["metrics"].c
    key_filter = [] if keys is None else [m.key.in_(keys)]
    sizes = sa.select(m.run_uuid, m.key, sa.func.count()).where(m.run_uuid.in_(run_ids), *key_filter)
    groups = reader.rows(sizes.group_by(m.run_uuid, m.key).order_by(m.run_uuid, m.key))
    counts = np.array([g[2] for g in groups], dtype=np.int64)
    for lo, hi in _chunks(groups, counts):
        sub = sorted({g[0] for g in groups[lo:hi]})
        rows = sa.select(m.step, m.value, m.is_nan, m.timestamp)
        rows = rows.where(m.run_uuid.in_(sub), *key_filter).order_by(m.run_uuid, m.key)
        step, value, is_nan, ts = reader.numbers(rows)
        if len(step) != int(counts[lo:hi].sum()):
            if attempt >= 2:
                raise SourceError("the store kept changing while it was read; try again")
            yield from _iter_points(reader, sub, selection, attempt + 1)
            continue
        if not len(step):
            continue
        uid = np.repeat(np.array([g[0] for g in groups[lo:hi]], dtype=object), counts[lo:hi])
        key = np.repeat(np.array([g[1] for g in groups[lo:hi]], dtype=object), counts[lo:hi])
        yield points_frame(uid, key, step, restore_values(value, is_nan), ts)


def _chunks(groups: list[tuple], counts: np.ndarray) -> Iterator[tuple[int, int]]:
    """[lo, hi) slices of the ordered (run, key, count) groups: whole runs packed up to
    POINT_CHUNK points (a longer run alone)."""
    starts = [i for i in range(len(groups)) if i == 0 or groups[i][0] != groups[i - 1][0]]
    lo, total = 0, 0
    for a, b in zip(starts, [*starts[1:], len(groups)], strict=True):
        size = int(counts[a:b].sum())
        if a > lo and total + size > POINT_CHUNK:
            yield lo, a
            lo, total = a, 0
        total += size
    if lo < len(groups):
        yield lo, len(groups)


def points_after(conn: sa.Connection, since: Mapping[tuple[str, str], int | None]) -> pd.DataFrame:
    """The points of the (run_id, metric) curves logged at a step after the one given (None:
    all), one indexed query per curve, each curve in (step, timestamp, value) order."""
    m = TABLES["metrics"].c
    reader = Rows(conn)
    parts, ids, keys = [], [], []
    for (run_id, key), last in since.items():
        stmt = sa.select(m.step, m.value, m.is_nan, m.timestamp)
        stmt = stmt.where(m.run_uuid == run_id, m.key == key)
        if last is not None:
            stmt = stmt.where(m.step > last)
        part = reader.numbers(stmt.order_by(m.step, m.timestamp, m.value))
        if len(part[0]):
            parts.append(part)
            ids.append(run_id)
            keys.append(key)
    if not parts:
        return empty_points()
    sizes = [len(p[0]) for p in parts]
    step, value, is_nan, ts = (np.concatenate(cols) for cols in zip(*parts, strict=True))
    uid = np.repeat(np.array(ids, dtype=object), sizes)
    key = np.repeat(np.array(keys, dtype=object), sizes)
    return points_frame(uid, key, step, restore_values(value, is_nan), ts)


# ----------------------------------------------------------------------------- whole stores


def _read_fast(
    src: MlflowSource, selection: Selection, max_workers: int, arrow: bool = True
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    with checked_connection(src) as (engine, conn):
        exps, runs, _latest = select_runs(conn, selection, src.label)
        batches = list(_batches([r.run_id for r in runs], RUN_BATCH))
        if src.sqlite_path is not None or max_workers == 1 or len(batches) < 2:
            reader = row_reader(conn, src, arrow)
            try:
                parts = [_points(reader, b, selection) for b in batches]
            finally:
                reader.close()
        else:
            parts = _parallel_points(engine, src.label, batches, selection, max_workers)
    points = pd.concat(parts, ignore_index=True) if parts else empty_points()
    return exps, runs, points


def _parallel_points(
    engine: sa.Engine, label: str, batches: list[list[str]], selection: Selection, workers: int
) -> list[pd.DataFrame]:
    """Server databases: one read-only connection per worker, batches spread over them."""

    def work(batch: list[str]) -> pd.DataFrame:
        with connect(engine, label) as conn:
            return _points(Rows(conn), batch, selection)

    with ThreadPoolExecutor(max_workers=min(workers, 4, len(batches))) as pool:
        return list(pool.map(work, batches))


def iter_database(
    src: MlflowSource, selection: Selection, *, fast: bool = True, max_workers: int = 8,
    arrow: bool = True,
) -> Iterator[tuple[list[Experiment], list[RunMeta], pd.DataFrame]]:
    """:func:`read_database` a few whole runs at a time: ``(experiments, every selected run,
    points of some of them)``, the runs in ``run_id`` order, at most ``POINT_CHUNK`` points a
    time (a longer run alone). The first item comes even when no run has points. Without the
    fast path, one item with everything MlflowClient read.
    """
    if fast:
        try:
            yield from _iter_fast(src, selection, arrow)
            return
        except UnsupportedSchema as why:
            _fall_back(src, why)
    yield read_via_client(src, selection, max_workers)


def _iter_fast(
    src: MlflowSource, selection: Selection, arrow: bool
) -> Iterator[tuple[list[Experiment], list[RunMeta], pd.DataFrame]]:
    with checked_connection(src) as (_engine, conn):
        exps, runs, _latest = select_runs(conn, selection, src.label)
        reader = row_reader(conn, src, arrow)
        try:
            yield exps, runs, empty_points()
            for batch in _batches(sorted(r.run_id for r in runs), RUN_BATCH):
                for part in _iter_points(reader, batch, selection):
                    yield exps, runs, part
        finally:
            reader.close()


def read_database(
    src: MlflowSource,
    selection: Selection,
    *,
    fast: bool = True,
    max_workers: int = 8,
    arrow: bool = True,
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected runs and their points from a database backend, never writing to it.

    ``arrow``: read sqlite points through ADBC when it is installed (the sqlite3 module if not).
    """
    if fast:
        try:
            return _read_fast(src, selection, max_workers, arrow)
        except UnsupportedSchema as why:
            _fall_back(src, why)
    return read_via_client(src, selection, max_workers)


def _fall_back(src: MlflowSource, why: UnsupportedSchema) -> None:
    """Say that MlflowClient reads instead, or stop when no MLflow could read the database."""
    if not_mlflow(why):
        raise SourceError(f"{src.label}: not an MLflow database ({why})")
    warnings.warn(f"{src.label}: fast path unavailable ({why}); reading through MlflowClient "
                  "on a read-only basis instead (slower)", RuntimeWarning, stacklevel=4)
