"""The call on a curve (saturate.decide): from its evidence to P(the next doubling pays), the
call, the verdict and the reasons; the siblings' prior and when it is not used; the forecasts
the call makes; the evidence measured on a curve for it (saturate.measure.evidence)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from saturate.analysis import AnalysisSettings, analyze_curve, analyze_table, with_decision
from saturate.decide import DecisionSettings, decide
from saturate.decide.decision import distribution, innovation_sd, p_pays, stage_of
from saturate.decide.settings import call_levels
from saturate.decide.siblings import (
    group_prior,
    leave_one_out_priors,
    posterior,
    sibling_key,
)
from saturate.errors import SettingsError
from saturate.measure.evidence import Evidence, backtest, combine, window_sd
from saturate.measure.quantities import accumulation, project, threshold_for
from saturate.results import Collapse, Estimate, ForecastPoint
from saturate.table.curves import tidy

FAST = AnalysisSettings(n_boot=40)


def _ev(gain: float, se: float, scale: float = 1.0, **kw) -> Evidence:
    """Evidence whose fit and trend agree on ``gain`` with combined standard error ``se``."""
    s = se * math.sqrt(2.0)
    base = dict(threshold=0.03 * scale, share=0.03, reference=scale, basis="range",
                anchor=math.nan, scale=scale, level=0.0, fit_gain=gain, fit_se=s,
                trend_gain=gain, trend_se=s, noise=0.0, compute_last=100.0)
    return Evidence(**{**base, **kw})


def _curve(c: np.ndarray, y: np.ndarray, run: str = "r1", metric: str = "eval/accuracy",
           **params: str) -> pd.DataFrame:
    df = pd.DataFrame({"run_id": run, "run": run, "metric": metric, "step": np.arange(c.size),
                       "compute": c, "value": y, **{f"params.{k}": v for k, v in params.items()}})
    return tidy(df, origin="test")


# ---- the evidence -----------------------------------------------------------------------------


def test_the_own_estimate_is_the_precision_weighted_mean() -> None:
    mean, se = combine(((1.0, 1.0), (4.0, 2.0)), 1.0)
    assert mean == pytest.approx((1.0 / 1 + 4.0 / 4) / (1 + 1 / 4))
    assert se == pytest.approx(1 / math.sqrt(1.25))
    assert combine(((math.nan, math.nan), (4.0, 2.0)), 1.0) == (4.0, 2.0)
    assert all(math.isnan(v) for v in combine(((math.nan, 1.0),), 1.0))


def test_evidence_round_trips_through_json() -> None:
    ev = _ev(0.2, 0.05, upper=0.5, trend=None, collapse=Collapse(3.0, 2, 0.9, 0.2, 0.7, 0.8),
             stop_point=Estimate(50.0, 40.0, 60.0), notes=("a note",))
    d = ev.to_dict()
    assert d["lower"] is None  # infinities are not JSON
    back = Evidence.from_dict(d)
    assert back.collapse == ev.collapse and back.stop_point == ev.stop_point
    assert back.notes == ev.notes and back.upper == ev.upper and math.isnan(back.lower)


def test_the_next_window_is_as_noisy_as_today_over_the_points_it_will_hold() -> None:
    steps = np.arange(1.0, 201.0)
    dense = window_sd(steps, np.zeros(200), 0.1)  # linear logging: 80 points next window
    logged = window_sd(np.geomspace(1, 200, 200), np.zeros(200), 0.1)  # log logging: fewer
    assert dense == pytest.approx(0.1 / math.sqrt(80), rel=0.05)
    assert logged > 2 * dense
    assert window_sd(steps, np.zeros(200), 0.0) == 0.0


def test_a_clean_past_says_little_happens_beyond_the_trend_and_a_jumpy_one_says_much() -> None:
    rng = np.random.default_rng(0)
    c = np.geomspace(1, 1024, 300)
    clean = 0.1 + 0.05 * np.log2(c) + rng.normal(0, 0.005, c.size)
    n, excess = backtest(c, clean)
    assert n > 1.5 and excess < 0.5
    steps = np.floor(np.log2(c) / 2.0)  # a staircase: the trend misses every step
    jumpy = 0.1 + 0.2 * steps + rng.normal(0, 0.005, c.size)
    assert backtest(c, jumpy)[1] > 10 * excess
    assert backtest(c[:5], clean[:5]) == (0.0, pytest.approx(math.nan, nan_ok=True))


def test_a_flat_curves_threshold_is_a_share_of_its_level_not_of_its_noise() -> None:
    rng = np.random.default_rng(1)
    flat = 0.4 + rng.normal(0, 0.002, 400)
    t = threshold_for("reward", flat, FAST)
    assert t.basis == "level" and t.anchor == pytest.approx(0.4, abs=0.01)
    assert t.value == pytest.approx(0.03 * 0.4, rel=0.1)
    acc = threshold_for("eval/accuracy", 0.02 + rng.normal(0, 0.002, 400), FAST)
    assert acc.basis == "domain" and acc.value == pytest.approx(0.03, rel=0.1)
    rising = 0.1 + 0.05 * np.log2(np.geomspace(1, 1024, 400)) + rng.normal(0, 0.002, 400)
    r = threshold_for("reward", rising, FAST)
    assert r.basis == "range" and r.value == pytest.approx(0.03 * r.reference)
    units = threshold_for("reward", flat, AnalysisSettings(min_gain=0.01))
    assert units.basis == "units" and units.value == 0.01


# ---- P(pays) -------------------------------------------------------------------------------------


def test_p_pays_is_the_normal_tail_censored_to_the_domain() -> None:
    assert p_pays(0.05, 0.02, 0.03) == pytest.approx(norm.sf(-1.0))
    assert p_pays(0.05, 0.02, 0.03, upper=0.02) == 0.0
    # the mass beyond a bound sits at the bound: never renormalised across the threshold
    assert p_pays(0.05, 0.02, 0.03, lower=0.0, upper=0.04) == pytest.approx(norm.sf(-1.0))
    assert p_pays(0.05, 0.02, 0.03, lower=0.03, upper=0.04) == 1.0
    assert p_pays(0.05, 0.0, 0.03) == 1.0 and p_pays(0.01, 0.0, 0.03) == 0.0


def test_the_domain_never_turns_a_falling_estimate_into_a_rising_one() -> None:
    free = p_pays(-0.236, 0.4, 0.01)
    assert p_pays(-0.236, 0.4, 0.01, -0.105, 0.895) == pytest.approx(free) and free < 0.5
    e = distribution(-0.236, 0.4, -0.105, 0.895, 0.9)
    assert e.value == -0.105 and e.lo == -0.105 and e.hi < 0.895


def test_the_innovation_is_todays_noise_weighed_with_the_curves_own_past() -> None:
    s = DecisionSettings(innovation=2.0, history=1.0)
    assert innovation_sd(_ev(0.1, 0.01, noise=0.0), s) == 0.0  # held still: nothing to add
    prior_only = innovation_sd(_ev(0.1, 0.01, noise=0.04), s)
    assert prior_only == pytest.approx(2.0 * 0.04)
    calm = innovation_sd(_ev(0.1, 0.01, noise=0.04, history_n=2.0, history_excess=0.01), s)
    wild = innovation_sd(_ev(0.1, 0.01, noise=0.04, history_n=2.0, history_excess=100.0), s)
    assert calm < prior_only < wild
    # the geometric mean of 2^2 (once) and 0.01 (twice)
    assert calm == pytest.approx(0.04 * math.exp(0.5 * (math.log(4) + 2 * math.log(0.01)) / 3))


def test_a_steady_gain_is_called_sharply_and_a_thin_one_humbly() -> None:
    sharp = decide(_ev(0.05, 0.002, noise=0.005, history_n=2.0, history_excess=0.01,
                       last_gain=0.05, threshold=0.015))
    assert sharp.verdict == "scaling" and sharp.p_pays > 0.99
    thin = decide(_ev(0.04, 0.05, noise=0.08, last_gain=0.04, threshold=0.03))
    assert thin.verdict == "inconclusive" and 0.45 < thin.p_pays < 0.55


def test_the_call_follows_the_probability_levels_of_the_stated_loss() -> None:
    ev = _ev(0.03 + 0.01, 0.01, last_gain=0.04)  # p = Phi(1) = 0.84
    assert decide(ev, settings=DecisionSettings(stop_cost=0.5, abstain_cost=1.0)).call is True
    assert decide(ev, settings=DecisionSettings(stop_cost=0.1, abstain_cost=1.0)).call is False
    band = DecisionSettings(stop_cost=1.0, abstain_cost=0.1)  # stop below 0.1, pay from 0.9
    assert (band.stop_below, band.go_above) == pytest.approx((0.1, 0.9))
    assert decide(ev, settings=band).call is None


@pytest.mark.parametrize("stop_cost", [0.3, 1.0, 1.5, 4.0])
@pytest.mark.parametrize("abstain_cost", [0.05, 0.2, 0.4, 1.0])
def test_the_levels_minimise_the_expected_loss(stop_cost: float, abstain_cost: float) -> None:
    """At every probability the call the levels give costs the least in expectation: a wrong
    stop ``stop_cost``, a wrong "pays" 1, abstaining ``abstain_cost``."""
    lo, hi = call_levels(stop_cost, abstain_cost)
    assert 0.0 < lo <= hi < 1.0
    for p in np.linspace(0.001, 0.999, 999):
        loss = {False: p * stop_cost, True: 1.0 - p, None: abstain_cost}
        call = False if p < lo else (True if p >= hi else None)
        assert loss[call] <= min(loss.values()) + 1e-9, (p, call, loss)


@pytest.mark.parametrize("low, high", [(0.1, 0.9), (0.3, 0.7), (0.5, 0.5), (0.05, 0.6)])
def test_a_band_is_the_stated_loss_whose_levels_it_names(low: float, high: float) -> None:
    s = DecisionSettings().with_band(low, high)
    assert (s.stop_below, s.go_above) == pytest.approx((low, high))


def test_the_band_setting_moves_the_call_and_is_checked() -> None:
    from saturate.settings import Settings

    ev = _ev(0.03 + 0.01, 0.01, last_gain=0.04)
    p = decide(ev).p_pays
    wide = AnalysisSettings.from_settings(
        Settings.build(band=f"{p / 2:.4f},{(1 + p) / 2:.4f}")).decision
    assert decide(ev, settings=wide).call is None
    narrow = AnalysisSettings.from_settings(Settings.build(band=[p / 2, p])).decision
    assert decide(ev, settings=narrow).call is True
    for bad in ("0.7,0.3", "0,0.5", "0.5", "30%,1.2", "a,b"):
        with pytest.raises(SettingsError, match="band"):
            Settings.build(band=bad)


def test_decision_settings_are_checked() -> None:
    for kw, name in (({"stop_cost": 0.0}, "stop_cost"), ({"abstain_cost": math.inf},
                     "abstain_cost"), ({"innovation": -1.0}, "innovation"),
                     ({"history": 0.0}, "history"), ({"lean": math.nan}, "lean")):
        with pytest.raises(SettingsError, match=name):
            DecisionSettings(**kw)


# ---- the verdict and its words -------------------------------------------------------------------


def test_the_gain_holding_is_scaling_and_shrinking_is_slowing() -> None:
    holds = decide(_ev(0.05, 0.002, last_gain=0.05))
    shrinks = decide(_ev(0.05, 0.002, last_gain=0.2))
    assert holds.verdict == "scaling" and holds.roi == pytest.approx(1.0)
    assert holds.stage == "transition"
    assert shrinks.verdict == "slowing" and shrinks.roi == pytest.approx(0.25)
    assert shrinks.stage in ("knee", "plateau")
    grows = decide(_ev(0.05, 0.002, last_gain=-0.01))  # after a flat doubling
    assert grows.verdict == "scaling" and math.isnan(grows.roi)


def test_the_knee_agrees_with_the_verdict() -> None:
    ev = _ev(0.05, 0.002, last_gain=0.05, fit_knee=30.0)
    d = decide(ev)
    assert d.verdict == "scaling" and d.knee is None
    assert any("not borne out" in r for r in d.reasons)
    assert decide(dataclasses.replace(ev, last_gain=0.2)).knee == 30.0


def test_an_unrecovered_collapse_is_regressing_with_the_fall_in_its_reasons() -> None:
    col = Collapse(compute=80.0, step=80, level_before=0.68, level_after=0.15, drop=0.53,
                   drop_fraction=0.9)
    ev = _ev(0.0, 0.01, noise=0.02, collapse=col, last_gain=-0.5, stop_point=Estimate(60.0))
    d = decide(ev)
    assert d.verdict == "regressing" and d.p_pays < 0.4
    assert d.knee is None and d.stop_point is None  # they speak of a rising curve
    assert d.reasons[1].startswith("collapse at compute 80: fell by 0.53")
    # a wide band leaves it open, but it leans "does not pay": the collapse tips it
    wide = DecisionSettings().with_band(0.2, 0.8)
    open_ = decide(_ev(0.028, 0.02, collapse=col, last_gain=-0.5), settings=wide)
    assert 0.2 <= open_.p_pays < 0.5 and open_.verdict == "regressing"
    assert "has not recovered" in open_.reasons[0]
    assert decide(_ev(0.024, 0.02, last_gain=0.03), settings=wide).verdict == "inconclusive"
    # the collapsed level is expected to stay: the estimate since the drop is shrunk toward it
    assert open_.expected.value < 0.028
    # a collapse the curve has since made up for is no reason to stop
    recovered = decide(_ev(0.2, 0.02, collapse=col, last_gain=0.1))
    assert recovered.verdict in ("scaling", "slowing")


def test_a_run_held_at_its_maximum_is_saturated() -> None:
    # CartPole at 500 for its last quarter: no noise, no trend, and a ceiling
    c = np.arange(1.0, 101.0)
    y = np.minimum(20 + 480 * (c / 75.0) ** 0.7, 500.0)
    y[:75] += np.random.default_rng(0).normal(0, 20, 75)
    res = analyze_curve(_curve(c, np.minimum(y, 500.0), metric="return"), FAST)
    assert res.verdict == "saturated" and res.p_pays < 0.05
    assert any(r.startswith("held at its maximum 500") for r in res.reasons)


def test_every_stage_is_one_the_verdict_allows() -> None:
    for roi in (-1.0, 0.1, 0.5, 1.0, 2.0, math.nan):
        assert stage_of("scaling", roi) in ("initial", "transition")
        assert stage_of("slowing", roi) in ("knee", "plateau")
        assert stage_of("saturated", roi) in ("plateau", "negative")
        assert stage_of("regressing", roi) == "negative"
        assert stage_of("inconclusive", roi) == "unknown"


def test_the_reasons_are_made_from_the_fields() -> None:
    ev = _ev(0.05, 0.01, last_gain=0.05, noise=0.01, notes=("the run is still RUNNING",))
    d = decide(ev)
    assert d.reasons[0].startswith(f"P(the next doubling gains at least the threshold 0.03 "
                                   f"(3% of the observed range 1)) = {d.p_pays:.2f}")
    assert any(r.startswith("its own evidence: the fitted laws' gain 0.05") for r in d.reasons)
    assert any(r.startswith("spread of the next doubling's gain") for r in d.reasons)
    assert d.reasons[-1] == "the run is still RUNNING"
    assert decide(dataclasses.replace(ev, why="only 3 point(s)")).reasons[0] == "only 3 point(s)"


# ---- pooling -------------------------------------------------------------------------------------


def test_agreeing_siblings_have_no_spread_and_their_common_mean() -> None:
    prior = group_prior([_ev(0.2, 0.05)] * 3, ["a", "b", "c"])
    assert prior is not None and prior.n == 3 and prior.runs == ("a", "b", "c")
    assert prior.tau2 == 0.0 and prior.mean == pytest.approx(0.2)
    assert prior.var == pytest.approx(0.05**2 / 3)


def test_dersimonian_laird_spread_by_hand() -> None:
    ys, ses = np.array([0.0, 0.5, 1.0]), np.array([0.1, 0.1, 0.1])
    w = 1 / ses**2
    q = np.sum(w * (ys - ys.mean()) ** 2)
    tau2 = (q - 2) / (w.sum() - (w**2).sum() / w.sum())
    prior = group_prior([_ev(y, s) for y, s in zip(ys, ses, strict=True)])
    assert prior.tau2 == pytest.approx(tau2)
    assert prior.var == pytest.approx(tau2 + (0.01 + tau2) / 3)


def test_siblings_pool_in_units_of_what_their_threshold_is_a_share_of() -> None:
    small = group_prior([_ev(0.2, 0.05), _ev(0.2, 0.05)])
    mixed = group_prior([_ev(0.2, 0.05), _ev(200.0, 50.0, scale=1000.0)])
    assert small.mean == pytest.approx(mixed.mean)
    flat = _ev(0.0, 0.001, scale=0.002, reference=0.4, basis="level")  # range = noise
    assert group_prior([flat, flat]).mean == pytest.approx(0.0)


def test_a_curves_prior_never_uses_its_own_data() -> None:
    group = [_ev(0.2, 0.05), _ev(0.3, 0.05), _ev(0.25, 0.05), _ev(-1.0, 0.01)]
    before = leave_one_out_priors(group, ["g"] * 4)
    group[3] = _ev(5.0, 0.01)
    after = leave_one_out_priors(group, ["g"] * 4)
    assert after[3] == before[3] and after[0] != before[0]
    assert leave_one_out_priors(group[:2], ["g", "g"]) == [None, None]  # one sibling: no group
    assert leave_one_out_priors(group, [None] * 4) == [None] * 4


def test_a_noisy_curve_leans_on_agreeing_siblings_and_a_dissenting_one_keeps_its_own() -> None:
    prior = group_prior([_ev(0.2, 0.05)] * 4)
    noisy = _ev(0.1, 0.3)
    mean, sd = posterior(noisy, prior)
    assert 0.15 < mean <= 0.2 and sd < 0.3
    d = decide(noisy, prior)
    assert d.pooled and any(r.startswith("pooled with its siblings") for r in d.reasons)
    dissent = _ev(-0.5, 0.01, last_gain=0.0)  # precise, and far from the siblings
    e = decide(dissent, prior)
    assert not e.pooled and abs(e.disagreement) > 2.576
    assert e.expected.value == pytest.approx(-0.5)
    assert any(r.startswith("not pooled: its own estimate lies") for r in e.reasons)
    off = decide(noisy, prior, DecisionSettings(pool=False))
    assert not off.pooled and off.expected.value == pytest.approx(0.1)


def _seed_table(n: int = 4, **params: str) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    c = np.arange(1.0, 41.0)
    return pd.concat([
        _curve(c, 0.3 + 0.04 * np.log2(c) + rng.normal(0, 0.03, c.size), f"s{i}", seed=str(i),
               **params)
        for i in range(n)
    ], ignore_index=True)


def test_seeds_pool_and_say_so_in_the_result() -> None:
    table = _seed_table(5, recipe="a")
    assert len({sibling_key(g) for _, g in table.groupby("run_id")}) == 1
    pooled = analyze_table(table, FAST)
    alone = analyze_table(table, dataclasses.replace(
        FAST, decision=DecisionSettings(pool=False)))
    for p, a in zip(pooled, alone, strict=True):
        assert p.pooling is not None and p.pooling.n == 4 and p.pooling.pooled
        assert set(p.pooling.runs) == {f"s{i}" for i in range(5)} - {p.run}
        assert p.to_dict()["pooling"]["runs"] == list(p.pooling.runs)
        assert a.pooling is not None and not a.pooling.pooled  # shown, not used
        assert p.decision.gain.hi - p.decision.gain.lo <= a.decision.gain.hi - a.decision.gain.lo
    assert all(p.verdict in ("scaling", "slowing") for p in pooled)


def test_group_by_none_turns_pooling_off() -> None:
    from saturate.settings import Settings

    how = AnalysisSettings.from_settings(Settings.build(group_by="none"))
    assert how.group_by is None and not how.decision.pool
    assert AnalysisSettings.from_settings(Settings.build()).decision.pool


def test_a_read_in_parts_pools_as_the_read_in_one_piece() -> None:
    from saturate.analysis import analyze_parts

    table = _seed_table()
    parts = [table[table["run_id"].isin(ids)] for ids in (["s0", "s1"], ["s2"], ["s3"])]
    whole = analyze_table(table, FAST)
    streamed = analyze_parts(parts, FAST)
    assert [r.run_id for r in streamed] == [r.run_id for r in whole]
    for a, b in zip(whole, streamed, strict=True):
        assert a.pooling is not None and a.pooling.n == 3
        assert b.decision == a.decision and b.verdict == a.verdict and b.reasons == a.reasons
        assert b.forecast == a.forecast


def test_runs_that_differ_by_more_than_a_seed_do_not_pool() -> None:
    a, b = _seed_table(2, lr="1e-3"), _seed_table(2, lr="1e-4")
    b = b.assign(run_id=b["run_id"] + "b", run=b["run"] + "b")
    out = analyze_table(pd.concat([a, b], ignore_index=True), FAST)
    assert all(r.pooling is None for r in out)  # one sibling each: too few for a prior


def test_curves_averaged_over_seeds_are_not_pooled_again() -> None:
    out = analyze_table(_seed_table(4, recipe="a"),
                        dataclasses.replace(FAST, group_by="params.recipe"))
    assert len(out) == 1 and out[0].pooling is None and out[0].group["n_seeds"] == 4


def test_deciding_again_from_the_stored_evidence_is_pure() -> None:
    c = np.arange(1.0, 41.0)
    pts = _curve(c, 0.3 + 0.05 * np.log2(c) + np.random.default_rng(2).normal(0, 0.02, c.size))
    a, b = analyze_curve(pts, FAST), analyze_curve(pts, FAST)
    assert a.decision == b.decision and a.reasons == b.reasons
    again = with_decision(a, decide(a.evidence, None, FAST.decision, FAST.confidence))
    assert again.decision == a.decision and again.forecast == a.forecast


# ---- the forecasts the call makes ----------------------------------------------------------------


def test_accumulation_follows_the_fit_within_one_and_h_doublings() -> None:
    assert accumulation(1.0, 0.1, 0.1) == 1.0
    assert accumulation(2.0, 0.1, 0.15) == pytest.approx(1.5)  # a slowing fit
    assert accumulation(2.0, 0.1, 0.5) == 2.0  # never more than the pace repeated
    assert accumulation(2.0, 0.1, 0.05) == 1.0  # never less than the next doubling
    assert accumulation(2.0, math.nan, math.nan) == 2.0  # no fit: the pace repeats


def test_forecasts_are_the_level_plus_the_calls_gain_and_stay_in_the_domain() -> None:
    gain = Estimate(0.06, 0.04, 0.08)
    pts = tuple(ForecastPoint(f"{k}x", k * 10.0, math.nan, math.nan, math.nan) for k in (2, 4))
    two, four = project(0.9, "higher", gain, (-0.9, 0.1), pts, 10.0)
    assert two.value == pytest.approx(0.96) and two.lo <= two.value <= two.hi <= 1.0
    assert four.value <= 1.0 and four.hi <= 1.0  # twice the gain would cross 1: held at it
    (f2,) = project(0.2, "lower", Estimate(0.05, 0.04, 0.06), (-0.8, 0.2), pts[:1], 10.0)
    assert f2.value < 0.2  # a loss that gains falls


def test_reported_gain_is_the_difference_of_the_reported_forecasts() -> None:
    rng = np.random.default_rng(3)
    c = np.arange(1.0, 81.0)
    res = analyze_curve(_curve(c, 0.2 + 0.05 * np.log2(c) + rng.normal(0, 0.02, c.size)), FAST)
    two = next(f for f in res.forecast if f.at == "2x")
    assert two.value - res.evidence.level == pytest.approx(res.gain_per_doubling.value)
    assert res.gain_per_doubling.lo <= res.gain_per_doubling.value <= res.gain_per_doubling.hi


def test_the_trend_of_a_bending_curve_carries_its_change_of_slope() -> None:
    c = np.linspace(0.02, 1.0, 100)
    y = 0.1 + 0.5 / (1 + (0.2 / c) ** 2.0) + np.random.default_rng(0).normal(0, 0.003, c.size)
    res = analyze_curve(_curve(c, y), FAST)
    tr = res.trend.slope_per_doubling
    assert res.evidence.trend_se > 3 * (tr.hi - tr.lo) / (2 * 1.6448536)
    assert res.evidence.fit_se < res.evidence.trend_se  # the fit, which sees the bend, leads


def test_after_a_collapse_the_trend_is_the_one_since_the_drop() -> None:
    rng = np.random.default_rng(3)
    c = np.arange(1.0, 201.0)
    y = 1 - np.exp(-c / 20) + rng.normal(0, 0.02, c.size)
    y[150:] -= 0.7
    res = analyze_curve(_curve(c, y, metric="train/reward"), FAST)
    assert res.collapse is not None and res.verdict == "regressing"
    assert res.trend.slope_per_doubling.value < -0.3  # the recent window straddles the drop
    assert abs(res.evidence.trend_gain) < 0.1  # the evidence's trend is the one since
    assert res.evidence.last_gain < -0.5  # the fall, shown beside the verdict

