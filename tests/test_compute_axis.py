"""The compute axis: found by name (metrics and columns) with its unit carried to every report and
plot, GPU-hours from wall time (--gpus), one warning when the runs fall back to their step, and
steps never taken for GPU-hours."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_run import run_cli
from click.testing import CliRunner

import saturate
from saturate.cli.app import app
from saturate.errors import SettingsError
from saturate.ingest import axis_join
from saturate.report import render
from saturate.report.plots import curve_figure
from saturate.table import Table, curves
from saturate.table.axis import AxisWarning, describe_axis, gpu_hours_from_time
from saturate.vocabulary.names import AXIS_GLOBS, axis_label, axis_unit, is_compute_name

N_BOOT = 20
runner = CliRunner()


@pytest.mark.parametrize(("name", "unit"), [
    ("gpu_hours", "GPU-hours"), ("gpu_h", "GPU-hours"), ("compute/gpu_hours", "GPU-hours"),
    ("sys/GPUHours", "GPU-hours"), ("flops", "FLOPs"), ("total_flops", "FLOPs"),
    ("compute/flops", "FLOPs"), ("tokens", "tokens"), ("num_tokens", "tokens"),
    ("train/tokens_seen", "tokens"), ("samples", "samples"), ("consumed_samples", "samples"),
    ("env_steps", "environment steps"), ("time/total_timesteps", "environment steps"),
    ("frames", "frames"), ("wall_time", "seconds"), ("time/time_elapsed", "seconds"),
    ("compute/petaflop_days", "PF-days"), ("compute/widgets", "widgets"),
    ("Training FLOP", "FLOPs"), ("train_tokens", "tokens"), ("train_dataset_size", "examples"),
    ("num_train_examples", "examples"),
])
def test_compute_names_and_units(name: str, unit: str) -> None:
    assert is_compute_name(name) and axis_unit(name) == unit


def test_what_is_not_a_compute_axis() -> None:
    assert axis_unit("compute") is None  # compute in a unit the name does not say
    for name in ("train/reward", "time/fps", "timing/gen", "tokens_per_second", "epoch_loss"):
        assert not is_compute_name(name), name
    for name in ("step", "global_step", "epoch", "train/n_updates"):  # progress, not compute
        assert axis_unit(name) is not None and not is_compute_name(name), name
    assert axis_label("compute/gpu_hours") == "GPU-hours (compute/gpu_hours)"
    assert axis_label("step") == "steps" and axis_label("compute") == "compute"
    assert {"compute/*", "gpu_hours", "*/gpu_hours", "total_flops", "*/num_tokens"} <= set(
        AXIS_GLOBS)


def _runs(n: int = 40, runs: tuple[str, ...] = ("a", "b")) -> pd.DataFrame:
    """Long rows: a growing reward, an entropy and a cumulative gpu_hours metric per run (the
    GPU-hours per step differ between runs)."""
    rows = []
    for k, run in enumerate(runs):
        rate = 2.0 + k
        for i in range(n):
            hours = rate * (i + 1)
            rows += [{"run": run, "metric": "train/reward", "step": i,
                      "value": 0.1 * np.log2(hours) + 0.003 * np.sin(3 * i)},
                     {"run": run, "metric": "actor/entropy", "step": i, "value": 1.0 / (i + 1)},
                     {"run": run, "metric": "gpu_hours", "step": i, "value": hours}]
    return pd.DataFrame(rows)


def test_a_gpu_hours_metric_becomes_the_axis_and_its_unit_is_reported() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", AxisWarning)
        a = saturate.analyze(_runs(), n_boot=N_BOOT)
    assert a.axis.name == "gpu_hours" and a.axis.unit == "GPU-hours" and not a.axis.is_steps
    assert {c.metric for c in a.curves} == {"train/reward"}  # gpu_hours is not a curve
    assert "gpu_hours" not in {m.metric for m in a.diagnostic_metrics}
    c = a["a", "train/reward"]
    assert c.compute_name == "gpu_hours" and c.compute_last == pytest.approx(80.0)
    assert a["b", "train/reward"].compute_last == pytest.approx(120.0)
    doc = json.loads(render(a, "json"))
    assert doc["axis"]["unit"] == "GPU-hours" and doc["axis"]["steps"] is False
    assert doc["axis"]["label"] == "GPU-hours (gpu_hours)"
    assert "x axis: GPU-hours (gpu_hours)" in render(a, "table", width=200)
    assert "x axis: GPU\\-hours \\(gpu\\_hours\\)" in render(a, "markdown")
    from saturate.report.html import render_html

    assert "x axis: GPU-hours (gpu_hours)" in render_html(a, plots=False)
    fig = curve_figure(c)
    assert fig.axes[0].get_xlabel().startswith("GPU-hours (gpu_hours)")


def test_a_compute_column_by_name_and_the_ranking_of_candidates() -> None:
    df = _runs(runs=("a",))
    hours = df[df["metric"] == "gpu_hours"].set_index("step")["value"]
    rows = df[df["metric"] != "gpu_hours"].assign(
        total_flops=lambda d: d["step"].map(hours) * 3e15, gpu_hours=lambda d: d["step"].map(hours))
    table = axis_join.auto_compute(Table.of(curves.tidy(rows)))
    assert table.axis.name == "gpu_hours"  # GPU-hours rank before FLOPs
    assert table.axis.unit == "GPU-hours"
    only_flops = axis_join.auto_compute(Table.of(curves.tidy(rows.drop(columns="gpu_hours"))))
    assert only_flops.axis.name == "total_flops"
    assert describe_axis(only_flops.points, only_flops.axis).label == "FLOPs (total_flops)"
    # a logged tokens metric the axis does not use stays, as an axis: no verdict
    extra = pd.concat([df, df[df["metric"] == "gpu_hours"].assign(
        metric="num_tokens", value=lambda d: d["value"] * 1e6)])
    a = saturate.analyze(extra, n_boot=N_BOOT)
    assert a.axis.name == "gpu_hours"
    assert {(m.metric, m.role) for m in a.diagnostic_metrics} == {
        ("actor/entropy", "diagnostic"), ("num_tokens", "axis")}


def test_a_measure_that_does_not_grow_is_not_an_axis() -> None:
    df = _runs(runs=("a",))
    df.loc[df["metric"] == "gpu_hours", "value"] = np.tile([3.0, 1.0], 20)  # per step, not total
    table = saturate.load(df)
    assert table.axis.name == "step"


def test_falling_back_to_steps_is_said_once(tmp_path: Path) -> None:
    df = _runs().query("metric != 'gpu_hours'")
    with pytest.warns(AxisWarning, match="the x axis is the step") as caught:
        a = saturate.analyze(df, n_boot=N_BOOT, diagnostics=False)
    assert len([w for w in caught if issubclass(w.category, AxisWarning)]) == 1
    assert a.axis.is_steps and "no compute axis found" in a.axis.note
    doc = a.to_dict()
    assert doc["axis"]["steps"] is True and doc["axis"]["unit"] == "steps"
    assert "x axis: steps (no compute axis found" in render(a, "markdown").replace("\\", "")
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    res = run_cli("analyze", path, "--n-boot", str(N_BOOT), "--format", "json")
    assert res.returncode == 0, res.stderr
    assert [ln for ln in res.stderr.splitlines() if "step" in ln] == [
        "warning: no compute axis found (no compute column, and no GPU-hours, FLOPs, tokens, "
        "samples or environment-steps metric): the x axis is the step; give one with --compute "
        "NAME, or --gpus N for GPU-hours from wall time"]
    # asked for: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", AxisWarning)
        assert saturate.analyze(_runs(), compute="step", n_boot=N_BOOT,
                                diagnostics=False).axis.is_steps


def test_runs_left_on_steps_among_others_are_named() -> None:
    df = pd.concat([_runs(runs=("a",)), _runs(runs=("b",)).query("metric != 'gpu_hours'")])
    with pytest.warns(AxisWarning, match=r"1 run\(s\) log no compute axis .*\(b\)"):
        a = saturate.analyze(df, n_boot=N_BOOT, diagnostics=False)
    assert a.axis.step_runs == ("b",) and a.axis.unit is None and a.axis.name == "compute"


def _timed(ms: bool = False) -> pd.DataFrame:
    df = _runs().query("metric != 'gpu_hours'").copy()
    t0 = {"a": 1.7e9, "b": 1.8e9}
    df["timestamp"] = df["run"].map(t0) + df["step"] * 1800.0  # half an hour per step
    df["n_gpus"] = df["run"].map({"a": 8, "b": 4})
    if ms:
        df["timestamp"] *= 1000.0
    return df


@pytest.mark.parametrize("ms", [False, True])
def test_gpus_derive_gpu_hours_from_wall_time(ms: bool) -> None:
    table = saturate.load(_timed(ms), gpus=8)
    points = table.points
    a = points[(points["run"] == "a") & (points["metric"] == "train/reward")]
    assert a["compute"].to_numpy() == pytest.approx(0.5 * 8 * a["step"].to_numpy())
    assert table.axis.name == "gpu_hours" and table.axis.unit == "GPU-hours"
    assert table.axis.note.startswith("GPU-hours from wall time")
    per_run, _ = gpu_hours_from_time(saturate.load(_timed(ms), compute="step").to_frame(), "n_gpus")
    b = per_run[(per_run["run"] == "b") & (per_run["metric"] == "train/reward")]
    assert b["compute"].max() == pytest.approx(0.5 * 4 * 39)


def test_gpus_in_the_api_the_cli_and_their_errors(tmp_path: Path) -> None:
    a = saturate.analyze(_timed(), gpus=8, n_boot=N_BOOT, budget=100)
    assert a.axis.unit == "GPU-hours" and "x 8 GPUs" in a.axis.note
    assert a["a", "train/reward"].compute_last == pytest.approx(0.5 * 8 * 39)
    assert [d.kind for d in a.diagnostics if d.kind == "allocation"] == ["allocation"]
    with pytest.raises(SettingsError, match="not both"):
        saturate.analyze(_timed(), gpus=8, compute="step")
    with pytest.raises(SettingsError, match="from the logged timestamps, and the data has none"):
        saturate.analyze(_runs(), gpus=8)
    with pytest.raises(SettingsError, match="neither a number nor a run parameter"):
        saturate.analyze(_timed(), gpus="world_size")
    path = tmp_path / "timed.csv"
    _timed().to_csv(path, index=False)
    res = runner.invoke(app, ["analyze", str(path), "--gpus", "n_gpus", "--n-boot", str(N_BOOT),
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["axis"]["label"] == "GPU-hours (gpu_hours)"
    assert json.loads(res.stdout)["settings"]["gpus"] == "n_gpus"
    res = runner.invoke(app, ["analyze", str(path), "--gpus", "0"])
    assert res.exit_code == 2 and "--gpus must be a number of GPUs > 0" in res.stderr


def test_steps_are_never_taken_for_gpu_hours(tmp_path: Path) -> None:
    steps = _runs().query("metric != 'gpu_hours'")
    for option in ({"budget": 100}, {"gpu_hour_cost": 2.0}):
        with pytest.raises(SettingsError, match="is in GPU-hours, and the x axis is steps"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", AxisWarning)
            saturate.analyze(steps, n_boot=N_BOOT, **option)
    # a compute column of unknown unit is refused too, until --gpu-hours says what it is
    compute = steps.assign(compute=(steps["step"] + 1) * 2.0)
    with pytest.raises(SettingsError, match="x axis is compute, not GPU-hours"):
        saturate.analyze(compute, n_boot=N_BOOT, gpu_hour_cost=2.0)
    a = saturate.analyze(compute, n_boot=N_BOOT, gpu_hour_cost=2.0, gpu_hours="compute")
    assert {d.kind for d in a.diagnostics} >= {"cost"}
    # pretrain_compute is in the x axis's own unit: no GPU-hours needed
    a = saturate.analyze(compute, n_boot=N_BOOT, pretrain_compute=1e6)
    assert any(d.kind == "cost" for d in a.diagnostics)
    path = tmp_path / "steps.csv"
    steps.to_csv(path, index=False)
    res = runner.invoke(app, ["allocate", str(path), "--budget", "100"])
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "--budget is in GPU-hours" in lines[0]


def test_a_table_of_compute_and_score_pairs_needs_no_step_column(tmp_path: Path) -> None:
    # a scaling-law table (one row per measured point, no step): the column that measures
    # compute is the x axis, with its unit; the loss is the curve (lower is better: its last
    # doubling gains 0.17, twice the threshold), the text column names runs
    c = np.geomspace(1e18, 1e21, 24)
    df = pd.DataFrame({"Training FLOP": np.tile(c, 2), "split": np.repeat(["a", "b"], 24),
                       "test_cross_entropy": np.tile(2.0 + 5.0 * (c / 1e18) ** -0.1, 2)})
    path = tmp_path / "scaling.csv"
    df.to_csv(path, index=False)
    table = saturate.load(path)
    assert table.axis.name == "Training FLOP"
    assert set(table.points["metric"]) == {"test_cross_entropy"}
    assert np.allclose(np.sort(table.points["compute"].unique()), c)
    a = saturate.analyze(table, n_boot=N_BOOT)
    assert a.axis.unit == "FLOPs" and not a.axis.is_steps
    assert {cv.direction for cv in a.curves} == {"lower"} and len(a.curves) == 2
    assert all(cv.verdict in ("scaling", "slowing") for cv in a.curves), [
        (cv.verdict, cv.reasons) for cv in a.curves]
    assert "x axis: FLOPs (Training FLOP)" in render(a, "table", width=200)


def test_the_heading_says_briefly_that_the_axis_fell_back_to_steps() -> None:
    pts = _runs()
    pts = pts[pts["metric"] != "gpu_hours"]
    with pytest.warns(AxisWarning):
        a = saturate.analyze(pts, n_boot=N_BOOT)
    table = render(a, "table", width=200)
    assert "x axis: steps (no compute axis found: give one with --compute NAME or --gpus N)" in table
    assert "the x axis is the step" in a.axis.note  # the whole note: the warning and the JSON
