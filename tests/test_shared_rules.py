"""Rules the per-curve analysis and the diagnostics share, each written once: the metric-name
tokenizer, the Newey-West lag rule and the smoothing window."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from saturate.diagnostics.divergence import plateau_start
from saturate.measure.quantities import noise_range, smoothed_range, smoothing_window
from saturate.measure.trend import newey_west_lags, trend_test
from saturate.vocabulary.names import metric_direction, metric_tokens
from saturate.vocabulary.roles import is_reward, pass_at_k, tokens


def test_metric_tokens_split_on_separators_and_camel_case() -> None:
    assert metric_tokens("rollout/rewardMean") == ["rollout", "reward", "mean"]
    assert metric_tokens("Eval/gsm8k-acc__v2") == ["eval", "gsm8k", "acc", "v2"]
    assert metric_tokens("eval/math/pass@8") == ["eval", "math", "pass", "8"]
    assert metric_tokens("eval/math/pass@8", keep="@") == ["eval", "math", "pass@8"]
    assert metric_tokens("a-b.c", keep="-") == ["a-b", "c"]
    assert metric_tokens("") == []


def test_direction_splits_at_signs_and_naming_keeps_them() -> None:
    # The direction reads every word, so a loss logged per k is still a loss ...
    assert metric_direction("eval/loss@8") == "lower"
    # ... while the naming conventions keep pass@k whole, the name of a family.
    assert tokens("eval/aime/pass@64") == ["eval", "aime", "pass@64"]
    assert tokens("rollout/rewardMean") == metric_tokens("rollout/rewardMean")
    assert is_reward("rollout/rewardMean") and pass_at_k("eval/aime/pass@64") is not None


@pytest.mark.parametrize(("n", "lags"), [(1, 1), (6, 2), (20, 2), (50, 3), (100, 4), (1000, 6)])
def test_newey_west_lags_rule_of_thumb(n: int, lags: int) -> None:
    assert newey_west_lags(n) == lags == max(1, int(4 * (n / 100) ** (2 / 9)))


def test_the_trend_test_uses_the_lag_rule() -> None:
    c = np.linspace(1, 100, 40)
    y = np.log2(c) + np.random.default_rng(0).normal(0, 0.1, c.size)
    tr = trend_test(c, y, min_points=c.size)
    assert tr is not None and f"({newey_west_lags(tr.n_points)} lags)" in tr.method


@pytest.mark.parametrize(("n", "w"), [(2, 2), (3, 3), (29, 3), (30, 3), (40, 4), (250, 25)])
def test_smoothing_window(n: int, w: int) -> None:
    assert smoothing_window(n) == w


def test_range_and_plateau_read_the_curve_through_the_same_window() -> None:
    y = np.zeros(100)
    y[50] = 1.0  # one spike: every full window over it holds it once
    w = smoothing_window(y.size)
    assert w == 10 and smoothed_range(y) == pytest.approx(1.0 / w)
    rolled = pd.Series(y).rolling(w, center=True, min_periods=1).mean().to_numpy()
    assert plateau_start(np.arange(100.0), y, 0.0) == float(np.argmax(rolled)) == 46.0
    # Pure noise smoothed the same way has a range that shrinks as the window widens.
    assert noise_range(400, 1.0) < noise_range(40, 1.0)
