"""Per-curve quantities (pure maths) and analyze_curve on curves built to have each verdict, with
the real fitting engine (the call itself: tests/test_decide.py)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from realdata import realcurves_path
from scipy.optimize import brentq

from saturate.analysis import AnalysisSettings, analyze_curve, analyze_table, parse_min_gain
from saturate.errors import SettingsError
from saturate.measure.evidence import fit_knee
from saturate.measure.quantities import (
    find_stop_point,
    gain_per_doubling,
    headroom,
    honest_forecast,
    noise_range,
    roi_stage,
    share_above,
    smoothed_range,
    threshold_for,
)
from saturate.results import Estimate, ForecastPoint
from saturate.table.curves import tidy

FAST = AnalysisSettings(n_boot=60, seed=0)


# ---- pure maths ---------------------------------------------------------------------------------


def test_gain_per_doubling_of_a_log_linear_curve_is_its_slope() -> None:
    rng = np.random.default_rng(0)
    b = rng.normal(0.5, 0.05, 400)

    def predict(c: np.ndarray) -> np.ndarray:
        return 1.0 + 0.5 * np.log2(c)

    def samples(c: np.ndarray) -> np.ndarray:
        return 1.0 + b[:, None] * np.log2(c)[None, :]

    g = gain_per_doubling(predict, samples, 1000.0, confidence=0.9)
    assert g.value == pytest.approx(0.5)
    assert g.lo == pytest.approx(0.5 - 1.645 * 0.05, abs=0.015)
    assert g.hi == pytest.approx(0.5 + 1.645 * 0.05, abs=0.015)
    wider = gain_per_doubling(predict, samples, 1000.0, confidence=0.9, extra_se=0.1)
    assert wider.value == g.value and wider.lo < g.lo - 0.05 and wider.hi > g.hi + 0.05
    # Share of draws above 0.5 is about half; above 0.4, nearly all.
    assert share_above(samples, 1000.0, 0.5) == pytest.approx(0.5, abs=0.08)
    assert share_above(samples, 1000.0, 0.4) > 0.95
    assert share_above(None, 1000.0, 0.4) is None
    no_interval = gain_per_doubling(predict, None, 10.0)
    assert no_interval.value == pytest.approx(0.5) and not no_interval.identified


@pytest.mark.parametrize(
    ("roi", "stage"),
    [
        (2.0, "initial"),
        (1.5, "transition"),
        (0.8, "transition"),
        (0.5, "knee"),
        (0.1, "plateau"),
        (-0.2, "negative"),
        (math.nan, "unknown"),
    ],
)
def test_roi_stages_use_the_practitioners_thresholds(roi: float, stage: str) -> None:
    assert roi_stage(roi) == stage


def test_knee_is_where_the_gain_per_doubling_shrinks_for_good() -> None:
    tau = 50.0

    def f(c: np.ndarray) -> np.ndarray:
        return 1.0 - np.exp(-np.asarray(c, float) / tau)

    # the next doubling's gain over the last one's, e^-x (1 - e^-x) / (e^-x/2 (1 - e^-x/2)),
    # falls below 0.8 once
    def ratio(x: float) -> float:
        g = lambda a, b: math.exp(-a) - math.exp(-b)  # noqa: E731
        return g(x, 2 * x) / g(x / 2, x)

    x = brentq(lambda x: ratio(x) - 0.8, 0.01, 5)
    assert fit_knee(f, 1.0, 500.0) == pytest.approx(x * tau, rel=0.03)
    # a steady log-linear climb holds its gain per doubling: no knee
    assert math.isnan(fit_knee(lambda c: np.log(c / 0.5), 1.0, 1000.0))
    # nor has an accelerating curve, nor a falling one
    assert math.isnan(fit_knee(lambda c: np.asarray(c, float) ** 1.2, 1.0, 100.0))
    assert math.isnan(fit_knee(lambda c: -np.log(np.asarray(c, float)), 1.0, 100.0))


def test_stop_point_of_a_saturating_power_law() -> None:
    big_b, a, t = 10.0, 0.5, 0.05

    def f(c: np.ndarray) -> np.ndarray:
        return 5.0 - big_b * np.asarray(c, float) ** -a

    # Gain per doubling B c^-a (1 - 2^-a) falls below t at c* = (B (1 - 2^-a) / t)^(1 / a).
    c_star = (big_b * (1 - 2**-a) / t) ** (1 / a)
    stop = find_stop_point(f, None, 1.0, 1e6, t)
    assert stop is not None and stop.value == pytest.approx(c_star, rel=0.05)
    assert not stop.identified  # no draws, no interval
    rng = np.random.default_rng(1)
    bs = rng.normal(big_b, 0.5, 200)

    def samples(c: np.ndarray) -> np.ndarray:
        return 5.0 - bs[:, None] * np.asarray(c, float)[None, :] ** -a

    stop = find_stop_point(f, samples, 1.0, 1e6, t)
    assert stop.lo < c_star < stop.hi and stop.identified
    # A curve that keeps gaining more than t per doubling has no stop point.
    assert find_stop_point(lambda c: np.log2(c), None, 1.0, 1e6, 0.5) is None


def test_headroom_is_signed_so_positive_means_room_to_improve() -> None:
    up = headroom(Estimate(1.0, 0.9, 1.2), 0.7, "higher")
    assert up.value == pytest.approx(0.3) and up.lo == pytest.approx(0.2)
    down = headroom(Estimate(2.0, 1.8, 2.1), 2.5, "lower")  # a loss can still fall by 0.5
    assert down.value == pytest.approx(0.5)
    assert down.lo == pytest.approx(0.4) and down.hi == pytest.approx(0.7)
    assert not headroom(Estimate(math.nan, identified=False), 1.0, "higher").identified


def test_min_gain_parsing_and_threshold() -> None:
    assert parse_min_gain("3%") == (3.0, True)
    assert parse_min_gain(0.02) == (0.02, False)
    assert parse_min_gain("0.5") == (0.5, False)
    for bad in ("-1", "abc", "3 percent", True, math.inf):
        with pytest.raises(SettingsError, match="min_gain"):
            parse_min_gain(bad)
    y = np.r_[np.zeros(50), np.ones(50) * 10]
    assert smoothed_range(y) == pytest.approx(10.0)
    t = threshold_for("reward", y, AnalysisSettings(min_gain="5%"))
    assert t.value == pytest.approx(0.5) and (t.share, t.basis) == (0.05, "range")
    s = AnalysisSettings(thresholds={"eval/*": 0.2})
    assert threshold_for("eval/score", y, s)[0] == 0.2
    assert threshold_for("train/score", y, s)[0] == pytest.approx(0.3)


def test_settings_are_validated() -> None:
    with pytest.raises(SettingsError, match="confidence"):
        AnalysisSettings.checked(confidence=1.5)
    with pytest.raises(SettingsError, match=r"thresholds\['x'\]"):
        AnalysisSettings.checked(thresholds={"x": "lots"})
    with pytest.raises(SettingsError, match="n_boot"):
        AnalysisSettings.checked(n_boot=-1)


def test_smoothed_range_ignores_a_single_outlier() -> None:
    y = np.r_[np.linspace(0, 1, 100)]
    y[50] = 5.0
    assert smoothed_range(y) < 1.5


# ---- analyze_curve on synthetic curves -----------------------------------------------------------


def _curve(c: np.ndarray, y: np.ndarray, metric: str = "reward") -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "run_id": "r1",
            "run": "run-1",
            "metric": metric,
            "step": np.arange(c.size),
            "compute": c,
            "value": y,
        }
    )
    return tidy(df, origin="test")


def test_scaling_curve() -> None:
    rng = np.random.default_rng(0)
    c = np.linspace(10, 1000, 80)
    res = analyze_curve(_curve(c, 0.002 * c + rng.normal(0, 0.02, c.size)), FAST)
    assert res.verdict == "scaling", res.summary()
    assert res.gain_per_doubling.lo > res.threshold
    assert res.roi >= 0.8 and res.roi_stage in ("transition", "initial")  # accelerating
    assert res.forecast and res.forecast[0].compute == pytest.approx(2000.0)
    assert res.laws and res.trend is not None and res.collapse is None


def test_a_steady_log_linear_gain_is_scaling() -> None:
    rng = np.random.default_rng(1)
    c = np.arange(1.0, 301.0)
    res = analyze_curve(_curve(c, 0.5 * np.log2(c) + rng.normal(0, 0.05, c.size)), FAST)
    assert res.verdict == "scaling", res.summary()
    assert res.gain_per_doubling.value == pytest.approx(0.5, abs=0.15)
    assert res.roi == pytest.approx(1.0, abs=0.2) and res.knee is None


def test_slowing_curve() -> None:
    rng = np.random.default_rng(1)
    c = np.arange(1.0, 301.0)
    y = 3.0 - 3.0 * c**-0.5 + rng.normal(0, 0.005, c.size)  # gains shrink by 2^-0.5 a doubling
    res = analyze_curve(_curve(c, y), FAST)
    assert res.verdict == "slowing", res.summary()
    assert res.roi < 0.8 and res.roi_stage in ("knee", "plateau")


def test_saturated_curve() -> None:
    rng = np.random.default_rng(2)
    c = np.arange(1.0, 301.0)
    res = analyze_curve(_curve(c, 1 - np.exp(-c / 20) + rng.normal(0, 0.01, c.size)), FAST)
    assert res.verdict == "saturated", res.summary()
    assert res.gain_per_doubling.value < res.threshold
    assert res.stop_point is not None and res.stop_point.value < 300
    assert "the next doubling does not pay" in res.reasons[0]


def test_regressing_curve_with_a_collapse() -> None:
    rng = np.random.default_rng(3)
    c = np.arange(1.0, 201.0)
    y = 1 - np.exp(-c / 20) + rng.normal(0, 0.02, c.size)
    y[150:] -= 0.7
    res = analyze_curve(_curve(c, y), FAST)
    assert res.verdict == "regressing", res.summary()
    assert res.collapse is not None and abs(res.collapse.compute - 151) <= 3
    assert res.collapse.level_after < res.collapse.level_before
    assert "collapse" in res.flags and res.reasons[1].startswith("collapse at compute")


def test_lower_is_better_loss_that_keeps_falling_is_gaining() -> None:
    rng = np.random.default_rng(4)
    c = np.linspace(10, 1000, 100)
    loss = 2.0 + 50.0 * c**-0.5 + rng.normal(0, 0.01, c.size)
    res = analyze_curve(_curve(c, loss, metric="eval/loss"), FAST)
    assert res.direction == "lower"
    assert res.gain_per_doubling.value > 0  # signed: positive is better
    assert res.verdict in ("scaling", "slowing"), res.summary()
    # The same numbers called a reward fall: never inferred from the trend.
    flipped = analyze_curve(_curve(c, loss, metric="reward"), FAST)
    assert flipped.direction == "higher" and flipped.gain_per_doubling.value < 0
    assert flipped.verdict in ("saturated", "regressing")


def test_too_few_points_are_inconclusive_and_a_constant_curve_saturated() -> None:
    short = analyze_curve(_curve(np.arange(1.0, 5.0), np.array([1.0, 2, 3, 4])), FAST)
    assert short.verdict == "inconclusive" and "only 4 point(s)" in short.reasons[0]
    assert short.p_pays is None
    flat = analyze_curve(_curve(np.arange(1.0, 31.0), np.full(30, 0.5)), FAST)
    assert flat.verdict == "saturated" and flat.p_pays == 0.0, flat.summary()
    zero = analyze_curve(_curve(np.arange(1.0, 31.0), np.zeros(30)), FAST)  # no scale at all
    assert zero.verdict == "inconclusive"
    for res in (short, flat, zero):
        json.dumps(res.to_dict())
        assert res.summary()


def test_analyze_curve_is_pure_and_deterministic() -> None:
    rng = np.random.default_rng(5)
    c = np.arange(1.0, 101.0)
    pts = _curve(c, np.log(c) + rng.normal(0, 0.1, c.size))
    before = pts.copy()
    a = analyze_curve(pts, FAST)
    b = analyze_curve(pts, FAST)
    pd.testing.assert_frame_equal(pts, before)
    assert a.to_dict() == b.to_dict()
    text = json.dumps(a.to_dict())
    assert '"verdict"' in text and "NaN" not in text


def test_analyze_table_pools_seeds_with_group_by() -> None:
    rng = np.random.default_rng(6)
    frames = []
    for lr, slope in (("1e-3", 0.4), ("1e-4", 0.0)):
        for seed in range(3):
            s = np.arange(1, 121)
            y = 1 + slope * np.log2(s) + rng.normal(0, 0.05, s.size) + 0.1 * seed
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": f"{lr}-{seed}",
                        "metric": "reward",
                        "step": s,
                        "value": y,
                        "params.lr": lr,
                        "params.seed": str(seed),
                    }
                )
            )
    df = tidy(pd.concat(frames, ignore_index=True), origin="test")
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pooling aligned seeds repairs nothing
        out = analyze_table(
            df,
            AnalysisSettings(group_by="lr", n_boot=60),
            progress=lambda i, n: calls.append((i, n)),
        )
    assert calls == [(1, 2), (2, 2)]
    by = {r.run: r for r in out}
    assert set(by) == {"lr=1e-3", "lr=1e-4"}
    fast, flat = by["lr=1e-3"], by["lr=1e-4"]
    assert fast.group["n_seeds"] == 3 and fast.group["by"] == "params.lr"
    assert fast.group["runs"] == ["1e-3-0", "1e-3-1", "1e-3-2"]
    assert fast.verdict in ("scaling", "slowing")
    assert flat.verdict in ("saturated", "inconclusive")
    assert any("spread across seeds" in r for r in fast.reasons)
    json.dumps(fast.to_dict())


def test_gradual_decline_is_regressing_without_a_collapse() -> None:
    rng = np.random.default_rng(7)
    c = np.arange(1.0, 101.0)
    res = analyze_curve(_curve(c, 1 - 0.1 * np.log2(c) + rng.normal(0, 0.02, c.size)), FAST)
    assert res.verdict == "regressing", res.summary()
    assert res.collapse is None
    assert res.reasons[1].startswith("falling: the recent trend per doubling")
    assert res.roi_stage in ("negative", "plateau")
    assert res.stop_point is None  # it never gained the threshold, so it cannot stop gaining it


# ---- real curves (vendored under tests/data/realcurves) -----------------------------------------


def _dopamine(game: str, agent: str) -> pd.DataFrame:
    df = pd.read_csv(realcurves_path("dopamine", "dopamine_baselines_long.csv.gz"))
    d = df[(df["game"] == game) & (df["variant"] == "legacy_tf") & (df["agent"] == agent)]
    return tidy(
        pd.DataFrame(
            {
                "run_id": f"{game}-{agent}-s" + d["seed"].astype(str),
                "metric": "return",
                "step": d["iteration"] + 1,
                "value": d["value"],
                "params.agent": agent,
                "params.seed": d["seed"].astype(str),
            }
        ),
        origin="dopamine",
    )


def test_real_pong_plateau_is_saturated_and_breakout_decline_is_regressing() -> None:
    settings = AnalysisSettings(group_by="agent", n_boot=60)
    (pong,) = analyze_table(_dopamine("pong", "Rainbow"), settings)
    assert pong.group["n_seeds"] == 5
    assert pong.verdict == "saturated", pong.summary()
    assert pong.value_last == pytest.approx(20.1, abs=0.5)  # Pong's ceiling is 21
    (breakout,) = analyze_table(_dopamine("breakout", "DQN"), settings)
    assert breakout.verdict == "regressing", breakout.summary()
    assert breakout.trend.slope_per_doubling.hi < 0


# ---- extrapolation uncertainty, fit vs trend, noise -----------------------------------------------


def test_noise_range_is_the_typical_range_of_pure_noise_after_smoothing() -> None:
    rng = np.random.default_rng(3)
    for n in (16, 100, 1000):
        ranges = np.array([smoothed_range(rng.normal(0, 1.0, n)) for _ in range(200)])
        share_below = np.mean(ranges < noise_range(n, 1.0))
        assert 0.35 < share_below < 0.65, (n, share_below)
    assert noise_range(100, 2.0) == pytest.approx(2 * noise_range(100, 1.0))
    assert noise_range(100, 1.0) == noise_range(100, 1.0)  # deterministic
    assert math.isnan(noise_range(1, 1.0)) and math.isnan(noise_range(50, 0.0))
    # A steady rise of three noise sd over the curve is beyond it.
    x = np.linspace(0, 3, 100)
    assert smoothed_range(x + rng.normal(0, 1.0, 100)) > noise_range(100, 1.0)


def test_honest_forecast_shrinks_what_cannot_be_told_from_no_change() -> None:
    wild = ForecastPoint("2x", 200.0, 5.0, 4.0, 6.0)  # +4 over the level, se 0.6 from the draws
    out = honest_forecast((wild,), 100.0, 1.0, extra_se=20.0)[0]
    assert abs(out.value - 1.0) < 0.2  # an extrapolation error of 20 per doubling: ~no change
    assert out.lo <= out.value <= out.hi and out.hi - out.lo > 60
    firm = honest_forecast((wild,), 100.0, 1.0, extra_se=0.01)[0]
    assert firm.value == pytest.approx(5.0, abs=0.15) and firm.lo < firm.value < firm.hi
    # Points inside the data are left alone; a point forecast outside its draws' interval is
    # brought inside its widened interval.
    inside = ForecastPoint("0.5x", 50.0, 0.7, 0.6, 0.8)
    assert honest_forecast((inside,), 100.0, 1.0, extra_se=5.0)[0] == inside
    odd = ForecastPoint("4x", 400.0, 3.0, 3.2, 3.5)
    out = honest_forecast((odd,), 100.0, 1.0, extra_se=0.1)[0]
    assert out.lo <= out.value <= out.hi


def test_sigmoid_right_after_its_steep_rise_is_not_called_saturated() -> None:
    # A hard eval slice early on its sigmoid (midpoint at 1.6x the budget): the laws can bend the
    # curve into a plateau at the last points, but the fit's rolling-origin record says that
    # extrapolation is unreliable and the recent trend is clearly up.
    rng = np.random.default_rng(4)
    c = np.geomspace(40, 2000, 40)
    y = 0.03 + 0.37 / (1 + (3200 / c) ** 2.2) + rng.normal(0, 0.01, c.size)
    res = analyze_curve(_curve(c, y, "eval/olympiad/score"), FAST)
    assert res.verdict in ("scaling", "slowing"), res.summary()
    assert res.fit.extrapolation_se > res.threshold
    # the trend carries more of the call than the fit (weighed by precision, the trend's error
    # including how much its slope changed from the doubling before)
    assert res.evidence.trend_se < res.evidence.fit_se, res.reasons[0]


def test_short_noisy_smoke_test_is_inconclusive() -> None:
    # 16 points of an early sigmoid with reward noise about as large as the whole rise so far
    # (sample_runs scenario 7): neither the fit nor the trend can tell, the range is noise.
    rng = np.random.default_rng(1)
    c = np.linspace(1.25, 24, 16)
    y = 0.25 + 0.35 / (1 + 72 / c) + rng.normal(0, 0.07, c.size)
    res = analyze_curve(_curve(c, y), FAST)
    assert res.verdict == "inconclusive", res.summary()
    assert any(r.startswith("inconclusive at P(pays)") for r in res.reasons)
