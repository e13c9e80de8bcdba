"""MLflow's backend databases (sqlite, PostgreSQL, MySQL) read without ever writing to them.

The fast path reads the ``metrics`` table with two SELECTs per batch of runs (curve sizes, then
bare numbers; through ADBC for sqlite when installed), sqlite opened ``mode=ro``, PostgreSQL in one
read-only REPEATABLE READ snapshot. An unexpected schema (or ``fast=False``) falls back to
MlflowClient: on a private snapshot for sqlite, read-only sessions on a current server schema.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from saturate.errors import InputError, SourceError
from saturate.ingest.mlflow_client import read_with_client
from saturate.ingest.mlflow_common import (
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    curve_points,
    empty_points,
    filter_runs,
    filter_uses_metrics,
    first_line,
    pick_experiments,
    readonly_sqlite_uri,
    restore_values,
    stack_curves,
)
from saturate.ingest.redaction import redact

if TYPE_CHECKING:
    from adbc_driver_sqlite.dbapi import AdbcSqliteConnection

# The tables and columns the fast path reads.
REQUIRED: dict[str, frozenset[str]] = {
    "experiments": frozenset({"experiment_id", "name", "lifecycle_stage"}),
    "runs": frozenset(
        {"run_uuid", "name", "status", "start_time", "end_time", "lifecycle_stage",
         "experiment_id", "user_id", "artifact_uri"}
    ),  # fmt: skip
    "metrics": frozenset({"key", "value", "timestamp", "run_uuid", "step", "is_nan"}),
    "latest_metrics": frozenset({"key", "value", "step", "run_uuid", "is_nan"}),
    "params": frozenset({"key", "value", "run_uuid"}),
    "tags": frozenset({"key", "value", "run_uuid"}),
    "alembic_version": frozenset({"version_num"}),
}
TABLES = {name: sa.table(name, *(sa.column(c) for c in sorted(cols))) for name, cols in REQUIRED.items()}


class UnsupportedSchema(Exception):
    """The database is not laid out as the fast path expects (the message says how)."""


# Tables every MLflow database has had: without one there is nothing to fall back to either.
CORE_TABLES = ("experiments", "runs", "metrics")


def not_mlflow(why: object) -> bool:
    """Whether an :class:`UnsupportedSchema` reason says a core table is missing."""
    return any(f"table {t!r} is missing" in str(why) for t in CORE_TABLES)


# URIs without a driver get the dialect's default one (psycopg 3 for PostgreSQL since SQLAlchemy
# 2.1, psycopg2 before); when that is not installed, the first installed one of these is used.
_DRIVERS: dict[str, tuple[tuple[str, str], ...]] = {
    "postgresql": (("psycopg", "psycopg"), ("psycopg2", "psycopg2"), ("pg8000", "pg8000")),
    "mysql": (("mysqldb", "MySQLdb"), ("pymysql", "pymysql")),
}
_INSTALL_HINT = {
    "postgresql": "pip install 'psycopg[binary]' (or psycopg2-binary)",
    "mysql": "pip install pymysql (or mysqlclient)",
}
_LIBPQ = frozenset({"psycopg", "psycopg2"})  # drivers taking libpq's connect_timeout and options
CONNECT_TIMEOUT = 10  # seconds; a black-holed host otherwise hangs for the OS's TCP timeout


def database_url(target: str, label: str) -> sa.URL:
    """The backend URI as SQLAlchemy should open it: ``postgres://`` becomes ``postgresql://``,
    and a URI naming no driver gets an installed one when the dialect's default is missing."""
    try:
        url = sa.engine.make_url(target)
    except (sa.exc.ArgumentError, ValueError) as err:
        raise InputError(f"{label}: not a valid database URI ({redact(err)})") from None
    backend = url.get_backend_name()
    if backend == "postgres":
        backend = "postgresql"
        url = url.set(drivername="postgresql" + url.drivername[len("postgres") :])
    if "+" in url.drivername or backend not in _DRIVERS:
        return url
    installed = [d for d, module in _DRIVERS[backend] if importlib.util.find_spec(module)]
    try:
        default = url.get_dialect().driver
    except sa.exc.NoSuchModuleError:
        return url
    if installed and default not in installed:
        url = url.set(drivername=f"{backend}+{installed[0]}")
    return url


