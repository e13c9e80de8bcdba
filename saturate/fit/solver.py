"""Robust Levenberg-Marquardt for many fits of the laws (multi-start points, rolling-origin fits,
bootstrap resamples), one row at a time in compiled code (:func:`saturate.fit.kernels.lm_rows`),
so a row's iterates do not depend on its batch. The robust loss follows scipy's conventions
(``cost = 0.5 * f_scale^2 * sum(rho((r / f_scale)^2))``), handled by re-weighted least squares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from saturate.fit.laws import Law

Array = NDArray[np.float64]
LOSSES = ("linear", "soft_l1", "huber", "cauchy")


@dataclass(frozen=True)
class BatchResult:
    """Solutions (b, k), their robust costs (b,) (inf where the start's cost was not finite),
    whether each row met the tolerance, and the most iterations a row took."""

    theta: Array
    cost: Array
    converged: NDArray[np.bool_]
    n_iter: int


def _rho(z: Array, loss: str) -> tuple[Array, Array]:
    """rho(z) and rho'(z) for z = (scaled residual)^2."""
    if loss == "linear":
        return z, np.ones_like(z)
    if loss == "soft_l1":
        t = np.sqrt(1.0 + z)
        return 2.0 * (t - 1.0), 1.0 / t
    if loss == "huber":
        big = z > 1.0
        sq = np.sqrt(np.where(big, z, 1.0))
        return np.where(big, 2.0 * sq - 1.0, z), np.where(big, 1.0 / sq, 1.0)
    if loss == "cauchy":
        return np.log1p(z), 1.0 / (1.0 + z)
    raise ValueError(f"unknown loss {loss!r}")


def robust_cost(r: Array, w: Array, loss: str, f_scale: float) -> Array:
    """Robust cost of weighted residuals along the last axis."""
    z = np.square(r) * (np.asarray(w) / f_scale**2)
    return 0.5 * f_scale**2 * np.sum(_rho(z, loss)[0], axis=-1)


def solve_batch(law: Law, x: Array, y: Array, w: Array, theta0: Array, *, loss: str = "soft_l1",
                f_scale: float = 1.0, max_iter: int = 50, tol: float = 1e-8) -> BatchResult:
    """Minimise the robust weighted cost of ``y - law(x, theta)`` for every row of ``theta0``;
    ``y`` and ``w`` are (n,) or (b, n); weight 0 removes a point (rolling-origin fits)."""
    return solve_laws([(law, y, w, theta0)], x, loss=loss, f_scale=f_scale, max_iter=max_iter,
                      tol=tol)[0]


def solve_laws(problems: Sequence[tuple[Law, ArrayLike, ArrayLike, ArrayLike]], x: Array, *,
               loss: str = "soft_l1", f_scale: float = 1.0, max_iter: int = 50,
               tol: float = 1e-8) -> list[BatchResult]:
    """:func:`solve_batch` for several ``(law, y, w, theta0)`` batches on one ``x``."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}")
    # numba loads in about a second: only when something is fitted, not for --help or a gate
    from saturate.fit.kernels import LAW_IDS, LOSS_IDS, lm_rows

    x = np.ascontiguousarray(x, dtype=float)
    log_x = np.log(np.maximum(x, 1e-300))
    out = []
    for law, y, w, theta0 in problems:
        theta = np.array(theta0, dtype=float, order="C", ndmin=2)  # a copy, solved in place
        yy, ww = _rows(y), _rows(w)
        _check_shapes(law, theta, yy, ww, x.shape[0])
        if law.name not in LAW_IDS:  # a user's law: the general path
            out.append(solve_general(law, x, log_x, yy, ww, theta, loss=loss, f_scale=f_scale,
                                     max_iter=max_iter, tol=tol))
            continue
        cost = np.empty(theta.shape[0])
        converged = np.empty(theta.shape[0], dtype=bool)
        n_iter = lm_rows(
            LAW_IDS[law.name], x, log_x, yy, ww, theta, law.lower, law.upper,
            LOSS_IDS[loss], float(f_scale), int(max_iter), float(tol), cost, converged,
        )
        out.append(BatchResult(theta=theta, cost=cost, converged=converged, n_iter=int(n_iter)))
    return out


def solve_general(law: Law, x: Array, log_x: Array, y: Array, w: Array, theta0: Array, *,
                  loss: str, f_scale: float, max_iter: int, tol: float) -> BatchResult:
    """Each row of ``theta0`` (b, k) fitted by scipy's ``least_squares`` (same robust loss,
    finite-difference Jacobian) to its row of ``y`` and ``w``, for a law without a compiled kernel
    (:class:`saturate.fit.model.UserLaw`); ``n_iter`` counts function evaluations."""
    from scipy.optimize import least_squares

    theta = np.array(theta0, dtype=float)
    cost = np.full(theta.shape[0], np.inf)
    converged = np.zeros(theta.shape[0], dtype=bool)
    lo, hi = law.lower, law.upper
    n_eval = 0
    for i in range(theta.shape[0]):
        yi, wi = y[min(i, y.shape[0] - 1)], w[min(i, w.shape[0] - 1)]
        sw = np.sqrt(wi)

        def fun(t: Array, yi: Array = yi, sw: Array = sw) -> Array:
            return sw * (yi - law.evaluate(x, log_x, t)[0])

        start = np.clip(theta[i], lo, hi)
        if not np.all(np.isfinite(fun(start))):
            continue
        try:
            res = least_squares(fun, start, bounds=(lo, hi), loss=loss, f_scale=f_scale,
                                max_nfev=max_iter * (law.k + 1), ftol=tol, xtol=tol)
        except (ValueError, np.linalg.LinAlgError):
            continue
        theta[i], converged[i], n_eval = res.x, res.status > 0, max(n_eval, res.nfev)
        r = yi - law.evaluate(x, log_x, res.x)[0]
        cost[i] = float(robust_cost(r, wi, loss, f_scale))
    return BatchResult(theta=theta, cost=cost, converged=converged, n_iter=int(n_eval))


def _rows(a: ArrayLike) -> Array:
    """``a`` as a C-contiguous float (rows, n) array: one row all fits share, or one per fit."""
    return np.ascontiguousarray(np.atleast_2d(np.asarray(a, dtype=float)))


def _check_shapes(law: Law, theta: Array, y: Array, w: Array, n: int) -> None:
    """Shapes the compiled loop relies on (it does not check its indices)."""
    b = theta.shape[0]
    if theta.ndim != 2 or theta.shape[1] != law.k:
        raise ValueError(f"theta0 for {law.name}: expected {law.k} columns, got "
                         f"{theta.shape[-1]} (shape {theta.shape})")
    for name, a in (("y", y), ("w", w)):
        if a.ndim != 2 or a.shape[1] != n or a.shape[0] not in (1, b):
            raise ValueError(f"{name} for {law.name}: expected ({n},) or ({b}, {n}), got "
                             f"shape {a.shape}")
