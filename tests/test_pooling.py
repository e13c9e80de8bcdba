"""The call on a curve: its own outlook, the siblings' prior, the probability that the next
doubling pays, the metric's domain (saturate.analysis.outlook / pooling / decision / refine)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from saturate.analysis import AnalysisSettings, analyze_curve, analyze_table
from saturate.analysis.call_settings import EVIDENCE_FEATURES, EvidenceMap, call_levels
from saturate.analysis.decision import (
    DecisionSettings,
    decide,
    evidence_features,
    gain_distribution,
    p_pays,
)
from saturate.analysis.outlook import Outlook, combine
from saturate.analysis.pooling import group_prior, leave_one_out_priors, posterior
from saturate.analysis.refine import refine, sibling_key
from saturate.errors import SettingsError
from saturate.table.curves import tidy

FAST = AnalysisSettings(n_boot=40)


def _o(gain: float, se: float, scale: float = 1.0, **kw) -> Outlook:
    """An outlook whose fit and trend agree on ``gain`` with combined standard error ``se``."""
    s = se * math.sqrt(2.0)
    return Outlook(threshold=0.03 * scale, scale=scale, level=0.0, fit_gain=gain, fit_se=s,
                   trend_gain=gain, trend_se=s, **kw)


# ---- outlook -------------------------------------------------------------------------------------


def test_combine_is_the_precision_weighted_mean() -> None:
    o = Outlook(threshold=0.1, scale=1.0, level=0.0, fit_gain=1.0, fit_se=1.0, trend_gain=4.0,
                trend_se=2.0)
    mean, se = combine(o)
    assert mean == pytest.approx((1.0 / 1 + 4.0 / 4) / (1 + 1 / 4))
    assert se == pytest.approx(1 / math.sqrt(1.25))
    alone = Outlook(threshold=0.1, scale=1.0, level=0.0, trend_gain=4.0, trend_se=2.0)
    assert combine(alone) == (4.0, 2.0)
    assert not Outlook(threshold=0.1, scale=1.0, level=0.0).informative


def test_outlook_round_trips_through_json_safe_dicts() -> None:
    o = Outlook(threshold=0.1, scale=2.0, level=0.5, fit_gain=0.2, fit_se=0.1, upper=0.5)
    d = o.to_dict()
    assert d["trend_se"] is None and d["lower"] is None  # infinities are not JSON
    assert Outlook.from_dict(d) == o


# ---- pooling -------------------------------------------------------------------------------------


def test_agreeing_siblings_have_no_spread_and_their_common_mean() -> None:
    prior = group_prior([_o(0.2, 0.05), _o(0.2, 0.05), _o(0.2, 0.05)])
    assert prior is not None and prior.n == 3
    assert prior.tau2 == 0.0
    assert prior.mean == pytest.approx(0.2)
    assert prior.var == pytest.approx(0.05**2 / 3)


def test_dersimonian_laird_spread_by_hand() -> None:
    ys, ses = np.array([0.0, 0.5, 1.0]), np.array([0.1, 0.1, 0.1])
    w = 1 / ses**2
    q = np.sum(w * (ys - ys.mean()) ** 2)
    tau2 = (q - 2) / (w.sum() - (w**2).sum() / w.sum())
    prior = group_prior([_o(y, s) for y, s in zip(ys, ses, strict=True)])
    assert prior.tau2 == pytest.approx(tau2)
    assert prior.var == pytest.approx(tau2 + (0.01 + tau2) / 3)


def test_pooling_is_in_units_of_each_curves_range() -> None:
    small = group_prior([_o(0.2, 0.05), _o(0.2, 0.05)])
    mixed = group_prior([_o(0.2, 0.05), _o(200.0, 50.0, scale=1000.0)])
    assert small.mean == pytest.approx(mixed.mean)


def test_a_curves_prior_never_uses_its_own_data() -> None:
    group = [_o(0.2, 0.05), _o(0.3, 0.05), _o(0.25, 0.05), _o(-1.0, 0.01)]
    before = leave_one_out_priors(group, ["g"] * 4)
    group[3] = _o(5.0, 0.01)
    after = leave_one_out_priors(group, ["g"] * 4)
    assert after[3] == before[3]
    assert after[0] != before[0]
    assert leave_one_out_priors(group[:2], ["g", "g"]) == [None, None]  # one sibling is not a group
    assert leave_one_out_priors(group, [None] * 4) == [None] * 4


def test_posterior_shrinks_a_noisy_curve_toward_its_group() -> None:
    prior = group_prior([_o(0.2, 0.05)] * 4)
    noisy = _o(-0.1, 0.5)
    mean, sd = posterior(noisy, prior)
    assert 0.15 < mean <= 0.2 and sd < 0.5
    precise = _o(-0.1, 0.001)
    assert posterior(precise, prior)[0] == pytest.approx(-0.1, abs=0.01)
    assert posterior(noisy, None) == (noisy.gain, noisy.se)
    alone = Outlook(threshold=0.03, scale=2.0, level=0.0)  # nothing of its own
    assert posterior(alone, prior) == pytest.approx((0.4, 2.0 * math.sqrt(prior.var)))


# ---- decision ------------------------------------------------------------------------------------


def test_p_pays_is_the_normal_tail_and_zero_beyond_the_domain() -> None:
    assert p_pays(0.05, 0.02, 0.03) == pytest.approx(norm.sf(-1.0))
    assert p_pays(0.05, 0.02, 0.03, upper=0.02) == 0.0
    # censored to [0, 0.04]: the mass above 0.04 sits at 0.04 (it pays), below 0 at 0 (it does
    # not): the normal's own tail, never renormalised
    assert p_pays(0.05, 0.02, 0.03, lower=0.0, upper=0.04) == pytest.approx(norm.sf(-1.0))
    assert p_pays(0.05, 0.02, 0.03, lower=0.03, upper=0.04) == 1.0
    assert p_pays(0.05, 0.0, 0.03) == 1.0 and p_pays(0.01, 0.0, 0.03) == 0.0


def test_the_domain_never_turns_a_falling_estimate_into_a_rising_one() -> None:
    # the GRPO run: its evidence says -0.236 (sd 0.4); the domain allows [-0.105, 0.895]
    free = p_pays(-0.236, 0.4, 0.01)
    assert p_pays(-0.236, 0.4, 0.01, -0.105, 0.895) == pytest.approx(free) and free < 0.5
    e = gain_distribution(-0.236, 0.4, -0.105, 0.895, 0.9)
    assert e.value == -0.105 and e.lo == -0.105 and e.hi < 0.895


def test_gain_distribution_stays_in_the_domain() -> None:
    e = gain_distribution(0.05, 0.04, -0.9, 0.02, 0.9)
    assert e.hi <= 0.02 and e.lo < e.value <= e.hi <= 0.02
    free = gain_distribution(0.05, 0.04, -math.inf, math.inf, 0.9)
    assert free.value == 0.05 and free.hi - free.value == pytest.approx(norm.ppf(0.95) * 0.04)


def test_the_call_follows_the_probability_levels_of_the_stated_loss() -> None:
    o = _o(0.03 + 0.01, 0.01, noise_range=0.5)  # p = Phi(1) = 0.84, a curve that has moved
    cheap_stop = DecisionSettings(stop_cost=0.5, abstain_cost=1.0)  # levels 2/3 and 2/3
    assert decide(o, settings=cheap_stop).call is True
    never_stop = DecisionSettings(stop_cost=0.1, abstain_cost=1.0)  # levels 0.91: stop below
    assert decide(o, settings=never_stop).call is False
    band = DecisionSettings(stop_cost=1.0, abstain_cost=0.1)  # stop below 0.1, pay from 0.9
    assert (band.stop_below, band.go_above) == pytest.approx((0.1, 0.9))
    assert decide(o, settings=band).call is None


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


def test_the_evidence_map_is_monotone_in_the_models_probability() -> None:
    m = EvidenceMap(0.5, (("model", 0.5), ("trend_z", 0.2)))
    o = _o(0.03 + 0.01, 0.01, noise_range=0.5)
    ps = [1e-6, 0.05, 0.3, 0.5, 0.9, 0.999999]
    out = [m.probability(p, evidence_features(o, p)) for p in ps]
    assert out == sorted(out) and all(0.0 < v < 1.0 for v in out)
    assert EvidenceMap().identity and EvidenceMap().probability(0.3, {}) == 0.3
    d = decide(o, settings=DecisionSettings(calibration=m))
    assert d.p_model == pytest.approx(norm.cdf(1.0), abs=1e-6)
    assert d.p_pays == pytest.approx(m.probability(d.p_model, evidence_features(o, d.p_model)))


def test_evidence_features_are_bounded_and_unit_free() -> None:
    o = _o(0.04, 0.01, noise_range=0.5)
    f = evidence_features(o, 0.7)
    assert tuple(f) == EVIDENCE_FEATURES
    units = ("threshold", "scale", "level", "fit_gain", "fit_se", "trend_gain", "trend_se",
             "lower", "upper", "noise", "noise_range", "recent_gain", "recent_change", "drawdown")
    big = dataclasses.replace(o, **{k: getattr(o, k) * 1e6 for k in units})
    assert evidence_features(big, 0.7) == pytest.approx(f)
    wild = dataclasses.replace(o, recent_gain=1e300, drawdown=-5.0, doublings=1e9, noise=math.inf)
    g = evidence_features(wild, 1.0)
    assert all(math.isfinite(v) for v in g.values())
    assert g["recent_gain"] == 2.0 and g["drawdown"] == 0.0 and g["doublings"] == 6.0


def test_a_curve_within_its_noise_is_inconclusive_while_the_gain_straddles() -> None:
    still = _o(0.04, 0.01, noise=0.5, noise_range=2.0)
    assert not still.moved
    assert decide(still).call is None
    sure = _o(0.5, 0.01, noise=0.5, noise_range=2.0)  # clears the threshold anyway
    assert decide(sure).call is True


def test_decision_settings_are_validated() -> None:
    with pytest.raises(SettingsError, match="stop_cost"):
        DecisionSettings(stop_cost=0.0)
    with pytest.raises(SettingsError, match="abstain_cost"):
        DecisionSettings(abstain_cost=math.inf)
    with pytest.raises(SettingsError, match="calibration"):
        DecisionSettings(calibration=(0.0, -1.0))  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match="positive weight on 'model'"):
        EvidenceMap(0.0, (("model", -1.0),))
    with pytest.raises(SettingsError, match="calibration"):
        EvidenceMap(0.0, (("model", 1.0), ("no such evidence", 1.0)))


# ---- on curves -----------------------------------------------------------------------------------


def _curve(c: np.ndarray, y: np.ndarray, run: str = "r1", metric: str = "eval/accuracy",
           **params: str) -> pd.DataFrame:
    df = pd.DataFrame({"run_id": run, "run": run, "metric": metric, "step": np.arange(c.size),
                       "compute": c, "value": y, **{f"params.{k}": v for k, v in params.items()}})
    return tidy(df, origin="test")


def test_a_rate_at_its_ceiling_cannot_pay() -> None:
    # an accuracy still climbing steeply at 0.985: the trend says it pays, but the domain [0, 1]
    # leaves less headroom than the threshold only once the threshold exceeds it.
    c = np.arange(1.0, 61.0)
    y = np.minimum(0.5 + 0.08 * np.log2(c), 0.9995) + np.random.default_rng(0).normal(0, 1e-3, 60)
    free = analyze_curve(_curve(c, y), FAST)
    bounded = refine(analyze_curve(_curve(c, y), FAST), domain=(0.0, 1.0))
    assert bounded.outlook.upper == pytest.approx(1.0 - bounded.outlook.level)
    assert bounded.decision.gain.hi <= bounded.outlook.upper + 1e-12
    assert bounded.decision.p_pays <= free.decision.p_pays
    if bounded.outlook.upper < bounded.threshold:
        assert bounded.decision.p_pays == 0.0 and bounded.verdict in ("saturated", "regressing")


def test_seeds_pool_and_say_so() -> None:
    rng = np.random.default_rng(5)
    c = np.arange(1.0, 41.0)
    frames = [
        _curve(c, 0.3 + 0.05 * np.log2(c) + rng.normal(0, 0.03, c.size), f"s{i}",
               recipe="a", seed=str(i))
        for i in range(5)
    ]
    table = pd.concat(frames, ignore_index=True)
    keys = {sibling_key(g) for _, g in table.groupby("run_id")}
    assert len(keys) == 1  # the seed parameter does not split the group
    pooled = analyze_table(table, FAST)
    alone = analyze_table(table, AnalysisSettings(n_boot=40, decision=DecisionSettings(pool=False)))
    for p, a in zip(pooled, alone, strict=True):
        assert p.decision.prior is not None and p.decision.prior.n == 4
        assert any(r.startswith("pooled with its group") for r in p.reasons)
        assert a.decision.prior is None
        assert p.decision.gain.hi - p.decision.gain.lo <= a.decision.gain.hi - a.decision.gain.lo
    assert all(p.verdict in ("scaling", "slowing") for p in pooled)


def test_refining_is_pure_and_repeatable() -> None:
    c = np.arange(1.0, 41.0)
    pts = _curve(c, 0.3 + 0.05 * np.log2(c) + np.random.default_rng(2).normal(0, 0.02, c.size))
    a, b = analyze_curve(pts, FAST), analyze_curve(pts, FAST)
    assert a.verdict == b.verdict and a.reasons == b.reasons
    assert a.decision == b.decision


def _seed_table(n: int = 4, **params: str) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    c = np.arange(1.0, 41.0)
    return pd.concat([
        _curve(c, 0.3 + 0.04 * np.log2(c) + rng.normal(0, 0.03, c.size), f"s{i}", seed=str(i),
               **params)
        for i in range(n)
    ], ignore_index=True)


def test_a_read_in_parts_pools_as_the_read_in_one_piece() -> None:
    # the siblings arrive in different parts: the priors wait for the last part
    from saturate.analysis import analyze_parts

    table = _seed_table()
    parts = [table[table["run_id"].isin(ids)] for ids in (["s0", "s1"], ["s2"], ["s3"])]
    whole = analyze_table(table, FAST)
    streamed = analyze_parts(parts, FAST)
    assert [r.run_id for r in streamed] == [r.run_id for r in whole]
    for a, b in zip(whole, streamed, strict=True):
        assert a.decision.prior is not None and a.decision.prior.n == 3
        assert b.decision == a.decision and b.verdict == a.verdict and b.reasons == a.reasons
        assert b.forecast == a.forecast


def test_runs_that_differ_by_more_than_a_seed_do_not_pool() -> None:
    a, b = _seed_table(2, lr="1e-3"), _seed_table(2, lr="1e-4")
    b = b.assign(run_id=b["run_id"] + "b", run=b["run"] + "b")
    out = analyze_table(pd.concat([a, b], ignore_index=True), FAST)
    # each curve has one sibling (its own learning rate): too few for a group prior
    assert all(r.decision.prior is None for r in out)


def test_curves_averaged_over_seeds_are_not_pooled_again() -> None:
    table = _seed_table(4, recipe="a")
    out = analyze_table(table, AnalysisSettings(n_boot=40, group_by="params.recipe"))
    assert len(out) == 1 and out[0].decision is not None and out[0].decision.prior is None


@pytest.mark.parametrize("low, high", [(0.1, 0.9), (0.3, 0.7), (0.5, 0.5), (0.05, 0.6)])
def test_a_band_is_the_stated_loss_whose_levels_it_names(low: float, high: float) -> None:
    s = DecisionSettings().with_band(low, high)
    assert (s.stop_below, s.go_above) == pytest.approx((low, high))


def test_the_band_setting_moves_the_call_and_is_checked() -> None:
    from saturate.analysis.settings import AnalysisSettings
    from saturate.settings import Settings

    o = _o(0.03 + 0.01, 0.01, noise_range=0.5)  # p = Phi(1) = 0.84 before the evidence map
    p = decide(o).p_pays
    wide = AnalysisSettings.from_settings(
        Settings.build(band=f"{p / 2:.4f},{(1 + p) / 2:.4f}")).decision
    assert decide(o, settings=wide).call is None
    narrow = AnalysisSettings.from_settings(Settings.build(band=[p / 2, p])).decision
    assert decide(o, settings=narrow).call is True
    for bad in ("0.7,0.3", "0,0.5", "0.5", "30%,1.2", "a,b"):
        with pytest.raises(SettingsError, match="band"):
            Settings.build(band=bad)
