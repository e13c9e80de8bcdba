"""``scipy.optimize.least_squares(method="trf")`` for the polish of a whole-curve fit, without its
generality: a dense Jacobian, finite bounds, ``tr_solver="exact"``, ``x_scale="jac"``, default
tolerances.

The polish calls least_squares on curves the batched solver left unconverged; scipy's wrappers
(function caches, argument checks, ``scipy.linalg.svd``'s validation, ``numpy.linalg.norm``) were
about a third of its time. This is scipy's algorithm (``scipy/optimize/_lsq/trf.py`` and
``common.py``, BSD licence) with the same arithmetic in the same order, so it gives scipy's result
bit for bit (``tests/test_fit_trf.py`` holds it against scipy), and raises where scipy raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError
from scipy.linalg.lapack import get_lapack_funcs

from saturate.fit.trf_steps import in_bounds, norm, select_step, solve_lsq_trust_region

__all__ = ["least_squares_trf"]

Array = NDArray[np.float64]
EPS = np.finfo(float).eps
_TOL = 1e-8  # least_squares' ftol, xtol and gtol


def least_squares_trf(
    fun: Callable[[Array], Array], jac: Callable[[Array], Array], x0: Array, lb: Array,
    ub: Array, loss: str, f_scale: float, max_nfev: int,
) -> tuple[Array, int]:
    """``least_squares(fun, x0, jac, bounds=(lb, ub), loss=loss, f_scale=f_scale,
    x_scale="jac", max_nfev=max_nfev)``: its solution and status."""
    x0 = np.atleast_1d(x0).astype(float)
    lb, ub = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
    if np.any(lb >= ub):
        raise ValueError("Each lower bound must be strictly less than each upper bound.")
    if not in_bounds(x0, lb, ub):
        raise ValueError("Initial guess is outside of provided bounds")
    x0 = _make_strictly_feasible(x0, lb, ub, rstep=1e-10)
    f0 = np.atleast_1d(fun(x0.copy()))
    j0 = np.atleast_2d(jac(x0.copy()))
    if f0.ndim != 1:
        raise ValueError("`fun` must return at most 1-d array_like.")
    if not np.all(np.isfinite(f0)):
        raise ValueError("Residuals are not finite in the initial point.")
    if j0.shape != (f0.size, x0.size):
        raise ValueError("The return value of `jac` has wrong shape.")
    return _Trf(fun, jac, lb, ub, _loss_function(f0.size, loss, f_scale), max_nfev).run(
        x0, f0, j0)


# ---- robust losses (least_squares.py) ----------------------------------------------------------
def _soft_l1(z: Array, rho: Array, cost_only: bool) -> None:
    t = 1 + z
    rho[0] = 2 * (t**0.5 - 1)
    if cost_only:
        return
    rho[1] = t**-0.5
    rho[2] = -0.5 * t**-1.5


def _huber(z: Array, rho: Array, cost_only: bool) -> None:
    mask = z <= 1
    rho[0, mask] = z[mask]
    rho[0, ~mask] = 2 * z[~mask]**0.5 - 1
    if cost_only:
        return
    rho[1, mask] = 1
    rho[1, ~mask] = z[~mask]**-0.5
    rho[2, mask] = 0
    rho[2, ~mask] = -0.5 * z[~mask]**-1.5


def _cauchy(z: Array, rho: Array, cost_only: bool) -> None:
    rho[0] = np.log1p(z)
    if cost_only:
        return
    t = 1 + z
    rho[1] = 1 / t
    rho[2] = -1 / t**2


def _loss_function(m: int, loss: str, f_scale: float) -> Callable[..., Any] | None:
    if loss == "linear":
        return None
    kernel = {"soft_l1": _soft_l1, "huber": _huber, "cauchy": _cauchy}[loss]
    rho = np.empty((3, m))

    def loss_function(f: Array, cost_only: bool = False) -> Any:
        z = (f / f_scale) ** 2
        kernel(z, rho, cost_only=cost_only)
        if cost_only:
            return 0.5 * f_scale ** 2 * np.add.reduce(rho[0])
        rho[0] *= f_scale ** 2
        rho[2] /= f_scale ** 2
        return rho

    return loss_function


# ---- the algorithm (trf.py: trf_bounds, with tr_solver="exact" and x_scale="jac") --------------
class _Trf:
    """One run of trf_bounds; the loop is split in methods only to keep each one short."""

    def __init__(self, fun: Callable[[Array], Array], jac: Callable[[Array], Array], lb: Array,
                 ub: Array, loss_function: Callable[..., Any] | None, max_nfev: int) -> None:
        self.fun, self.jac, self.lb, self.ub = fun, jac, lb, ub
        self.loss_function, self.max_nfev = loss_function, max_nfev
        self.lb_finite, self.ub_finite = np.isfinite(lb), np.isfinite(ub)

    def _cost(self, f: Array) -> float:
        if self.loss_function is not None:
            return self.loss_function(f, cost_only=True)
        return 0.5 * np.dot(f, f)

    def _scaled(self, j: Array, f: Array) -> tuple[Array, Array, Any]:
        """The Jacobian and residuals scaled for the robust loss (in place), as trf does, and the
        loss's values (None for the linear loss)."""
        rho = None
        if self.loss_function is not None:
            rho = self.loss_function(f)
            j, f = _scale_for_robust_loss_function(j, f, rho)
        return j, f, rho

    def run(self, x0: Array, f0: Array, j0: Array) -> tuple[Array, int]:
        x, f, j = x0.copy(), f0, j0.astype(j0.dtype)
        m, n = j.shape
        cost = 0.5 * np.dot(f, f)
        j, f, rho = self._scaled(j, f)
        if rho is not None:
            cost = 0.5 * np.add.reduce(rho[0])
        g = j.T.dot(f)
        scale, scale_inv = _compute_jac_scale(j)
        v, dv = self._cl_scaling_vector(x, g)
        v = np.where(dv != 0, v * scale_inv, v)  # v[dv != 0] *= scale_inv[dv != 0]
        delta = norm(x0 * scale_inv / v**0.5)
        if delta == 0:
            delta = 1.0
        f_aug, j_aug = np.zeros(m + n), np.zeros((m + n, n))
        diag_aug = j_aug[m:].reshape(-1)[:: n + 1]  # j_aug[m:] = np.diag(...): its diagonal
        self.svd = _Svd(j_aug)
        self.nfev, alpha, status = 1, 0.0, None
        while True:
            v, dv = self._cl_scaling_vector(x, g)
            g_norm = np.abs(g * v).max()
            if g_norm < _TOL:
                status = 1
            if status is not None or self.nfev == self.max_nfev:
                break
            v = np.where(dv != 0, v * scale_inv, v)
            d = v**0.5 * scale
            diag_h = g * dv * scale
            g_h = d * g
            f_aug[:m] = f
            j_aug[:m] = j * d
            j_h = j_aug[:m]
            diag_aug[...] = diag_h**0.5
            u_, s, vt = self.svd(j_aug)
            uf = u_.T.dot(f_aug)
            theta = max(0.995, 1 - g_norm)
            step = (n, m, uf, s, vt.T, d, j_h, diag_h, g_h, theta)
            out = self._inner(x, cost, delta, alpha, step)
            x_new, f_new, cost_new, delta, alpha, status, reduction = out
            if reduction > 0:
                x, f, cost = x_new, f_new, cost_new
                j, f, _ = self._scaled(self.jac(x.copy()), f)
                g = j.T.dot(f)
                scale, scale_inv = _compute_jac_scale(j, scale_inv)
        return x, 0 if status is None else status

    def _inner(self, x: Array, cost: float, delta: float, alpha: float,
               step: tuple[Any, ...]) -> tuple[Any, ...]:
        """The inner loop of trf_bounds: trial steps until the cost goes down."""
        n, m, uf, s, v, d, j_h, diag_h, g_h, theta = step
        lb, ub = self.lb, self.ub
        reduction, status = -1.0, None
        x_new, f_new, cost_new = x, None, cost
        while reduction <= 0 and self.nfev < self.max_nfev:
            p_h, alpha, _ = solve_lsq_trust_region(n, m, uf, s, v, delta, initial_alpha=alpha)
            p = d * p_h
            st, st_h, predicted = select_step(x, j_h, diag_h, g_h, p, p_h, d, delta, lb, ub,
                                               theta)
            x_new = _make_strictly_feasible(x + st, lb, ub, rstep=0)
            f_new = self.fun(x_new.copy())  # a vector, as checked at the start
            self.nfev += 1
            st_h_norm = norm(st_h)
            if not np.isfinite(f_new).all():
                delta = 0.25 * st_h_norm
                continue
            cost_new = self._cost(f_new)
            reduction = cost - cost_new
            delta_new, ratio = _update_tr_radius(delta, reduction, predicted, st_h_norm,
                                                 st_h_norm > 0.95 * delta)
            status = _check_termination(reduction, cost, norm(st), norm(x), ratio)
            if status is not None:
                break
            alpha *= delta / delta_new
            delta = delta_new
        return x_new, f_new, cost_new, delta, alpha, status, reduction

    def _cl_scaling_vector(self, x: Array, g: Array) -> tuple[Array, Array]:
        """Coleman-Li scaling vector and its derivative (common.CL_scaling_vector)."""
        neg, pos = (g < 0) & self.ub_finite, (g > 0) & self.lb_finite  # never both
        v = np.where(pos, x - self.lb, np.where(neg, self.ub - x, 1.0))
        return v, np.subtract(pos, neg, dtype=float)


