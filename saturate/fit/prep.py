"""Getting one curve ready for fitting: cleaning, normalised axes, thinning, noise and resampling
(pure functions; the bootstrap takes the caller's ``numpy`` Generator)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import solve_toeplitz

try:  # the Levinson recursion scipy.linalg.solve_toeplitz runs, without its argument checks
    from scipy.linalg._solve_toeplitz import levinson
except ImportError:  # pragma: no cover - a scipy without it: the public function
    levinson = None

from saturate.errors import InputError
from saturate.fit.kernels import ar_filter
from saturate.results.codec import Coded
from saturate.table.curves import DataWarning

#: Magnitudes left unscaled: their squares and sums of squares stay far from a float's limits.
SAFE_MAGNITUDE: tuple[float, float] = (2.0**-60, 2.0**60)


def pow2_scale(*values: ArrayLike) -> float:
    """A power of two ``s`` with ``1 <= m / s < 2`` for the largest finite magnitude ``m`` among
    ``values``; 1.0 when ``m`` lies in :data:`SAFE_MAGNITUDE` or no value is finite and non-zero.
    Divide by ``s`` (never multiply by ``1 / s``, which may overflow)."""
    m = 0.0
    for v in values:
        if isinstance(v, (float, int)):
            a = abs(float(v))
            if a < math.inf:  # also False for NaN
                m = max(m, a)
            continue
        arr = np.abs(np.asarray(v, dtype=float))
        arr = arr[np.isfinite(arr)]
        if arr.size:
            m = max(m, float(arr.max()))
    if m == 0.0 or SAFE_MAGNITUDE[0] <= m <= SAFE_MAGNITUDE[1]:
        return 1.0
    return math.ldexp(1.0, math.frexp(m)[1] - 1)


Array = NDArray[np.float64]
_X_MIN = 1e-12


@dataclass(frozen=True)
class Normalisation(Coded):
    """Maps user units to the fitting coordinates and back: ``x = (compute + offset) / c_ref``
    (``offset`` > 0 shifts a curve with compute <= 0 by one compute gap, for the log scale) and
    ``y = sign * (value - loc) / scale`` (``sign = -1`` for lower-is-better), worked over
    :func:`~saturate.fit.prep.pow2_scale` so values near the largest float do not overflow."""

    loc: float
    scale: float
    sign: float
    c_ref: float
    offset: float

    def x(self, compute: ArrayLike) -> Array:
        """Normalised compute; values at or below ``-offset`` are clipped to a tiny positive x."""
        c = np.asarray(compute, dtype=float)
        return np.maximum((c + self.offset) / self.c_ref, _X_MIN)

    def y(self, value: ArrayLike) -> Array:
        s = pow2_scale(self.loc, self.scale)
        return self.sign * (np.asarray(value, dtype=float) / s - self.loc / s) / (self.scale / s)

    def value(self, y: ArrayLike) -> Array:
        s = pow2_scale(self.loc, self.scale)
        return (self.loc / s + self.sign * (self.scale / s) * np.asarray(y, dtype=float)) * s


@dataclass(frozen=True)
class Bins:
    """Consecutive points averaged into narrow bins of log compute (identity for short curves)."""

    x: Array  # mean x per bin
    counts: Array  # points per bin
    starts: NDArray[np.intp]  # index of each bin's first point (points are sorted by x)

    def mean(self, values: Array) -> Array:
        """Bin means of ``values`` (..., n) -> (..., n_bins)."""
        if self.starts.shape[0] == values.shape[-1]:
            return values
        return np.add.reduceat(values, self.starts, axis=-1) / self.counts


def clean_curve(compute: ArrayLike, value: ArrayLike) -> tuple[Array, Array, tuple[str, ...]]:
    """Finite points sorted by compute; warns about what was dropped."""
    try:
        c = np.asarray(compute, dtype=float).ravel()
        v = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        raise InputError(f"compute/value: expected numbers, got {exc}") from None
    if c.shape != v.shape:
        raise InputError(f"compute/value: lengths differ ({c.shape[0]} compute vs {v.shape[0]} "
                         "values)")
    flags: list[str] = []
    ok = np.isfinite(c) & np.isfinite(v)
    if not ok.all():
        dropped = int((~ok).sum())
        warnings.warn(f"fit_curve: dropped {dropped} of {c.shape[0]} points with non-finite "
                      "compute or value", DataWarning, stacklevel=3)
        flags.append("dropped_nonfinite")
        c, v = c[ok], v[ok]
    if c.shape[0] < 2:
        raise InputError(f"compute/value: need at least 2 finite points, got {c.shape[0]}")
    order = np.argsort(c, kind="stable")
    c, v = c[order], v[order]
    if c[-1] <= c[0]:
        raise InputError(f"compute: all {c.shape[0]} points have the same compute ({c[0]:g})")
    return c, v, tuple(flags)


def normalisation(c: Array, v: Array, direction: str) -> tuple[Normalisation, tuple[str, ...]]:
    """Axes for fitting: compute shifted off zero if needed, values standardised (over
    :func:`~saturate.fit.prep.pow2_scale`) and oriented. A curve whose spread is below 1e-12 of
    its largest magnitude is constant, whatever its units."""
    flags: list[str] = []
    offset = 0.0
    if c[0] <= 0:
        gaps = np.diff(np.unique(c))
        offset = float(-c[0] + gaps[0])
        flags.append("compute_shifted")
    s = pow2_scale(v)
    loc = float(np.mean(v / s)) * s
    scale = float(np.std(v / s)) * s
    if not scale > 1e-12 * float(np.max(np.abs(v))):
        scale = 1.0
        flags.append("constant")
    sign = -1.0 if direction == "lower" else 1.0
    return Normalisation(loc, scale, sign, float(c[-1] + offset), offset), tuple(flags)


def bin_points(x: Array, max_points: int) -> Bins:
    """Bins of equal width in log x, so the sparse early points stay single and the dense late
    ones are averaged. Curvature inside a bin is negligible, which keeps the fit unbiased."""
    n = x.shape[0]
    if n <= max_points:
        return Bins(x=x, counts=np.ones(n), starts=np.arange(n))
    u = np.log(x)
    edges = np.linspace(u[0], u[-1], max_points + 1)
    idx = np.clip(np.searchsorted(edges, u, side="right") - 1, 0, max_points - 1)
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    counts = np.diff(np.r_[starts, n]).astype(float)
    return Bins(x=np.add.reduceat(x, starts) / counts, counts=counts, starts=starts)


def noise_level(y: Array) -> float:
    """Point-to-point noise (robust, from first differences): scale of the robust loss."""
    if y.shape[0] < 3:
        return float(np.std(y)) or 1.0
    d = np.diff(y)
    mad = float(np.median(np.abs(d - np.median(d))))
    return 1.4826 * mad / math.sqrt(2.0)


def ar_fit(r: Array, max_order: int) -> tuple[Array, Array, float]:
    """AR(p) model of residuals by Yule-Walker, p <= max_order chosen by AIC: the coefficients,
    the innovations (n,) and the long-run variance ratio (1 for white noise)."""
    n = r.shape[0]
    r = r - r.mean()
    var = float(np.dot(r, r)) / n
    if var <= 0 or n < 8:
        return np.zeros(0), r.copy(), 1.0
    acov = np.array([np.dot(r[: n - j], r[j:]) / n for j in range(max_order + 1)])
    best = (n * math.log(var), np.zeros(0), var)
    for p in range(1, min(max_order, n // 4) + 1):
        phi = _solve_toeplitz(acov[:p], acov[1 : p + 1])
        s2 = float(acov[0] - np.dot(phi, acov[1 : p + 1]))
        if s2 <= 0 or not np.all(np.isfinite(phi)):
            break
        aic = n * math.log(s2) + 2 * p
        if aic < best[0]:
            best = (aic, phi, s2)
    _, phi, s2 = best
    innov = _residual_filter(phi, r)
    ratio = s2 / max(1.0 - float(phi.sum()), 1e-3) ** 2 / var
    return phi, innov, float(np.clip(ratio, 1.0, 100.0))


def _residual_filter(phi: Array, r: Array) -> Array:
    """The innovations ``r[t] - sum_k phi[k] r[t-1-k]`` from rest: scipy's
    ``lfilter(r_[1, -phi], [1], r)``, without importing scipy.signal."""
    return np.convolve(np.r_[1.0, -phi], r)[: r.shape[0]]


def _solve_toeplitz(c: Array, b: Array) -> Array:
    """``scipy.linalg.solve_toeplitz(c, b)`` for a real symmetric system (the same recursion on
    the same values; its checks cost four times the solve of these small systems)."""
    if levinson is None or not (np.isfinite(c).all() and np.isfinite(b).all()):
        return solve_toeplitz(c, b)  # raises on non-finite values, as before
    return levinson(np.concatenate((c[-1:0:-1], c)), np.ascontiguousarray(b))[0]


def sieve_noise(phi: Array, innov: Array, signs: Array, burn: NDArray[np.intp]) -> Array:
    """Bootstrap noise (b, n): the AR model driven by the innovations, kept in place, with random
    signs (a wild bootstrap). ``burn`` (b, m) indexes innovations that warm the filter up;
    ``signs`` is (b, m + n)."""
    if phi.shape[0] == 0:
        return signs[:, burn.shape[1]:] * innov
    drive = np.concatenate([innov[burn], np.broadcast_to(innov, (signs.shape[0], innov.shape[0]))],
                           axis=1) * signs
    return ar_filter(np.ascontiguousarray(phi, dtype=float), drive)[:, burn.shape[1]:]


def bootstrap_signs(n: int, n_boot: int, rng: np.random.Generator) -> tuple[Array, NDArray[np.intp]]:
    """Rademacher signs and warm-up indices shared by every law (common random numbers)."""
    burn = bootstrap_burn(n, n_boot, rng)
    return bootstrap_sign_rows(n_boot, n, burn.shape[1], rng), burn


def bootstrap_burn(n: int, n_boot: int, rng: np.random.Generator) -> NDArray[np.intp]:
    """Warm-up indices (n_boot, min(n, 50)) of :func:`sieve_noise`; drawn before the signs."""
    return rng.integers(0, n, size=(n_boot, min(n, 50)))


def bootstrap_sign_rows(rows: int, n: int, burn_len: int, rng: np.random.Generator) -> Array:
    """The next ``rows`` rows of Rademacher signs (rows, burn_len + n): drawn in blocks, they are
    the rows :func:`bootstrap_signs` draws at once (the generator fills row by row)."""
    return rng.choice(np.array([-1.0, 1.0]), size=(rows, burn_len + n))
