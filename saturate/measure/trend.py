"""Evidence about a curve that does not depend on any fitted law (values on the larger-is-better
scale, :func:`saturate.vocabulary.names.signed`).

* :func:`trend_test`: the recent slope per doubling of compute, OLS on log2 compute with an
  autocorrelation-robust error (Newey-West alone covers a nominal 90% only ~60% of the time on 50
  points with phi = 0.8, hence the AR(1) inflation);
* :func:`noise_sd`: the point-to-point noise (robust);
* :func:`thin`: the points read from a curve longer than ``MAX_ANALYSED_POINTS``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import stdtr, stdtrit

from saturate.fit.prep import pow2_scale
from saturate.measure.constants import (
    MAX_ANALYSED_POINTS,
    MIN_TREND_POINTS,
    TREND_WINDOW_POINTS,
)
from saturate.results import Estimate, Trend


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
    (the differences remove the slow trend); on fewer than :data:`FEW_DIFFERENCES`
    differences, at least their plain spread (the median of a few reads a fraction of the noise
    too often: one time in ten under 0.4 of it on 7 differences). Worked out over
    ``pow2_scale``: any units are safe."""
    y = np.asarray(values, dtype=float)
    if y.size < 3:
        return math.nan
    s = pow2_scale(y)
    d = np.diff(y / s)
    mad = float(np.median(np.abs(d - np.median(d))))
    sd = 1.4826 * mad / math.sqrt(2.0)
    if sd == 0.0 or d.size < FEW_DIFFERENCES:
        # a few distinct values (accuracies on tiny eval sets), or a few differences
        sd = max(sd, float(np.std(d, ddof=1)) / math.sqrt(2.0))
    return sd * s


FEW_DIFFERENCES = 20
"""Below this many first differences the noise is read as at least their plain spread."""


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
        se = max(newey_west_se(xc, resid, lags), ols_se * math.sqrt((1 + phi) / (1 - phi)))
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


def newey_west_se(xc: np.ndarray, resid: np.ndarray, lags: int) -> float:
    """Newey-West (Bartlett kernel) standard error of an OLS slope on centred ``xc`` with
    residuals ``resid``, with the small-sample factor ``n / (n - 2)`` (statsmodels' HAC with
    ``use_correction=True``): the one heteroskedasticity-and-autocorrelation rule of the package,
    which the trend test and the diagnostics' slopes both use."""
    n = xc.size
    u = xc * resid
    s = float(u @ u)
    for lag in range(1, min(lags, n - 1) + 1):
        s += 2.0 * (1.0 - lag / (lags + 1.0)) * float(u[lag:] @ u[:-lag])
    sxx = float(xc @ xc)
    return math.sqrt(max(s, 0.0) * n / max(n - 2, 1)) / sxx


def hac_slope(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """OLS slope of ``y`` on ``x`` with its Newey-West interval (:func:`newey_west_se` with
    :func:`newey_west_lags`, Student's t on ``n - 2`` degrees of freedom): ``(value, lo, hi)``."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    xc = x - x.mean()
    slope = float(xc @ (y - y.mean())) / float(xc @ xc)
    resid = y - y.mean() - slope * xc
    se = newey_west_se(xc, resid, newey_west_lags(x.size))
    t_crit = float(stdtrit(max(x.size - 2, 1), 0.5 + confidence / 2.0))
    return slope, slope - t_crit * se, slope + t_crit * se


def _ar1(resid: np.ndarray) -> float:
    """Lag-1 autocorrelation with Kendall's small-sample bias correction, in [0, 0.98]."""
    e = np.asarray(resid, dtype=float)
    denom = float(np.sum(e * e))
    if e.size < 3 or denom == 0:
        return 0.0
    phi = float(np.sum(e[1:] * e[:-1])) / denom
    phi += (1.0 + 3.0 * phi) / e.size
    return float(np.clip(phi, 0.0, 0.98))


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
