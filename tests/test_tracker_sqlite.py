"""Polling an MLflow sqlite store read-only: only new points, new runs, filters, status changes."""

from __future__ import annotations

import hashlib

import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric

from saturate.errors import InputError
from saturate.settings import Settings
from saturate.tracker import HistoryStore, Watcher, make_poller
from saturate.tracker.poll import DbPoller


def log(client, run_id, key, steps, scale=1.0):
    client.log_batch(run_id, metrics=[Metric(key, scale * (1 - 0.9 ** (s / 10 + 1)), 1000 + s, s)
                                      for s in steps])


def test_sqlite_poller_fetches_only_new_points_and_never_writes(mlflow_store, tmp_path):
    uri = f"sqlite:///{mlflow_store}"
    client = MlflowClient(uri)
    exp = client.create_experiment("rl")
    a = client.create_run(exp, run_name="ppo", tags={"team": "x"}).info.run_id
    client.log_param(a, "recipe", "cispo")
    log(client, a, "eval/reward", range(0, 100, 10))
    log(client, a, "train/loss", range(0, 100, 10))
    client.log_batch(a, metrics=[Metric("eval/nan", float("nan"), 1, 0)])

    poller = make_poller(uri, metric=["eval/*"])
    assert isinstance(poller, DbPoller)
    with HistoryStore(tmp_path / "h.db") as st:
        w = Watcher(poller, st, Settings.build(n_boot=20))
        first = w.poll_once()
        # eval/nan holds only a NaN: fetched, dropped by the tidy table with a DataWarning
        assert (first.fetched, first.new_points) == (11, 10)
        assert {c.metric for c in first.analyses} == {"eval/reward"}
        table = st.points()
        assert table["params.recipe"].unique().tolist() == ["cispo"]
        assert table["tags.team"].unique().tolist() == ["x"]

        before = hashlib.sha256(mlflow_store.read_bytes()).hexdigest()
        assert w.poll_once().fetched == 0
        assert hashlib.sha256(mlflow_store.read_bytes()).hexdigest() == before

        log(client, a, "eval/reward", range(100, 130, 10))
        b = client.create_run(exp, run_name="sac").info.run_id
        log(client, b, "eval/reward", range(0, 80, 10), scale=0.5)
        third = w.poll_once()
        assert (third.fetched, third.new_points) == (3 + 8, 3 + 8)
        assert sorted(c.run for c in third.analyses) == ["ppo", "sac"]

        client.set_terminated(b, "FINISHED")  # no new point, only the status changes
        fourth = w.poll_once()
        assert fourth.fetched == 0
        assert [(e.kind, e.run, e.after) for e in fourth.events] == [
            ("run_finished", "sac", "FINISHED")]
        assert st.cursors()[(poller.label, a, "eval/reward")] == 120


def test_sqlite_poller_applies_the_mlflow_filter_and_experiment(mlflow_store, tmp_path):
    uri = f"sqlite:///{mlflow_store}"
    client = MlflowClient(uri)
    exp = client.create_experiment("rl")
    other = client.create_experiment("other")
    for name, recipe, e in (("a", "cispo", exp), ("b", "grpo", exp), ("c", "cispo", other)):
        rid = client.create_run(e, run_name=name).info.run_id
        client.log_param(rid, "recipe", recipe)
        log(client, rid, "eval/reward", range(0, 50, 10))
    poller = make_poller(uri, experiment="rl", filter="params.recipe = 'cispo'")
    result = poller.poll({}, {})
    assert result.points["run"].unique().tolist() == ["a"]
    assert [r.run for r in result.runs] == ["a"]
    with pytest.raises(InputError, match=r"--experiment 'nope' matches no experiment; active "
                       r"experiments: Default, other, rl$"):
        make_poller(uri, experiment="nope").poll({}, {})
    with pytest.raises(InputError, match="--filter"):
        make_poller(uri, filter="params.recipe ===")