class _Svd:
    """``scipy.linalg.svd(a, full_matrices=False)`` for arrays of one shape: the same LAPACK
    routine with the same workspace, its checks kept, its per-call set-up done once."""

    def __init__(self, a: Array) -> None:
        self.gesdd, lwork_fn = get_lapack_funcs(("gesdd", "gesdd_lwork"), (a,), ilp64="preferred")
        ret = lwork_fn(a.shape[0], a.shape[1], compute_uv=True, full_matrices=False)
        if ret[-1] != 0:
            raise ValueError(f"Internal work array size computation failed: {ret[-1]}")
        self.lwork = _lwork_int(ret[0].real, self.gesdd)

    def __call__(self, a: Array) -> tuple[Array, Array, Array]:
        if not np.isfinite(a).all():
            raise ValueError("array must not contain infs or NaNs")
        u, s, v, info = self.gesdd(a, compute_uv=True, lwork=self.lwork, full_matrices=False,
                                   overwrite_a=False)
        if info > 0:
            raise LinAlgError("SVD did not converge")
        if info < 0:
            raise ValueError(f"illegal value in {-info}th argument of internal gesdd")
        return u, s, v


def _lwork_int(value: float, routine: Any) -> int:
    """lapack._check_work_float for double precision: the workspace size as an int."""
    int_dtype = getattr(routine, "int_dtype", None)
    value = int(value)
    if int_dtype is not None and value > np.iinfo(int_dtype).max:
        raise ValueError("Too large work array required -- computation cannot be performed with "
                         "standard LAPACK.")
    return value


