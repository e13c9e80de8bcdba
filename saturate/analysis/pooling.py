"""Pooling sibling curves (seeds of one configuration): their estimates of the next doubling are
independent measurements of nearly the same thing.

A normal random-effects model in units of each curve's observed range: ``theta_j ~ N(mu, tau^2)``,
estimated by DerSimonian-Laird from the *other* members (leave-one-out), optionally shrunk toward
a :class:`PopulationPrior`; each member's posterior combines that prior with its own estimate
(empirical Bayes). Pure functions of :class:`Outlook` values (map, reduce, map).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from saturate.analysis.call_settings import GroupPrior, PopulationPrior
from saturate.analysis.outlook import Outlook

MIN_SIBLINGS = 2
"""Siblings needed before a group says anything (with one, its spread cannot be estimated)."""


def _relative(o: Outlook) -> tuple[float, float] | None:
    if not (o.informative and math.isfinite(o.scale) and o.scale > 0):
        return None
    g, s = o.gain, o.se
    if not (math.isfinite(g) and math.isfinite(s)):
        return None
    return g / o.scale, max(s / o.scale, 1e-9)


def group_prior(
    siblings: Sequence[Outlook | None], population: PopulationPrior | None = None
) -> GroupPrior | None:
    """DerSimonian-Laird estimate from the siblings' relative gains, its mean shrunk toward the
    population prior if given; below :data:`MIN_SIBLINGS`, the population prior alone (or None)."""
    rel = [r for r in (_relative(o) for o in siblings if o is not None) if r is not None]
    if len(rel) < MIN_SIBLINGS:
        return population.as_prior() if population is not None else None
    y = np.array([r[0] for r in rel])
    v = np.array([r[1] for r in rel]) ** 2
    w = 1.0 / v
    fixed = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - fixed) ** 2))
    denom = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    tau2 = max(0.0, (q - (len(rel) - 1)) / denom) if denom > 0 else 0.0
    ws = 1.0 / (v + tau2)
    mean = float(np.sum(ws * y) / np.sum(ws))
    var_mean = 1.0 / float(np.sum(ws))
    if population is not None:
        prec = 1.0 / var_mean + 1.0 / population.sd**2
        mean = (mean / var_mean + population.mean / population.sd**2) / prec
        var_mean = 1.0 / prec
    return GroupPrior(mean=mean, var=tau2 + var_mean, tau2=tau2, n=len(rel))


def leave_one_out_priors(
    outlooks: Sequence[Outlook | None],
    groups: Sequence[Hashable | None],
    population: PopulationPrior | None = None,
) -> list[GroupPrior | None]:
    """For each curve, the prior from the other members of its group (``None`` group: alone),
    or the population prior when it has too few siblings (None without one)."""
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            members.setdefault(g, []).append(i)
    alone = population.as_prior() if population is not None else None
    out: list[GroupPrior | None] = [alone] * len(outlooks)
    for idx in members.values():
        for i in idx:
            out[i] = group_prior([outlooks[j] for j in idx if j != i], population)
    return out


def posterior(o: Outlook, prior: GroupPrior | None) -> tuple[float, float]:
    """The curve's gain per doubling given its own estimate and its group's prior: mean and
    standard deviation in metric units (either alone when the other is missing)."""
    g, s = o.gain, o.se
    rel = _relative(o)
    if prior is None or not (prior.var > 0 and math.isfinite(prior.var)):
        return g, s
    if rel is None:  # nothing of its own: the siblings' view alone
        if not (math.isfinite(o.scale) and o.scale > 0):
            return g, s
        return prior.mean * o.scale, math.sqrt(prior.var) * o.scale
    (y, sy), r = rel, o.scale
    prec = 1.0 / sy**2 + 1.0 / prior.var
    mean = (y / sy**2 + prior.mean / prior.var) / prec
    return mean * r, r / math.sqrt(prec)
