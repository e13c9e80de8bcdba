"""The tracker against real MLflow: a sqlite store, and a real ``mlflow server`` on 127.0.0.1.

A background process logs a run chunk by chunk while ``watch`` follows it; the server is stopped
(by its pid) and started again on the same port and store; ``--log-back`` writes tags and
artifacts; without it the store stays byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from cli_run import ctrl_c_as_in_a_terminal
from click.testing import CliRunner
from mlflow_server import MlflowServer, _healthy, unique_name  # type: ignore[import-not-found]

from saturate.cli import app
from saturate.tracker import HistoryStore

CHUNKS = (4, 8, 16, 32, 64, 120)
STEPS = np.arange(1, 121) * 10
VALUES = 0.8 * (1 - np.exp(-STEPS / 150)) + np.random.default_rng(1).normal(0, 0.005, STEPS.size)
WATCH_OPTS = ["--n-boot", "20", "--seed", "0"]

LOGGER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import numpy as np
    from mlflow import MlflowClient
    from mlflow.entities import Metric
    url, exp_name, sync = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    chunks = [int(x) for x in sys.argv[4].split(",")]
    steps = np.arange(1, 121) * 10
    values = 0.8 * (1 - np.exp(-steps / 150)) + np.random.default_rng(1).normal(0, 0.005, 120)
    client = MlflowClient(url)
    run = client.create_run(client.create_experiment(exp_name), run_name="ppo-live")
    (sync / "run_id").write_text(run.info.run_id)
    done = 0
    for k, n in enumerate(chunks):
        while not (sync / f"go-{k}").exists():
            time.sleep(0.05)
        for i in range(done, n):  # step by step, as a trainer logs
            client.log_batch(run.info.run_id, metrics=[
                Metric("eval/reward", float(values[i]), int(time.time() * 1000) + i, int(steps[i])),
                Metric("train/kl", float(0.01 * (i + 1)), int(time.time() * 1000) + i, int(steps[i])),
            ])
        done = n
        if k == len(chunks) - 1:
            client.set_terminated(run.info.run_id, "FINISHED")
        (sync / f"done-{k}").write_text("ok")
""")


