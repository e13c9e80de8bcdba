"""One store through every command: each curve gets the same verdict, gain per doubling and
P(pays) from ``analyze``, ``gate``, ``watch``, ``timeline``, ``compare``, ``allocate``, a suite and
the Python API, because they all go through one verdict path (:func:`saturate.api.analyze_read`).

The store is two CSV files as a team logs them: three seeds of one recipe (pooled with each other,
so a command that re-analysed a run alone would give it another call) and a lone run of another
recipe, each with an objective and a GPU-hours metric. Every command runs in this process through
the CLI runner, with the same ``--min-gain``.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import saturate
from saturate.cli import app
from saturate.tracker import HistoryStore

FLAGS = ["--min-gain", "2%", "--n-boot", "30"]
STEPS = np.arange(1, 41) * 25


def _run(name: str, recipe: str, seed: int, metrics: dict[str, np.ndarray]) -> pd.DataFrame:
    return pd.concat([
        pd.DataFrame({"run": name, "metric": m, "step": STEPS, "compute": STEPS * 8.0,
                      "value": v, "seed": seed, "recipe": recipe,
                      "timestamp": 1.7e9 + 36.0 * STEPS})
        for m, v in {**metrics, "gpu_hours": STEPS * 0.02}.items()
    ])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    rng = np.random.default_rng(3)
    folder = tmp_path_factory.mktemp("one-path") / "runs"
    folder.mkdir()
    seeds = []
    for seed in range(3):
        acc = 0.2 + 0.5 * (1 - np.exp(-STEPS / rng.uniform(200, 300)))
        reward = 0.1 + 0.04 * np.log(STEPS)
        seeds.append(_run(f"grpo-seed{seed}", "grpo", seed, {
            "eval/accuracy": acc + rng.normal(0, 0.01, STEPS.size),
            "train/reward": reward + rng.normal(0, 0.01, STEPS.size)}))
    pd.concat(seeds).to_csv(folder / "grpo.csv", index=False)
    lone = 0.1 + 0.05 * np.log(STEPS) + rng.normal(0, 0.01, STEPS.size)
    _run("ppo-a", "ppo", 0, {"eval/accuracy": lone}).to_csv(folder / "ppo.csv", index=False)
    return folder


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, [*map(str, args)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _calls(curves) -> dict[tuple[str, str], tuple[str, float, float | None]]:
    """(run, metric) -> (verdict, gain per doubling, P(pays)) of CurveAnalysis objects."""
    return {(c.run, c.metric): (c.verdict, c.gain_per_doubling.value, c.p_pays) for c in curves}


def _json_calls(entries) -> dict[tuple[str, str], tuple[str, float, float | None]]:
    return {(e["run"], e["metric"]): (e["verdict"], e["gain_per_doubling"]["value"], e["p_pays"])
            for e in entries}


@pytest.fixture(scope="module")
def reference(store):
    """``saturate analyze --format json``: the calls every other command must repeat."""
    doc = json.loads(_cli("analyze", store, *FLAGS, "--format", "json"))
    calls = _json_calls(doc["curves"])
    assert len(calls) == 7 and all(p is not None for _, _, p in calls.values())
    return calls


def test_the_store_pools_seeds_so_a_lone_analysis_would_differ(store, reference):
    """The test has teeth: a seed analysed without its siblings gets another call."""
    alone = saturate.analyze(str(store), run="grpo-seed1", min_gain="2%", n_boot=30, workers=1,
                             diagnostics=False)
    key = ("grpo-seed1", "eval/accuracy")
    assert _calls(alone.curves)[key] != reference[key]
    pooled = next(c for c in alone.curves if c.metric == "eval/accuracy")
    assert not any("pooled with its group" in r for r in pooled.reasons)


def test_the_python_api_gives_the_same_calls(store, reference):
    a = saturate.analyze(str(store), min_gain="2%", n_boot=30, workers=1)
    assert _calls(a.curves) == reference
    assert a.to_frame().set_index(["run", "metric"])["p_pays"].to_dict() == {
        k: p for k, (_, _, p) in reference.items()}


def test_gate_gives_the_same_calls(store, reference):
    """Failing on every verdict, the gate prints each curve's verdict and P(pays)."""
    out = _cli("gate", store, *FLAGS, "--fail-on", "scaling,slowing,inconclusive")
    lines = re.findall(r"FAIL (\S+) / (\S+): (\w+) at P\(pays\) ([\d.]+):", out)
    assert {(r, m): (v, p) for r, m, v, p in lines} == {
        k: (v, f"{p:.2f}") for k, (v, _, p) in reference.items()}


def test_watch_records_the_same_calls(store, reference, tmp_path):
    state = tmp_path / "history.db"
    _cli("watch", store, *FLAGS, "--once", "--state", state, "--format", "json")
    with HistoryStore(state, readonly=True) as st:
        recorded = _calls(st.latest_analyses())
    assert recorded == reference


