"""The call on one curve: the probability that its next doubling pays, and what to say about it.

The next doubling's gain ``G`` is normal: the curve's own estimate (:mod:`.outlook`), pooled with
its siblings' prior (:mod:`.pooling`), widened by the *innovation* (what no estimate from the past
can see: ``innovation`` times the geometric mean of the curve's pace and noise) and censored to
the metric's domain. ``P(pays) = P(G >= T)``; the call minimises the expected loss
(:func:`~saturate.analysis.call_settings.call_levels`), and is inconclusive while a curve that
has not moved beyond its noise has an expected gain straddling the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy.special import ndtr, ndtri

from saturate.analysis.call_settings import EVIDENCE_FEATURES, DecisionSettings, GroupPrior
from saturate.analysis.outlook import Outlook
from saturate.analysis.pooling import posterior
from saturate.results import Estimate
from saturate.results.codec import jsonable


@dataclass(frozen=True)
class Decision:
    """The call on one curve: ``call`` True (pays), False (does not pay) or None (inconclusive);
    ``p_pays`` = P(G >= T) after the calibration map (``p_model`` before it); ``gain`` G's
    distribution (metric units, larger-is-better, innovation included), ``expected`` the same
    without the innovation; ``own`` the curve's estimate before pooling; ``prior`` the group
    prior used (None: alone); ``bounded``: the domain truncated G."""

    call: bool | None
    p_pays: float
    gain: Estimate
    own: Estimate
    prior: GroupPrior | None = None
    bounded: bool = False
    expected: Estimate | None = None
    p_model: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return jsonable({
            "call": self.call, "p_pays": self.p_pays, "gain": self.gain.to_dict(),
            "own": self.own.to_dict(),
            "expected": self.expected.to_dict() if self.expected is not None else None,
            "prior": self.prior.to_dict() if self.prior is not None else None,
            "bounded": self.bounded, "p_model": self.p_model,
        })


def p_pays(mean: float, sd: float, threshold: float, lower: float = -math.inf,
           upper: float = math.inf) -> float:
    """``P(G >= threshold)`` for ``G ~ N(mean, sd^2)`` censored (not truncated) to
    ``[lower, upper]``: the mass beyond a bound sits at the bound, so the domain never moves
    probability across the threshold."""
    if not (math.isfinite(mean) and sd >= 0) or not math.isfinite(sd):
        return math.nan
    if threshold > upper:
        return 0.0
    if lower >= threshold:
        return 1.0
    if sd == 0:
        return 1.0 if mean >= threshold else 0.0
    return float(ndtr((mean - threshold) / sd))


def gain_distribution(mean: float, sd: float, lower: float, upper: float,
                      confidence: float) -> Estimate:
    """Median and equal-tailed interval of ``N(mean, sd^2)`` censored to ``[lower, upper]`` (a
    monotone map: a falling gain stays falling whatever the domain)."""
    if not (math.isfinite(mean) and math.isfinite(sd)):
        return Estimate(mean, identified=False)
    z = float(ndtri(0.5 + confidence / 2.0))

    def held(v: float) -> float:
        return min(max(v, lower), upper)

    return Estimate(held(mean), held(mean - z * sd), held(mean + z * sd))


def innovation_sd(outlook: Outlook, settings: DecisionSettings) -> float:
    """Standard deviation of the next doubling's innovation, ``innovation * sqrt(pace * noise)``
    (0 when unknown), the pace capped by ``max(|own gain|, threshold)`` so a curve long levelled
    off is not expected to jump as it once rose."""
    pace, noise = outlook.pace, outlook.noise
    g = outlook.gain
    if math.isfinite(g) and math.isfinite(pace):
        pace = min(pace, max(abs(g), outlook.threshold))
    scale = math.sqrt(pace) * math.sqrt(noise) if noise >= 0 and pace >= 0 else math.nan
    return settings.innovation * scale if math.isfinite(scale) else 0.0


def evidence_features(o: Outlook, p_model: float, prior: GroupPrior | None = None
                      ) -> dict[str, float]:
    """The evidence an :class:`~saturate.analysis.call_settings.EvidenceMap` weighs, each free
    of the metric's units and held to a bounded range (0 where missing): ``model`` (logit of
    ``p_model``), ``fit_z`` / ``trend_z`` (distance above the threshold in standard errors),
    ``recent_gain``, ``recent_change``, ``drawdown`` and ``noise`` (over the observed range),
    ``doublings`` (log2) and ``prior`` (siblings' relative gain less the threshold's share)."""
    q = min(max(p_model, 1e-4), 1.0 - 1e-4) if math.isfinite(p_model) else 0.5
    t, scale = o.threshold, o.scale

    def z(gain: float, se: float) -> float:
        if not (math.isfinite(gain) and math.isfinite(se) and se > 0):
            return 0.0
        return min(max((gain - t) / se, -8.0), 8.0)

    def rel(v: float, lo: float = -2.0, hi: float = 2.0) -> float:
        return min(max(v / scale, lo), hi) if math.isfinite(v) and scale > 0 else 0.0

    dbl = o.doublings
    out = {
        "model": math.log(q / (1.0 - q)),
        "fit_z": z(o.fit_gain, o.fit_se),
        "trend_z": z(o.trend_gain, o.trend_se),
        "recent_gain": rel(o.recent_gain),
        "recent_change": rel(o.recent_change),
        "drawdown": rel(o.drawdown, 0.0, 2.0),
        "doublings": min(max(math.log2(dbl), -2.0), 6.0) if math.isfinite(dbl) and dbl > 0
        else 0.0,
        "noise": rel(o.noise, 0.0, 2.0),
        "prior": (min(max(prior.mean - t / scale, -1.0), 1.0)
                  if prior is not None and math.isfinite(prior.mean) and scale > 0 else 0.0),
    }
    assert tuple(out) == EVIDENCE_FEATURES
    return out


def call_of(p: float, expected: Estimate, outlook: Outlook, settings: DecisionSettings
            ) -> bool | None:
    """The call for a probability of paying and the interval of the expected gain (the
    innovation left out: it is the future's randomness, not a lack of evidence)."""
    if not outlook.moved and expected.lo <= outlook.threshold <= expected.hi:
        return None  # the threshold is a share of a range that is itself noise
    if p < settings.stop_below:
        return False
    return True if p >= settings.go_above else None


def decide(
    outlook: Outlook, prior: GroupPrior | None = None,
    settings: DecisionSettings = DecisionSettings(),  # noqa: B008 - frozen, safe as a default
    confidence: float = 0.9,
) -> Decision:
    """The call on one curve from its outlook and (optionally) its group's prior."""
    z = float(ndtri(0.5 + confidence / 2.0))
    own_m, own_s = outlook.gain, outlook.se
    own = Estimate(own_m, own_m - z * own_s, own_m + z * own_s, identified=math.isfinite(own_s))
    use = prior if settings.pool else None
    if use is None and settings.pool and settings.population is not None:
        use = settings.population.as_prior()
    mean, sd_est = posterior(outlook, use)
    sd = math.hypot(sd_est, innovation_sd(outlook, settings))
    lo, hi = outlook.lower, outlook.upper
    p_model = p_pays(mean, sd, outlook.threshold, lo, hi)
    if not math.isfinite(p_model):
        return Decision(None, math.nan, Estimate(math.nan, identified=False), own, use)
    p = settings.calibration.probability(p_model, evidence_features(outlook, p_model, use))
    gain = gain_distribution(mean, sd, lo, hi, confidence)
    expected = gain_distribution(mean, sd_est, lo, hi, confidence)
    call = call_of(p, expected, outlook, settings)
    bounded = (math.isfinite(lo) or math.isfinite(hi)) and (
        gain.lo <= lo + 1e-12 * abs(lo) or gain.hi >= hi - 1e-12 * abs(hi)
        or mean + z * sd > hi or mean - z * sd < lo)
    return Decision(call, p, gain, own, use, bool(bounded), expected, p_model)
