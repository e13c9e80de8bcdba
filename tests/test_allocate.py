"""``saturate allocate``: one plan for one objective, only runs (and chunks) that pay, the unit
stated, and a plain "nothing is worth funding" when nothing pays."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import saturate
from saturate.cli.app import app
from saturate.diagnostics import DiagnosticSettings, plan_allocation

N_BOOT = 40
runner = CliRunner()


def _runs(flat_only: bool = False) -> pd.DataFrame:
    """Runs on a GPU-hours axis: ``grow`` (log-linear), ``slow`` (a sigmoid past its middle) and
    ``flat`` (saturated) log a training reward; ``grow`` and ``slow`` also a held-out accuracy."""
    c = np.geomspace(1, 100, 40)
    rng = np.random.default_rng(1)
    shapes = {
        ("grow", "train/reward"): 0.1 * np.log2(c) + rng.normal(0, 0.005, c.size),
        ("slow", "train/reward"): 0.8 / (1 + (20 / c) ** 1.5) + rng.normal(0, 0.003, c.size),
        ("flat", "train/reward"): 0.5 - 0.4 * np.exp(-c / 3) + rng.normal(0, 0.002, c.size),
        ("flat2", "train/reward"): 0.6 - 0.4 * np.exp(-c / 2) + rng.normal(0, 0.002, c.size),
        ("grow", "eval/acc"): 0.3 + 0.05 * np.log2(c) / 7 + rng.normal(0, 0.003, c.size),
        ("slow", "eval/acc"): 0.3 + 0.3 / (1 + (20 / c) ** 1.5) + rng.normal(0, 0.003, c.size),
    }
    rows = [pd.DataFrame({"run": run, "metric": metric, "step": np.arange(c.size),
                          "gpu_hours": c, "value": y})
            for (run, metric), y in shapes.items() if not flat_only or run.startswith("flat")]
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def analysis():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return saturate.analyze(_runs(), n_boot=N_BOOT, diagnostics=False)


def test_one_plan_on_the_objective_with_the_most_runs(analysis) -> None:
    assert analysis.axis.unit == "GPU-hours"  # the gpu_hours column is the axis
    plan = plan_allocation(analysis.curves, analysis.data, DiagnosticSettings(budget=100))
    assert plan.metric == "train/reward" and plan.unit == "GPU-hours"
    assert plan.chosen.startswith("the objective with the most analysed runs (4) of the 2")
    assert {c.metric for c in plan.choices} == {"train/reward"}
    named = plan_allocation(analysis.curves, analysis.data, DiagnosticSettings(budget=100),
                            named=["eval/*"])  # --metric eval/* selected one objective
    assert named.metric == "train/reward"  # both objectives are in these curves: most runs
    only_eval = saturate.analyze(_runs(), n_boot=N_BOOT, metric="eval/*", diagnostics=False)
    plan = plan_allocation(only_eval.curves, only_eval.data, DiagnosticSettings(budget=100),
                           named=["eval/*"])
    assert plan.metric == "eval/acc" and plan.chosen == "named by --metric"


def test_only_runs_and_chunks_that_pay_are_funded(analysis) -> None:
    for budget in (100.0, 1e5):
        plan = plan_allocation(analysis.curves, analysis.data, DiagnosticSettings(budget=budget))
        assert {s.split(":")[0] for s in plan.skipped} == {"flat", "flat2"}
        assert all("is below its threshold" in s for s in plan.skipped)
        assert {c.run for c in plan.funded} <= {"grow", "slow"}
        spent = sum(c.planned_hours for c in plan.choices)
        assert spent + plan.unspent == pytest.approx(budget)
        for c in plan.funded:
            curve = analysis[c.run, c.metric]
            ratio = (c.compute_last + c.planned_hours / c.hours_per_compute) / c.compute_last
            # every chunk kept the threshold's rate, so the whole share does too
            assert c.planned_gain.value >= curve.threshold * math.log2(ratio) - 1e-12
    big = plan_allocation(analysis.curves, analysis.data, DiagnosticSettings(budget=1e5))
    assert big.unspent > 0 and "left unspent (no run's next chunk pays)" in big.headline


def test_nothing_worth_funding_is_said_plainly(tmp_path: Path) -> None:
    path = tmp_path / "flat.csv"
    _runs(flat_only=True).to_csv(path, index=False)
    res = runner.invoke(app, ["allocate", str(path), "--budget", "500", "--n-boot", str(N_BOOT)])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("500 GPU-hours on train/reward: nothing is worth funding")
    assert "not funded: flat: gain per doubling" in res.stdout
    res = runner.invoke(app, ["allocate", str(path), "--budget", "500", "--n-boot", str(N_BOOT),
                              "--format", "json"])
    doc = json.loads(res.stdout)
    assert doc["unspent"] == 500 and doc["choices"] == [] and len(doc["skipped"]) == 2
    assert doc["unit"] == "GPU-hours" and "nothing is worth funding" in doc["headline"]


def test_analyze_with_a_budget_gives_one_allocation(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(_runs(), n_boot=N_BOOT, budget=100)
    (alloc,) = [d for d in a.diagnostics if d.kind == "allocation"]
    assert alloc.metrics == ("train/reward",) and alloc.details["unit"] == "GPU-hours"
    assert alloc.message.startswith("100 GPU-hours on train/reward: spend")
