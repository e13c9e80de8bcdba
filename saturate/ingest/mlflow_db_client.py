"""A database read through MlflowClient (``fast=False``, or a schema the fast path does not know)
without ever touching the user's store.

For sqlite the client runs on a private snapshot (migrated there when older than the installed
MLflow); for a server database only when its schema is already current (MLflow's store would
otherwise migrate it or create rows), and on PostgreSQL in sessions the server keeps read-only.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import sqlalchemy as sa

from saturate.errors import SourceError
from saturate.ingest.mlflow_client import read_with_client
from saturate.ingest.mlflow_common import Experiment, MlflowSource, RunMeta, Selection
from saturate.ingest.mlflow_db import (
    TABLES,
    client_uri,
    connect,
    mlflow_revisions,
    not_mlflow,
    open_engine,
    schema_problem,
)

__all__ = ["read_via_client"]


def _snapshot(db: Path, dest: Path, timeout: float) -> None:
    """Consistent copy of a live sqlite database, read through a read-only connection; a lock
    another process holds longer than ``timeout`` seconds is a :class:`SourceError` (sqlite's
    backup otherwise retries a busy database forever)."""
    uri = f"file:{urllib.parse.quote(str(db.resolve()))}?mode=ro"
    src = sqlite3.connect(uri, uri=True, timeout=timeout)
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
    """MLflow's and alembic's log lines (``Creating initial MLflow database tables``, caught
    SQLAlchemy errors with their tracebacks) kept off stderr: saturate says one line itself."""
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
            has_default = bool(
                conn.execute(sa.select(e.experiment_id).where(e.experiment_id == 0)).first()
            )
    finally:
        engine.dispose()
    return problem, rev, has_default


def read_via_client(
    src: MlflowSource, selection: Selection, max_workers: int
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
        return read_with_client(
            client_uri(src), selection, label=src.label, max_workers=max_workers
        )
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