def _connect_args(url: sa.URL) -> dict[str, object]:
    if url.get_driver_name() in _LIBPQ | {"mysqldb", "pymysql"} and "connect_timeout" not in url.query:
        return {"connect_timeout": CONNECT_TIMEOUT}
    return {}


def client_uri(src: MlflowSource) -> str:
    """The URI handed to MlflowClient for a server database: on PostgreSQL every transaction is
    read-only, so the server refuses any write MLflow might attempt."""
    url = database_url(src.target, src.label)
    query: dict[str, str | Sequence[str]] = {}
    if url.get_driver_name() in _LIBPQ:
        options = url.query.get("options", "")
        if not isinstance(options, str):
            options = " ".join(options)
        query["options"] = f"{options} -c default_transaction_read_only=on".strip()
    query.update({k: str(v) for k, v in _connect_args(url).items()})
    return url.update_query_dict(query).render_as_string(hide_password=False)


def open_engine(src: MlflowSource) -> sa.Engine:
    if src.sqlite_path is not None:
        uri = readonly_sqlite_uri(src.sqlite_path)

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(uri, uri=True, timeout=src.timeout, check_same_thread=False)

        return sa.create_engine("sqlite://", creator=connect, poolclass=NullPool)
    url = database_url(src.target, src.label)
    try:
        return sa.create_engine(url, poolclass=NullPool, connect_args=_connect_args(url))
    except (ImportError, ModuleNotFoundError) as err:
        hint = _INSTALL_HINT.get(url.get_backend_name(), "install it")
        raise SourceError(
            f"{src.label}: the database driver {err.name or err} is not installed; {hint} "
            "or read the runs through a tracking server"
        ) from None
    except sa.exc.ArgumentError as err:
        raise InputError(f"{src.label}: not a valid database URI ({redact(err)})") from None


@contextmanager
def connect(engine: sa.Engine, label: str) -> Iterator[sa.Connection]:
    """A read-only connection; connection failures become one-line SourceErrors."""
    try:
        conn = engine.connect()
    except sa.exc.DBAPIError as err:
        raise SourceError(f"{label}: cannot open the database ({_reason(err)})") from None
    try:
        if engine.dialect.name == "postgresql":
            # One read-only snapshot for every query on this connection: runs, curve sizes and
            # points agree even while runs keep logging.
            conn = conn.execution_options(isolation_level="REPEATABLE READ",
                                          postgresql_readonly=True)
        yield conn
    finally:
        conn.rollback()
        conn.close()


def _reason(err: BaseException) -> str:
    """The first line of a database error, without SQLAlchemy's wrapping or credentials."""
    return first_line(getattr(err, "orig", err))


@contextmanager
def checked_connection(src: MlflowSource) -> Iterator[tuple[sa.Engine, sa.Connection]]:
    """(engine, read-only connection) to a database whose schema the fast path reads, else
    :class:`UnsupportedSchema`; database errors in the block become a one-line SourceError."""
    engine = open_engine(src)
    try:
        with connect(engine, src.label) as conn:
            problem, _rev = schema_problem(conn)
            if problem:
                raise UnsupportedSchema(problem)
            yield engine, conn
    except sa.exc.DBAPIError as err:
        raise SourceError(f"{src.label}: database read failed ({_reason(err)})") from None
    finally:
        engine.dispose()


def schema_problem(conn: sa.Connection) -> tuple[str | None, str | None]:
    """(problem or None, alembic revision): are the tables and columns the fast path reads there?"""
    insp = sa.inspect(conn)
    tables = set(insp.get_table_names())
    for table, needed in REQUIRED.items():
        if table not in tables:
            return f"table {table!r} is missing", None
        have = {c["name"] for c in insp.get_columns(table)}
        if needed - have:
            return f"table {table!r} lacks column(s) {', '.join(sorted(needed - have))}", None
    revs = [r[0] for r in conn.execute(sa.select(TABLES["alembic_version"].c.version_num))]
    if len(revs) != 1:
        return f"alembic_version holds {len(revs)} revisions, expected 1", None
    return None, str(revs[0])


