"""Prior odds of the laws in the model average.

With prior probabilities ``pi_k`` each law's deviance gains ``-2 log pi_k`` (the weights of
:func:`saturate.fit.weights.law_weights` become ``pi_k * w_k``, renormalised). The default is equal
odds, so laws the data cannot tell apart share the weight; ``(("sigmoid", 32.0),)`` follows the
ScaleRL sigmoid (Khatri et al. 2025). Why it is not the default: ``docs/measurements.md``.
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
    parameter penalty."""
    if not prior:
        return scores
    return dataclasses.replace(scores, penalty=scores.penalty + prior_penalty(scores.names, prior))
