"""A broken or busy MLflow sqlite store, on the fast path and through MLflow's client (``--no-fast``):
one ``error:`` line and exit 2, no third-party traceback or log line, and a deadline (``--timeout``)
on a lock another process holds, never a hang. The store itself is never changed."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import run_cli
from synthetic_store import synthetic_runs, write_store

SAT = [sys.executable, "-m", "saturate"]


@pytest.fixture(scope="module")
def good(mlflow_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("good-store") / "mlflow.db"
    write_store(db, mlflow_template, synthetic_runs(2, 1, 30))
    return db


def _zero(db: Path) -> None:
    db.write_bytes(b"")


def _not_a_number(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE metrics SET value = 'abc' WHERE rowid IN "
                     "(SELECT rowid FROM metrics LIMIT 3)")
        conn.execute("UPDATE latest_metrics SET value = 'abc'")
    conn.close()


def _garbled(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[100:400] = b"\xa5" * 300  # the first page's b-tree header and cells
    db.write_bytes(bytes(data))


def _no_metrics(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE metrics")
    conn.close()


FAULTS = {"empty file": _zero, "a value that is not a number": _not_a_number,
          "a garbled first page": _garbled, "no metrics table": _no_metrics}


def _check_one_line(res: subprocess.CompletedProcess) -> None:
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr and "mlflow.store" not in res.stderr


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("fast", ["--fast", "--no-fast"])
def test_a_broken_store_is_one_error_line(good: Path, tmp_path: Path, fault: str,
                                          fast: str) -> None:
    db = tmp_path / "mlflow.db"
    shutil.copyfile(good, db)
    FAULTS[fault](db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    res = run_cli("analyze", f"sqlite:///{db}", fast, "--n-boot", "10", cwd=tmp_path)
    _check_one_line(res)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db"]


@contextlib.contextmanager
def _locked(db: Path) -> Iterator[None]:
    """``db`` held under an exclusive lock by another process while the block runs."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
         "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(600)", str(db)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.kill()
        holder.wait(timeout=30)


@pytest.mark.subprocess  # another process (a small Python program) holds the lock
@pytest.mark.parametrize("command", [["analyze", "--fast"], ["analyze", "--no-fast"],
                                     ["watch", "--once", "--retries", "0"]])
def test_a_store_locked_by_another_writer_is_given_up_at_the_deadline(good: Path, tmp_path: Path,
                                                                       command: list[str]) -> None:
    db = tmp_path / "mlflow.db"
    shutil.copyfile(good, db)
    with _locked(db):
        started = time.monotonic()
        res = run_cli(command[0], f"sqlite:///{db}", *command[1:], "--timeout", "2",
                      "--n-boot", "10", *(["--state", str(tmp_path / "state.db")]
                                          if command[0] == "watch" else []))
        waited = time.monotonic() - started
    if command[0] == "watch":  # its own first line says what it follows, then the one error
        assert res.stderr.startswith("watch: watching "), res.stderr
        res.stderr = res.stderr.split("\n", 1)[1]
    _check_one_line(res)
    assert "locked" in res.stderr
    assert waited < 200  # the 2 s deadline, not a wait without end (the process was still
    # waiting at 270 s before); generous for a loaded machine's start-up


@pytest.mark.subprocess  # another process holds the lock
def test_watch_waits_on_a_locked_store_for_its_timeout_not_a_fixed_30_s(good: Path,
                                                                       tmp_path: Path) -> None:
    from saturate.errors import SourceError
    from saturate.tracker.poll import make_poller

    db = tmp_path / "mlflow.db"
    shutil.copyfile(good, db)
    poller = make_poller(f"sqlite:///{db}", timeout=1.5)
    with _locked(db):
        started = time.monotonic()
        with pytest.raises(SourceError, match="locked"):
            poller.poll({})
        waited = time.monotonic() - started
    assert waited < 25  # the 1.5 s asked for; the poller waited a fixed 30 s before
