"""Metric direction rules: name words, overrides, and never the trend."""

from __future__ import annotations

import numpy as np
import pytest

from saturate.errors import SettingsError
from saturate.vocabulary.names import metric_direction, signed, unsigned


@pytest.mark.parametrize(
    "name",
    [
        "loss",
        "train/loss",
        "eval_loss",
        "actor/pg_loss",
        "val/error",
        "test_err",
        "perplexity",
        "eval/ppl",
        "cumulative_regret",
        "latency_ms",
        "policyLoss",
        "valueLoss/mean",
        "eval/mse",
        "wer",
        "test_cross_entropy",
        "val/CrossEntropy",
        "eval/xent",
    ],
)
def test_lower_is_better_words(name: str) -> None:
    assert metric_direction(name) == "lower"


@pytest.mark.parametrize(
    "name",
    [
        "reward",
        "eval/return",
        "episode_reward_mean",
        "val/test_score/openai/gsm8k",
        "accuracy",
        "success_rate",
        "critic/kl",
        "glossary_hits",  # "loss" inside a word is not the word loss
        "terror_level",
        "loss_reduction",  # a lower-is-better word qualified by a higher-is-better one
        "error_free_rate",
    ],
)
def test_higher_is_better_by_default(name: str) -> None:
    assert metric_direction(name) == "higher"


def test_overrides_win_over_name_rules() -> None:
    assert metric_direction("reward", lower_is_better=("rew*",)) == "lower"
    assert metric_direction("eval/loss", higher_is_better=("eval/*",)) == "higher"
    assert metric_direction("cost", lower_is_better="co*") == "lower"
    # A pattern that does not match leaves the name rule in charge.
    assert metric_direction("train/loss", higher_is_better=("reward*",)) == "lower"


def test_conflicting_overrides_are_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="both"):
        metric_direction("x/score", lower_is_better=("x/*",), higher_is_better=("*score",))


def test_direction_ignores_the_trend() -> None:
    # The rule only sees the name: a falling reward stays higher-is-better (a decline, not progress).
    assert metric_direction("reward") == "higher"


def test_signed_flips_only_lower_is_better() -> None:
    v = np.array([1.0, -2.0])
    np.testing.assert_array_equal(signed(v, "higher"), v)
    np.testing.assert_array_equal(signed(v, "lower"), -v)
    np.testing.assert_array_equal(unsigned(signed(v, "lower"), "lower"), v)
