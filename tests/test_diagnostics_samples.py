"""The diagnostics on the sample_runs/ scenarios (sample_runs/README.md), pinned."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import saturate
from saturate.cli import app
from saturate.diagnostics import run_diagnostics
from saturate.diagnostics.allocate import allocate
from saturate.diagnostics.base import collect_curves
from saturate.diagnostics.cost import cost_per_point, point_size
from saturate.diagnostics.recipes import forecast_crossing, prob_better
from saturate.diagnostics.target import compute_to_target
from saturate.errors import SettingsError
from saturate.results import Estimate

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
pytestmark = pytest.mark.skipif(not (SAMPLES / "README.md").is_file(), reason="no sample_runs/")


def diagnose(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(str(SAMPLES / name), n_boot=40, group_by=kw.pop("group_by", None))
        return a, run_diagnostics(a, **kw)


def kinds(found):
    return sorted({(d.run, d.kind, d.severity) for d in found})


def test_reward_overoptimisation_is_a_divergence_in_both_seeds():
    _, found = diagnose("05_reward_overoptimisation.csv")
    div = [d for d in found if d.kind == "divergence"]
    assert {d.run for d in div} == {"llama3.1-8b-rlhf-ppo-rm7b-seed0",
                                    "llama3.1-8b-rlhf-ppo-rm7b-seed1"}
    for d in div:
        assert d.severity == "error" and d.metrics == ("train/reward", "eval/alpaca_eval/win_rate")
        assert d.compute < 500  # the win rate peaks at a quarter of the ~860 GPU-h budget


def test_pass_at_k_sharpening_falls_behind_at_k8():
    _, found = diagnose("06_pass_at_k.csv")
    sharp = [d for d in found if d.kind == "sharpening"]
    assert len(sharp) == 1 and sharp[0].details["crossover_k"] == 8
    assert sharp[0].metrics[0] == "eval/aime_amc/pass@1"


def test_entropy_collapse_and_kl_blowup():
    _, found = diagnose("09_entropy_collapse.jsonl")
    got = {d.kind for d in found}
    assert {"entropy_collapse", "kl_blowup"} <= got
    kl = next(d for d in found if d.kind == "kl_blowup")
    assert kl.compute > 250  # the blow-up is in the last two thirds of a ~750 GPU-h run


def test_slices_easy_saturate_hard_scale():
    _, found = diagnose("10_eval_slices.csv")
    sl = [d for d in found if d.kind == "slice_saturated"]
    assert len(sl) == 1
    # easy and medium problems saturate early (sample_runs/README)
    assert set(sl[0].details["stopped"]) == {"easy", "medium"}
    assert "olympiad" in sl[0].details["scaling"]  # the hardest slice still scales


@pytest.mark.parametrize("name", ["01_still_scaling.csv", "03_saturated.csv"])
def test_no_false_alarms_on_healthy_runs(name):
    _, found = diagnose(name)
    assert [d for d in found if d.severity != "info"] == []


def test_recipes_cispo_overtakes_dapo():
    a, found = diagnose("08_recipe_comparison.csv", group_by="recipe",
                        targets={"train/reward": 0.9})
    rec = {d.metrics[0]: d for d in found if d.kind == "recipe"}
    assert set(rec) == {"train/reward", "eval/heldout/pass_rate"}
    pair = rec["eval/heldout/pass_rate"].details["pair"]
    assert pair["leader_at_horizon"] == "cispo"
    late = max(pair["prob_first_better"], key=lambda p: p["compute"])
    assert (late["prob"] > 0.9) == (pair["first"] == "cispo")
    assert pair["crossing"] is not None
    recipes = {r["label"]: r for r in rec["eval/heldout/pass_rate"].details["recipes"]}
    assert recipes["dapo"]["A"]["value"] < recipes["cispo"]["A"]["value"]  # A 0.58 vs 0.66
    assert recipes["dapo"]["B"]["value"] > recipes["cispo"]["B"]["value"]  # B 2.2 vs 1.3
    unreachable = [d for d in found if d.kind == "target_unreachable"]
    assert {d.run for d in unreachable} == {"recipe=dapo", "recipe=cispo"}  # reward A < 0.9
    json.dumps(a.to_dict() | {"diagnostics": [d.to_dict() for d in found]}, allow_nan=False)


def test_allocation_prefers_the_runs_that_still_scale():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(str(SAMPLES / "02_scaleup_20x.csv"), n_boot=40,
                             metric="eval/*")
    refs = collect_curves(a.curves)
    with pytest.raises(SettingsError, match="not: give --gpu-hours"):
        allocate(refs, 5000)  # the x axis 'compute' does not say it is GPU-hours
    rates = {(r.source, r.run_id): 1.0 for r in refs}  # it is: README of sample_runs
    alloc = allocate(refs, 5000, gpu_hour_cost=2.0, hours_per_compute=rates)
    # only the baselines still scale; the saturated 20x runs get nothing, and say why
    assert {c.run for c in alloc.funded} <= {c.run for c in alloc.choices}
    assert alloc.choices and all("baseline" in c.run for c in alloc.choices)
    assert len(alloc.skipped) == 3 and all("scaleup" in s and "below its threshold" in s
                                           for s in alloc.skipped)
    spent = sum(c.planned_hours for c in alloc.choices)
    assert spent + alloc.unspent == pytest.approx(5000)
    for c in alloc.choices:
        assert c.gain.lo <= c.gain.value <= c.gain.hi
        assert c.gain.value + a[c.run, c.metric].value_last <= 1.0 + 1e-9


def test_pure_pieces():
    rng = np.random.default_rng(0)
    assert prob_better(rng.normal(1, 0.1, 400), rng.normal(0, 0.1, 400)) > 0.99
    assert abs(prob_better(rng.normal(0, 1, 2000), rng.normal(0, 1, 2000)) - 0.5) < 0.05
    grid = np.geomspace(1, 100, 50)
    cross, share = forecast_crossing(np.log(grid), np.full(50, np.log(10.0)), None, None, grid)
    assert cross is not None and 9 <= cross.value <= 11 and share == 0.0
    assert forecast_crossing(grid, grid - 1, None, None, grid)[0] is None
    assert point_size(np.array([0.2, 0.9])) == 0.01 and point_size(np.array([-1, 3])) == 1.0
    cpp = cost_per_point(Estimate(0.02, 0.01, 0.04), 100, 2.0, 0.01)
    assert (cpp.value, cpp.lo, cpp.hi) == pytest.approx((100, 50, 200))
    c = np.linspace(1, 100, 100)
    y = 0.8 - 0.5 / np.sqrt(c)

    def f(x):
        return 0.8 - 0.5 / np.sqrt(np.asarray(x, float))

    asym = Estimate(0.8, 0.79, 0.81)
    res = compute_to_target(0.76, c, y, f, None, asym)
    assert res.status == "forecast" and res.compute.value == pytest.approx(156.25, rel=0.03)
    assert compute_to_target(0.85, c, y, f, None, asym).status == "unreachable"
    assert compute_to_target(0.5, c, y, f, None, asym).status == "reached"


def test_cli_compare_and_allocate(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["compare", str(SAMPLES / "08_recipe_comparison.csv"),
                              "--group-by", "recipe", "--n-boot", "40", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {c["metric"] for c in doc["comparisons"]} == {"train/reward", "eval/heldout/pass_rate"}
    res = runner.invoke(app, ["compare", str(SAMPLES / "08_recipe_comparison.csv"),
                              "--n-boot", "20"])
    assert res.exit_code == 2 and "--group-by" in res.output
    out = tmp_path / "alloc.json"
    res = runner.invoke(app, ["allocate", str(SAMPLES / "01_still_scaling.csv"), "--budget",
                              "1000", "--n-boot", "40", "--format", "json", "--out", str(out)])
    assert res.exit_code == 2 and "not GPU-hours" in res.stderr  # steps are never GPU-hours
    res = runner.invoke(app, ["allocate", str(SAMPLES / "01_still_scaling.csv"), "--budget",
                              "1000", "--n-boot", "40", "--format", "json", "--out", str(out),
                              "--gpu-hours", "compute"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["budget"] == 1000 and doc["choices"] and doc["unit"] == "GPU-hours"
    res = runner.invoke(app, ["allocate", str(SAMPLES / "01_still_scaling.csv")])
    assert res.exit_code == 2 and "--budget" in res.output
    res = runner.invoke(app, ["allocate", str(SAMPLES / "01_still_scaling.csv"), "--budget", "-3",
                              "--n-boot", "20"])
    assert res.exit_code == 2 and "budget" in res.output
