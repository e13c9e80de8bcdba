"""Rules the per-curve analysis and the diagnostics share, each written once: the metric-name
tokenizer, the Newey-West lag rule and standard error, the precision share and the smoothing
window."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from saturate.diagnostics.divergence import plateau_start
from saturate.measure.quantities import noise_range, smoothed_range, smoothing_window
from saturate.measure.trend import hac_slope, newey_west_lags, newey_west_se, trend_test
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


@pytest.mark.parametrize("n", [6, 12, 40])
def test_one_newey_west_rule_is_statsmodels_hac_with_its_small_sample_correction(n: int) -> None:
    """The trend test and the diagnostics' slopes use one HAC rule, ``n / (n - 2)`` included:
    statsmodels' HAC with ``use_correction=True`` (its default leaves the factor out)."""
    import statsmodels.api as sm

    rng = np.random.default_rng(n)
    c = np.linspace(1.0, 50.0, n)
    y = 0.3 * c + np.cumsum(rng.normal(0.0, 1.0, n))
    res = sm.OLS(y, sm.add_constant(c - c.mean())).fit(
        cov_type="HAC", cov_kwds={"maxlags": newey_west_lags(n), "use_correction": True},
        use_t=True)
    slope, lo, hi = hac_slope(c, y, 0.9)
    assert slope == pytest.approx(res.params[1], rel=1e-10)
    assert (lo, hi) == pytest.approx(tuple(res.conf_int(alpha=0.1)[1]), rel=1e-10)
    xc = c - c.mean()
    assert newey_west_se(xc, y - y.mean() - slope * xc, newey_west_lags(n)) == pytest.approx(
        res.bse[1], rel=1e-10)


def test_the_diagnostics_take_their_slopes_by_the_one_rule() -> None:
    from saturate.diagnostics import instability

    c = np.linspace(1.0, 30.0, 12)
    y = 2.0 * c + np.sin(c)
    assert instability._linear_slope(c, y, 0.9) == hac_slope(c, y, 0.9)
    source = Path(instability.__file__).read_text(encoding="utf-8")
    assert "statsmodels" not in source and "cov_type" not in source


def test_one_precision_share_for_the_reasons_and_the_suite_probability() -> None:
    """The fit's share in the reasons (``weighed by their precision (the fit 34%)``) and the
    suite's average of two probabilities weigh by one rule: inverse squared errors."""
    from saturate.measure import precision_share
    from saturate.measure.evidence import combine

    assert precision_share(1.0, 1.0) == 0.5
    assert precision_share(1.0, 2.0) == pytest.approx(0.8)
    assert precision_share(2e-300, 1e300) == 1.0 and precision_share(1e300, 1e-300) == 0.0
    assert precision_share(0.0, 1.0) == 1.0 and precision_share(1.0, 0.0) == 0.0
    assert precision_share(math.inf, 1.0) == 0.0 and precision_share(math.nan, 1.0) == 0.0
    assert precision_share(1.0, math.inf) == 1.0
    # the share is the weight the combined estimate gives the first
    w = precision_share(0.3, 0.5)
    assert combine(((1.0, 0.3), (3.0, 0.5)), 1.0)[0] == pytest.approx(w * 1.0 + (1 - w) * 3.0)


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
