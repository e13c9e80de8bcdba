"""Batched robust Levenberg-Marquardt: many fits of one law, solved together in numpy.

A batch holds one parameter vector per row (multi-start points, rolling-origin fits, bootstrap
resamples). Each iteration does one model-and-Jacobian evaluation for the whole batch and one batched
k-by-k solve, so 200 resamples cost little more than a few single fits. The robust loss is handled
by iteratively re-weighted least squares with scipy's loss conventions (``cost = 0.5 * f_scale^2 *
sum(rho((r / f_scale)^2))``); bounds by projecting each trial step onto the box. Rows that have
converged leave the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from saturate.laws import Law

__all__ = ["LOSSES", "BatchResult", "robust_cost", "solve_batch"]

Array = NDArray[np.float64]
LOSSES = ("linear", "soft_l1", "huber", "cauchy")


@dataclass(frozen=True)
class BatchResult:
    """Solutions (b, k), their robust costs (b,) and whether each row met the tolerance."""

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
    z = w * r**2 / f_scale**2
    return 0.5 * f_scale**2 * np.sum(_rho(z, loss)[0], axis=-1)


def solve_batch(
    law: Law,
    x: Array,
    y: Array,
    w: Array,
    theta0: Array,
    *,
    loss: str = "soft_l1",
    f_scale: float = 1.0,
    max_iter: int = 50,
    tol: float = 1e-8,
) -> BatchResult:
    """Minimise the robust weighted cost of ``y - law(x, theta)`` for every row of ``theta0``.

    ``y`` and ``w`` are (n,) or (b, n); weight 0 removes a point (rolling-origin fits).
    """
    lower, upper = law.lower, law.upper
    theta = np.clip(np.array(theta0, dtype=float), lower, upper)
    b, k = theta.shape
    y = np.broadcast_to(np.asarray(y, dtype=float), (b, x.shape[0]))
    w = np.broadcast_to(np.asarray(w, dtype=float), (b, x.shape[0]))
    with np.errstate(all="ignore"):
        f, jac = law.value_and_jacobian(x, theta)
        r = y - f
        cost = robust_cost(r, w, loss, f_scale)
    bad = ~np.isfinite(cost)
    cost[bad] = np.inf
    lam = np.full(b, 1e-3)
    converged = np.zeros(b, dtype=bool)
    active = np.flatnonzero(~bad)
    eye = np.eye(k)
    span = 1e-9 * (upper - lower)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - reported below
        if active.size == 0:
            break
        ra, wa, ja = r[active], w[active], jac[active]
        with np.errstate(all="ignore"):
            om = wa * _rho(wa * ra**2 / f_scale**2, loss)[1]
            jw = ja * om[..., None]
            lhs = np.matmul(jw.transpose(0, 2, 1), ja)
            grad = np.matmul(jw.transpose(0, 2, 1), ra[..., None])[..., 0]
            # parameters on a bound whose descent direction points outside are held there
            th_a = theta[active]
            held = ((th_a <= lower + span) & (grad < 0)) | ((th_a >= upper - span) & (grad > 0))
            lhs = np.where(held[:, :, None] | held[:, None, :], 0.0, lhs)
            grad = np.where(held, 0.0, grad)
            diag = np.diagonal(lhs, axis1=1, axis2=2) + held
            damp = lam[active, None] * diag + 1e-12 * (diag.max(axis=1, keepdims=True) + 1e-30)
            step = np.linalg.solve(lhs + damp[..., None] * eye, grad[..., None])[..., 0]
            step = np.where(held, 0.0, step)
            trial = np.clip(th_a + step, lower, upper)
            f_t, j_t = law.value_and_jacobian(x, trial)
            r_t = y[active] - f_t
            cost_t = robust_cost(r_t, wa, loss, f_scale)
        old = cost[active]
        ok = np.isfinite(cost_t) & (cost_t <= old)
        acc = active[ok]
        theta[acc], r[acc], jac[acc], cost[acc] = trial[ok], r_t[ok], j_t[ok], cost_t[ok]
        lam[acc] = np.maximum(lam[acc] / 5.0, 1e-9)
        lam[active[~ok]] *= 8.0
        with np.errstate(all="ignore"):
            rel = (old - cost_t) / np.maximum(old, 1e-300)
            moved = np.max(np.abs(trial - th_a) / (np.abs(th_a) + 1e-3), axis=1)
        small = ok & ((rel < tol) | (old <= 1e-28) | (moved < 1e-8))
        small |= ~ok & (moved < 1e-10)
        done = small | (lam[active] > 1e10)
        converged[active[done]] = True
        active = active[~done]
    return BatchResult(theta=theta, cost=cost, converged=converged, n_iter=it)