def _wait(predicate, timeout=60.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _restart(server: MlflowServer) -> MlflowServer:
    """Start ``mlflow server`` again on the same port and backend store."""
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    env.pop("MLFLOW_TRACKING_URI", None)
    cmd = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{server.db}",
           "--artifacts-destination", str(server.artifacts), "--host", "127.0.0.1",
           "--port", str(server.port), "--workers", "1"]
    log = server.log.with_suffix(".restart.log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=server.db.parent, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    new = MlflowServer(server.url, server.port, server.db, server.artifacts, log, proc)
    try:
        _wait(lambda: _healthy(server.url), timeout=90, what="the restarted server")
    except AssertionError:
        new.stop()
        raise
    return new


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for p in files:
            h.update(str(p.relative_to(root.parent)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def http_env(monkeypatch):
    # watch lowers MLflow's HTTP retries via os.environ; keep that inside this test
    for key in ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "MLFLOW_HTTP_REQUEST_TIMEOUT",
                "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR"):
        monkeypatch.setenv(key, os.environ.get(key, {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
                                                     "MLFLOW_HTTP_REQUEST_TIMEOUT": "15"}
                                               .get(key, "1")))


def test_watch_follows_a_live_run_through_a_server_restart(fresh_mlflow_server, tmp_path, http_env):
    server = fresh_mlflow_server
    exp = unique_name("live")
    sync = tmp_path / "sync"
    sync.mkdir()
    state = tmp_path / "history.db"
    logger = subprocess.Popen([sys.executable, "-c", LOGGER, server.url, exp, str(sync),
                               ",".join(map(str, CHUNKS))])
    runner = CliRunner()
    watch = ["watch", server.url, "--experiment", exp, "--metric", "eval/*", "--state",
             str(state), "--format", "json", *WATCH_OPTS]
    printed: list[dict] = []
    restarted = None
    watcher = None
    try:
        _wait(lambda: (sync / "run_id").exists(), what="the logger to create its run")
        run_id = (sync / "run_id").read_text()

        def logged(k: int) -> None:
            (sync / f"go-{k}").write_text("go")
            _wait(lambda: (sync / f"done-{k}").exists(), what=f"chunk {k}")

        # chunks 0-3 by repeated --once passes: each pass is a fresh watcher resuming the state
        for k in range(4):
            logged(k)
            res = runner.invoke(app, [*watch, "--once"])
            assert res.exit_code == 0, res.output
            printed += [json.loads(x) for x in res.stdout.splitlines()]
        with HistoryStore(state, readonly=True) as st:
            polls = st.polls()
        assert [p.new_points for p in polls] == [4, 4, 8, 16]
        # a restart with nothing new logged fetches nothing
        res = runner.invoke(app, [*watch, "--once"])
        assert res.exit_code == 0 and res.stdout == ""
        assert "pass 1: fetched 0 point(s), 0 new" in res.stderr

        # a watcher process follows while the server goes down and comes back on the same port
        err_file = tmp_path / "watch.err"
        with err_file.open("w") as err_sink:
            watcher = subprocess.Popen(
                [sys.executable, "-m", "saturate", *watch, "--interval", "0.3"],
                stdout=subprocess.PIPE, stderr=err_sink, text=True, cwd=tmp_path,
                preexec_fn=ctrl_c_as_in_a_terminal,
            )
        server.stop()
        # the server stays down until the watcher has seen it down (however slow its start)
        _wait(lambda: "source unreachable" in err_file.read_text(), timeout=120,
              what="the watcher to report the server down")
        restarted = _restart(server)
        logged(4)
        logged(5)

        def caught_up() -> bool:
            with HistoryStore(state, readonly=True) as st:
                return any(e.kind == "run_finished" for e in st.events())

        _wait(caught_up, timeout=90, what="the watcher to see the run finish")
        watcher.send_signal(signal.SIGINT)
        out, _ = watcher.communicate(timeout=30)
        err = err_file.read_text()
        assert watcher.returncode == 0, err
        assert "source unreachable" in err and "reachable again" in err
        assert "stopped after" in err
        printed += [json.loads(x) for x in out.splitlines()]
    finally:
        logger.kill()
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
        if restarted is not None:
            restarted.stop()

    # the events arrived in order and the history holds exactly them
    assert all(e["run_id"] == run_id and e["metric"] == "eval/reward" for e in printed)
    changes = [(e["from"], e["to"]) for e in printed if e["event"] == "verdict_changed"]
    assert changes[0][0] == "inconclusive"  # the first pass was the baseline: no event
    assert all(a[1] == b[0] for a, b in zip(changes, changes[1:], strict=False))
    verdicts = [to for _, to in changes]
    pays = [i for i, v in enumerate(verdicts) if v in ("scaling", "slowing")]
    assert pays and pays[0] < verdicts.index("saturated") and verdicts[-1] == "saturated"
    assert printed[-1]["event"] == "run_finished" and printed[-1]["to"] == "FINISHED"
    assert [e["compute"] for e in printed] == sorted(e["compute"] for e in printed)
    with HistoryStore(state, readonly=True) as st:
        assert [e.to_dict() for e in st.events()] == printed
        assert sum(p.new_points for p in st.polls()) == 120  # every point stored exactly once
        assert st.cursors() == {(server.url, run_id, "eval/reward"): 1200}
        assert len(st.points()) == 120


def test_log_back_writes_tags_and_artifacts_only_when_asked(mlflow_server, tmp_path, http_env):
    # The session server: tests in one process run one at a time, so only this test writes to it.
    server = mlflow_server
    client = server.client()
    exp = unique_name("logback")
    exp_id = client.create_experiment(exp)
    from mlflow.entities import Metric

    run_ids = []
    for name, scale in (("a", 0.8), ("b", 0.5)):
        run = client.create_run(exp_id, run_name=name)
        client.log_batch(run.info.run_id, metrics=[
            Metric("eval/reward", float(scale * v), 1000 + i, int(s))
            for i, (s, v) in enumerate(zip(STEPS[:40], VALUES[:40], strict=True))
        ])
        client.set_terminated(run.info.run_id)
        run_ids.append(run.info.run_id)
    runner = CliRunner()
    base = ["watch", server.url, "--experiment", exp, "--once", *WATCH_OPTS]

    before = _digest(server.db, server.artifacts)
    res = runner.invoke(app, [*base, "--state", str(tmp_path / "plain.db")])
    assert res.exit_code == 0, res.output
    assert res.stdout == "" and "baseline of 2 curves" in res.stderr  # the first pass
    assert _digest(server.db, server.artifacts) == before  # nothing written without the flag

    res = runner.invoke(app, [*base, "--state", str(tmp_path / "wb.db"), "--log-back"])
    assert res.exit_code == 0, res.output
    assert "wrote 10 tag(s) and 4 artifact(s) to 2 MLflow run(s)" in res.stderr
    with HistoryStore(tmp_path / "wb.db", readonly=True) as st:
        latest = {c.run_id: c for c in st.latest_analyses()}

    def snapshot():
        out = {}
        for rid in run_ids:
            tags = {k: v for k, v in client.get_run(rid).data.tags.items()
                    if k.startswith("saturate.")}
            files = sorted(f.path for f in client.list_artifacts(rid, "saturate"))
            figs = sorted(f.path for f in client.list_artifacts(rid, "saturate/figures"))
            out[rid] = (tags, files, figs)
        return out

    first = snapshot()
    for rid in run_ids:
        tags, files, figs = first[rid]
        assert set(tags) == {f"saturate.eval/reward.{k}" for k in
                             ("verdict", "p_pays", "gain_per_doubling", "asymptote", "knee")}
        assert tags["saturate.eval/reward.verdict"] == latest[rid].verdict
        p = latest[rid].p_pays
        assert tags["saturate.eval/reward.p_pays"] == ("none" if p is None else f"{p:.6g}")
        assert float(tags["saturate.eval/reward.gain_per_doubling"]) == pytest.approx(
            latest[rid].gain_per_doubling.value, rel=1e-5)
        assert files == ["saturate/figures", "saturate/report.html"]
        assert figs == ["saturate/figures/eval_reward.png"]
    html = Path(client.download_artifacts(run_ids[0], "saturate/report.html", str(tmp_path)))
    assert "<html" in html.read_text()

    # idempotent: running again (through the Python API too) replaces, never duplicates
    import saturate
    from saturate.tracker.writeback import log_back

    result = log_back(saturate.analyze(server.url, experiment=exp, n_boot=20, seed=0))
    assert set(result.runs) == set(run_ids) and result.tags == 10
    assert snapshot() == first
