"""``wandb://ENTITY/PROJECT`` through the wandb package's public API, against a local server that
answers its GraphQL as W&B does (tests/wandb_server.py): paging, retries, a deadline, a bad key."""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest
from cli_run import run_cli

from saturate.errors import InputError, SettingsError, SourceError
from saturate.table.run_table import run_facts

wandb = pytest.importorskip("wandb")

from wandb_server import WandbServer, remote_run  # noqa: E402

from saturate.ingest.wandb_api import iter_wandb_api  # noqa: E402

KEY = "k3y-that-must-never-show-" + "x" * 24
STEPS = range(0, 250)


def _runs(n: int = 5) -> list[dict]:
    return [remote_run(f"id{i}", f"ppo-{i}", [
        {"_step": s, "_timestamp": 1.8e9 + s, "_runtime": s, "reward": float(1 - np.exp(-s / (40 + 30 * i))),
         "eval": {"acc": s / 500}, "media": {"_type": "image-file", "path": "x.png"}}
        for s in STEPS], config={"lr": float(f"{i + 1}e-6"), "actor": {"clip": 0.2}}, group=f"g{i % 2}",
        tags=("rl", "ppo"), state="running" if i == 4 else "finished") for i in range(n)]


pytestmark = pytest.mark.server  # every test talks to a local W&B GraphQL server


@pytest.fixture(autouse=True, scope="module")
def _stop_wandb_service():
    """The wandb package starts its service process for the API: ended after these tests."""
    yield
    wandb.teardown()


@pytest.fixture
def api_env(monkeypatch):
    def use(server: WandbServer) -> None:
        monkeypatch.setenv("WANDB_BASE_URL", server.url)
        monkeypatch.setenv("WANDB_API_KEY", KEY)
    return use


def test_every_point_of_every_run_read_page_by_page(api_env):
    with WandbServer(_runs()) as server:
        api_env(server)
        parts = list(iter_wandb_api("wandb://team/rl", filter='{"group": "g0"}', per_page=2,
                                    page_size=100, timeout=30))
    assert server.queries["Runs"] == 3  # 5 runs, 2 a page
    assert server.queries["HistoryPage"] == 5 * 3  # 250 rows, 100 a page
    assert server.filters == [{"group": "g0"}] * 3  # sent to the server as given
    assert server.keys == {KEY}
    assert [len(p) for p in parts] == [2 * len(STEPS)] * 5  # reward and eval/acc, every step
    first = parts[0].points
    assert sorted(set(first["metric"])) == ["eval/acc", "reward"]
    assert first["step"].tolist()[: len(STEPS)] == list(STEPS)
    facts = run_facts(parts[4].points, parts[4].runs).iloc[0]
    assert (facts["run_status"], facts["params.lr"], facts["params.actor.clip"],
            facts["params.group"], facts["tags.wandb.tags"]) == ("RUNNING", "5e-06", "0.2", "g0",
                                                                "rl, ppo")


def test_run_and_metric_globs(api_env):
    with WandbServer(_runs(3)) as server:
        api_env(server)
        parts = list(iter_wandb_api("wandb://team/rl", run=["ppo-1", "id2"], metric=["eval/*"],
                                    timeout=30))
    assert [p.points["run"].iloc[0] for p in parts] == ["ppo-1", "ppo-2"]
    assert all(set(p.points["metric"]) == {"eval/acc"} for p in parts)


def test_a_server_that_fails_a_few_times_is_retried(api_env):
    with WandbServer(_runs(2), fault="status", code=503, times=3) as server:
        api_env(server)
        parts = list(iter_wandb_api("wandb://team/rl", timeout=60))
    assert len(parts) == 2 and server.posts > 3


def test_a_server_that_does_not_answer_is_given_up_at_the_deadline(api_env):
    with WandbServer(_runs(1), fault="hang") as server:
        api_env(server)
        started = time.monotonic()
        with pytest.raises(SourceError, match="no answer within 3s"):
            list(iter_wandb_api("wandb://team/rl", timeout=3))
        took = time.monotonic() - started
    assert took < 3 + 5  # the deadline, and a margin for loading the package (a hang is 60 s)


def test_a_server_where_nothing_listens_is_said_at_once(monkeypatch):
    from mlflow_server import free_port

    port = free_port()
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("WANDB_API_KEY", KEY)
    started = time.monotonic()
    with pytest.raises(SourceError) as info:
        list(iter_wandb_api("wandb://team/rl", timeout=30))
    assert str(info.value) == (f"cannot reach the W&B server http://127.0.0.1:{port}: connection "
                               f"refused (nothing listens on 127.0.0.1 port {port})")
    assert time.monotonic() - started < 15  # not the 30 s the wandb package would retry it for


def test_a_bad_uri_and_a_bad_filter(api_env):
    with pytest.raises(SettingsError, match="wandb://ENTITY/PROJECT"):
        list(iter_wandb_api("wandb://team"))
    with WandbServer(_runs(1)) as server:
        api_env(server)
        with pytest.raises(SettingsError, match="JSON run filter"):
            list(iter_wandb_api("wandb://team/rl", filter="params.lr = 1"))
        with pytest.raises(InputError, match="Could not find project other"):
            list(iter_wandb_api("wandb://team/other", timeout=30))
        with pytest.raises(InputError, match=r"--run 'nothing\*' matches no run; runs: ppo-0$"):
            list(iter_wandb_api("wandb://team/rl", run=["nothing*"], timeout=30))


def test_a_selection_that_matches_nothing_names_what_the_project_holds(api_env):
    import saturate

    with WandbServer(_runs(2)) as server:
        api_env(server)
        with pytest.raises(InputError, match=r"--metric 'eval/acuracy' matches no metric \(did "
                           r"you mean 'eval/acc'\?\); metrics: eval/acc, reward$"):
            saturate.load("wandb://team/rl", metric="eval/acuracy", timeout=30)
        with pytest.raises(InputError, match=r"--run 'ppo-11' matches no run \(did you mean "
                           r"'ppo-1'\?\); runs: ppo-0, ppo-1$"):
            saturate.load("wandb://team/rl", run="ppo-11", timeout=30)


def _cli(server: WandbServer | None, *args: str, key: str | None = KEY, home: str = "") -> subprocess.CompletedProcess:
    """``saturate analyze ARGS`` in this process (tests/cli_run.py: exit code and streams as a
    process gives them) with only the W&B variables given: the subject is what the command reads
    and says, not how a process starts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update({"HOME": home or env.get("HOME", ""), "SATURATE_TIMEOUT": "30"})
    if server is not None:
        env["WANDB_BASE_URL"] = server.url
    if key is not None:
        env["WANDB_API_KEY"] = key
    return run_cli("analyze", *args, env=env)


def test_cli_reads_a_project_and_a_bad_key_is_one_error_line(tmp_path):
    with WandbServer(_runs(2)) as server:
        ok = _cli(server, "wandb://team/rl", "--metric", "reward", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert '"run": "ppo-1"' in ok.stdout and KEY not in ok.stdout + ok.stderr
    with WandbServer(_runs(1), fault="bad_key") as server:
        bad = _cli(server, "wandb://team/rl")
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "API key" in lines[0]
    assert KEY not in bad.stdout + bad.stderr and "Traceback" not in bad.stderr
    none = _cli(None, "wandb://team/rl", key=None, home=str(tmp_path))
    assert none.returncode == 2 and none.stderr.startswith("error:") and "WANDB_API_KEY" in none.stderr
