"""Nothing the user owns is touched: a state file that is someone else's database is refused
unchanged, one watch writes a history at a time, and report outputs never destroy what they
point at (links, pipes, terminals, the inputs themselves, temporary files of a killed run)."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from cli_run import run_cli

from saturate.errors import InputError
from saturate.report.output import write_atomic
from saturate.tracker.state import HistoryStore

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
SAT = [sys.executable, "-m", "saturate"]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``saturate ARGS`` in this process (the process itself is not what these tests are about)."""
    return run_cli(*args, cwd=cwd)


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


# ---------------------------------------------------------------------------------- state files


def test_an_mlflow_database_as_state_is_refused_and_left_unchanged(mlflow_store: Path,
                                                                    tmp_path: Path) -> None:
    before = _digest(mlflow_store.parent)
    with pytest.raises(InputError, match="not a saturate history file.*left unchanged"):
        HistoryStore(mlflow_store)
    res = _run("watch", str(DATA), "--once", "--state", str(mlflow_store), cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr.count("error:") == 1 and "Traceback" not in res.stderr
    assert "not a saturate history file" in res.stderr
    assert _digest(mlflow_store.parent) == before  # no table, journal, lock or version added
    with pytest.raises(InputError, match="not a saturate history file"):
        HistoryStore(mlflow_store, readonly=True)


def test_any_foreign_sqlite_file_is_refused_unchanged(tmp_path: Path) -> None:
    for name, sql in (("cookies.db", "CREATE TABLE cookies (host, value)"),
                      ("versioned.db", "PRAGMA user_version = 1"),
                      ("other_app.db", "PRAGMA application_id = 1234")):
        path = tmp_path / name
        with sqlite3.connect(path) as conn:
            conn.execute(sql)
        conn.close()
        before = path.read_bytes()
        with pytest.raises(InputError, match="not a saturate history file"):
            HistoryStore(path)
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(name)) == [name]


def test_a_new_history_carries_the_marker_and_an_old_one_gets_it(tmp_path: Path) -> None:
    from saturate.tracker.state import APPLICATION_ID

    new = tmp_path / "h.db"
    HistoryStore(new).close()
    with sqlite3.connect(new) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()
    # a history written before the marker existed: saturate's tables, no application id
    old = tmp_path / "old.db"
    HistoryStore(old).close()
    with sqlite3.connect(old) as conn:
        conn.execute("PRAGMA application_id = 0")
        conn.execute("INSERT INTO meta (key, value) VALUES ('kept', 'yes')")
    conn.close()
    with HistoryStore(old) as st:
        assert st.get_meta("kept") == "yes"
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_a_second_writer_is_told_who_holds_the_history(tmp_path: Path) -> None:
    state = tmp_path / "h.db"
    with HistoryStore(state), pytest.raises(InputError, match=rf"pid {os.getpid()} on "):
        HistoryStore(state)
    with HistoryStore(state, readonly=True):  # readers (history, timeline) never wait
        pass
    HistoryStore(state).close()  # released


