"""``watch`` reads what ``analyze`` reads and never writes to it: a legacy ``mlruns/`` store read
directly (no ``MLFLOW_ALLOW_FILE_STORE``, no ``.trash/`` created), every MLflow store inside a
folder; its first pass is one baseline line; a pass is atomic (a real ``saturate watch`` process
interrupted between storing points and recording the analysis loses nothing and exits 130); a
history file it cannot use is one error line and exit 2."""

from __future__ import annotations

import hashlib
import math
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_run import ctrl_c_as_in_a_terminal
from click.testing import CliRunner

import saturate
from saturate.cli import app
from saturate.tracker import HistoryStore, Watcher, make_poller
from saturate.tracker.watch import PAUSE_ENV
from saturate.vocabulary.roles import split_by_role

ROOT = Path(__file__).resolve().parents[1]
OPTS = ["--n-boot", "20", "--seed", "0"]
runner = CliRunner()


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def _log_file_store(mlruns: Path, steps: range, run_ids: dict | None = None) -> dict:
    """Log two runs into a legacy file store with MLflow itself (which needs the switch)."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    old = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    if run_ids is not None:
        (mlruns / ".trash").mkdir()  # MLflow's cached store expects the folder it made
    try:
        client = MlflowClient(tracking_uri=mlruns.as_uri())
        if run_ids is None:
            exp = client.create_experiment("legacy")
            run_ids = {n: client.create_run(exp, run_name=n).info.run_id for n in ("a", "b")}
        for j, rid in enumerate(run_ids.values()):
            client.log_batch(rid, metrics=[Metric("reward", 1 - math.exp(-s / 20) + 0.01 * j,
                                                  1_700_000_000_000 + s, s) for s in steps])
    finally:
        if old is None:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE")
        else:
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = old
    shutil.rmtree(mlruns / ".trash", ignore_errors=True)  # so that a new one would show
    return run_ids


def test_a_legacy_store_is_read_directly_and_never_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    mlruns = tmp_path / "mlruns"
    ids = _log_file_store(mlruns, range(0, 20))
    before = _digest(mlruns)
    res = runner.invoke(app, ["watch", "mlruns", "--once", *OPTS, "--state", "h.db"])
    assert res.exit_code == 0, res.output
    assert "baseline of 2 curves" in res.stderr and res.stdout == ""
    assert _digest(mlruns) == before and not (mlruns / ".trash").exists()
    with HistoryStore("h.db", readonly=True) as st:
        stored = st.points()
    direct = saturate.load("mlruns").points
    assert len(stored) == len(direct) == 40
    # more points: only they are stored, and the files that did not change are not read again
    _log_file_store(mlruns, range(20, 60), ids)
    with HistoryStore("h.db") as st:
        poller = make_poller("mlruns")
        first = Watcher(poller, st).poll_once()
        assert (first.new_points, first.curves_changed, first.baseline) == (80, 2, False)
        again = Watcher(poller, st).poll_once()
        assert (again.fetched, again.new_points) == (0, 0)
        assert len(st.points()) == 120


def test_every_store_inside_a_folder_is_watched(tmp_path: Path, mlflow_store: Path) -> None:
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    folder = tmp_path / "runs"
    shutil.copytree(ROOT / "sample_runs" / "04_collapse_mlflow", folder / "collapse")
    (folder / "db").mkdir()
    shutil.copyfile(mlflow_store, folder / "db" / "mlflow.db")
    client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'db' / 'mlflow.db'}")
    run = client.create_run(client.create_experiment("db-exp"), run_name="in-db")
    client.log_batch(run.info.run_id, metrics=[Metric("eval/acc", s / 30, 0, s) for s in range(30)])
    shutil.copyfile(ROOT / "sample_runs" / "03_saturated.csv", folder / "03_saturated.csv")
    before = _digest(folder)
    with HistoryStore(tmp_path / "h.db") as st:
        result = Watcher(make_poller(str(folder)), st).poll_once()
    keys = {(c.source, c.run, c.metric) for c in result.analyses}
    read = saturate.load(str(folder)).points  # what analyze reads: the same curves, the same labels
    assert keys == set(zip(read["source"], read["run"], read["metric"], strict=True))
    assert "in-db" in {k[1] for k in keys} and result.baseline
    assert any("collapse" in k[0] for k in keys) and any("mlflow.db" in k[0] for k in keys)
    assert _digest(folder) == before


@pytest.mark.slow
def test_the_first_pass_over_sample_runs_is_one_baseline_line(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "sample_runs", tmp_path / "sample_runs")
    res = runner.invoke(app, ["watch", str(tmp_path / "sample_runs"), "--once", *OPTS,
                              "--state", str(tmp_path / "h.db")])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""  # no event per curve (it used to be 132 lines)
    passes = [ln for ln in res.stderr.splitlines() if "pass 1:" in ln]
    judged, _, _ = split_by_role(saturate.load(str(tmp_path / "sample_runs")).points)
    # every objective curve analyze judges, the mlruns store's too
    n = len(judged[["source", "run_id", "metric"]].drop_duplicates())
    assert len(passes) == 1 and f"baseline of {n} curves" in passes[0]
    with HistoryStore(tmp_path / "h.db", readonly=True) as st:
        assert st.events() == [] and len(st.latest_analyses()) == n


def _curve(n: int, collapse_at: int | None = None) -> pd.DataFrame:
    steps = np.arange(1, n + 1) * 10
    y = 0.8 * (1 - np.exp(-steps / 120)) + np.random.default_rng(3).normal(0, 0.004, n)
    if collapse_at is not None:
        y[collapse_at:] -= 0.6
    return pd.DataFrame({"run": "ppo", "metric": "reward", "step": steps, "value": y})


def _events(state: Path) -> list[tuple]:
    with HistoryStore(state, readonly=True) as st:
        return [(e.kind, e.run, e.metric, e.before, e.after) for e in st.events()]


@pytest.mark.subprocess  # SIGINT to a watcher process between its two writes
def test_an_interrupted_pass_loses_nothing_and_exits_non_zero(tmp_path: Path) -> None:
    data = tmp_path / "runs"
    data.mkdir()
    state, control = tmp_path / "h.db", tmp_path / "control.db"
    _curve(30).to_csv(data / "ppo.csv", index=False)
    args = ["watch", str(data), "--once", *OPTS]
    cmd = [sys.executable, "-m", "saturate", *args]
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    base = runner.invoke(app, [*args, "--state", str(state)])
    assert base.exit_code == 0, base.output
    shutil.copyfile(state, control)
    _curve(60, collapse_at=45).to_csv(data / "ppo.csv", index=False)  # the run collapses
    ref = runner.invoke(app, [*args, "--state", str(control)])  # the same pass, uninterrupted
    assert ref.exit_code == 0, ref.output
    expected = _events(control)
    assert any(kind in ("collapse_detected", "verdict_changed") for kind, *_ in expected)

    marker = tmp_path / "paused"
    proc = subprocess.Popen([*cmd, "--state", str(state)], env={**env, PAUSE_ENV: str(marker)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), "the watcher never reached the pause between its two writes"
        proc.send_signal(signal.SIGINT)  # points stored, analysis not yet recorded
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted during pass 1" in err and "Traceback" not in err and out == ""
    with HistoryStore(state, readonly=True) as st:
        assert len(st.polls()) == 1 and len(st.points()) == 30  # nothing of that pass kept
    again = runner.invoke(app, [*args, "--state", str(state)])
    assert again.exit_code == 0, again.output
    assert _events(state) == expected  # the points were read again, the events reported


def _limited_disk() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))


@pytest.mark.subprocess  # ends with a full disk: a file-size limit in a process of its own
def test_history_file_failures_are_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "runs.csv"
    _curve(30).to_csv(data, index=False)
    args = ["watch", str(data), "--once", *OPTS, "--state"]
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    good = tmp_path / "good.db"
    assert runner.invoke(app, [*args, str(good)]).exit_code == 0
    broken = tmp_path / "broken.db"
    raw = bytearray(good.read_bytes())
    raw[4096:] = b"\xff" * (len(raw) - 4096)  # the pages after the first overwritten
    broken.write_bytes(bytes(raw))
    cases = {
        "/proc/saturate-history.db": "cannot create or open",  # a read-only place
        str(garbage): "not a saturate history file",
        str(broken): "corrupt",
    }
    for state, needle in cases.items():
        res = runner.invoke(app, [*args, state])
        lines = res.stderr.strip().splitlines()
        assert res.exit_code == 2, (state, res.output)
        assert lines[-1].startswith(f"error: --state {state}: ") and needle in lines[-1], lines
    res = runner.invoke(app, ["history", "--state", str(broken)])
    assert res.exit_code == 2 and "corrupt" in res.stderr and len(res.stderr.splitlines()) == 1
    with sqlite3.connect(garbage) as conn, pytest.raises(sqlite3.DatabaseError):
        conn.execute("SELECT 1 FROM sqlite_master").fetchall()  # still garbage: not touched
    # a full disk (a file-size limit in a real process): one line, exit 2, no traceback
    state = tmp_path / "full" / "h.db"
    res = subprocess.run([sys.executable, "-m", "saturate", *args, str(state)],
                         capture_output=True, text=True, timeout=300, preexec_fn=_limited_disk)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: --state {state}: ")
