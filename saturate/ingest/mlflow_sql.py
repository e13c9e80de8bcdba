"""Read-only fast path for MLflow's database backends (sqlite, PostgreSQL, MySQL).

MLflow's client costs one request per (run, metric); here the ``metrics`` table is read with two
queries per batch of runs (curve sizes, then bare numbers), through ADBC's Arrow columns for
sqlite when ``adbc-driver-sqlite`` is installed. Connections are read-only (sqlite
``mode=ro``; a read-only REPEATABLE READ transaction on PostgreSQL, so one snapshot serves every
query) and only SELECTs are issued. The tables and columns needed are checked first; if they are
not what this code expects, or ``fast=False``, the MlflowClient route is taken instead, and it
never touches the user's store: for sqlite it runs on a private snapshot (migrated there if
old), for a server database only when its schema is already current (MLflow's store would
otherwise migrate it or create rows), and on PostgreSQL in sessions the server keeps read-only.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sqlite3
import subprocess
import sys
import tempfile
import urllib.parse
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from saturate.errors import InputError, SourceError
from saturate.ingest.mlflow import (
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

__all__ = ["read_database", "schema_problem", "database_url", "client_uri", "RUN_BATCH"]

RUN_BATCH = 400  # runs per metrics query: IN lists stay far below sqlite's parameter limit
POINT_CHUNK = 250_000  # points per numbers query (their rows are Python tuples until converted)

_REQUIRED: dict[str, frozenset[str]] = {
    "experiments": frozenset({"experiment_id", "name", "lifecycle_stage"}),
    "runs": frozenset(
        {"run_uuid", "name", "status", "start_time", "end_time", "lifecycle_stage",
         "experiment_id", "user_id", "artifact_uri"}
    ),  # fmt: skip
    "metrics": frozenset({"key", "value", "timestamp", "run_uuid", "step", "is_nan"}),
    "latest_metrics": frozenset({"key", "value", "run_uuid", "is_nan"}),
    "params": frozenset({"key", "value", "run_uuid"}),
    "tags": frozenset({"key", "value", "run_uuid"}),
    "alembic_version": frozenset({"version_num"}),
}
_T = {name: sa.table(name, *(sa.column(c) for c in sorted(cols))) for name, cols in _REQUIRED.items()}


class _Unsupported(Exception):
    """The database is not laid out as this fast path expects (the message says how)."""


# ----------------------------------------------------------------------------- connection


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
    """The backend URI as SQLAlchemy should open it.

    ``postgres://`` (Heroku's spelling, refused by SQLAlchemy) becomes ``postgresql://``; a URI
    naming no driver gets an installed one when the dialect's default is missing, so either
    psycopg or psycopg2 serves a plain ``postgresql://`` URI.
    """
    try:
        url = sa.engine.make_url(target)
    except (sa.exc.ArgumentError, ValueError) as err:
        raise InputError(f"{label}: not a valid database URI ({err})") from None
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
    """The URI handed to MlflowClient for a server database: on PostgreSQL every transaction of
    its sessions is read-only (``default_transaction_read_only``), so the server refuses any
    write MLflow might attempt instead of performing it."""
    url = database_url(src.target, src.label)
    query: dict[str, str | Sequence[str]] = {}
    if url.get_driver_name() in _LIBPQ:
        options = url.query.get("options", "")
        if not isinstance(options, str):
            options = " ".join(options)
        query["options"] = f"{options} -c default_transaction_read_only=on".strip()
    query.update({k: str(v) for k, v in _connect_args(url).items()})
    return url.update_query_dict(query).render_as_string(hide_password=False)


def _engine(src: MlflowSource) -> sa.Engine:
    if src.sqlite_path is not None:
        path = Path(src.sqlite_path).resolve()
        uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)

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
        raise InputError(f"{src.label}: not a valid database URI ({err})") from None


@contextmanager
def _connect(engine: sa.Engine, label: str) -> Iterator[sa.Connection]:
    """A read-only connection; connection failures become one-line SourceErrors."""
    try:
        conn = engine.connect()
    except sa.exc.DBAPIError as err:
        reason = str(getattr(err, "orig", err)).strip().splitlines()[0][:200]
        raise SourceError(f"{label}: cannot open the database ({reason})") from None
    try:
        if engine.dialect.name == "postgresql":
            # One read-only snapshot for every query on this connection: runs, curve sizes and
            # points agree even while runs keep logging.
            conn = conn.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
        yield conn
    finally:
        conn.rollback()
        conn.close()


def _batches(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


# ----------------------------------------------------------------------------- schema


def schema_problem(conn: sa.Connection) -> tuple[str | None, str | None]:
    """(problem or None, alembic revision): are the tables and columns the fast path reads there?"""
    insp = sa.inspect(conn)
    tables = set(insp.get_table_names())
    for table, needed in _REQUIRED.items():
        if table not in tables:
            return f"table {table!r} is missing", None
        have = {c["name"] for c in insp.get_columns(table)}
        if needed - have:
            return f"table {table!r} lacks column(s) {', '.join(sorted(needed - have))}", None
    revs = [r[0] for r in conn.execute(sa.select(_T["alembic_version"].c.version_num))]
    if len(revs) != 1:
        return f"alembic_version holds {len(revs)} revisions, expected 1", None
    return None, str(revs[0])


@lru_cache(maxsize=1)
def _mlflow_revisions() -> tuple[str, frozenset[str]]:
    """(head, all known) schema revisions of the installed MLflow, from its alembic scripts."""
    import mlflow.store
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(str(Path(mlflow.store.__file__).parent / "db_migrations"))
    known = frozenset(s.revision for s in scripts.walk_revisions())
    return str(scripts.get_current_head()), known


# ----------------------------------------------------------------------------- fast path


def _experiments(conn: sa.Connection) -> list[Experiment]:
    e = _T["experiments"].c
    rows = conn.execute(sa.select(e.experiment_id, e.name, e.lifecycle_stage)).all()
    return [Experiment(str(i), str(n), (s or "active") == "active") for i, n, s in rows]


def _runs(conn: sa.Connection, exp_ids: Sequence[str]) -> list[RunMeta]:
    r = _T["runs"].c
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
    t = _T[table].c
    out: dict[str, dict[str, str]] = {}
    for batch in _batches(run_ids, RUN_BATCH):
        stmt = sa.select(t.run_uuid, t.key, t.value).where(t.run_uuid.in_(batch))
        for uid, key, value in conn.execute(stmt):
            out.setdefault(uid, {})[key] = "" if value is None else str(value)
    return out


def _latest(conn: sa.Connection, run_ids: Sequence[str]) -> dict[str, dict[str, float]]:
    t = _T["latest_metrics"].c
    out: dict[str, dict[str, float]] = {}
    for batch in _batches(run_ids, RUN_BATCH):
        stmt = sa.select(t.run_uuid, t.key, t.value, t.is_nan).where(t.run_uuid.in_(batch))
        for uid, key, value, is_nan in conn.execute(stmt):
            v = restore_values(np.array([value], dtype=float), np.array([bool(is_nan)]))[0]
            out.setdefault(uid, {})[key] = float(v)
    return out


def _metric_keys(conn: sa.Connection, run_ids: list[str], selection: Selection) -> list[str] | None:
    """The metric keys to read (None = all of them, no key condition needed)."""
    if selection.metric is None:
        return None
    m = _T["metrics"].c
    stmt = sa.select(m.key).distinct().where(m.run_uuid.in_(run_ids))
    return sorted(k for (k,) in conn.execute(stmt) if selection.wants_metric(k))


class _Rows:
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
            return _no_numbers()
        arr = np.asarray(raw, dtype=np.float64)  # steps and ms timestamps are exact below 2**53
        ts = np.nan_to_num(arr[:, 3], nan=0.0)  # a NULL timestamp arrives as NaN
        return arr[:, 0].astype(np.int64), arr[:, 1], arr[:, 2] != 0, ts.astype(np.int64)

    def close(self) -> None:
        pass


class _ArrowRows(_Rows):
    """The same for sqlite through ADBC, which hands columns over as Arrow arrays, skipping the
    per-row Python objects that dominate reading with the sqlite3 module (about 4x faster).
    Opened with ``mode=ro`` like the sqlite3 connection."""

    def __init__(self, conn: sa.Connection, path: Path) -> None:
        import adbc_driver_sqlite.dbapi as adbc

        super().__init__(conn)
        uri = f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro"
        self.adbc = adbc.connect(uri)

    def _table(self, stmt: sa.Select):  # noqa: ANN202 - a pyarrow.Table, or None
        """The query's result as Arrow; None (and the plain route from then on) if ADBC fails,
        e.g. on a column whose values do not fit the type ADBC inferred from the first rows."""
        if self.adbc is None:
            return None
        compiled = stmt.compile(
            dialect=self.conn.dialect, compile_kwargs={"render_postcompile": True}
        )
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
            return _no_numbers()
        step, value, is_nan, ts = (table.column(i).to_numpy() for i in range(4))
        ts = np.nan_to_num(np.asarray(ts, dtype=np.float64), nan=0.0)
        return (
            np.asarray(step, dtype=np.int64),
            np.asarray(value, dtype=np.float64),
            np.asarray(is_nan, dtype=np.float64) != 0,
            ts.astype(np.int64),
        )

    def close(self) -> None:
        if self.adbc is not None:
            with contextlib.suppress(Exception):
                self.adbc.close()
            self.adbc = None


def _no_numbers() -> tuple[np.ndarray, ...]:
    return (np.empty(0, np.int64), np.empty(0), np.empty(0, bool), np.empty(0, np.int64))


def _reader(conn: sa.Connection, src: MlflowSource, arrow: bool) -> _Rows:
    if arrow and src.sqlite_path is not None:
        try:
            return _ArrowRows(conn, src.sqlite_path)
        except Exception:  # noqa: BLE001 - ADBC missing or unable to open: the plain route works
            pass
    return _Rows(conn)


def _points(reader: _Rows, run_ids: list[str], selection: Selection) -> pd.DataFrame:
    """All points of a batch of runs: curve sizes, then bare numbers, no per-row text.

    Curve sizes come from the (run_uuid, key, step) index; the point rows carry only numbers in
    the same (run_uuid, key) order, so run ids and keys are expanded from the sizes. The numbers
    are read for consecutive runs holding at most ``POINT_CHUNK`` points together (a longer run
    alone), so memory stays bounded however long the runs are. A writer committing between the
    queries shows up as a size mismatch, and the batch is re-read.
    """
    keys = _metric_keys(reader.conn, run_ids, selection)
    if keys is not None and not keys:
        return empty_points()
    m = _T["metrics"].c
    key_filter = [] if keys is None else [m.key.in_(keys)]
    sizes = sa.select(m.run_uuid, m.key, sa.func.count()).where(m.run_uuid.in_(run_ids), *key_filter)
    sizes = sizes.group_by(m.run_uuid, m.key).order_by(m.run_uuid, m.key)
    for _attempt in range(3):
        groups = reader.rows(sizes)
        counts = np.array([g[2] for g in groups], dtype=np.int64)
        parts = []
        for lo, hi in _chunks(groups, counts):
            sub = sorted({g[0] for g in groups[lo:hi]})
            rows = sa.select(m.step, m.value, m.is_nan, m.timestamp)
            rows = rows.where(m.run_uuid.in_(sub), *key_filter).order_by(m.run_uuid, m.key)
            part = reader.numbers(rows)
            if len(part[0]) != int(counts[lo:hi].sum()):
                break
            parts.append(part)
        else:
            break
    else:
        raise SourceError("the store kept changing while it was read; try again")
    if not parts or not counts.sum():
        return empty_points()
    step, value, is_nan, ts = (np.concatenate(cols) for cols in zip(*parts, strict=True))
    uid = np.repeat(np.array([g[0] for g in groups], dtype=object), counts)
    key = np.repeat(np.array([g[1] for g in groups], dtype=object), counts)
    return points_frame(uid, key, step, restore_values(value, is_nan), ts)


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


def _read_fast(
    src: MlflowSource, selection: Selection, max_workers: int, arrow: bool = True
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    engine = _engine(src)
    try:
        with _connect(engine, src.label) as conn:
            problem, _rev = schema_problem(conn)
            if problem:
                raise _Unsupported(problem)
            exps = pick_experiments(_experiments(conn), selection.experiment, src.label)
            runs = _runs(conn, [e.id for e in exps]) if exps else []
            latest = None
            if runs and filter_uses_metrics(selection.filter):
                latest = _latest(conn, [r.run_id for r in runs])
            runs = filter_runs(runs, selection.filter, latest)
            run_ids = [r.run_id for r in runs]
            batches = list(_batches(run_ids, RUN_BATCH))
            if src.sqlite_path is not None or max_workers == 1 or len(batches) < 2:
                reader = _reader(conn, src, arrow)
                try:
                    parts = [_points(reader, b, selection) for b in batches]
                finally:
                    reader.close()
            else:
                parts = _parallel_points(engine, src.label, batches, selection, max_workers)
    except sa.exc.DBAPIError as err:
        reason = str(getattr(err, "orig", err)).strip().splitlines()[0][:200]
        raise SourceError(f"{src.label}: database read failed ({reason})") from None
    finally:
        engine.dispose()
    points = pd.concat(parts, ignore_index=True) if parts else empty_points()
    return exps, runs, points


def _parallel_points(
    engine: sa.Engine, label: str, batches: list[list[str]], selection: Selection, workers: int
) -> list[pd.DataFrame]:
    """Server databases: one read-only connection per worker, batches spread over them."""

    def work(batch: list[str]) -> pd.DataFrame:
        with _connect(engine, label) as conn:
            return _points(_Rows(conn), batch, selection)

    with ThreadPoolExecutor(max_workers=min(workers, 4, len(batches))) as pool:
        return list(pool.map(work, batches))


# ----------------------------------------------------------------------------- client route


def _snapshot(db: Path, dest: Path) -> None:
    """Consistent copy of a live sqlite database, read through a read-only connection."""
    uri = f"file:{urllib.parse.quote(str(db.resolve()))}?mode=ro"
    src = sqlite3.connect(uri, uri=True, timeout=30)
    dst = sqlite3.connect(dest)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _revision_of(src: MlflowSource) -> tuple[str | None, str | None, bool]:
    """(problem, revision, default experiment present) read through the read-only connection."""
    engine = _engine(src)
    try:
        with _connect(engine, src.label) as conn:
            problem, rev = schema_problem(conn)
            e = _T["experiments"].c
            has_default = bool(
                conn.execute(sa.select(e.experiment_id).where(e.experiment_id == 0)).first()
            )
    finally:
        engine.dispose()
    return problem, rev, has_default


def _read_via_client(
    src: MlflowSource, selection: Selection, max_workers: int
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    from saturate.ingest.mlflow_client import read_with_client

    head, known = _mlflow_revisions()
    if src.sqlite_path is None:
        problem, rev, has_default = _revision_of(src)
        if rev != head or not has_default:
            raise SourceError(
                f"{src.label}: MLflow's client would have to migrate or write to this database "
                f"(schema {rev or problem}, installed MLflow expects {head}); use the fast path "
                "or read it through a tracking server of the matching MLflow version"
            )
        return read_with_client(
            client_uri(src), selection, label=src.label, max_workers=max_workers
        )
    with tempfile.TemporaryDirectory(prefix="saturate-mlflow-") as tmp:
        copy = Path(tmp) / "mlflow.db"
        try:
            _snapshot(Path(src.sqlite_path), copy)
        except sqlite3.Error as err:
            raise SourceError(f"{src.label}: cannot read the database ({err})") from None
        snap = MlflowSource("db", f"sqlite:///{copy}", src.label, sqlite_path=copy)
        _problem, rev, _ = _revision_of(snap)
        if rev is not None and rev != head:
            if rev not in known:
                raise SourceError(
                    f"{src.label}: written by a newer MLflow (schema {rev}); upgrade mlflow "
                    "or use the fast path"
                )
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
        except _Unsupported as why:
            warnings.warn(
                f"{src.label}: fast path unavailable ({why}); reading through MlflowClient "
                "on a read-only basis instead (slower)",
                RuntimeWarning,
                stacklevel=3,
            )
    return _read_via_client(src, selection, max_workers)
