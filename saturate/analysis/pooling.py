"""Pooling sibling curves: what the seeds and sibling runs of one experiment say about a member's
next doubling.

Seeds of one configuration (and, more loosely, sibling runs of one task) share their shape: at
the same point of training they gain about the same share of the ground they have covered. A
single noisy run's own estimate of its next doubling is poor; its siblings' estimates are
independent measurements of nearly the same thing.

The model is the normal random-effects model of meta-analysis, in units of each curve's own
observed range ``R`` (so curves of different scale pool, and the threshold ``T`` is the same
share of ``R`` for all): curve ``j``'s own estimate ``g_j / R_j`` (see
:class:`~saturate.analysis.outlook.Outlook`) measures its true relative gain ``theta_j`` with
standard error ``s_j / R_j``, and ``theta_j ~ N(mu, tau^2)`` across the group. ``mu`` and
``tau^2`` are estimated from the *other* members (leave-one-out, so a curve's prior does not
reuse its own data) by DerSimonian-Laird; the prior of a member's ``theta`` is then
``N(mu_hat, tau^2 + var(mu_hat))``, and the member's posterior combines it with its own estimate
(empirical Bayes). Heterogeneous siblings give a large ``tau^2`` and the prior barely moves a
curve; agreeing siblings pull a noisy curve toward the group.

Above the groups sits an optional population prior (:class:`PopulationPrior`): what learning
curves in general gain per doubling relative to their range. It shrinks a group's mean (a group
of two or three siblings says little) and is the prior of a curve without siblings.

Everything here is a pure function of :class:`Outlook` values, so a distributed analysis can
compute the outlooks per curve, the group priors in one reduction, and the decisions per curve.
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
    """DerSimonian-Laird random-effects estimate from the siblings' relative gains, its mean
    shrunk toward the population prior when one is given. With fewer than
    :data:`MIN_SIBLINGS` informative siblings: the population prior alone (None without one)."""
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
    standard deviation in metric units (the curve's own estimate without a prior, the prior's
    alone when the curve has no estimate of its own)."""
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
