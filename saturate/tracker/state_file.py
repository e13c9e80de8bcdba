"""Whose file a ``--state`` path is, and who writes it: the history file is saturate's own.

A history file carries a marker, SQLite's ``PRAGMA application_id`` set to :data:`APPLICATION_ID`,
written when saturate creates it. Any other SQLite file (an ``mlflow.db``, a browser's cookies) is
refused before anything is written to it: no table, journal mode or version of someone else's
database is ever changed. A file saturate wrote before the marker existed (its own tables, a
known schema version, no application id) is recognised by its tables and marked.

One writer at a time: a ``watch`` holds an exclusive lock on ``<state>.lock`` (``flock``; the
operating system drops it when the process ends, even by ``kill -9``) that names its holder, so a
second ``watch`` on the same history says who holds it and stops instead of analysing every new
point twice.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import IO

from saturate.errors import InputError

#: ``PRAGMA application_id`` of a saturate history file: the bytes "SATu".
APPLICATION_ID = 0x53415475
# The tables a history file written before the marker holds (all of them).
_OWN_TABLES = frozenset({"meta", "runs", "cursors", "points", "files", "polls", "analyses",
                         "events"})  # fmt: skip


def check_owner(db: sqlite3.Connection, path: Path, schema_version: int) -> bool:
    """Raise :class:`InputError` unless ``db`` is empty or a saturate history file; nothing is
    written. Returns True when the file still needs the marker (new, or written before it)."""
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        raise InputError(f"--state {path}: not a saturate history file ({exc}); it was left "
                         "unchanged") from None
    if app_id == APPLICATION_ID:
        return False
    if app_id == 0 and not tables and version == 0:
        return True
    if app_id == 0 and 0 < version <= schema_version and tables >= _OWN_TABLES:
        return True
    what = f"application id {app_id:#x}" if app_id else (
        f"tables {', '.join(sorted(tables)[:5])}" if tables else f"schema version {version}")
    raise InputError(f"--state {path}: not a saturate history file (an SQLite database with "
                     f"{what}); it was left unchanged; pass --state with a new file path")


def mark(db: sqlite3.Connection) -> None:
    """Write the marker (inside the caller's transaction)."""
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")


class WriterLock:
    """An exclusive lock on ``<state>.lock`` for one writing process, naming its holder."""

    def __init__(self, state: Path) -> None:
        import fcntl

        self.path = state.with_name(state.name + ".lock")
        self._fh: IO[str] | None = None
        try:
            fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        except OSError as exc:
            raise InputError(f"--state {state}: cannot create its lock file {self.path} "
                             f"({exc.strerror or exc})") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip().splitlines()[:1]
            fh.close()
            who = holder[0] if holder else "another process"
            raise InputError(f"--state {state}: another saturate watch writes it ({who}); stop "
                             "it first, or pass a different --state") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime())}\n")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        """Drop the lock (the file stays: removing it could let two writers hold two files)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None