@lru_cache(maxsize=1)
def mlflow_revisions() -> tuple[str, frozenset[str]]:
    """(head, all known) schema revisions of the installed MLflow, from its alembic scripts."""
    import mlflow.store  # seconds to import: only the MlflowClient route needs it
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(str(Path(mlflow.store.__file__).parent / "db_migrations"))
    known = frozenset(s.revision for s in scripts.walk_revisions())
    return str(scripts.get_current_head()), known


class Rows:
    """Runs the point queries through SQLAlchemy's DBAPI cursor (any backend)."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    def rows(self, stmt: sa.Select) -> list[tuple]:
        return [tuple(r) for r in self.conn.execute(stmt)]

    def numbers(self, stmt: sa.Select) -> tuple[np.ndarray, ...]:
        """(step, value, is_nan, timestamp) columns; rows skip SQLAlchemy's row processing."""
        result = self.conn.execute(stmt)
        try:
            raw = result.cursor.fetchall()
        finally:
            result.close()
        if not raw:
            return no_numbers()
        arr = np.asarray(raw, dtype=np.float64)  # steps and ms timestamps are exact below 2**53
        ts = np.nan_to_num(arr[:, 3], nan=0.0)  # a NULL timestamp arrives as NaN
        return arr[:, 0].astype(np.int64), arr[:, 1], arr[:, 2] != 0, ts.astype(np.int64)

    def close(self) -> None:
        pass


class ArrowRows(Rows):
    """The same for sqlite through ADBC (``mode=ro``): Arrow columns, no per-row Python objects
    (about 4x faster than the sqlite3 module)."""

    def __init__(self, conn: sa.Connection, path: Path) -> None:
        import adbc_driver_sqlite.dbapi as adbc  # only sqlite stores use it; ImportError is handled

        super().__init__(conn)
        self.adbc: AdbcSqliteConnection | None = adbc.connect(readonly_sqlite_uri(path))

    def _table(self, stmt: sa.Select):  # noqa: ANN202 - a pyarrow.Table, or None
        """The query's result as Arrow; None (and the plain route from then on) if ADBC fails,
        e.g. on values not fitting the type it inferred from the first rows."""
        if self.adbc is None:
            return None
        compiled = stmt.compile(dialect=self.conn.dialect,
                                compile_kwargs={"render_postcompile": True})
        params = compiled.construct_params()
        args = tuple(params[name] for name in compiled.positiontup or ())
        try:
            cur = self.adbc.cursor()
            try:
                cur.execute(str(compiled), args)
                return cur.fetch_arrow_table()
            finally:
                cur.close()
        except Exception:  # noqa: BLE001 - any ADBC failure: the sqlite3 route still works
            self.close()
            return None

    def rows(self, stmt: sa.Select) -> list[tuple]:
        table = self._table(stmt)
        if table is None:
            return super().rows(stmt)
        return list(zip(*(col.to_pylist() for col in table.columns), strict=True))

    def numbers(self, stmt: sa.Select) -> tuple[np.ndarray, ...]:
        table = self._table(stmt)
        if table is None:
            return super().numbers(stmt)
        if table.num_rows == 0:
            return no_numbers()
        step, value, is_nan, ts = (table.column(i).to_numpy() for i in range(4))
        ts = np.nan_to_num(np.asarray(ts, dtype=np.float64), nan=0.0)
        return (np.asarray(step, dtype=np.int64), np.asarray(value, dtype=np.float64),
                np.asarray(is_nan, dtype=np.float64) != 0, ts.astype(np.int64))

    def close(self) -> None:
        if self.adbc is not None:
            with contextlib.suppress(Exception):
                self.adbc.close()
            self.adbc = None


def no_numbers() -> tuple[np.ndarray, ...]:
    return (np.empty(0, np.int64), np.empty(0), np.empty(0, bool), np.empty(0, np.int64))


def row_reader(conn: sa.Connection, src: MlflowSource, arrow: bool) -> Rows:
    if arrow and src.sqlite_path is not None:
        try:
            return ArrowRows(conn, src.sqlite_path)
        except Exception:  # noqa: BLE001 - ADBC missing or unable to open: the plain route works
            pass
    return Rows(conn)


