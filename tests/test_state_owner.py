"""The watch history and its lock are owned (issue 40, item 2): a ``<state>.lock`` that is not
saturate's (other text, a symbolic link, a FIFO) is refused unchanged and never followed; a
database holding anything that is not saturate's history (only a view) is refused as a state; a
read-only copy of a history is read, read-only; each error names its cause. The commands run
as a user runs them (the CLI, real SQLite files, real links and FIFOs)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
SAT = [sys.executable, "-m", "saturate"]


def _watch(state: Path, *extra: object):
    return run_cli("watch", DATA, "--once", "--n-boot", "5", "--state", state, *extra)


def _says(stderr: str, tail: str) -> None:
    """One error line about the --state, ending with ``tail`` (the paths in it may be shortened
    in the middle to fit a line, as every name in a message is)."""
    assert stderr.startswith("error: --state ") and stderr.endswith(tail), stderr
    assert stderr.count("\n") == 1, stderr


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_lock_file_that_is_someone_elses_is_left_unchanged(tmp_path: Path) -> None:
    lock = tmp_path / "notes.db.lock"
    lock.write_text("my notes: do not overwrite\n")
    res = _watch(tmp_path / "notes.db")
    assert res.returncode == 2
    _says(res.stderr, "notes.db.lock is not saturate's lock file (it holds other text); it was "
          "left unchanged; move it away or pass a different --state\n")
    assert lock.read_text() == "my notes: do not overwrite\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db.lock"]  # no history made


@pytest.mark.parametrize("leads_to", ["a file", "nothing"])
def test_a_lock_file_that_is_a_link_is_never_followed(tmp_path: Path, leads_to: str) -> None:
    victim = tmp_path / "elsewhere" / "victim.txt"
    victim.parent.mkdir()
    if leads_to == "a file":
        victim.write_text("someone's file\n")
    lock = tmp_path / "notes.db.lock"
    lock.symlink_to(victim)
    res = _watch(tmp_path / "notes.db")
    assert res.returncode == 2
    _says(res.stderr, "notes.db.lock is a symbolic link, which saturate never follows; it was "
          "left unchanged; remove it or pass a different --state\n")
    assert lock.is_symlink()
    if leads_to == "a file":
        assert victim.read_text() == "someone's file\n"
    else:
        assert not victim.exists()
    assert not (tmp_path / "notes.db").exists()


@pytest.mark.subprocess  # a FIFO opened to wait on would hang: the timeout is what fails
def test_a_lock_file_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    lock = tmp_path / "notes.db.lock"
    os.mkfifo(lock)
    res = subprocess.run([*SAT, "watch", str(DATA), "--once", "--n-boot", "5", "--state",
                          str(tmp_path / "notes.db")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    _says(res.stderr, "notes.db.lock is not a regular file (a FIFO); it was left unchanged; "
          "remove it or pass a different --state\n")
    assert lock.is_fifo()


def test_saturates_own_lock_is_taken_again(tmp_path: Path) -> None:
    state = tmp_path / "h.db"
    assert _watch(state).returncode == 0
    first = (tmp_path / "h.db.lock").read_text()
    assert first.startswith(f"pid {os.getpid()} on ")
    res = _watch(state)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "h.db.lock").read_text().startswith("pid ")


def test_a_database_holding_only_a_view_is_not_a_new_state(tmp_path: Path) -> None:
    db = tmp_path / "views.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE VIEW answers AS SELECT 42 AS answer")
        conn.commit()
    before = _digest(db)
    res = _watch(db)
    assert res.returncode == 2
    _says(res.stderr, "views.db: not a saturate history file (an SQLite database with view "
          "answers); it was left unchanged; pass --state with a new file path\n")
    assert _digest(db) == before
    with contextlib.closing(sqlite3.connect(db)) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert names == ["answers"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["views.db"]


@pytest.mark.subprocess  # SQLite opening a FIFO would wait for a writer: the timeout fails
def test_a_state_that_is_a_fifo_is_not_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "h.db"
    os.mkfifo(fifo)
    for command in (["watch", str(DATA), "--once"], ["history"]):
        res = subprocess.run([*SAT, *command, "--state", str(fifo)], capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 2
        _says(res.stderr, f"{fifo.name}: not a file (a FIFO)\n")
        assert fifo.is_fifo()


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """``path`` and its folder made unwritable for this process (a read-only copy, mount or
    archive: SQLite cannot make the shared-memory file of the write-ahead log beside it):
    immutable when run as root, whom permission bits do not stop, else without write
    permission."""
    both = [str(path), str(path.parent)]
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(
                ["chattr", "+i", *both], capture_output=True).returncode != 0:
            subprocess.run(["chattr", "-i", *both], capture_output=True)
            pytest.skip("root, and this file system has no immutable files (chattr +i)")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", *both], check=True)
        return
    path.chmod(0o444)
    path.parent.chmod(0o555)
    try:
        yield
    finally:
        path.parent.chmod(0o755)
        path.chmod(0o644)


def test_a_read_only_copy_of_a_history_is_read_read_only(tmp_path: Path) -> None:
    state = tmp_path / "live" / "h.db"
    assert _watch(state).returncode == 0
    assert _watch(state).returncode == 0  # a second pass: the history has two polls
    copy = tmp_path / "copy" / "h.db"
    copy.parent.mkdir()
    with contextlib.closing(sqlite3.connect(state)) as conn:  # a copy as a backup makes it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute(f"VACUUM INTO '{copy}'")
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")  # as the history is kept
    before = _digest(copy)
    with _read_only(copy):
        res = run_cli("history", "--state", copy, "--all", "--format", "json")
        assert res.returncode == 0, res.stderr
        assert '"state"' in res.stdout and '"current"' in res.stdout
        # writing to it is refused with its cause, not as "not a saturate history file"
        res = _watch(copy)
        assert res.returncode == 2
        assert res.stderr.startswith(f"error: --state {copy}: "), res.stderr
        assert "read-only" in res.stderr or "is the folder writable?" in res.stderr, res.stderr
        assert "not a saturate history" not in res.stderr and res.stderr.count("\n") == 1
    assert _digest(copy) == before
    assert sorted(p.name for p in copy.parent.iterdir()) == ["h.db"]
