"""The Diagnostic record, the settings, and the naming conventions."""

import json

import pytest

from saturate.diagnostics import KINDS, Diagnostic, DiagnosticSettings, parse_pairs
from saturate.errors import SettingsError
from saturate.vocabulary.roles import (
    is_benchmark,
    is_entropy,
    is_kl,
    is_length,
    is_reward,
    pass_at_k,
    slice_families,
    subtask_families,
)


def test_diagnostic_to_dict_is_json_safe():
    d = Diagnostic("divergence", "warning", "r", "id", ("train/reward", "eval/x"), "msg",
                   compute=float("nan"), details={"a": (1, 2), "b": float("inf")})
    doc = json.loads(json.dumps(d.to_dict(), allow_nan=False))
    assert doc["kind"] == "divergence" and doc["metrics"] == ["train/reward", "eval/x"]
    assert doc["compute"] is None and doc["details"] == {"a": [1, 2], "b": None}
    assert d.summary().startswith("[warning] divergence r:")
    with pytest.raises(ValueError):
        Diagnostic("divergence", "fatal", "r", "id", (), "m")
    assert {"divergence", "sharpening", "entropy_collapse", "kl_blowup", "length_runaway",
            "gradient_conflict", "slice_saturated"} <= set(KINDS)


def test_pairs_from_config_shapes():
    assert parse_pairs({"train/reward": ["eval/*", "bench/*"]}) == (
        ("train/reward", "eval/*"), ("train/reward", "bench/*"))
    assert parse_pairs([["r", "b"]]) == (("r", "b"),)
    assert parse_pairs([{"reward": "r", "benchmark": ["b1", "b2"]}]) == (("r", "b1"), ("r", "b2"))
    with pytest.raises(SettingsError, match="pairs"):
        parse_pairs([["only-one"]])
    with pytest.raises(SettingsError, match="pairs"):
        parse_pairs("train/reward")


def test_settings_are_checked():
    with pytest.raises(SettingsError, match="budget"):
        DiagnosticSettings.checked(budget=-5)
    with pytest.raises(SettingsError, match="targets"):
        DiagnosticSettings.checked(targets={"eval/*": "high"})
    with pytest.raises(SettingsError, match="confidence"):
        DiagnosticSettings.checked(confidence=0.2)


def test_naming_conventions():
    assert is_reward("train/reward") and is_reward("critic/score/mean")
    assert not is_reward("eval/math/score") and not is_reward("actor/kl")
    assert is_benchmark("eval/math500/accuracy") and is_benchmark("val/test_score/openai/gsm8k")
    assert not is_benchmark("train/reward")
    assert is_entropy("actor/entropy") and is_entropy("actor/entropy_loss")
    assert is_kl("actor/kl") and is_kl("critic/kl") and not is_kl("eval/skill")
    assert is_length("response_length/mean") and not is_length("eval/length_generalisation")
    assert pass_at_k("eval/aime/pass@64") == ("eval/aime/pass@{k}", 64)
    assert pass_at_k("eval/aime/accuracy") is None
    fam = slice_families(["eval/easy/score", "eval/hard/score", "eval/math", "train/reward"])
    assert fam == {"eval/*/score": [("easy", "eval/easy/score"), ("hard", "eval/hard/score")]}
    sub = subtask_families(["eval/gsm8k", "eval/math", "train/reward", "train/kl"])
    assert list(sub) == ["eval/*"]


def test_a_curve_without_analysis_takes_the_users_threshold():
    """A metric the diagnostics read without a verdict (a benchmark set as --diagnostic, a
    reward not among the objectives) is held to --min-gain, not to the default 3%."""
    import numpy as np

    from saturate.diagnostics.base import CurveRef, DiagnosticSettings, threshold
    from saturate.settings import Settings

    values = np.linspace(0.0, 1.0, 20)
    ref = CurveRef("s", "r", "r", "eval/acc", np.arange(1.0, 21.0), values, "higher")
    observed = threshold(ref) / 0.03  # the default: 3% of the (smoothed) observed range
    assert 0.9 < observed <= 1.0
    assert threshold(ref, DiagnosticSettings.from_settings(Settings.build(min_gain=0.05))) == 0.05
    per_metric = DiagnosticSettings.from_settings(Settings.build(thresholds={"eval/*": "10%"}))
    assert threshold(ref, per_metric) == pytest.approx(0.1 * observed)
