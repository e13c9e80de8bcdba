"""Suites on synthetic curves with known answers and on the sample scenario: verdicts as the
generator says, missing seeds, different compute grids, a single task, normalisation, bad input."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import trim_mean

import saturate
from saturate.analysis import AnalysisSettings
from saturate.suites import SuiteAnalysis, analyze_suite, iqm, task_mean
from saturate.table.curves import tidy

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_runs" / "11_agent_suite.csv"
FAST = {"n_boot": 200, "settings": AnalysisSettings(n_boot=50), "per_task": False}


def suite_table(curves: dict[tuple[str, str, int], tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
    """A tidy table from ``{(task, group, seed): (compute, value)}``."""
    parts = []
    for (task, group, seed), (c, y) in curves.items():
        run = f"{group}-{task}-s{seed}"
        parts.append(pd.DataFrame({
            "run_id": run, "run": run, "metric": "score", "step": np.arange(1, len(c) + 1),
            "compute": c, "value": y, "params.task": task, "params.agent": group,
            "params.seed": seed,
        }))
    return tidy(pd.concat(parts, ignore_index=True))


def log_line(a: float, b: float, c: np.ndarray) -> np.ndarray:
    return a + b * np.log2(c)


# ---------------------------------------------------------------------------------------------
# Statistics


def test_iqm_is_scipy_trim_mean_of_the_present_entries():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 23))
    x[rng.random(x.shape) < 0.3] = np.nan
    got = iqm(x)
    want = [trim_mean(r[np.isfinite(r)], 0.25) if np.isfinite(r).any() else np.nan for r in x]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.isnan(iqm(np.full((1, 4), np.nan)))[0]


def test_task_mean_weighs_every_task_equally():
    x = np.array([[[1.0, 3.0, np.nan], [10.0, 10.0, 10.0]]])  # 1 point, 2 tasks, up to 3 seeds
    assert task_mean(x)[0] == pytest.approx((2.0 + 10.0) / 2)


# ---------------------------------------------------------------------------------------------
# The sample scenario: verdicts as its generator's truth


def _generator():
    spec = importlib.util.spec_from_file_location("suite_sample_generate",
                                                  ROOT / "sample_runs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sample() -> SuiteAnalysis:
    return analyze_suite(saturate.load(SAMPLE), suite="task", group_by="recipe", n_boot=500)


def test_sample_suite_verdicts_match_the_generators_truth(sample):
    gen = _generator()
    truth = {r["recipe"]: r for r in gen.suite_truth()}
    assert {g.group for g in sample.groups} == set(truth)
    for g in sample.groups:
        t = truth[g.group]
        assert g.verdict == t["verdict"], (g.group, g.analysis.reasons)
        assert len(g.paying) == t["tasks_paying"]
        assert len(g.regressing) == t["tasks_regressing"]
        for task in g.task_results:
            want = gen.suite_shape(g.group, task.task)
            if want == "scaling" and any(r.startswith("the metric's domain bounds the gain")
                                         for r in task.reasons):
                # Near the top of [0, 1] the domain caps what a doubling can add, so a task the
                # generator still has climbing may be placed past the knee: it still pays.
                want = ("scaling", "slowing")
            p = getattr(task.curve, "p_pays", None)
            if want == "saturated" and p is not None and 0.4 <= p < 0.6:
                # a plateau whose P(pays) sits in the default band is honestly inconclusive
                # (sample_runs/README: one ppo-turn webshop seed at 0.42)
                want = ("saturated", "inconclusive")
            assert task.verdict in (want if isinstance(want, tuple) else (want,)), (
                g.group, task.task, task.verdict)
        assert g.n_seeds == {task: 3 for task in gen.SUITE_TASKS}


def test_sample_suite_says_which_tasks_hold_it_back(sample):
    ppo, grpo = sample["ppo-turn"], sample["grpo-traj"]
    # The generator saturates sokoban earliest (Cmid 3% of the budget against 8%).
    assert ppo.saturated_first.task == "sokoban"
    assert grpo.saturated_first.task == "sudoku"
    assert grpo.regressing == ("webshop",)
    assert set(ppo.paying) == {"textcraft", "minesweeper"}
    assert ppo.p_next_doubling_pays < 0.1 < 0.9 < grpo.p_next_doubling_pays
    # PPO leads at the budget (0.99 against 0.51 in the noiseless aggregate) and at 2x.
    (cmp,) = sample.comparisons
    assert (cmp.a, cmp.b) == ("grpo-traj", "ppo-turn")
    assert cmp.p_a_ahead < 0.05 and cmp.p_a_ahead_2x < 0.5
    assert cmp.compute == pytest.approx(sample["ppo-turn"].analysis.compute_last)


def test_sample_suite_interval_carries_the_task_and_seed_spread(sample):
    for g in sample.groups:
        a = g.analysis
        gain = a.gain_per_doubling
        assert gain.lo <= gain.value <= gain.hi
        assert any(r.startswith("spread across tasks and seeds") for r in a.reasons)
        se = np.asarray(g.aggregate.doubling_se, float)
        assert np.nanmedian(se) > 0
        lo, hi = np.asarray(g.aggregate.iqm_lo), np.asarray(g.aggregate.iqm_hi)
        point = np.asarray(g.aggregate.iqm)
        assert np.all(lo <= point + 1e-12) and np.all(point <= hi + 1e-12)
        assert a.stop_point is None or a.stop_point.value > 0
        assert {f.at for f in a.forecast} == {"2x", "4x"}


def test_round_trip_and_schema(sample):
    jsonschema = pytest.importorskip("jsonschema")
    from saturate.report.suite import suite_schema

    d = json.loads(json.dumps(sample.to_dict()))
    jsonschema.validate(d, suite_schema())
    back = SuiteAnalysis.from_dict(d)
    assert back.to_dict() == d
    assert back.groups[0].analysis.verdict == sample.groups[0].analysis.verdict
    assert "Suite task" in sample.summary() and "P(next doubling pays)" in sample.summary()
    frame = sample.to_frame()
    assert list(frame["group"]) == ["grpo-traj", "ppo-turn"]
    assert sample.tasks_frame().shape == (8, 2)


# ---------------------------------------------------------------------------------------------
# Missing seeds, different grids, a single task


def test_tasks_with_missing_seeds_resample_the_seeds_they_have():
    c = np.arange(1.0, 65.0)
    curves = {(t, "a", s): (c, log_line(i + 0.1 * s, 0.2 + 0.01 * s, c))
              for i, t in enumerate(["t1", "t2", "t3"]) for s in range(3)}
    del curves["t2", "a", 2]
    res = analyze_suite(suite_table(curves), suite="task", group_by="agent",
                        normalize="none", **FAST)
    g = res["a"]
    assert g.n_seeds == {"t1": 3, "t2": 2, "t3": 3}
    assert any("fewer than 3 seeds: t2 (2)" in n for n in g.notes)
    assert all(n == 8 for n in g.aggregate.n_scores)
    k = 40
    scores = [log_line(i + 0.1 * s, 0.2 + 0.01 * s, c[k]) for i, t in enumerate(["t1", "t2", "t3"])
              for s in range(3) if (t, s) != ("t2", 2)]
    assert g.aggregate.iqm[k] == pytest.approx(trim_mean(scores, 0.25), abs=1e-9)
    assert np.isfinite(g.aggregate.replicates).all()


def test_tasks_logged_on_different_grids_are_interpolated_on_log_compute():
    ca = np.arange(1.0, 101.0)           # every unit of compute, to 100
    cb = np.arange(1.5, 151.0, 1.5)      # every 1.5 units, to 150
    curves = {}
    for s in range(2):
        curves["a", "g", s] = (ca, log_line(0.0, 1.0 + 0.1 * s, ca))
        curves["b", "g", s] = (cb, log_line(0.5, 2.0 + 0.1 * s, cb))
    res = analyze_suite(suite_table(curves), suite="task", group_by="agent",
                        normalize={"random": 0.0, "human": 1.0}, **FAST)
    g = res["g"]
    assert any("different computes" in n for n in res.notes)
    agg = g.aggregate.frame()
    both = agg[agg["n_tasks"] == 2]
    only_b = agg[agg["compute"] > 100]
    assert len(both) > 50 and (only_b["n_tasks"] == 1).all() and len(only_b) > 0
    # Scores are linear in log compute, so interpolation on log compute is exact: the mean of
    # task means is the mean of the four lines.
    c = both["compute"].to_numpy()
    want = np.mean([log_line(0.0, 1.0 + 0.1 * s, c) for s in range(2)]
                   + [log_line(0.5, 2.0 + 0.1 * s, c) for s in range(2)], axis=0)
    np.testing.assert_allclose(both["mean"], want, rtol=0, atol=1e-9)
    # The analysed curve keeps the mix of tasks fixed: it ends where task a ends.
    assert g.analysis.compute_last == pytest.approx(100.0)
    assert any("analysed curve spans" in n for n in g.notes)
    wide = analyze_suite(suite_table(curves), suite="task", group_by="agent", normalize="none",
                         min_coverage=0.5, **FAST)
    assert wide["g"].analysis.compute_last == pytest.approx(150.0)


def test_a_group_with_a_single_task():
    c = np.geomspace(1, 512, 40)
    rng = np.random.default_rng(0)
    curves = {("t1", "solo", s): (c, log_line(0.1, 0.05, c) + rng.normal(0, 0.01, c.size))
              for s in range(3)}
    curves.update({(t, "many", s): (c, log_line(0.1, 0.002, c) + rng.normal(0, 0.01, c.size))
                   for t in ("t1", "t2", "t3") for s in range(3)})
    # Scores on one scale, judged against an absolute 0.01 per doubling.
    res = analyze_suite(suite_table(curves), suite="task", group_by="agent", n_boot=200,
                        normalize="none", settings=AnalysisSettings(n_boot=50, min_gain=0.01))
    solo, many = res["solo"], res["many"]
    assert solo.tasks == ("t1",) and set(solo.aggregate.n_tasks) == {1}
    # A constant gain per doubling pays (log-linear: "slowing", its ROI falls); 0.002 does not.
    assert solo.passes and many.verdict == "saturated", (solo.verdict, many.verdict)
    assert len(solo.task_results) == 1 and solo.task_results[0].verdict == solo.verdict
    (cmp,) = res.comparisons
    assert any("different tasks" in n for n in cmp.notes)
    assert any("solo has no runs on t2, t3" in n for n in res.notes)


def test_one_seed_per_task_has_no_seed_spread_unless_tasks_are_resampled():
    c = np.geomspace(1, 256, 30)
    curves = {(t, "a", 0): (c, log_line(i, 0.1 * (i + 1), c)) for i, t in enumerate("pqrst")}
    table = suite_table(curves)
    seeds = analyze_suite(table, suite="task", group_by="agent", normalize="none", **FAST)
    assert any("one seed" in n for n in seeds["a"].notes)
    assert np.allclose(seeds["a"].aggregate.iqm_lo, seeds["a"].aggregate.iqm_hi)
    tasks = analyze_suite(table, suite="task", group_by="agent", normalize="none",
                          task_bootstrap=True, **FAST)
    width = np.asarray(tasks["a"].aggregate.iqm_hi) - np.asarray(tasks["a"].aggregate.iqm_lo)
    assert (width[1:] > 0).all()


def test_the_bootstrap_is_seeded():
    c = np.geomspace(1, 256, 30)
    rng = np.random.default_rng(1)
    curves = {(t, "a", s): (c, log_line(i, 0.1, c) + rng.normal(0, 0.2, c.size))
              for i, t in enumerate("pqr") for s in range(3)}
    table = suite_table(curves)
    one = analyze_suite(table, suite="task", seed=5, **FAST)
    again = analyze_suite(table, suite="task", seed=5, **FAST)
    other = analyze_suite(table, suite="task", seed=6, **FAST)
    assert one.groups[0].group == "all" and one.group_by is None
    assert one.to_dict() == again.to_dict()
    assert one.groups[0].aggregate.iqm_lo != other.groups[0].aggregate.iqm_lo
