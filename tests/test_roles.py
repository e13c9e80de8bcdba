"""Metric roles: objective (a verdict), diagnostic (no verdict, read by the diagnostics) or axis,
from the name by the rules of :mod:`saturate.vocabulary.roles`; overrides; and what changes for the
analysis, the reports, the gate and the slices."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from realdata import realcurves_path

import saturate
from saturate.cli.app import app
from saturate.errors import SettingsError
from saturate.gate import decide
from saturate.report import render
from saturate.report.schema import schema
from saturate.vocabulary.roles import (
    classify,
    curve_roles,
    metric_role,
    slice_families,
    split_by_role,
    subtask_families,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
N_BOOT = 20

OBJECTIVES = [
    # sample_runs
    "train/reward", "eval/math500/accuracy", "eval/gsm8k/accuracy", "eval/heldout/pass_rate",
    "eval/alpaca_eval/win_rate", "eval/aime_amc/pass@1", "eval/aime_amc/pass@64",
    "eval/olympiad/score",
    # verl GSM8K PPO logs
    "critic/score/mean", "critic/rewards/mean", "val/test_score/openai/gsm8k",
    "test_score/openai/gsm8k",
    # W&B / TensorBoard / SB3 / CleanRL
    "charts/episodic_return", "rollout/ep_rew_mean", "rollout/success_rate", "episode/score",
    # supervised scaling: the loss IS the objective (lower is better)
    "train/loss", "loss", "eval/loss", "val_loss", "validation/perplexity",
    # a health word that does not make the head
    "eval/length_controlled_win_rate", "kl_penalized_reward", "accuracy", "my_metric",
    "eval/long_range_accuracy", "mean_return", "value",  # a file's measure column
    # cross entropy is a loss, not the policy's entropy
    "test_cross_entropy", "eval/cross_entropy", "val/CrossEntropy", "xent",
]
DIAGNOSTICS = [
    "actor/entropy", "actor/kl",                                         # sample_runs 09
    "response_length/mean", "actor/entropy_loss", "critic/kl", "actor/pg_loss", "timing/gen",
    "critic/vf_loss", "critic/values/mean", "critic/advantages/mean", "actor/grad_norm",
    "actor/pg_clipfrac", "actor/lr", "timing_s/update_actor", "perf/throughput",
    "perf/max_memory_allocated_gb", "perf/total_num_tokens",
    "critic/score/max", "critic/score/min", "reward_std", "frac_reward_zero_std",
    "std_return", "eval/min_reward", "max_episode_return",  # SB3 evaluations, extremes
    "losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl",
    "losses/clipfrac", "losses/explained_variance", "losses/qf1_loss", "losses/alpha",
    "charts/SPS", "charts/learning_rate", "charts/episodic_length", "rollout/ep_len_mean",
    "time/fps", "train/approx_kl", "train/clip_fraction", "train/clip_range",
    "train/entropy_loss", "train/value_loss", "train/policy_gradient_loss",
    "train/explained_variance", "train/std", "completions/mean_length", "grad_norm",
    "objective/kl", "tokens_per_second", "system/gpu.0.memory", "global_seqlen/mean",
]
AXES = [
    "compute/gpu_hours", "compute", "gpu_hours", "gpu_h", "GPUHours", "total_flops", "flops",
    "num_tokens", "tokens_seen", "samples", "env_steps", "time/total_timesteps", "frames",
    "wall_time", "time/time_elapsed", "_runtime", "global_step", "epoch", "train/n_updates",
    "time/iterations", "Training FLOP", "train_dataset_size", "num_train_examples",
]


@pytest.mark.parametrize("metric", OBJECTIVES)
def test_objectives(metric: str) -> None:
    assert metric_role(metric) == "objective", classify(metric)


@pytest.mark.parametrize("metric", DIAGNOSTICS)
def test_diagnostics(metric: str) -> None:
    assert metric_role(metric) == "diagnostic", classify(metric)


@pytest.mark.parametrize("metric", AXES)
def test_axes(metric: str) -> None:
    assert metric_role(metric) == "axis", classify(metric)


def test_a_training_loss_is_an_objective_unless_the_run_logs_a_reward() -> None:
    sb3 = ["rollout/ep_rew_mean", "train/loss", "eval/loss", "time/fps"]
    assert metric_role("train/loss", run_metrics=["eval/accuracy"]) == "objective"
    assert metric_role("train/loss", run_metrics=sb3) == "diagnostic"
    assert metric_role("loss", run_metrics=["reward", "kl"]) == "diagnostic"  # TRL's GRPO log
    assert metric_role("eval/loss", run_metrics=sb3) == "objective"  # held out: an evaluation
    assert metric_role("train/loss", run_metrics=["eval/hellaswag/score"]) == "objective"
    assert classify("train/loss", run_metrics=sb3).rule == (
        "a training loss of a run that logs a reward")


def test_rules_say_why() -> None:
    assert classify("critic/kl").rule == "health word 'kl'"
    assert classify("timing/gen").rule == "system namespace timing/"
    assert classify("actor/pg_loss").rule.startswith("optimiser loss")
    assert classify("critic/score/max").rule.startswith("a spread or extreme")
    assert classify("gpu_hours").rule == "measures compute or progress"
    assert classify("train/reward").rule == "default"


def test_overrides_win_and_must_not_overlap() -> None:
    assert metric_role("actor/kl", objective=["actor/*"]) == "objective"
    assert metric_role("eval/math", diagnostic=["eval/*"]) == "diagnostic"
    assert classify("actor/kl", objective=["actor/kl"]).rule == "--objective"
    with pytest.raises(SettingsError, match="both objective"):
        metric_role("eval/x", objective=["eval/*"], diagnostic=["*/x"])


def _table(metrics: dict[str, np.ndarray], run: str = "r") -> pd.DataFrame:
    rows = [pd.DataFrame({"run": run, "metric": m, "step": np.arange(len(v)), "value": v})
            for m, v in metrics.items()]
    return saturate.load(pd.concat(rows, ignore_index=True)).points


def test_curve_roles_and_split() -> None:
    n = np.arange(1, 41, dtype=float)
    df = _table({"train/reward": 1 - 1 / n, "actor/kl": 0.01 * n, "train/loss": 1 / n,
                 "rollout/ep_rew_mean": np.log(n)})
    roles = curve_roles(df).set_index("metric")["role"].to_dict()
    assert roles == {"train/reward": "objective", "actor/kl": "diagnostic",
                     "train/loss": "diagnostic", "rollout/ep_rew_mean": "objective"}
    judged, other, _ = split_by_role(df)
    assert set(judged["metric"]) == {"train/reward", "rollout/ep_rew_mean"}
    assert set(other["metric"]) == {"actor/kl", "train/loss"}
    judged, other, _ = split_by_role(df, objective=["train/loss"], diagnostic=["rollout/*"])
    assert set(judged["metric"]) == {"train/reward", "train/loss"}


def test_slices_measure_the_same_thing_on_different_data() -> None:
    names = ["critic/rewards/mean", "critic/score/mean", "eval/easy/score", "eval/hard/score",
             "eval/math500/accuracy", "eval/gsm8k/accuracy", "actor/kl/mean", "actor/entropy/mean",
             "critic/rewards/max", "critic/rewards/min"]
    fams = slice_families(names)
    assert set(fams) == {"eval/*/score", "eval/*/accuracy"}
    assert fams["eval/*/score"] == [("easy", "eval/easy/score"), ("hard", "eval/hard/score")]
    sub = subtask_families(names + ["train/reward/math", "train/reward/code"])
    assert "critic/rewards/*" not in sub and "critic/*/mean" not in sub
    assert sub["train/reward/*"] == [("math", "train/reward/math"), ("code", "train/reward/code")]


@pytest.fixture(scope="module")
def entropy_run():
    """sample_runs 09: train/reward, eval/math500/accuracy, actor/entropy, actor/kl."""
    return saturate.analyze(SAMPLES / "09_entropy_collapse.jsonl", n_boot=N_BOOT)


def test_diagnostic_metrics_get_no_verdict_and_feed_the_diagnostics(entropy_run) -> None:
    a = entropy_run
    assert {c.metric for c in a.curves} == {"train/reward", "eval/math500/accuracy"}
    summary = {m.metric: m for m in a.diagnostic_metrics}
    assert set(summary) == {"actor/entropy", "actor/kl"}
    kl = summary["actor/kl"]
    assert kl.role == "diagnostic" and kl.rule == "health word 'kl'" and kl.movement == "rising"
    assert kl.value_last > kl.value_first and kl.trend.slope_per_doubling.value > 0
    assert summary["actor/entropy"].movement == "falling"
    # the instability diagnostics still read them
    assert {d.kind for d in a.diagnostics} >= {"entropy_collapse", "kl_blowup"}
    # and the gate counts the objectives only
    result = decide(a.curves, diagnostics=a.diagnostics)
    assert {o.curve.metric for o in result.outcomes} == {"train/reward", "eval/math500/accuracy"}


def test_reports_list_diagnostic_metrics_in_their_own_section(entropy_run) -> None:
    doc = json.loads(render(entropy_run, "json"))
    assert not list(jsonschema.Draft202012Validator(schema()).iter_errors(doc))
    assert [m["metric"] for m in doc["diagnostic_metrics"]] == ["actor/entropy", "actor/kl"]
    assert all(m["role"] == "diagnostic" and "verdict" not in m for m in doc["diagnostic_metrics"])
    assert "actor/kl" not in {c["metric"] for c in doc["curves"]}
    assert doc["summary"].startswith("2 curves")
    md = render(entropy_run, "markdown")
    head, section = md.split("### Diagnostic metrics (no verdict)")
    assert "actor/kl" in section and "rising" in section
    assert "actor/kl" not in head.split("### Diagnostics")[0]  # not in the verdict table
    table = render(entropy_run, "table", width=200)
    assert "Diagnostic metrics (no verdict)" in table
    html = render(entropy_run, "html")
    assert "Diagnostic metrics, no verdict (2)" in html
    assert "Diagnostic metrics (no verdict):" in entropy_run.summary()


def test_overrides_from_the_api_the_cli_and_the_settings_file(tmp_path: Path, monkeypatch) -> None:
    path = SAMPLES / "09_entropy_collapse.jsonl"
    a = saturate.analyze(path, n_boot=N_BOOT, objective="actor/kl", diagnostic=["eval/*"],
                         diagnostics=False)
    assert {c.metric for c in a.curves} == {"train/reward", "actor/kl"}
    assert {m.metric for m in a.diagnostic_metrics} == {"actor/entropy", "eval/math500/accuracy"}
    assert a.settings["objective"] == ["actor/kl"] and a.settings["diagnostic"] == ["eval/*"]
    runner = CliRunner()
    res = runner.invoke(app, ["analyze", str(path), "--n-boot", str(N_BOOT), "--format", "json",
                              "--diagnostic", "train/*", "--objective", "actor/entropy"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {c["metric"] for c in doc["curves"]} == {"eval/math500/accuracy", "actor/entropy"}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "saturate.toml").write_text('diagnostic = ["eval/*"]\nobjective = ["actor/kl"]\n')
    res = runner.invoke(app, ["analyze", str(path), "--n-boot", str(N_BOOT), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert {c["metric"] for c in json.loads(res.stdout)["curves"]} == {"train/reward", "actor/kl"}
    res = runner.invoke(app, ["analyze", str(path), "--objective", "eval/*",
                              "--diagnostic", "eval/math*"])
    assert res.exit_code == 2 and "both objective" in res.stderr


def test_real_verl_logs_judge_the_rewards_only() -> None:
    raw = pd.read_csv(realcurves_path("verl_llm_ppo", "verl_gsm8k_ppo_metrics_long.csv.gz"))
    df = saturate.load(raw.rename(columns={"log": "run"})).points
    roles = curve_roles(df).groupby("metric")["role"].agg(set).to_dict()
    assert roles == {
        "critic/score/mean": {"objective"}, "critic/rewards/mean": {"objective"},
        "test_score/openai/gsm8k": {"objective"}, "actor/entropy_loss": {"diagnostic"},
        "critic/kl": {"diagnostic"}, "response_length/mean": {"diagnostic"}}
    gemma = df[df["run"].str.startswith("gemma")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(gemma, n_boot=N_BOOT)
    assert {c.metric for c in a.curves} == {"critic/score/mean", "critic/rewards/mean",
                                             "test_score/openai/gsm8k"}
    assert {m.metric for m in a.diagnostic_metrics} == {"actor/entropy_loss", "critic/kl",
                                                        "response_length/mean"}
    assert not [d for d in a.diagnostics if d.kind in ("slices", "slice_saturated")]
