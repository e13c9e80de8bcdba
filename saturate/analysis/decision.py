"""The call on one curve: the probability that its next doubling pays, and what to say about it.

The gain ``G`` of the next doubling has a normal distribution: the curve's own estimate
(:mod:`saturate.analysis.outlook`), combined with its siblings' prior when it has siblings
(:mod:`saturate.analysis.pooling`), widened by the *innovation* of a doubling, and censored to
what the metric's domain allows (the mass beyond a bound sits at the bound: the domain narrows
what a gain can be and never turns a falling estimate into a rising one). The innovation is the
part of the next doubling's gain that no estimate from the past can see (RL curves plateau and
take off again, skills are found in jumps). Its standard deviation is ``innovation`` times the
geometric mean of the curve's pace (:attr:`Outlook.pace`: its mean gain per doubling so far, the
observed range over the doublings it spans, capped by its own estimate of the next doubling's gain
or the threshold) and its point-to-point noise: a curve that neither
moves nor scatters much cannot be expected to jump, and a smooth law-like curve (no noise) keeps
the precision of its fit. The next doubling *pays* when ``G >= T``; ``P(pays) = P(G >= T)``
(mapped by the settings' :class:`~saturate.analysis.call_settings.EvidenceMap`, the identity by
default) is the headline number, and the call follows from it and a stated loss: a wrong "pays"
(a wasted doubling) costs 1, a wrong "does not pay" (a run stopped whose next doubling would
have paid) ``stop_cost``, an inconclusive call ``abstain_cost``; the call with the least
expected loss is made (:func:`~saturate.analysis.call_settings.call_levels`):

* "does not pay" when ``p < stop_below = min(abstain_cost / stop_cost, 1 / (1 + stop_cost))``;
* "pays" when ``p >= go_above = max(1 - abstain_cost, 1 / (1 + stop_cost))``;
* inconclusive in between, and whenever the curve has not moved beyond its noise
  (:attr:`Outlook.moved`) while the interval of the expected gain (the evidence, without the
  innovation) straddles the threshold: the threshold, a share of the observed range, then
  measures noise.

The defaults (innovation 2, no evidence map, no population prior, the band ``[0.4, 0.6)``) are
what leave-one-source-out on public RL curves picks; the measurements are in
``docs/measurements.md``.
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
    ``p_pays`` = P(G >= T); ``gain`` the distribution of G (mean and interval, metric units,
    larger-is-better scale, the innovation included) behind it; ``own`` the curve's own estimate
    before pooling; ``prior`` the group prior used (None: the curve alone); ``bounded``: the
    domain truncated G; ``expected``: the expected gain with the interval of the evidence alone
    (pooled, without the innovation); ``p_model``: ``P(G >= T)`` under the model, before the
    calibration map of the settings (``p_pays`` is the calibrated one)."""

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
    """``P(G >= threshold)`` for ``G ~ N(mean, sd^2)`` censored to ``[lower, upper]``.

    Censored, not truncated: the mass beyond a bound sits at the bound (a rate near 1 that
    would gain more gains what is left), so the domain never moves probability from one side of
    the threshold to the other. Zero when the upper bound is below the threshold, one when the
    lower bound is at or above it; with ``sd == 0`` a step at the threshold.
    """
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
    """Median and equal-tailed interval of ``N(mean, sd^2)`` censored to ``[lower, upper]``:
    the normal's own quantiles held inside the bounds (a monotone map, so the estimate never
    changes side: a falling gain stays falling whatever the domain)."""
    if not (math.isfinite(mean) and math.isfinite(sd)):
        return Estimate(mean, identified=False)
    z = float(ndtri(0.5 + confidence / 2.0))

    def held(v: float) -> float:
        return min(max(v, lower), upper)

    return Estimate(held(mean), held(mean - z * sd), held(mean + z * sd))


def innovation_sd(outlook: Outlook, settings: DecisionSettings) -> float:
    """Standard deviation of the next doubling's innovation: ``innovation * sqrt(pace * noise)``
    (metric units; 0 when the pace or the noise is unknown), the pace the curve keeps now: its
    mean gain per doubling so far, but no more than its own estimate of the next doubling's
    gain (or the threshold, when that is smaller), so a curve that rose fast and has long
    levelled off is not expected to jump as it once rose."""
    pace, noise = outlook.pace, outlook.noise
    g = outlook.gain
    if math.isfinite(g) and math.isfinite(pace):
        pace = min(pace, max(abs(g), outlook.threshold))
    scale = math.sqrt(pace) * math.sqrt(noise) if noise >= 0 and pace >= 0 else math.nan
    return settings.innovation * scale if math.isfinite(scale) else 0.0


def evidence_features(o: Outlook, p_model: float, prior: GroupPrior | None = None
                      ) -> dict[str, float]:
    """The evidence an :class:`~saturate.analysis.call_settings.EvidenceMap` weighs, each free
    of the metric's units and held to a bounded range (0 where it is missing):

    * ``model``: the logit of the model's own ``P(G >= T)`` (held to ``[1e-4, 1 - 1e-4]``);
    * ``fit_z`` / ``trend_z``: the fitted gain's and the recent trend's distance above the
      threshold in their own standard errors (``[-8, 8]``);
    * ``recent_gain``: what the last quarter of the points gains over the next doubling if its
      straight line in compute goes on, ``recent_change``: its mean over the quarter before's,
      ``drawdown``: the current level below the best reached, each in units of the observed
      range (``[-2, 2]``);
    * ``doublings``: ``log2`` of the doublings of compute observed (``[-2, 6]``);
    * ``noise``: the point-to-point noise over the observed range (``[0, 2]``);
    * ``prior``: the siblings' mean relative gain per doubling less the threshold's share of
      the range (``[-1, 1]``; 0 without siblings).
    """
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
    """The call for a probability of paying and the interval of the expected gain (what the
    data say, the innovation left out: it is the future's randomness, not a lack of evidence);
    see the module docstring."""
    if not outlook.moved and expected.lo <= outlook.threshold <= expected.hi:
        return None  # the threshold is a share of a range that is itself noise
    if p < settings.stop_below:
        return False
    return True if p >= settings.go_above else None


def decide(
    outlook: Outlook,
    prior: GroupPrior | None = None,
    settings: DecisionSettings = DecisionSettings(),  # noqa: B008 - frozen, safe as a default
    confidence: float = 0.9,
) -> Decision:
    """The call on one curve from its outlook and (optionally) its group's prior."""
    z = float(ndtri(0.5 + confidence / 2.0))
    own_m, own_s = outlook.gain, outlook.se
    own = Estimate(own_m, own_m - z * own_s, own_m + z * own_s,
                   identified=math.isfinite(own_s))
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
