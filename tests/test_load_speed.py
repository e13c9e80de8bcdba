"""Loading a long table is vectorised: the shape of the shared rl_trained_agents evaluation
curves (43k rows x 4 metrics = 172k points, 192 curves whose run name ``1`` repeats across
``algo`` and ``env``), generated here so the test runs in any clone, loads to the table the
row-wise labels of the first version gave. How fast, as a ratio to ``pandas.read_csv`` timed in
the same run, is ``benchmarks/bench_load.py``'s to print, never a timed assertion here (on a
shared 2-core machine the ratio swings with the load: it once read 5.01 against a 5.0 bound).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import saturate

ALGOS = ("a2c", "ars", "ddpg", "dqn", "her", "ppo", "qrdqn", "sac", "td3", "tqc", "trpo", "crossq")
ENVS = tuple(f"Env{i}-v1" for i in range(16))


def eval_curves_csv(path: Path, *, curves: int = 192, seed: int = 0) -> Path:
    """A CSV shaped like ``rl_trained_agents/eval_curves_long.csv``: ``algo, env, run,
    timestep`` and four numeric columns, run ``1`` of every (algo, env)."""
    rng = np.random.default_rng(seed)
    pairs = [(a, e) for a in ALGOS for e in ENVS][:curves]
    lengths = rng.integers(2, 450, len(pairs))
    frames = []
    for (algo, env), n in zip(pairs, lengths, strict=True):
        t = np.arange(1, n + 1) * 10_000
        ret = 100 * (1 - np.exp(-t / t[-1] * 3)) + rng.normal(0, 5, n)
        frames.append(pd.DataFrame({
            "algo": algo, "env": env, "run": 1, "timestep": t, "mean_return": ret.round(3),
            "std_return": rng.gamma(2, 3, n).round(4), "n_episodes": 10,
            "mean_ep_len": rng.integers(50, 1000, n) + 0.5,
        }))
    pd.concat(frames, ignore_index=True).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def eval_curves(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return eval_curves_csv(tmp_path_factory.mktemp("load_speed") / "eval_curves_long.csv")


def test_the_generated_file_has_the_shape_of_the_real_one(eval_curves: Path) -> None:
    df = saturate.load(eval_curves)
    facts = df.runs
    assert len(df) == 4 * len(pd.read_csv(eval_curves)) > 150_000
    assert df.points.groupby(["run_id", "metric"]).ngroups == 192 * 4
    assert len(facts) == 192 and {"params.algo", "params.env"} <= set(facts.columns)
    assert "1 (algo=a2c, env=Env0-v1)" in set(df.points["run"])


def _row_wise_labels(df: pd.DataFrame, varying: list[str]) -> list[object]:
    """The run names as the loader built them one row at a time (the reference)."""
    label = df[varying].astype(str).apply(
        lambda row: ", ".join(f"{k[len('params.'):]}={v}" for k, v in row.items()), axis=1)
    return (df["run"].astype(str) + " (" + label + ")").tolist()


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_run_names_are_those_the_row_wise_labels_gave(tmp_path: Path, layout: str) -> None:
    algo = ["ppo", "ppo", "sac", "sac", None, None, "ppo", "ppo"]
    lr = [1e-3, 1e-3, 1e-3, 1e-3, 3e-4, 3e-4, np.nan, np.nan]
    src = pd.DataFrame({"run": ["1", "1", "1", "1", "1", "1", "2", "2"], "algo": algo,
                        "lr_text": [f"lr{v}" for v in lr], "step": [0, 1] * 4,
                        "reward": np.arange(8.0)})
    if layout == "long":
        src = src.rename(columns={"reward": "value"}).assign(metric="reward")
    path = tmp_path / "runs.csv"
    src.to_csv(path, index=False)
    raw = pd.read_csv(path).rename(columns={"algo": "params.algo", "lr_text": "params.lr_text"})
    expected = sorted(set(_row_wise_labels(raw, ["params.algo", "params.lr_text"])))
    df = saturate.load(path).points
    assert sorted(df["run"].unique()) == expected
    assert "1 (algo=nan, lr_text=lr0.0003)" in expected  # a missing parameter reads "nan"
    assert df.groupby("run")["step"].size().tolist() == [2, 2, 2, 2]
