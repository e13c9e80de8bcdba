"""Read-only connections to MLflow's backend databases (sqlite, PostgreSQL, MySQL) and the check
that their tables are laid out as the fast path in :mod:`~saturate.ingest.mlflow_sql` expects.

sqlite is opened with ``mode=ro``; PostgreSQL connections run one read-only REPEATABLE READ
transaction (one snapshot for every query); only SELECTs are issued. Connection failures and
database errors become one-line :class:`~saturate.errors.SourceError`s.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from saturate.errors import InputError, SourceError
from saturate.ingest.mlflow_common import MlflowSource
from saturate.ingest.redaction import redact

__all__ = [
    "REQUIRED", "TABLES", "UnsupportedSchema", "database_url", "client_uri", "open_engine",
    "connect", "checked_connection", "schema_problem", "mlflow_revisions", "CONNECT_TIMEOUT",
]

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


CORE_TABLES = ("experiments", "runs", "metrics")
"""Tables every MLflow database has had: without one it is not a store MLflow's client reads
either (an empty file, another program's database), so there is nothing to fall back to."""


def not_mlflow(why: object) -> bool:
    """Whether an :class:`UnsupportedSchema` reason says a core table is missing."""
    return any(f"table {t!r} is missing" in str(why) for t in CORE_TABLES)


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


def open_engine(src: MlflowSource) -> sa.Engine:
    if src.sqlite_path is not None:
        path = Path(src.sqlite_path).resolve()
        uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"

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
            conn = conn.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
        yield conn
    finally:
        conn.rollback()
        conn.close()


def _reason(err: BaseException) -> str:
    """The first line of a database error, without SQLAlchemy's wrapping or credentials."""
    return redact(str(getattr(err, "orig", err)).strip().splitlines()[0])[:200]


@contextmanager
def checked_connection(src: MlflowSource) -> Iterator[tuple[sa.Engine, sa.Connection]]:
    """(engine, read-only connection) to a database whose schema the fast path reads.

    Raises :class:`UnsupportedSchema` when tables or columns differ; database errors inside the
    block become a one-line SourceError; the engine (and any connection it pooled) is disposed
    at the end.
    """
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


# ----------------------------------------------------------------------------- schema


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