def test_watch_keeps_the_calls_as_one_seed_grows(store, tmp_path):
    """Only one seed gets new points: watch re-analyses it with its siblings (and records the
    siblings whose call moved), so every curve still has the call analyze gives the store."""
    folder = tmp_path / "runs"
    folder.mkdir()
    grpo = pd.read_csv(store / "grpo.csv")
    grpo[(grpo["run"] != "grpo-seed1") | (grpo["step"] <= 600)].to_csv(folder / "grpo.csv",
                                                                      index=False)
    state = tmp_path / "history.db"
    _cli("watch", folder, *FLAGS, "--once", "--state", state)
    grpo.to_csv(folder / "grpo.csv", index=False)  # seed 1 catches up
    _cli("watch", folder, *FLAGS, "--once", "--state", state)
    with HistoryStore(state, readonly=True) as st:
        recorded = _calls(st.latest_analyses())
        assert {a.run for a in st.latest_analyses()} == {f"grpo-seed{i}" for i in range(3)}
    doc = json.loads(_cli("analyze", folder, *FLAGS, "--format", "json"))
    assert recorded == _json_calls(doc["curves"])


@pytest.mark.parametrize("run", ["grpo-seed1", "ppo-a"])
def test_timeline_ends_on_the_same_call(store, reference, tmp_path, run):
    """The last point of a re-fitted timeline is the whole curve, pooled as analyze pools it."""
    out = _cli("timeline", store, *FLAGS, "--run", run, "--metric", "eval/accuracy",
               "--points", "2", "--from", "refit", "--state", tmp_path / "none.db",
               "--format", "json")
    last = json.loads(out)["points"][-1]
    assert (last["verdict"], last["gain_per_doubling"]["value"], last["p_pays"]) == \
        reference[run, "eval/accuracy"]


def test_gpu_hours_from_wall_time_are_the_same_axis_everywhere(store, tmp_path):
    """``--gpus``: analyze, watch and timeline put the same curves on the same GPU-hours."""
    gpus = [*FLAGS, "--gpus", "8", "--metric", "eval/*"]
    doc = json.loads(_cli("analyze", store, *gpus, "--format", "json"))
    assert doc["axis"]["unit"] == "GPU-hours"
    calls = {(e["run"], e["metric"]): (e["compute_last"], *v)
             for e, v in zip(doc["curves"], _json_calls(doc["curves"]).values(), strict=True)}
    state = tmp_path / "history.db"
    _cli("watch", store, *gpus, "--once", "--state", state)
    with HistoryStore(state, readonly=True) as st:
        assert {(c.run, c.metric): (c.compute_last, *v) for c, v in zip(
            st.latest_analyses(), _calls(st.latest_analyses()).values(), strict=True)} == calls
    out = _cli("timeline", store, *FLAGS, "--gpus", "8", "--run", "grpo-seed0", "--metric",
               "eval/accuracy", "--points", "2", "--from", "refit", "--state", state.with_name(
                   "none.db"), "--format", "json")
    last = json.loads(out)["points"][-1]
    assert (last["compute"], last["verdict"], last["gain_per_doubling"]["value"],
            last["p_pays"]) == calls["grpo-seed0", "eval/accuracy"]


def test_a_suite_leaves_the_curves_calls_alone(store, reference):
    doc = json.loads(_cli("analyze", store, *FLAGS, "--suite", "metric", "--group-by", "recipe",
                          "--metric", "eval/*", "--metric", "train/*", "--format", "json"))
    assert _json_calls(doc["curves"]) == reference
    for g in doc["suite"]["groups"]:
        assert g["p_pays"] == g["analysis"]["p_pays"]


def test_allocate_carries_the_same_p_pays(store, reference):
    doc = json.loads(_cli("allocate", store, *FLAGS, "--budget", "100", "--gpu-hours",
                          "gpu_hours", "--metric", "eval/*", "--format", "json"))
    assert doc["choices"]
    for c in doc["choices"]:
        assert c["p_pays"] == reference[c["run"], c["metric"]][2]


def test_compare_carries_the_calls_of_the_pooled_recipes(store):
    """Recipes are seeds averaged (--group-by): compare says what analyze --group-by says."""
    doc = json.loads(_cli("compare", store, *FLAGS, "--group-by", "recipe", "--metric",
                          "eval/*", "--format", "json"))
    pooled = json.loads(_cli("analyze", store, *FLAGS, "--group-by", "recipe", "--metric",
                             "eval/*", "--format", "json"))
    by_run = {e["run_id"]: (e["verdict"], e["p_pays"]) for e in pooled["curves"]}
    recipes = [r for c in doc["comparisons"] for r in c["recipes"]]
    assert len(recipes) == 2
    for r in recipes:
        assert (r["verdict"], r["p_pays"]) == by_run[r["run_id"]]
