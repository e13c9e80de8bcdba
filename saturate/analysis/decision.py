"""The call on one curve: the probability that its next doubling pays, and what to say about it.

The gain ``G`` of the next doubling has a normal distribution: the curve's own estimate
(:mod:`saturate.analysis.outlook`), combined with its siblings' prior when it has siblings
(:mod:`saturate.analysis.pooling`), widened by the *innovation* of a doubling, and truncated to
what the metric's domain allows. The innovation is the part of the next doubling's gain that no
estimate from the past can see (RL curves plateau and take off again, skills are found in
jumps). Its standard deviation is ``innovation`` times the geometric mean of the curve's pace
(:attr:`Outlook.pace`: its mean gain per doubling so far, the observed range over the doublings
it spans) and its point-to-point noise: a curve that neither moves nor scatters much cannot be
expected to jump, and a smooth law-like curve (no noise) keeps the precision of its fit. The
next doubling *pays* when ``G >= T``; ``p = P(G >= T)`` (mapped by the settings' calibration,
the identity by default) is weighed against a stated loss: a wrong "pays" (a wasted doubling)
costs 1, a wrong "does not pay" (a run stopped whose next doubling would have paid)
``stop_cost``, an inconclusive call ``abstain_cost``; the call with the least expected loss is
made (:func:`~saturate.analysis.call_settings.call_levels`):

* "does not pay" when ``p < stop_below = min(abstain_cost / stop_cost, 1 / (1 + stop_cost))``;
* "pays" when ``p >= go_above = max(1 - abstain_cost, 1 / (1 + stop_cost))``;
* inconclusive in between (an empty band when abstaining costs at least
  ``stop_cost / (1 + stop_cost)``), and whenever the curve has not moved beyond its noise
  (:attr:`Outlook.moved`) while the interval of the expected gain (the evidence, without the
  innovation) straddles the threshold: the threshold, a share of the observed range, then
  measures noise.

The defaults are what leave-one-source-out on public RL curves picks when run on all of them
(``benchmarks/bench_accuracy.py`` prints the choice per held-out source): a wrong stop weighed at
3/4 of a wasted doubling and no band (both levels 4/7; abstaining never paid there, since the
curves the model is unsure about, ``p`` near one half, paid about half the time whatever else
was known of them), innovation 1 (the best calibrated ``p`` by Brier score), no calibration map
and no population prior (fitted on other sources, neither carried over to a held-out one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy.special import ndtr, ndtri

from saturate.analysis.call_settings import DecisionSettings, GroupPrior
from saturate.analysis.outlook import Outlook
from saturate.analysis.pooling import posterior
from saturate.results import Estimate, jsonable

__all__ = [
    "DecisionSettings",
    "Decision",
    "decide",
    "call_of",
    "innovation_sd",
    "p_pays",
    "gain_distribution",
]


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


def _bounds(mean: float, sd: float, lower: float, upper: float) -> tuple[float, float]:
    return (lower - mean) / sd, (upper - mean) / sd


def p_pays(mean: float, sd: float, threshold: float, lower: float = -math.inf,
           upper: float = math.inf) -> float:
    """``P(G >= threshold)`` for ``G ~ N(mean, sd^2)`` truncated to ``[lower, upper]``.

    Zero when the bound is below the threshold; with ``sd == 0`` a step at the threshold.
    """
    if not (math.isfinite(mean) and sd >= 0):
        return math.nan
    if threshold > upper:
        return 0.0
    if sd == 0 or not math.isfinite(sd):
        if not math.isfinite(sd):
            return math.nan
        return 1.0 if min(max(mean, lower), upper) >= threshold else 0.0
    a, b = _bounds(mean, sd, lower, upper)
    mass = ndtr(b) - ndtr(a)
    if not mass > 0:  # all the mass is beyond a bound: G sits at the nearer bound
        return 1.0 if (upper if mean > upper else lower) >= threshold else 0.0
    t = max((threshold - mean) / sd, a)
    return float(min(1.0, max(0.0, (ndtr(b) - ndtr(t)) / mass)))


def gain_distribution(mean: float, sd: float, lower: float, upper: float,
                      confidence: float) -> Estimate:
    """Mean and equal-tailed interval of ``N(mean, sd^2)`` truncated to ``[lower, upper]``."""
    if not (math.isfinite(mean) and math.isfinite(sd)):
        return Estimate(mean, identified=False)
    a_tail = (1.0 - confidence) / 2.0
    if sd == 0:
        v = min(max(mean, lower), upper)
        return Estimate(v, v, v)
    a, b = _bounds(mean, sd, lower, upper)
    if not (ndtr(b) - ndtr(a)) > 1e-12:
        v = upper if mean > upper else lower
        return Estimate(v, v, v)
    if math.isinf(a) and math.isinf(b):
        z = float(ndtri(1.0 - a_tail))
        return Estimate(mean, mean - z * sd, mean + z * sd)
    from saturate.analysis.truncated import truncnorm_mean, truncnorm_ppf

    lo, hi = (truncnorm_ppf(q, a, b) * sd + mean for q in (a_tail, 1.0 - a_tail))
    return Estimate(truncnorm_mean(a, b) * sd + mean, lo, hi)


def innovation_sd(outlook: Outlook, settings: DecisionSettings) -> float:
    """Standard deviation of the next doubling's innovation: ``innovation * sqrt(pace * noise)``
    (metric units; 0 when the pace or the noise is unknown)."""
    pace, noise = outlook.pace, outlook.noise
    scale = math.sqrt(pace) * math.sqrt(noise) if noise >= 0 and pace >= 0 else math.nan
    return settings.innovation * scale if math.isfinite(scale) else 0.0


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
    p = settings.calibrated(p_model)
    gain = gain_distribution(mean, sd, lo, hi, confidence)
    expected = gain_distribution(mean, sd_est, lo, hi, confidence)
    call = call_of(p, expected, outlook, settings)
    bounded = (math.isfinite(lo) or math.isfinite(hi)) and (
        gain.lo <= lo + 1e-12 * abs(lo) or gain.hi >= hi - 1e-12 * abs(hi)
        or mean + z * sd > hi or mean - z * sd < lo)
    return Decision(call, p, gain, own, use, bool(bounded), expected, p_model)
