"""Forecasts from the call's gain (saturate.analysis.projection), the innovation of a doubling
and the persistence trend's own error (saturate.analysis.decision / outlook)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from saturate.analysis import AnalysisSettings, analyze_curve
from saturate.analysis.decision import DecisionSettings, decide, innovation_sd
from saturate.analysis.outlook import Outlook
from saturate.analysis.projection import accumulation, project
from saturate.results import ForecastPoint
from saturate.table.curves import tidy

FAST = AnalysisSettings(n_boot=40)


def _curve(c: np.ndarray, y: np.ndarray, metric: str = "eval/score") -> pd.DataFrame:
    return tidy(pd.DataFrame({"run_id": "r", "metric": metric, "step": np.arange(c.size),
                              "compute": c, "value": y}), origin="test")


def test_accumulation_follows_the_fit_within_one_and_h_doublings() -> None:
    assert accumulation(1.0, 0.1, 0.1) == 1.0
    assert accumulation(2.0, 0.1, 0.15) == pytest.approx(1.5)  # a slowing fit
    assert accumulation(2.0, 0.1, 0.5) == 2.0  # never more than the pace repeated
    assert accumulation(2.0, 0.1, 0.05) == 1.0  # never less than the next doubling
    assert accumulation(2.0, math.nan, math.nan) == 2.0  # no fit: the pace repeats
    assert accumulation(2.0, -0.1, -0.3) == 2.0


def test_forecasts_are_the_level_plus_the_calls_gain_and_stay_in_the_domain() -> None:
    o = Outlook(threshold=0.01, scale=0.5, level=0.9, fit_gain=0.06, fit_se=0.01,
                trend_gain=0.06, trend_se=0.01, lower=-0.9, upper=0.1)
    d = decide(o, settings=DecisionSettings(innovation=0.0))
    pts = tuple(ForecastPoint(f"{k}x", k * 10.0, math.nan, math.nan, math.nan) for k in (2, 4))
    two, four = project(o, d, pts, 10.0, shape=None)
    assert two.value == pytest.approx(o.level + d.gain.value)
    assert two.lo <= two.value <= two.hi <= 1.0
    assert four.value <= 1.0 and four.hi <= 1.0  # twice the gain would cross 1: held at it
    lower = Outlook(threshold=0.01, scale=0.5, level=0.2, direction="lower", fit_gain=0.05,
                    fit_se=0.01, trend_gain=0.05, trend_se=0.01, lower=-0.8, upper=0.2)
    (f2,) = project(lower, decide(lower), pts[:1], 10.0)
    assert f2.value < lower.level  # a loss that gains falls


def test_reported_gain_is_the_difference_of_the_reported_forecasts() -> None:
    rng = np.random.default_rng(3)
    c = np.arange(1.0, 81.0)
    res = analyze_curve(_curve(c, 0.2 + 0.05 * np.log2(c) + rng.normal(0, 0.02, c.size)), FAST)
    two = next(f for f in res.forecast if f.at == "2x")
    assert two.value - res.outlook.level == pytest.approx(res.gain_per_doubling.value)
    assert res.gain_per_doubling.lo <= res.gain_per_doubling.value <= res.gain_per_doubling.hi


def test_a_smooth_curve_has_no_innovation_and_a_noisy_one_does() -> None:
    smooth = Outlook(threshold=0.01, scale=1.0, level=0.0, noise=0.0, doublings=5.0)
    noisy = Outlook(threshold=0.01, scale=1.0, level=0.0, noise=0.04, doublings=5.0)
    s = DecisionSettings(innovation=2.0)
    assert innovation_sd(smooth, s) == 0.0
    assert innovation_sd(noisy, s) == pytest.approx(2.0 * math.sqrt(0.2 * 0.04))
    assert innovation_sd(Outlook(threshold=0.01, scale=1.0, level=0.0), s) == 0.0


def test_innovation_makes_a_plateau_less_sure_of_itself() -> None:
    flat = Outlook(threshold=0.03, scale=1.0, level=0.0, fit_gain=0.0, fit_se=0.001,
                   trend_gain=0.0, trend_se=0.001, noise=0.05, doublings=4.0)
    sure = decide(flat, settings=DecisionSettings(innovation=0.0)).p_pays
    humble = decide(flat, settings=DecisionSettings(innovation=2.0)).p_pays
    assert sure < 1e-6 < humble < 0.5


def test_the_trend_of_a_bending_curve_carries_its_change_of_slope() -> None:
    # a clean sigmoid past its midpoint: the last doubling's slope overstates the next one's
    c = np.linspace(0.02, 1.0, 100)
    y = 0.1 + 0.5 / (1 + (0.2 / c) ** 2.0) + np.random.default_rng(0).normal(0, 0.003, c.size)
    res = analyze_curve(_curve(c, y), FAST)
    tr = res.trend.slope_per_doubling
    own_se = (tr.hi - tr.lo) / (2 * 1.6448536)
    assert res.outlook.trend_se > 3 * own_se
    assert res.outlook.fit_se < res.outlook.trend_se  # the fit, which sees the bend, leads


def test_after_a_collapse_the_trend_is_the_one_since_the_drop() -> None:
    rng = np.random.default_rng(3)
    c = np.arange(1.0, 201.0)
    y = 1 - np.exp(-c / 20) + rng.normal(0, 0.02, c.size)
    y[150:] -= 0.7
    res = analyze_curve(_curve(c, y, "train/reward"), FAST)
    assert res.collapse is not None and res.verdict == "regressing"
    # the recent-window trend straddles the drop; the outlook's does not
    assert res.trend.slope_per_doubling.value < -0.3
    assert abs(res.outlook.trend_gain) < 0.1
