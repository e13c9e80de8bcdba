"""Collapse detection: a sudden, unrecovered drop after a good stretch, found as a change of the
mean by PELT (values on the larger-is-better scale, :func:`saturate.vocabulary.names.signed`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtri

from saturate.fit.prep import pow2_scale
from saturate.measure.constants import (
    COLLAPSE_DROP_SHARE,
    COLLAPSE_JUMP_DIVISOR,
    COLLAPSE_MIN_DROP_FRACTION,
    COLLAPSE_MIN_LEVEL,
    COLLAPSE_MIN_POINTS,
    COLLAPSE_MIN_SEGMENT,
    COLLAPSE_PENALTY,
    COLLAPSE_ROBUST_Z,
    COLLAPSE_SEGMENT_DIVISOR,
    COLLAPSE_Z,
    MIN_TREND_POINTS,
)
from saturate.measure.trend import _ar1, noise_sd, post_drop_trend
from saturate.results import Collapse

_EXACT_ENOUGH = 1e-3
"""The compiled PELT is used while its worst rounding of a cost stays under this share of the
penalty."""


def mean_changes(y: np.ndarray, sigma: float, penalty: float, min_size: int) -> list[int]:
    """The ends of the segments of constant mean of ``y`` (the last is ``len(y)``), cut where a
    change lowers the squared deviations by more than ``penalty * sigma^2`` (``sigma``: the
    noise), with segments at least ``min_size`` long."""
    import ruptures as rpt  # heavy import, only when a change is looked for

    n = y.shape[0]
    z = (y - np.mean(y)) / sigma
    worst = n * float(np.max(z * z)) * np.finfo(float).eps
    if math.isfinite(worst) and worst <= _EXACT_ENOUGH * penalty:
        algo = rpt.KernelCPD(kernel="linear", min_size=min_size).fit(z.reshape(-1, 1))
        return [int(b) for b in algo.predict(pen=penalty)]
    jump = max(1, n // COLLAPSE_JUMP_DIVISOR)
    algo = rpt.Pelt(custom_cost=_lean_cost_l2(), min_size=min_size, jump=jump)
    return [int(b) for b in algo.fit(y.reshape(-1, 1)).predict(pen=penalty * sigma**2)]


@functools.cache
def lean_cost_class() -> type:
    """ruptures' CostL2, bit for bit, without ``np.var``'s Python overhead (PELT calls it
    thousands of times per curve); built on first use so ruptures is imported only then."""
    import ruptures as rpt

    class LeanCostL2(rpt.costs.CostL2):
        def fit(self, signal: np.ndarray) -> LeanCostL2:
            super().fit(signal)
            one = self.signal.shape[1] == 1
            self._flat = np.ascontiguousarray(self.signal[:, 0]) if one else None
            return self

        def error(self, start: int, end: int) -> float:
            if self._flat is None or end - start < self.min_size:
                return super().error(start, end)
            seg = self._flat[start:end]
            m = end - start
            d = seg - np.add.reduce(seg) / m
            return np.add.reduce(d * d) / m * m

    return LeanCostL2


def _lean_cost_l2() -> object:
    """A fresh lean L2 cost for one PELT run."""
    return lean_cost_class()()


def _is_step(c: np.ndarray, y: np.ndarray, a: int, m: int, b: int) -> bool:
    """True when segments ``[a, m)`` and ``[m, b)`` fit a jump between two levels better than one
    line (on compute or log compute): a sudden drop, not a gradual decline cut in two."""
    ya, yb = y[a:m], y[m:b]
    sse_step = float(np.sum((ya - ya.mean()) ** 2) + np.sum((yb - yb.mean()) ** 2))
    yy = y[a:b]
    sse_line = math.inf
    for x in (c[a:b], np.log(np.maximum(c[a:b], 1e-300))):
        x = x / pow2_scale(x)  # a line on x is a line on x / s; x^2 must not overflow
        if np.ptp(x) > 0:
            coef = np.polyfit(x, yy, 1)
            sse_line = min(sse_line, float(np.sum((yy - np.polyval(coef, x)) ** 2)))
    return sse_step < sse_line


def detect_collapse(
    compute: np.ndarray, values: np.ndarray, *, steps: np.ndarray | None = None,
    scale: float | None = None, min_drop_fraction: float = COLLAPSE_MIN_DROP_FRACTION,
    z: float = COLLAPSE_Z, confidence: float = 0.9,
) -> Collapse | None:
    """A sudden, unrecovered drop after a good stretch, or None (levels larger-is-better).

    A change of mean (:func:`mean_changes`, penalty ``3 sigma^2 ln n``) that falls by at least
    ``min_drop_fraction`` of ``scale`` and ``z`` standard errors, from near the best level so far,
    better fitted by a jump than a line, from a sustained level (:func:`_a_level_fell`: a spike
    of heavy-tailed returns is no level), and not recovered (:func:`_not_recovered`).
    """
    c = np.asarray(compute, dtype=float)
    y = np.asarray(values, dtype=float)
    n = y.size
    if n < COLLAPSE_MIN_POINTS:
        return None
    unit = pow2_scale(y)
    y = y / unit
    sigma = noise_sd(y)
    span = float(np.ptp(y)) if scale is None else float(scale) / unit
    if not (span > 0) or not math.isfinite(sigma):
        return None
    sigma = max(sigma, 1e-12 * span)
    min_size = max(COLLAPSE_MIN_SEGMENT, n // COLLAPSE_SEGMENT_DIVISOR)
    edges = [0, *mean_changes(y, sigma, COLLAPSE_PENALTY * math.log(n), min_size)]
    if len(edges) < 3:
        return None
    means = [float(np.mean(y[a:b])) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    sizes = [b - a for a, b in zip(edges[:-1], edges[1:], strict=True)]
    final = means[-1]
    fitted = np.repeat(means, sizes)
    z_level = float(ndtri(0.5 + confidence / 2.0))
    best: Collapse | None = None
    for j in range(len(means) - 1):
        before, after = means[j], means[j + 1]
        drop = before - after
        if drop <= 0:
            continue
        best_so_far = max(means[: j + 1])
        se = sigma * math.sqrt(1.0 / sizes[j] + 1.0 / sizes[j + 1])
        if (
            drop >= min_drop_fraction * span
            and drop >= z * se
            and before >= best_so_far - COLLAPSE_DROP_SHARE * drop
            and final <= before - COLLAPSE_DROP_SHARE * drop
            and (best is None or drop * unit > best.drop)
            and _is_step(c, y, edges[j], edges[j + 1], edges[j + 2])
            and _a_level_fell(y, edges[j], edges[j + 1])
            and _not_recovered(c, y, fitted, edges[j], edges[j + 1], before, drop, z_level,
                               confidence)
        ):
            at = edges[j + 1]
            best = Collapse(compute=float(c[at]),
                            step=int(steps[at]) if steps is not None else int(at),
                            level_before=before * unit, level_after=after * unit,
                            drop=drop * unit, drop_fraction=drop / span)
    return best


def _a_level_fell(y: np.ndarray, a: int, at: int) -> bool:
    """Whether a sustained level fell, not a spike: the stretch before the drop holds at least
    :data:`COLLAPSE_MIN_LEVEL` points, and the medians before and after it differ by at least
    :data:`COLLAPSE_ROBUST_Z` robust deviations of the points about them (the median absolute
    deviation, which heavy-tailed returns do not inflate as they do the mean's error)."""
    before, after = y[a:at], y[at:]
    if before.size < COLLAPSE_MIN_LEVEL:
        return False
    mb, ma = float(np.median(before)), float(np.median(after))
    spread = 1.4826 * float(np.median(np.abs(np.r_[before - mb, after - ma])))
    return mb - ma >= COLLAPSE_ROBUST_Z * spread


def _not_recovered(c: np.ndarray, y: np.ndarray, fitted: np.ndarray, a: int, at: int,
                   before: float, drop: float, z_level: float, confidence: float) -> bool:
    """Whether all points from ``at`` on (at least :data:`MIN_TREND_POINTS`) stay below ``before``
    by half the drop and by the AR(1)-inflated noise, with no significant upward trend."""
    after = y[at:]
    n_before, n_after = at - a, after.size
    if n_after < MIN_TREND_POINTS:
        return False
    resid = y[a:] - fitted[a:]
    phi = _ar1(resid)
    sd = float(np.std(resid, ddof=1)) if resid.size > 1 else 0.0
    se = sd * math.sqrt((1 + phi) / (1 - phi)) * math.sqrt(1.0 / n_before + 1.0 / n_after)
    if before - float(np.mean(after)) < max(COLLAPSE_DROP_SHARE * drop, z_level * se):
        return False
    tr = post_drop_trend(c, y, float(c[at]), confidence=confidence)
    return tr is None or not tr.slope_per_doubling.lo > 0
