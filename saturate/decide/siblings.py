"""Pooling sibling curves, the seeds of one configuration: their estimates of the next doubling
are independent measurements of nearly the same thing.

Which curves are siblings (:func:`sibling_key`): same source, experiment, metric and run
parameters except those naming a seed; without a seed parameter, run names that agree once a
``seed3`` token is removed. A normal random-effects model in units of what each curve's
threshold is a share of (its observed range, or its level when it has not moved: :func:`unit`),
``theta_j ~ N(mu, tau^2)``, estimated by DerSimonian-Laird from the *other* members
(leave-one-out, so a curve's prior never reuses its own data); the decision
(:func:`saturate.decide.decision.decide`) combines it with the curve's own estimate unless the
two disagree beyond their spread (a heterogeneity test). Pure functions (map, reduce, map).
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from saturate.decide.settings import GroupPrior
from saturate.measure.evidence import Evidence

MIN_SIBLINGS = 2
"""Siblings needed before a group says anything (with one, its spread cannot be estimated)."""

_SEED_TOKEN = re.compile(r"(?i)[-_./ ]?seed[-_=]?\d+")
"""A seed in a run's name (``ppo-seed3``, ``run_seed=1``): removed, the rest names the config."""


def sibling_key(points: pd.DataFrame, params: Mapping[str, Any] | None = None) -> Hashable | None:
    """The group a curve pools with (module docstring); None when nothing says the run is one
    seed of several. ``params``: the run's facts (default: the columns of ``points``)."""
    first = points.iloc[0]
    facts = params if params is not None else {c: first[c] for c in points.columns}
    named = [(str(c), v) for c, v in facts.items() if str(c).startswith("params.") and pd.notna(v)]
    kept = tuple(sorted((c, str(v)) for c, v in named if "seed" not in c.lower()))
    stem = ""
    if not any("seed" in c.lower() for c, _ in named):
        run = str(first["run"]) if "run" in points.columns else ""
        stem = _SEED_TOKEN.sub("", run)
        if stem == run:
            return None
    return (str(first["source"]), str(first["experiment"]), str(first["metric"]), kept, stem)


def unit(ev: Evidence) -> float:
    """What siblings' gains are compared in: the reference the curve's threshold is a share of
    (its observed range, or its level or domain when it has not moved beyond its noise), else
    its observed range."""
    ref = ev.reference if math.isfinite(ev.reference) and ev.reference > 0 else ev.scale
    return ref if math.isfinite(ref) and ref > 0 else math.nan


def relative(ev: Evidence | None) -> tuple[float, float] | None:
    """A curve's own gain per doubling and its standard error in :func:`unit` (the unit siblings
    pool in); None without an estimate."""
    if ev is None or not math.isfinite(unit(ev)):
        return None
    g, s = ev.own
    if not (math.isfinite(g) and math.isfinite(s)):
        return None
    u = unit(ev)
    return g / u, max(s / u, 1e-9)


def group_prior(siblings: Sequence[Evidence | None], runs: Sequence[str] = ()
                ) -> GroupPrior | None:
    """The DerSimonian-Laird prior from the siblings' relative gains (None below
    :data:`MIN_SIBLINGS` usable siblings)."""
    rel = [r for r in map(relative, siblings) if r is not None]
    if len(rel) < MIN_SIBLINGS:
        return None
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
    return GroupPrior(mean=mean, var=tau2 + var_mean, tau2=tau2, n=len(rel), runs=tuple(runs))


def leave_one_out_priors(evidence: Sequence[Evidence | None], groups: Sequence[Hashable | None],
                         names: Sequence[str] | None = None) -> list[GroupPrior | None]:
    """For each curve, the prior from the other members of its group (``None`` group: alone);
    ``names`` (the runs) are kept on each prior to say whom it came from."""
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            members.setdefault(g, []).append(i)
    out: list[GroupPrior | None] = [None] * len(evidence)
    for idx in members.values():
        for i in idx:
            others = [j for j in idx if j != i]
            out[i] = group_prior([evidence[j] for j in others],
                                 [names[j] for j in others] if names is not None else ())
    return out


def disagreement(ev: Evidence, prior: GroupPrior) -> float:
    """How far the curve's own relative gain lies from its siblings' prior, in standard
    deviations of their difference (NaN without an estimate)."""
    rel = relative(ev)
    if rel is None or not (math.isfinite(prior.var) and prior.var >= 0):
        return math.nan
    y, s = rel
    return (y - prior.mean) / math.sqrt(s * s + prior.var)


def posterior(ev: Evidence, prior: GroupPrior | None) -> tuple[float, float]:
    """The curve's gain per doubling given its own estimate and the prior: mean and standard
    deviation in metric units (its own estimate without a usable prior)."""
    g, s = ev.own
    rel = relative(ev)
    if prior is None or rel is None or not (prior.var > 0 and math.isfinite(prior.var)):
        return g, s
    (y, sy), r = rel, unit(ev)
    prec = 1.0 / sy**2 + 1.0 / prior.var
    mean = (y / sy**2 + prior.mean / prior.var) / prec
    return mean * r, r / math.sqrt(prec)