# ---- helpers (common.py) ---------------------------------------------------------------------
def _find_active_constraints(x: Array, lb: Array, ub: Array, rtol: float) -> NDArray[np.int_]:
    active = np.zeros_like(x, dtype=int)
    if rtol == 0:
        active[x <= lb] = -1
        active[x >= ub] = 1
        return active
    lower_dist, upper_dist = x - lb, ub - x
    lower_threshold = rtol * np.maximum(1, np.abs(lb))
    upper_threshold = rtol * np.maximum(1, np.abs(ub))
    lower_active = np.isfinite(lb) & (lower_dist <= np.minimum(upper_dist, lower_threshold))
    active[lower_active] = -1
    upper_active = np.isfinite(ub) & (upper_dist <= np.minimum(lower_dist, upper_threshold))
    active[upper_active] = 1
    return active


def _make_strictly_feasible(x: Array, lb: Array, ub: Array, rstep: float) -> Array:
    if rstep == 0 and not ((x <= lb) | (x >= ub)).any():
        return x.copy()  # nothing on a bound: the general case below changes nothing
    x_new = x.copy()
    active = _find_active_constraints(x, lb, ub, rstep)
    lower_mask, upper_mask = np.equal(active, -1), np.equal(active, 1)
    if rstep == 0:
        x_new[lower_mask] = np.nextafter(lb[lower_mask], ub[lower_mask])
        x_new[upper_mask] = np.nextafter(ub[upper_mask], lb[upper_mask])
    else:
        x_new[lower_mask] = lb[lower_mask] + rstep * np.maximum(1, np.abs(lb[lower_mask]))
        x_new[upper_mask] = ub[upper_mask] - rstep * np.maximum(1, np.abs(ub[upper_mask]))
    tight_bounds = (x_new < lb) | (x_new > ub)
    x_new[tight_bounds] = 0.5 * (lb[tight_bounds] + ub[tight_bounds])
    return x_new


def _compute_jac_scale(j: Array, scale_inv_old: Array | None = None) -> tuple[Array, Array]:
    scale_inv = np.add.reduce(j**2, axis=0)**0.5
    if scale_inv_old is None:
        scale_inv[scale_inv == 0] = 1
    else:
        scale_inv = np.maximum(scale_inv, scale_inv_old)
    return 1 / scale_inv, scale_inv


def _scale_for_robust_loss_function(j: Array, f: Array, rho: Array) -> tuple[Array, Array]:
    j_scale = rho[1] + 2 * rho[2] * f**2
    j_scale[j_scale < EPS] = EPS
    j_scale **= 0.5
    f *= rho[1] / j_scale
    j *= j_scale[:, np.newaxis]
    return j, f


def _update_tr_radius(delta: float, actual: float, predicted: float, step_norm: float,
                      bound_hit: bool) -> tuple[float, float]:
    if predicted > 0:
        ratio = actual / predicted
    elif predicted == actual == 0:
        ratio = 1
    else:
        ratio = 0
    if ratio < 0.25:
        delta = 0.25 * step_norm
    elif ratio > 0.75 and bound_hit:
        delta *= 2.0
    return delta, ratio


def _check_termination(d_f: float, f: float, dx_norm: float, x_norm: float,
                       ratio: float) -> int | None:
    ftol_satisfied = d_f < _TOL * f and ratio > 0.25
    xtol_satisfied = dx_norm < _TOL * (_TOL + x_norm)
    if ftol_satisfied and xtol_satisfied:
        return 4
    if ftol_satisfied:
        return 2
    if xtol_satisfied:
        return 3
    return None
