"""Compare the aggregates of two groups: who is ahead now, at twice the compute, and where their
fitted curves cross. Now: ``P(A > B)`` over pairs of bootstrap replicates at the last shared
compute ``C``; at ``2C``: over pairs of fit draws, each widened by the standard error the draws do
not carry (:func:`~saturate.suites.group.gain_se`); crossing: the first change of order up to 64x,
its interval from paired draws (those that never cross count as beyond the horizon).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

from saturate.results import Estimate
from saturate.suites.group import gain_se
from saturate.suites.result import GroupComparison, SuiteGroup

#: How far beyond the last shared compute a crossing is looked for.
HORIZON = 64.0


def compare_groups(groups: Sequence[SuiteGroup], confidence: float) -> tuple[GroupComparison, ...]:
    """Every pair of groups, in order."""
    return tuple(compare_pair(a, b, confidence)
                 for i, a in enumerate(groups) for b in groups[i + 1:])


def p_ahead(a: np.ndarray, b: np.ndarray) -> float | None:
    """``P(A > B)`` for independent draws ``a`` and ``b`` (all pairs, ties half); None if empty."""
    a = np.asarray(a, float)
    b = np.sort(np.asarray(b, float)[np.isfinite(b)])
    a = a[np.isfinite(a)]
    if a.size == 0 or b.size == 0:
        return None
    below = np.searchsorted(b, a, side="left")
    upto = np.searchsorted(b, a, side="right")
    return float(np.mean((below + 0.5 * (upto - below)) / b.size))


def _draws_at(g: SuiteGroup, compute: float) -> tuple[np.ndarray, float] | None:
    """Fit draws of a group's aggregate at ``compute`` and the extra standard error there."""
    fit = g.analysis.fit
    if fit is None:
        return None
    d = np.asarray(fit.predict_samples(np.array([compute])), dtype=float)
    d = d.reshape(d.shape[0], -1)[:, 0] if d.ndim else d.reshape(-1)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return None
    ahead = max(math.log2(compute / g.analysis.compute_last), 0.0)
    return d, gain_se(g.analysis, g.aggregate) * ahead


def _p_ahead_forecast(a: SuiteGroup, b: SuiteGroup, compute: float) -> float | None:
    da, db = _draws_at(a, compute), _draws_at(b, compute)
    if da is None or db is None:
        return None
    (xa, sa), (xb, sb) = da, db
    diff = xa[:, None] - xb[None, :]
    s = math.hypot(sa, sb)
    if s > 0:
        return float(np.mean(norm.cdf(diff / s)))
    return float(np.mean((diff > 0) + 0.5 * (diff == 0)))


def _first_change(diff: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per row, the first compute where ``diff`` changes sign from its first value (inf if never),
    interpolated on log compute."""
    d = np.atleast_2d(diff)
    start = np.sign(d[:, :1])
    changed = (np.sign(d) != start) & (np.sign(d) != 0) & (start != 0)
    hit = changed.any(axis=1)
    idx = np.argmax(changed, axis=1)
    rows = np.arange(d.shape[0])
    prev = np.maximum(idx - 1, 0)
    lx = np.log(grid)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.clip(d[rows, prev] / (d[rows, prev] - d[rows, idx]), 0.0, 1.0)
    frac = np.where(np.isfinite(frac), frac, 1.0)
    cross = np.exp(lx[prev] + frac * (lx[idx] - lx[prev]))
    return np.where(hit, cross, np.inf)


def _crossing(
    a: SuiteGroup, b: SuiteGroup, compute: float, confidence: float
) -> tuple[Estimate | None, str | None, float | None]:
    fa, fb = a.analysis.fit, b.analysis.fit
    if fa is None or fb is None or not (compute > 0):
        return None, None, None
    horizon = HORIZON * compute
    grid = np.geomspace(compute, horizon, 400)
    diff = np.asarray(fa.predict(grid), float) - np.asarray(fb.predict(grid), float)
    point = float(_first_change(diff, grid)[0])
    sa = np.asarray(fa.predict_samples(grid), float)
    sb = np.asarray(fb.predict_samples(grid), float)
    n = min(sa.shape[0], sb.shape[0]) if sa.ndim == 2 and sb.ndim == 2 else 0
    draws = _first_change(sa[:n] - sb[:n], grid) if n >= 2 else np.array([])
    p_cross = float(np.mean(np.isfinite(draws))) if draws.size else None
    if not math.isfinite(point):
        return None, None, p_cross
    after = diff[grid > point]
    leader = a.group if after.size and after[0] > 0 else b.group
    lo = hi = math.nan
    if draws.size:
        q = (1.0 - confidence) / 2.0
        lo, hi = np.quantile(np.where(np.isfinite(draws), draws, 2.0 * horizon), [q, 1.0 - q])
        lo = float(lo) if lo <= horizon else math.nan
        hi = float(hi) if hi <= horizon else math.nan
    est = Estimate(point, lo, hi, identified=math.isfinite(lo) and math.isfinite(hi))
    return est, leader, p_cross


def compare_pair(a: SuiteGroup, b: SuiteGroup, confidence: float) -> GroupComparison:
    """:class:`GroupComparison` of two analysed groups."""
    notes = []
    only_a, only_b = sorted(set(a.tasks) - set(b.tasks)), sorted(set(b.tasks) - set(a.tasks))
    if only_a or only_b:
        notes.append(f"the groups cover different tasks (only {a.group}: "
                     f"{', '.join(only_a) or 'none'}; only {b.group}: {', '.join(only_b) or 'none'})"
                     ": their aggregates are not over the same suite")
    (sa, ea), (sb, eb) = a.aggregate.analysed, b.aggregate.analysed
    start, stop = max(sa, sb), min(ea, eb)
    p_now = None
    if stop > start:
        k = stop - 1
        compute = a.aggregate.compute[k]
        ra, rb = a.aggregate.replicates, b.aggregate.replicates
        if ra is not None and rb is not None:
            p_now = p_ahead(ra[:, k], rb[:, k])
    else:
        compute = min(a.analysis.compute_last, b.analysis.compute_last)
        notes.append("their analysed curves share no compute: no comparison on the data")
    crossing, leader, p_cross = _crossing(a, b, compute, confidence)
    if p_cross is not None:
        notes.append(f"{p_cross:.0%} of paired fit draws cross within {HORIZON:g}x")
    return GroupComparison(
        a=a.group, b=b.group, compute=float(compute), p_a_ahead=p_now,
        compute_2x=2.0 * compute, p_a_ahead_2x=_p_ahead_forecast(a, b, 2.0 * compute),
        crossing=crossing, leader_after=leader, notes=tuple(notes),
    )