RUN_BATCH = 400  # runs per metrics query: IN lists stay far below sqlite's parameter limit
POINT_CHUNK = 250_000  # points per numbers query (their rows are Python tuples until converted)
# {run_id: {metric key: (step, value) of its latest point}}
Latest = dict[str, dict[str, tuple[int, float]]]


def _batches(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


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
        RunMeta.of(uid, exp, name, status, params=params.get(uid, {}), tags=tags.get(uid, {}),
                   start_time=start, end_time=end, user_id=user, artifact_uri=art)
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


def select_runs(conn: sa.Connection, selection: Selection, label: str, *, with_latest: bool = False
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


def _metric_keys(conn: sa.Connection, run_ids: list[str], selection: Selection) -> list[str] | None:
    """The metric keys to read (None = all of them, no key condition needed)."""
    if selection.metric is None:
        return None
    m = TABLES["metrics"].c
    stmt = sa.select(m.key).distinct().where(m.run_uuid.in_(run_ids))
    return sorted(k for (k,) in conn.execute(stmt) if selection.wants_metric(k))


def _iter_points(reader: Rows, run_ids: list[str], selection: Selection, attempt: int = 0
                 ) -> Iterator[pd.DataFrame]:
    """The points of a batch of runs, in chunks of whole runs up to ``POINT_CHUNK`` points.

    Curve sizes come from the (run_uuid, key, step) index and the point rows carry only numbers
    in the same order, so run ids and keys are expanded from the sizes. A writer committing
    between the queries shows as a size mismatch: the chunk is read again (three times at most).
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
        yield curve_points([g[0] for g in groups[lo:hi]], [g[1] for g in groups[lo:hi]],
                           counts[lo:hi], step, restore_values(value, is_nan), ts)


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
    curves = []
    for (run_id, key), last in since.items():
        stmt = sa.select(m.step, m.value, m.is_nan, m.timestamp)
        stmt = stmt.where(m.run_uuid == run_id, m.key == key)
        if last is not None:
            stmt = stmt.where(m.step > last)
        step, value, is_nan, ts = reader.numbers(stmt.order_by(m.step, m.timestamp, m.value))
        if len(step):
            curves.append((run_id, key, step, value, ts, is_nan))
    return stack_curves(curves, restore=True)


def _read_fast(src: MlflowSource, selection: Selection, max_workers: int, arrow: bool = True
               ) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    with checked_connection(src) as (engine, conn):
        exps, runs, _latest = select_runs(conn, selection, src.label)
        batches = list(_batches([r.run_id for r in runs], RUN_BATCH))
        if src.sqlite_path is not None or max_workers == 1 or len(batches) < 2:
            reader = row_reader(conn, src, arrow)
            try:
                parts = [p for b in batches for p in _iter_points(reader, b, selection)]
            finally:
                reader.close()
        else:
            parts = _parallel_points(engine, src.label, batches, selection, max_workers)
    points = pd.concat(parts, ignore_index=True) if parts else empty_points()
    return exps, runs, points


def _parallel_points(engine: sa.Engine, label: str, batches: list[list[str]], selection: Selection,
                     workers: int) -> list[pd.DataFrame]:
    """Server databases: one read-only connection per worker, batches spread over them."""

    def work(batch: list[str]) -> list[pd.DataFrame]:
        with connect(engine, label) as conn:
            return list(_iter_points(Rows(conn), batch, selection))

    with ThreadPoolExecutor(max_workers=min(workers, 4, len(batches))) as pool:
        return [part for parts in pool.map(work, batches) for part in parts]


def iter_database(
    src: MlflowSource, selection: Selection, *, fast: bool = True, max_workers: int = 8,
    arrow: bool = True,
) -> Iterator[tuple[list[Experiment], list[RunMeta], pd.DataFrame]]:
    """:func:`read_database` a few whole runs at a time (``run_id`` order): ``(experiments, every
    selected run, points of some)``; the first item comes even when no run has points."""
    if fast:
        try:
            yield from _iter_fast(src, selection, arrow)
            return
        except UnsupportedSchema as why:
            _fall_back(src, why)
    yield read_via_client(src, selection, max_workers)


def _iter_fast(src: MlflowSource, selection: Selection, arrow: bool
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


def read_database(src: MlflowSource, selection: Selection, *, fast: bool = True,
                  max_workers: int = 8, arrow: bool = True
                  ) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected runs and their points from a database backend, never writing to it
    (``arrow``: sqlite points through ADBC when installed)."""
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


def _snapshot(db: Path, dest: Path, timeout: float) -> None:
    """Consistent copy of a live sqlite database through a read-only connection; a lock held over
    ``timeout`` seconds is a :class:`SourceError` (sqlite's backup would retry forever)."""
    src = sqlite3.connect(readonly_sqlite_uri(db), uri=True, timeout=timeout)
    dst = sqlite3.connect(dest)
    deadline = time.monotonic() + timeout

    def progress(status: int, remaining: int, total: int) -> None:
        if status in (_SQLITE_BUSY, _SQLITE_LOCKED) and time.monotonic() > deadline:
            raise TimeoutError

    try:
        src.backup(dst, pages=4096, progress=progress, sleep=0.05)
    except TimeoutError:
        raise SourceError(f"{db}: another process holds the database locked; gave up after "
                          f"{timeout:g} s (--timeout)") from None
    finally:
        dst.close()
        src.close()


_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


@contextlib.contextmanager
def _quiet_mlflow() -> Iterator[None]:
    """MLflow's and alembic's log lines kept off stderr: saturate says one line itself."""
    loggers = [logging.getLogger(name) for name in ("mlflow", "alembic")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _revision_of(src: MlflowSource) -> tuple[str | None, str | None, bool]:
    """(problem, revision, default experiment present) read through the read-only connection."""
    engine = open_engine(src)
    try:
        with connect(engine, src.label) as conn:
            problem, rev = schema_problem(conn)
            if problem is not None and not_mlflow(problem):
                return problem, rev, False
            e = TABLES["experiments"].c
            has_default = bool(conn.execute(sa.select(e.experiment_id).where(e.experiment_id == 0))
                               .first())
    finally:
        engine.dispose()
    return problem, rev, has_default


def read_via_client(src: MlflowSource, selection: Selection, max_workers: int
                    ) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected runs and their points through MlflowClient, never writing."""
    head, known = mlflow_revisions()
    if src.sqlite_path is None:
        problem, rev, has_default = _revision_of(src)
        if rev != head or not has_default:
            raise SourceError(
                f"{src.label}: MLflow's client would have to migrate or write to this database "
                f"(schema {rev or problem}, installed MLflow expects {head}); use the fast path "
                "or read it through a tracking server of the matching MLflow version"
            )
        return read_with_client(client_uri(src), selection, label=src.label,
                                max_workers=max_workers)
    with tempfile.TemporaryDirectory(prefix="saturate-mlflow-") as tmp, _quiet_mlflow():
        copy = Path(tmp) / "mlflow.db"
        try:
            _snapshot(Path(src.sqlite_path), copy, src.timeout)
        except sqlite3.Error as err:
            raise SourceError(f"{src.label}: cannot read the database ({err})") from None
        snap = MlflowSource("db", f"sqlite:///{copy}", src.label, sqlite_path=copy,
                            timeout=src.timeout)
        try:
            problem, rev, _ = _revision_of(snap)
        except (sa.exc.DBAPIError, sqlite3.Error) as err:
            raise SourceError(f"{src.label}: cannot read the database "
                              f"({str(getattr(err, 'orig', err)).splitlines()[0]})") from None
        if problem is not None and not_mlflow(problem):
            raise SourceError(f"{src.label}: not an MLflow database ({problem})")
        if rev is not None and rev != head:
            if rev not in known:
                raise SourceError(f"{src.label}: written by a newer MLflow (schema {rev}); upgrade "
                                  "mlflow or use the fast path")
            _upgrade_copy(copy, src.label)
        return read_with_client(snap.target, selection, label=src.label, max_workers=1)


def _upgrade_copy(copy: Path, label: str) -> None:
    """Migrate the private snapshot (never the user's file) so MlflowClient accepts it."""
    proc = subprocess.run(
        [sys.executable, "-m", "mlflow", "db", "upgrade", f"sqlite:///{copy}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["unknown error"]
        raise SourceError(f"{label}: could not migrate a private copy for MlflowClient ({tail[0]})")
