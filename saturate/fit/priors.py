"""Prior odds of the laws in the model average.

The weights of :func:`saturate.fit.weights.law_weights` are pseudo-Bayesian posterior model
probabilities; with prior probabilities ``pi_k`` each law's deviance gains ``-2 log pi_k`` (the
weights become ``pi_k * w_k``, renormalised). Only the ratios matter.

The default is equal odds: laws the data cannot tell apart share the weight, so the averaged
forecast carries their disagreement. ``(("sigmoid", 32.0),)`` follows the ScaleRL sigmoid
instead (Khatri et al. 2025, "The Art of Scaling Reinforcement Learning Compute", found the
sigmoid in log compute to describe and extrapolate RL compute-performance curves better than
power laws). Where the data separate the laws, 32 to 1 (6.9 units of deviance) is overturned (a
clean power law over three decades gives the sigmoid little weight); where they cannot (a
Weibull or a broken power law fit a sigmoid's points within the noise and extrapolate
differently), the average follows the sigmoid.

It is not the default: where the sigmoid is wrong it takes the shared weight away exactly where
the laws disagree beyond the data, and on public RL curves it changes nothing beyond noise (the
measurements are in ``docs/measurements.md``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

from saturate.errors import SettingsError

DEFAULT_LAW_PRIOR: tuple[tuple[str, float], ...] = ()
"""Prior odds of each law against a law not listed (odds 1)."""


def check_law_prior(prior: tuple[tuple[str, float], ...] | Mapping[str, float],
                    known: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """The prior as ``((law, odds), ...)``; a SettingsError naming the bad entry otherwise."""
    items = tuple(prior.items()) if isinstance(prior, Mapping) else tuple(prior)
    out = []
    for item in items:
        try:
            name, odds = item
            odds = float(odds)
        except (TypeError, ValueError):
            raise SettingsError(f"law_prior: expected (law, odds) pairs, got {item!r}") from None
        if name not in known:
            raise SettingsError(f"law_prior: unknown law {name!r}; choose from {', '.join(known)}")
        if not (math.isfinite(odds) and odds > 0):
            raise SettingsError(f"law_prior: odds must be > 0, got {odds!r} for {name!r}")
        out.append((str(name), odds))
    return tuple(out)


def prior_penalty(names: tuple[str, ...], prior: tuple[tuple[str, float], ...]) -> np.ndarray:
    """``-2 log pi_k`` per law in ``names`` (laws not in ``prior`` have odds 1)."""
    odds = dict(prior)
    return np.array([-2.0 * math.log(odds.get(n, 1.0)) for n in names])


def with_prior(scores, prior: tuple[tuple[str, float], ...]):
    """The :class:`~saturate.fit.weights.Scores` with each law's prior penalty added to its
    parameter penalty (which every weight draw adds to the deviance)."""
    if not prior:
        return scores
    return dataclasses.replace(scores, penalty=scores.penalty + prior_penalty(scores.names, prior))
