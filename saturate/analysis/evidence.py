"""Evidence about a curve that does not depend on any fitted law (values on the larger-is-better
scale, :func:`saturate.vocabulary.direction.signed`).

* :func:`trend_test`: the recent slope per doubling of compute, OLS on log2 compute with an
  autocorrelation-robust error (Newey-West alone covers a nominal 90% only ~60% of the time on 50
  points with phi = 0.8, hence the AR(1) inflation);
* :func:`detect_collapse`: a sudden, unrecovered drop, found by PELT (:func:`mean_changes`);
* :func:`thin`: the points read from a curve longer than ``MAX_ANALYSED_POINTS``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri, stdtr, stdtrit

from saturate.analysis.constants import (
    COLLAPSE_DROP_SHARE,
    COLLAPSE_JUMP_DIVISOR,
    COLLAPSE_MIN_DROP_FRACTION,
    COLLAPSE_MIN_POINTS,
    COLLAPSE_MIN_SEGMENT,
    COLLAPSE_PENALTY,
    COLLAPSE_SEGMENT_DIVISOR,
    COLLAPSE_Z,
    MAX_ANALYSED_POINTS,
    MIN_TREND_POINTS,
    TREND_WINDOW_POINTS,
)
from saturate.fit.scaling import pow2_scale
from saturate.results import Collapse, Estimate, Trend

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


def thin(compute: NDArray[np.float64], max_points: int = MAX_ANALYSED_POINTS) -> NDArray[np.intp]:
    """Indices (sorted, unique, first and last included) of the points kept from a curve whose
    ``compute`` is sorted ascending; all of them when there are at most ``max_points``."""
    c = np.asarray(compute, dtype=float)
    n = c.shape[0]
    if n <= max_points:
        return np.arange(n)
    if c[0] <= 0:  # shifted off zero by the smallest gap, as the fit does (fit.prep.normalisation)
        gaps = np.diff(c)
        gaps = gaps[gaps > 0]
        with np.errstate(over="ignore", invalid="ignore"):
            c = c - c[0] + (float(gaps.min()) if gaps.size else 1.0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        u = np.log(c)
    if not (np.isfinite(u[0]) and np.isfinite(u[-1]) and u[-1] > u[0]):  # no usable log axis
        return np.unique(np.linspace(0, n - 1, max_points).astype(np.intp))
    grid = np.linspace(u[0], u[-1], max_points - 1)
    idx = np.searchsorted(u, grid, side="left")
    return np.unique(np.r_[idx, n - 1]).astype(np.intp)


def noise_sd(values: np.ndarray) -> float:
    """Point-to-point noise of a curve: robust (MAD) spread of first differences over sqrt(2)
    (the differences remove the slow trend). Worked out over ``pow2_scale``: any units are safe."""
    y = np.asarray(values, dtype=float)
    if y.size < 3:
        return math.nan
    s = pow2_scale(y)
    d = np.diff(y / s)
    mad = float(np.median(np.abs(d - np.median(d))))
    sd = 1.4826 * mad / math.sqrt(2.0)
    if sd == 0.0:
        # a few distinct values (accuracies on tiny eval sets): the plain sd of the differences
        sd = float(np.std(d)) / math.sqrt(2.0)
    return sd * s


def newey_west_lags(n: int) -> int:
    """Lags of a Newey-West (HAC) covariance for ``n`` points: the rule of thumb
    ``floor(4 (n / 100)^(2/9))`` (Newey and West 1994), at least one."""
    return max(1, math.floor(4.0 * (n / 100.0) ** (2.0 / 9.0)))


def recent_window(compute: np.ndarray, min_points: int = TREND_WINDOW_POINTS) -> np.ndarray:
    """Boolean mask of the recent stretch: the last doubling of compute, widened to the last
    2^k-fold until it holds ``min_points`` points (or the whole curve)."""
    c = np.asarray(compute, dtype=float)
    last = float(np.max(c))
    positive = c > 0
    factor = 2.0
    while True:
        mask = positive & (c >= last / factor)
        if mask.sum() >= min_points or mask.sum() == positive.sum():
            return mask
        factor *= 2.0


def trend_test(compute: np.ndarray, values: np.ndarray, *, confidence: float = 0.9,
               min_points: int = TREND_WINDOW_POINTS, extra_se: float = 0.0) -> Trend | None:
    """Slope per doubling of compute over the recent stretch, with a HAC interval and p-value;
    None with fewer than :data:`MIN_TREND_POINTS` points. ``extra_se`` (the seeds' spread) is
    added in quadrature."""
    c = np.asarray(compute, dtype=float)
    y = np.asarray(values, dtype=float)
    mask = recent_window(c, min_points)
    n = int(mask.sum())
    if n < MIN_TREND_POINTS:
        return None
    x = np.log2(c[mask])
    s = pow2_scale(y[mask], extra_se)
    yy = y[mask] / s
    if np.ptp(x) == 0:
        return None
    xc = x - x.mean()
    lags = newey_west_lags(n)
    phi = 0.0
    if np.ptp(yy) == 0:
        slope, se = 0.0, 0.0
    else:
        sxx = float(xc @ xc)
        slope = float(xc @ (yy - yy.mean())) / sxx  # OLS on a constant and centred log compute
        resid, k = _noise_residuals(xc, yy, yy - yy.mean() - slope * xc)
        phi = _ar1(resid)
        dof = max(1, n - k)
        ols_se = math.sqrt(float(resid @ resid) / dof / sxx)
        # Newey-West alone is far too confident on short, strongly autocorrelated stretches; the
        # AR(1) variance inflation of a trend slope, (1 + phi) / (1 - phi), is not.
        se = max(_newey_west_se(xc, resid, lags), ols_se * math.sqrt((1 + phi) / (1 - phi)))
    se = math.sqrt(se**2 + (float(extra_se) / s) ** 2)
    df = max(2.0, n * (1 - phi) / (1 + phi) - 2.0)
    if se > 0:
        t_crit = float(stdtrit(df, 0.5 + confidence / 2.0))  # Student's t quantile
        p = float(2.0 * stdtr(df, -abs(slope) / se))  # two-sided tail
        lo, hi = slope - t_crit * se, slope + t_crit * se
    else:
        p = 0.0 if slope != 0 else 1.0
        lo = hi = slope
    return Trend(
        slope_per_doubling=Estimate(slope * s, lo * s, hi * s), p_value=p,
        method=(f"OLS on log2 compute; errors the larger of Newey-West HAC ({lags} lags) and "
                f"AR(1)-corrected (phi {phi:.2f}, effective n {n * (1 - phi) / (1 + phi):.0f})"),
        compute_from=float(c[mask].min()), compute_to=float(c[mask].max()), n_points=n,
    )


def _noise_residuals(xc: np.ndarray, y: np.ndarray, line_resid: np.ndarray
                     ) -> tuple[np.ndarray, int]:
    """The residuals the slope's error is measured on, and the parameters used up: around a
    parabola in log compute from 8 points on (a bend is the curve, not noise), else the line."""
    if xc.size < 8:
        return line_resid, 2
    design = np.column_stack([np.ones_like(xc), xc, xc * xc])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return y - design @ coef, 3


def _newey_west_se(xc: np.ndarray, resid: np.ndarray, lags: int) -> float:
    """Newey-West (Bartlett) standard error of the slope on centred ``xc``, with the factor
    ``n / (n - 2)`` (statsmodels' HAC with ``use_correction``)."""
    n = xc.size
    u = xc * resid
    s = float(u @ u)
    for lag in range(1, min(lags, n - 1) + 1):
        s += 2.0 * (1.0 - lag / (lags + 1.0)) * float(u[lag:] @ u[:-lag])
    sxx = float(xc @ xc)
    return math.sqrt(max(s, 0.0) * n / max(n - 2, 1)) / sxx


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


def _ar1(resid: np.ndarray) -> float:
    """Lag-1 autocorrelation with Kendall's small-sample bias correction, in [0, 0.98]."""
    e = np.asarray(resid, dtype=float)
    denom = float(np.sum(e * e))
    if e.size < 3 or denom == 0:
        return 0.0
    phi = float(np.sum(e[1:] * e[:-1])) / denom
    phi += (1.0 + 3.0 * phi) / e.size
    return float(np.clip(phi, 0.0, 0.98))


def detect_collapse(
    compute: np.ndarray, values: np.ndarray, *, steps: np.ndarray | None = None,
    scale: float | None = None, min_drop_fraction: float = COLLAPSE_MIN_DROP_FRACTION,
    z: float = COLLAPSE_Z, confidence: float = 0.9,
) -> Collapse | None:
    """A sudden, unrecovered drop after a good stretch, or None (levels larger-is-better).

    A change of mean (:func:`mean_changes`, penalty ``3 sigma^2 ln n``) that falls by at least
    ``min_drop_fraction`` of ``scale`` and ``z`` standard errors, from near the best level so far,
    better fitted by a jump than a line, and not recovered (:func:`_not_recovered`).
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
            and _not_recovered(c, y, fitted, edges[j], edges[j + 1], before, drop, z_level,
                               confidence)
        ):
            at = edges[j + 1]
            best = Collapse(compute=float(c[at]),
                            step=int(steps[at]) if steps is not None else int(at),
                            level_before=before * unit, level_after=after * unit,
                            drop=drop * unit, drop_fraction=drop / span)
    return best


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


def post_drop_trend(
    compute: np.ndarray, values: np.ndarray, since: float, *, confidence: float = 0.9
) -> Trend | None:
    """The :func:`trend_test` over all points at compute >= ``since`` (None with too few)."""
    c = np.asarray(compute, dtype=float)
    y = np.asarray(values, dtype=float)
    keep = c >= since
    if int(keep.sum()) < MIN_TREND_POINTS:
        return None
    return trend_test(c[keep], y[keep], confidence=confidence, min_points=int(keep.sum()))


class RecentStretch(NamedTuple):
    """What the last quarter of a curve's points did (larger-is-better, metric units): ``gain``
    the next doubling's if its straight line in compute goes on; ``change`` its mean minus the
    quarter before's; ``drawdown`` the last tenth's mean below the best tenth's."""

    gain: float
    change: float
    drawdown: float


def recent_stretch(compute: np.ndarray, values: np.ndarray) -> RecentStretch:
    """:class:`RecentStretch` of a curve (NaN fields with fewer than 8 points)."""
    c = np.asarray(compute, dtype=float)
    y = np.asarray(values, dtype=float)
    n = y.size
    if n < 8:
        return RecentStretch(math.nan, math.nan, math.nan)
    k = max(4, n // 4)
    s = pow2_scale(y)
    yy = y / s
    xs = c[-k:] / c[-1]
    gain = math.nan
    if np.ptp(xs) > 0:
        gain = float(np.polyfit(xs, yy[-k:], 1)[0]) * s  # slope per unit of C, times C
    change = (float(np.mean(yy[-k:])) - float(np.mean(yy[-2 * k:-k]))) * s
    w = max(2, n // 10)
    level = np.convolve(yy, np.ones(w) / w, mode="valid")
    return RecentStretch(gain, change, float(np.max(level) - level[-1]) * s)
