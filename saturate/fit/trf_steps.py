"""The trust-region steps of scipy's TRF (``scipy/optimize/_lsq/common.py`` and ``trf.py``, BSD
licence) for :mod:`saturate.fit.trf`: the same arithmetic in the same order."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["norm", "in_bounds", "select_step", "solve_lsq_trust_region"]

Array = NDArray[np.float64]
EPS = np.finfo(float).eps


def norm(x: Array) -> np.float64:
    """numpy.linalg.norm of a vector: the same dot and (correctly rounded) square root."""
    return np.float64(math.sqrt(x.dot(x)))


def in_bounds(x: Array, lb: Array, ub: Array) -> bool:
    return bool(((x >= lb) & (x <= ub)).all())


def _intersect_trust_region(x: Array, s: Array, delta: float) -> tuple[float, float]:
    a = np.dot(s, s)
    if a == 0:
        raise ValueError("`s` is zero.")
    b = np.dot(x, s)
    c = np.dot(x, x) - delta**2
    if c > 0:
        raise ValueError("`x` is not within the trust region.")
    d = np.sqrt(b*b - a*c)
    q = -(b + math.copysign(d, b))
    t1, t2 = q / a, c / q
    return (t1, t2) if t1 < t2 else (t2, t1)


def solve_lsq_trust_region(n: int, m: int, uf: Array, s: Array, v: Array, delta: float,
                            initial_alpha: float | None = None, rtol: float = 0.01,
                            max_iter: int = 10) -> tuple[Array, float, int]:
    def phi_and_derivative(alpha: float, suf: Array, s: Array,
                           delta: float) -> tuple[float, float]:
        denom = s**2 + alpha
        p_norm = norm(suf / denom)
        phi = p_norm - delta
        phi_prime = -np.add.reduce(suf ** 2 / denom**3) / p_norm
        return phi, phi_prime

    suf = s * uf
    if m >= n:
        threshold = EPS * m * s[0]
        full_rank = s[-1] > threshold
    else:
        full_rank = False
    if full_rank:
        p = -v.dot(uf / s)
        if norm(p) <= delta:
            return p, 0.0, 0
    alpha_upper = norm(suf) / delta
    if full_rank:
        phi, phi_prime = phi_and_derivative(0.0, suf, s, delta)
        alpha_lower = -phi / phi_prime
    else:
        alpha_lower = 0.0
    if initial_alpha is None or not full_rank and initial_alpha == 0:
        alpha = max(0.001 * alpha_upper, (alpha_lower * alpha_upper)**0.5)
    else:
        alpha = initial_alpha
    it = 0
    for it in range(max_iter):  # noqa: B007 - reported below
        if alpha < alpha_lower or alpha > alpha_upper:
            alpha = max(0.001 * alpha_upper, (alpha_lower * alpha_upper)**0.5)
        phi, phi_prime = phi_and_derivative(alpha, suf, s, delta)
        if phi < 0:
            alpha_upper = alpha
        ratio = phi / phi_prime
        alpha_lower = max(alpha_lower, alpha - ratio)
        alpha -= (phi + delta) * ratio / delta
        if np.abs(phi) < rtol * delta:
            break
    p = -v.dot(suf / (s**2 + alpha))
    p *= delta / norm(p)
    return p, alpha, it + 1


def _build_quadratic_1d(j: Array, g: Array, s: Array, diag: Array,
                        s0: Array | None = None) -> tuple[Any, ...]:
    v = j.dot(s)
    a = np.dot(v, v)
    a += np.dot(s * diag, s)
    a *= 0.5
    b = np.dot(g, s)
    if s0 is None:
        return a, b
    u = j.dot(s0)
    b += np.dot(u, v)
    c = 0.5 * np.dot(u, u) + np.dot(g, s0)
    b += np.dot(s0 * diag, s)
    c += 0.5 * np.dot(s0 * diag, s0)
    return a, b, c


def _minimize_quadratic_1d(a: float, b: float, lb: float, ub: float,
                           c: float = 0) -> tuple[float, float]:
    t = [lb, ub]
    if a != 0:
        extremum = -0.5 * b / a
        if lb < extremum < ub:
            t.append(extremum)
    ts = np.asarray(t)
    y = ts * (a * ts + b) + c
    i = np.argmin(y)
    return ts[i], y[i]


def _evaluate_quadratic(j: Array, g: Array, s: Array, diag: Array) -> float:
    js = j.dot(s)
    q = np.dot(js, js)
    q += np.dot(s * diag, s)
    return 0.5 * q + np.dot(s, g)


def _step_size_to_bound(x: Array, s: Array, lb: Array, ub: Array) -> tuple[float, Array]:
    non_zero = np.nonzero(s)
    s_non_zero = s[non_zero]
    steps = np.empty_like(x)
    steps.fill(np.inf)
    with np.errstate(over="ignore"):
        steps[non_zero] = np.maximum((lb - x)[non_zero] / s_non_zero,
                                     (ub - x)[non_zero] / s_non_zero)
    min_step = np.min(steps)
    return min_step, np.equal(steps, min_step) * np.sign(s).astype(int)


def select_step(x: Array, j_h: Array, diag_h: Array, g_h: Array, p: Array, p_h: Array,
                 d: Array, delta: float, lb: Array, ub: Array,
                 theta: float) -> tuple[Array, Array, float]:
    """The step of the Trust Region Reflective algorithm (trf.select_step)."""
    if in_bounds(x + p, lb, ub):
        p_value = _evaluate_quadratic(j_h, g_h, p_h, diag_h)
        return p, p_h, -p_value
    p_stride, hits = _step_size_to_bound(x, p, lb, ub)
    r_h = np.copy(p_h)
    r_h[hits.astype(bool)] *= -1
    r = d * r_h
    p *= p_stride
    p_h *= p_stride
    x_on_bound = x + p
    _, to_tr = _intersect_trust_region(p_h, r_h, delta)
    to_bound, _ = _step_size_to_bound(x_on_bound, r, lb, ub)
    r_stride = min(to_bound, to_tr)
    if r_stride > 0:
        r_stride_l = (1 - theta) * p_stride / r_stride
        r_stride_u = theta * to_bound if r_stride == to_bound else to_tr
    else:
        r_stride_l, r_stride_u = 0, -1
    if r_stride_l <= r_stride_u:
        a, b, c = _build_quadratic_1d(j_h, g_h, r_h, diag_h, s0=p_h)
        r_stride, r_value = _minimize_quadratic_1d(a, b, r_stride_l, r_stride_u, c=c)
        r_h *= r_stride
        r_h += p_h
        r = r_h * d
    else:
        r_value = np.inf
    p *= theta
    p_h *= theta
    p_value = _evaluate_quadratic(j_h, g_h, p_h, diag_h)
    ag_h = -g_h
    ag = d * ag_h
    to_tr = delta / norm(ag_h)
    to_bound, _ = _step_size_to_bound(x, ag, lb, ub)
    ag_stride = theta * to_bound if to_bound < to_tr else to_tr
    a, b = _build_quadratic_1d(j_h, g_h, ag_h, diag_h)
    ag_stride, ag_value = _minimize_quadratic_1d(a, b, 0, ag_stride)
    ag_h *= ag_stride
    ag *= ag_stride
    if p_value < r_value and p_value < ag_value:
        return p, p_h, -p_value
    if r_value < p_value and r_value < ag_value:
        return r, r_h, -r_value
    return ag, ag_h, -ag_value