@pytest.mark.subprocess  # the first watch is another process holding the lock
def test_a_second_watch_on_one_state_stops_and_names_the_first(tmp_path: Path) -> None:
    state = tmp_path / "h.db"
    first = subprocess.Popen([*SAT, "watch", str(DATA), "--state", str(state), "--interval", "60",
                              "--format", "json"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        line = first.stderr.readline()  # "watch: watching ... (state ...)": the lock is held
        assert "watching" in line, line
        res = _run("watch", str(DATA), "--once", "--state", str(state), cwd=tmp_path)
        assert res.returncode == 2, res.stderr
        assert f"another saturate watch writes it (pid {first.pid} on " in res.stderr
        assert res.stderr.count("\n") == 1
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=120)  # a watcher that outlives the signal fails, never hangs
        assert first.returncode in (0, 130)  # between passes a clean stop, as Ctrl-C
    res = _run("watch", str(DATA), "--once", "--state", str(state), cwd=tmp_path)
    assert res.returncode == 0, res.stderr  # the lock went with the first watcher


# ---------------------------------------------------------------------------------- outputs


def test_a_symlink_output_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "reports" / "latest.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(real)
    write_atomic(link, "new report")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new report"
    assert sorted(p.name for p in real.parent.iterdir()) == ["latest.json"]


def test_a_named_pipe_is_written_into_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    res = _run("analyze", str(DATA), "--n-boot", "20", "--format", "json", "--out", str(fifo),
               cwd=tmp_path)
    reader.join(timeout=60)
    assert res.returncode == 0, res.stderr
    assert fifo.is_fifo()
    assert got and got[0].startswith(b"{") and b'"curves"' in got[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


def test_a_terminal_is_written_into_not_replaced() -> None:
    master, slave = os.openpty()
    try:
        name = os.ttyname(slave)
        write_atomic(name, "to the terminal\n", what="--junit")
        assert os.read(master, 100).startswith(b"to the terminal")
        assert Path(name).is_char_device()
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_node_is_written_into_not_replaced(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | 0o020000, os.makedev(1, 3))  # a copy of /dev/null
    write_atomic(null, "discarded", what="--plot")
    assert null.is_char_device()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path: Path) -> None:
    data = tmp_path / "mydata.csv"
    data.write_bytes(DATA.read_bytes())
    link = tmp_path / "alias.csv"
    link.symlink_to(data)
    cases = [
        ("analyze", str(data), "--out", str(data)),
        ("analyze", str(data), "--format", "json", "--out", str(link)),
        ("gate", str(link), "--junit", str(data)),
        ("compare", str(data), "--group-by", "seed", "--out", str(data)),
    ]
    for args in cases:
        res = _run(*args, cwd=tmp_path)
        assert res.returncode == 2, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and "would replace it" in res.stderr, res.stderr
        assert data.read_bytes() == DATA.read_bytes()
        assert link.is_symlink()


def test_leftovers_of_a_killed_write_are_removed_by_the_next(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = gone.pid  # a process that has ended
    stale = tmp_path / f".report.html.p{dead}.k2j4h5g6.tmp"
    legacy = tmp_path / ".report.html.a1b2c3d4.tmp"  # an older saturate's name, an hour old
    mine = tmp_path / f".report.html.p{os.getpid()}.zzzzzzzz.tmp"  # a live writer's: kept
    other = tmp_path / ".notes.txt.a1b2c3d4.tmp"  # another file's: kept
    for p in (stale, legacy, mine, other):
        p.write_text("half a report")
    hour_ago = time.time() - 3600
    os.utime(legacy, (hour_ago, hour_ago))
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["report.html", mine.name, other.name])


@pytest.mark.subprocess
def test_sigterm_during_a_run_leaves_no_temporary_file_and_exits_143(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("previous report")
    # 1,000 bootstrap draws a fit: the pool's work outlasts the wait below on a loaded machine
    proc = subprocess.Popen([*SAT, "analyze", str(ROOT / "sample_runs"), "--workers", "2",
                             "--n-boot", "1000", "--format", "html", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 240
    while not psutil.Process(proc.pid).children() and time.monotonic() < deadline:
        time.sleep(0.2)  # until the pool of workers runs: the analysis is under way
    time.sleep(1)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.strip() == "terminated"  # no traceback, no joblib/loky warning
    assert out.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


@pytest.mark.subprocess  # /dev/stdout is the process's own file descriptor 1
def test_out_dev_stdout_writes_into_the_pipe(tmp_path: Path) -> None:
    """``--out /dev/stdout`` (a link to the process's own pipe) is written into, never replaced."""
    res = subprocess.run([*SAT, "analyze", str(DATA), "--n-boot", "10", "--format", "json", "--out", "/dev/stdout"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("{") and '"curves"' in res.stdout
    assert Path("/dev/stdout").is_symlink()
