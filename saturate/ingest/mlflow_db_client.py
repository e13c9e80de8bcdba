"""A database read through MlflowClient (``fast=False``, or a schema the fast path does not know)
without ever touching the user's store.

For sqlite the client runs on a private snapshot (migrated there when older than the installed
MLflow); for a server database only when its schema is already current (MLflow's store would
otherwise migrate it or create rows), and on PostgreSQL in sessions the server keeps read-only.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
import urllib.parse
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
    open_engine,
    schema_problem,
)

__all__ = ["read_via_client"]


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
    engine = open_engine(src)
    try:
        with connect(engine, src.label) as conn:
            problem, rev = schema_problem(conn)
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
