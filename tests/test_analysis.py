"""Per-curve quantities (pure maths), verdict rules, and analyze_curve on curves built to have
each verdict, with the real fitting engine."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from realdata import realcurves_path
from scipy.optimize import brentq

from saturate.analysis import (
    AnalysisSettings,
    Evidence,
    analyze_curve,
    analyze_table,
    decide_verdict,
    elasticity,
    find_knee,
    find_stop_point,
    gain_per_doubling,
    headroom,
    honest_forecast,
    noise_range,
    parse_min_gain,
    roi_stage,
    share_above,
    smoothed_range,
    threshold_for,
)
from saturate.errors import SettingsError
from saturate.results import Collapse, Estimate, ForecastPoint, Trend
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


@pytest.mark.parametrize("a", [0.2, 0.8, 1.5])
def test_roi_is_the_elasticity_of_the_gain(a: float) -> None:
    def f(c: np.ndarray) -> np.ndarray:
        return 3.0 + 2.0 * np.asarray(c, float) ** a

    roi = elasticity(f, np.array([10.0, 1000.0]), r0=3.0)
    np.testing.assert_allclose(roi, a, rtol=1e-3)


def test_roi_is_negative_on_a_falling_curve_and_nan_when_not_defined() -> None:
    def falling(c: np.ndarray) -> np.ndarray:
        return 10.0 - np.log(c)

    assert elasticity(falling, 100.0, r0=0.0)[0] < 0  # above R0 but falling
    assert elasticity(falling, 100.0, r0=20.0)[0] < 0  # below R0 and falling
    assert math.isnan(elasticity(lambda c: np.log(c), 0.5, r0=1.0)[0])  # below R0, rising


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


def test_knee_is_where_roi_first_falls_below_0_8() -> None:
    tau = 50.0

    def f(c: np.ndarray) -> np.ndarray:
        return 1.0 - np.exp(-np.asarray(c, float) / tau)

    # Elasticity of 1 - exp(-x) is x e^-x / (1 - e^-x); it crosses 0.8 once.
    x = brentq(lambda x: x * math.exp(-x) / (1 - math.exp(-x)) - 0.8, 0.01, 5)
    knee = find_knee(f, 0.0, 1.0, 500.0)
    assert knee == pytest.approx(x * tau, rel=0.03)
    # A log-linear curve starts below 0.8 far from its origin: no knee to find.
    assert find_knee(lambda c: np.log(c / 0.5), 0.0, 100.0, 1000.0) is None
    # A curve still accelerating has not reached its knee.
    assert find_knee(lambda c: np.asarray(c, float) ** 1.2, 0.0, 1.0, 100.0) is None


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
    thr, text = threshold_for("reward", y, AnalysisSettings(min_gain="5%"))
    assert thr == pytest.approx(0.5) and "5% of the observed range" in text
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


# ---- verdict rules ------------------------------------------------------------------------------


def _trend(v: float, lo: float, hi: float, p: float = 0.01) -> Trend:
    return Trend(Estimate(v, lo, hi), p, "test", 50.0, 100.0, 50)


def _ev(gain=None, trend=None, collapse=None, roi=1.0, p_above=None, scale=1.0) -> Evidence:
    return Evidence(
        threshold=0.03,
        threshold_text="0.03 (3% of the observed range 1)",
        gain=gain,
        trend=trend,
        collapse=collapse,
        roi=roi,
        scale=scale,
        p_above=p_above,
    )


def test_verdict_scaling_and_slowing_split_at_the_knee() -> None:
    g = Estimate(0.2, 0.1, 0.3)
    v, reasons = decide_verdict(_ev(g, _trend(0.2, 0.1, 0.3), roi=1.2))
    assert v == "scaling"
    assert "0.2 [0.1, 0.3] is above the threshold 0.03" in reasons[0]
    assert any("before the knee" in r for r in reasons)
    v, reasons = decide_verdict(_ev(g, _trend(0.2, 0.1, 0.3), roi=0.4))
    assert v == "slowing" and any("past the knee" in r for r in reasons)


def test_verdict_saturated_when_the_gain_is_below_the_threshold() -> None:
    v, reasons = decide_verdict(_ev(Estimate(0.01, 0.0, 0.02), _trend(0.01, -0.01, 0.03), roi=0.1))
    assert v == "saturated"
    assert "below the threshold 0.03" in reasons[0] and "90% confidence" in reasons[0]


def test_straddling_gain_is_decided_by_the_share_of_draws() -> None:
    g = Estimate(0.025, -0.01, 0.2)
    v, reasons = decide_verdict(_ev(g, None, p_above=0.7, roi=0.5))
    assert v == "slowing" and "70% of the bootstrap draws" in reasons[0]
    v, _ = decide_verdict(_ev(g, None, p_above=0.3))
    assert v == "saturated"
    # Without draws the point estimate decides.
    v, _ = decide_verdict(_ev(Estimate(0.025, 0.0, 0.2)))
    assert v == "saturated"


def test_verdict_regressing_on_a_collapse_or_a_real_decline() -> None:
    col = Collapse(
        compute=500.0, step=50, level_before=0.9, level_after=0.3, drop=0.6, drop_fraction=0.6
    )
    v, reasons = decide_verdict(_ev(Estimate(-0.05, -0.1, 0.0), _trend(-0.05, -0.2, 0.1), col))
    assert v == "regressing" and "collapse at compute 500" in reasons[0] and "60%" in reasons[0]
    # A collapse the curve has since made up for does not make it regress.
    v, reasons = decide_verdict(_ev(Estimate(0.2, 0.1, 0.3), _trend(0.2, 0.1, 0.3), col))
    assert v == "scaling" and any("gained since" in r for r in reasons)
    v, reasons = decide_verdict(_ev(Estimate(-0.05, -0.1, 0.0), _trend(-0.1, -0.15, -0.05)))
    assert v == "regressing" and "below zero at 90% confidence" in reasons[0]
    # A decline within noise is not regressing.
    v, _ = decide_verdict(_ev(Estimate(0.0, -0.02, 0.01), _trend(-0.1, -0.3, 0.1)))
    assert v == "saturated"


def test_verdict_inconclusive_only_when_there_is_nothing_to_go_on_or_a_coin_flip() -> None:
    v, reasons = decide_verdict(_ev(None, None))
    assert v == "inconclusive" and "no law could be fitted" in reasons[0]
    wide = Estimate(0.05, -0.8, 0.9)
    v, reasons = decide_verdict(_ev(wide, None, p_above=0.52, scale=1.0))
    assert v == "inconclusive" and "wider than the curve's whole observed range" in reasons[0]
    # Same width but a clear majority of draws: a verdict, not a hiding place.
    assert decide_verdict(_ev(wide, None, p_above=0.8, scale=1.0))[0] in ("scaling", "slowing")


def test_trend_stands_in_when_there_is_no_fitted_interval() -> None:
    v, reasons = decide_verdict(_ev(Estimate(math.nan, identified=False), _trend(0.2, 0.1, 0.3)))
    assert v in ("scaling", "slowing") and reasons[0].startswith("recent trend per doubling")


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
    assert res.roi >= 0.8 and res.roi_stage in ("transition", "initial")
    assert res.forecast and res.forecast[0].compute == pytest.approx(2000.0)
    assert res.laws and res.trend is not None and res.collapse is None


def test_slowing_curve() -> None:
    rng = np.random.default_rng(1)
    c = np.arange(1.0, 301.0)
    res = analyze_curve(_curve(c, 0.5 * np.log2(c) + rng.normal(0, 0.05, c.size)), FAST)
    assert res.verdict == "slowing", res.summary()
    assert res.gain_per_doubling.value == pytest.approx(0.5, abs=0.15)
    assert res.roi < 0.8


def test_saturated_curve() -> None:
    rng = np.random.default_rng(2)
    c = np.arange(1.0, 301.0)
    res = analyze_curve(_curve(c, 1 - np.exp(-c / 20) + rng.normal(0, 0.01, c.size)), FAST)
    assert res.verdict == "saturated", res.summary()
    assert res.gain_per_doubling.value < res.threshold
    assert res.stop_point is not None and res.stop_point.value < 300
    assert "below the threshold" in res.reasons[0]


def test_regressing_curve_with_a_collapse() -> None:
    rng = np.random.default_rng(3)
    c = np.arange(1.0, 201.0)
    y = 1 - np.exp(-c / 20) + rng.normal(0, 0.02, c.size)
    y[150:] -= 0.7
    res = analyze_curve(_curve(c, y), FAST)
    assert res.verdict == "regressing", res.summary()
    assert res.collapse is not None and abs(res.collapse.compute - 151) <= 3
    assert res.collapse.level_after < res.collapse.level_before
    assert "collapse" in res.flags and "collapse at compute" in res.reasons[0]


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


def test_too_few_points_and_constant_curves_are_inconclusive() -> None:
    short = analyze_curve(_curve(np.arange(1.0, 5.0), np.array([1.0, 2, 3, 4])), FAST)
    assert short.verdict == "inconclusive" and "only 4 point(s)" in short.reasons[0]
    flat = analyze_curve(_curve(np.arange(1.0, 31.0), np.full(30, 0.5)), FAST)
    assert flat.verdict == "inconclusive" and "never changes" in flat.reasons[0]
    for res in (short, flat):
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
    assert "below zero at 90% confidence" in res.reasons[0]
    assert res.roi_stage == "negative"
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


# ---- issue 6: extrapolation uncertainty, fit vs trend, noise --------------------------------------


def _ev2(gain, trend, *, scale=1.0, noise=0.01, noise_rng=0.05, level=0.5, p_above=None, roi=0.5):
    return Evidence(
        threshold=0.03,
        threshold_text="0.03",
        gain=gain,
        trend=trend,
        collapse=None,
        roi=roi,
        scale=scale,
        p_above=p_above,
        noise=noise,
        level_above_start=level,
        noise_range=noise_rng,
    )


def test_an_imprecise_fit_defers_to_a_precise_recent_trend() -> None:
    # The fit calls a plateau right after a steep rise but its own backtest says it cannot tell
    # (interval +-0.2); the recent trend is +0.07 +- 0.02 per doubling: the trend decides, and the
    # stage comes from the ROI the trend implies (0.07 / ln 2 / 0.09 = 1.12).
    g = Estimate(0.003, -0.2, 0.2)
    v, reasons = decide_verdict(_ev2(g, _trend(0.07, 0.05, 0.09), level=0.09, p_above=0.5, roi=0.1))
    assert v == "scaling", reasons
    assert "the trend decides" in reasons[0] and "implied by the recent trend" in reasons[1]
    # The same imprecise fit with a trend that is precisely flat: saturated.
    v, _ = decide_verdict(_ev2(g, _trend(0.0, -0.01, 0.01), p_above=0.5))
    assert v == "saturated"


def test_a_precise_fit_is_not_overruled_by_a_vague_trend() -> None:
    g = Estimate(0.05, 0.02, 0.08)  # 0.02 < threshold 0.03 < 0.08: straddles
    v, reasons = decide_verdict(_ev2(g, _trend(-0.2, -1.0, 0.6), p_above=0.8))
    assert v in ("scaling", "slowing") and "the fit decides" in reasons[0]


def test_fit_and_trend_of_similar_precision_must_agree_to_pay() -> None:
    g = Estimate(0.06, -0.02, 0.14)
    v, reasons = decide_verdict(_ev2(g, _trend(0.0, -0.08, 0.08), p_above=0.7))
    assert v == "saturated" and "not shown to pay" in reasons[0]
    v, reasons = decide_verdict(_ev2(g, _trend(0.07, -0.01, 0.15), p_above=0.7))
    assert v in ("scaling", "slowing") and "both are above" in reasons[0]
    v, reasons = decide_verdict(_ev2(Estimate(0.0, -0.08, 0.08), _trend(0.0, -0.08, 0.08)))
    assert v == "saturated" and "both are below" in reasons[0]


def test_a_curve_that_has_not_moved_beyond_its_noise_is_inconclusive_when_nothing_is_sure() -> None:
    g = Estimate(0.05, -0.02, 0.12)
    tr = _trend(0.04, -0.1, 0.18)
    v, reasons = decide_verdict(_ev2(g, tr, scale=0.11, noise=0.08, noise_rng=0.15, p_above=0.8))
    assert v == "inconclusive" and "too noisy to say" in reasons[0] and "0.08" in reasons[0]
    # The same estimates on a curve that has moved well beyond its noise get a verdict.
    v, _ = decide_verdict(_ev2(g, tr, scale=1.0, noise=0.08, noise_rng=0.15, p_above=0.8))
    assert v != "inconclusive"
    # A confident estimate is never hidden behind the noise.
    v, _ = decide_verdict(
        _ev2(Estimate(0.005, 0.0, 0.01), tr, scale=0.11, noise=0.08, noise_rng=0.15)
    )
    assert v == "saturated"


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
    assert res.outlook.trend_se < res.outlook.fit_se, res.reasons[0]


def test_short_noisy_smoke_test_is_inconclusive() -> None:
    # 16 points of an early sigmoid with reward noise about as large as the whole rise so far
    # (sample_runs scenario 7): neither the fit nor the trend can tell, the range is noise.
    rng = np.random.default_rng(1)
    c = np.linspace(1.25, 24, 16)
    y = 0.25 + 0.35 / (1 + 72 / c) + rng.normal(0, 0.07, c.size)
    res = analyze_curve(_curve(c, y), FAST)
    assert res.verdict == "inconclusive", res.summary()
    assert any("too noisy to say" in r for r in res.reasons)
