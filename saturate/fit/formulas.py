"""The laws' values and analytic Jacobians (the ``_model`` of each :class:`~saturate.fit.laws.Law`).

Each ``f(x, u, theta)`` takes ``x``, ``u = log x`` and parameters (..., k) and returns the values
(..., n) and a :class:`JacobianFn` that works out the Jacobian only when asked, into a (k, ..., n)
buffer. The arithmetic is done in place, but every operation is the plain formula's in the same
order, so the numbers are the same bit for bit (``tests/test_same_numbers.py``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

Array = NDArray[np.float64]


def param_columns(theta: Array) -> tuple[Array, ...]:
    """Each parameter with a trailing axis so it broadcasts against x (views, no copies)."""
    return tuple(theta[..., i, None] for i in range(theta.shape[-1]))


def safe_log(x: Array) -> Array:
    # no errstate needed: the argument is at least 1e-300 (or NaN, which does not warn)
    return np.log(np.maximum(x, 1e-300))


def safe_exp(z: Array) -> Array:
    return np.exp(np.minimum(z, 700.0))  # no overflow for any finite z


def basis_columns(*parts: Array | float) -> Array:
    """Basis functions (g, n) side by side as (g, n, p); the first part may be a constant."""
    shape = next(np.shape(q) for q in parts if np.ndim(q) == 2)
    out = np.empty(shape + (len(parts),))
    for i, p in enumerate(parts):
        out[..., i] = p
    return out


def softplus(z: Array) -> Array:
    """``log(1 + exp(z))``: numpy's formula of ``np.logaddexp(0, z)``, vectorised (the same to
    the last bit or two)."""
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


__all__ = ["JacobianFn", "sigmoid", "power", "power_shifted", "weibull", "loglinear", "bnsl"]


class JacobianFn(Protocol):
    """``jac()``: d f / d theta (..., n, k), a view of a new (k, ..., n) buffer."""

    def __call__(self) -> Array: ...


def _columns(shape: tuple[int, ...], k: int) -> Array:
    """The (..., k, n) view of a new (k, ..., n) buffer for values of ``shape``."""
    buf = np.empty((k, *shape))
    if len(shape) == 1:
        return buf
    return buf.transpose(1, 0, 2) if len(shape) == 2 else np.moveaxis(buf, 0, -2)


def _put(col: Array, a: Array) -> Array:
    """``a`` copied into the column ``col``; returns ``col``."""
    np.copyto(col, a)
    return col


def _exp_in_place(z: Array) -> Array:
    """:func:`safe_exp` in ``z``'s memory."""
    return np.exp(np.minimum(z, 700.0, out=z), out=z)


def _level_minus(a: Array, d: Array, p: Array) -> Array:
    """``a - d * p``."""
    f = np.multiply(d, p)
    return np.subtract(a, f, out=f)


# --- sigmoid in log compute (ScaleRL): R0 + (A - R0) / (1 + (Cmid / C)^B) -------------------
def sigmoid(x: Array, u: Array, th: Array) -> tuple[Array, JacobianFn]:
    a, r0, b, m = param_columns(th)
    um, amr = u - m, a - r0
    s = np.multiply(b, um)
    expit(s, out=s)
    f = np.multiply(amr, s)  # r0 + amr * s
    np.add(r0, f, out=f)

    def jac() -> Array:
        j = _columns(s.shape, 4)
        s_ = _put(j[..., 0, :], s)
        oms = np.subtract(1.0, s_, out=j[..., 1, :])
        ds = np.multiply(amr, s_, out=j[..., 3, :])  # amr * s * (1 - s)
        ds *= oms
        np.multiply(ds, um, out=j[..., 2, :])
        np.negative(ds, out=ds)  # -ds * b
        ds *= b
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- saturating power law: A - D * (C / C_ref)^(-b) -------------------------------------------
def power(x: Array, u: Array, th: Array) -> tuple[Array, JacobianFn]:
    a, d, b = param_columns(th)
    p = _exp_in_place(np.multiply(-b, u))
    f = _level_minus(a, d, p)

    def jac() -> Array:
        j = _columns(p.shape, 3)
        j[..., 0, :] = 1.0
        p_ = _put(j[..., 1, :], p)
        d_b = np.multiply(d, u, out=j[..., 2, :])  # d * u * p
        d_b *= p_
        np.negative(p_, out=p_)
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- shifted power law: A - G * ((C + E) / (C_ref + E))^(-b), i.e. A - (D*C + E)^(-b) -----------
def power_shifted(x: Array, u: Array, th: Array) -> tuple[Array, JacobianFn]:
    a, g, b, ls = param_columns(th)
    s = safe_exp(ls)
    xs = x + s
    v = np.maximum(xs, 1e-300)  # safe_log(xs) - safe_log(1 + s)
    np.log(v, out=v)
    v -= safe_log(1.0 + s)
    h = _exp_in_place(np.multiply(-b, v))
    f = _level_minus(a, g, h)

    def jac() -> Array:
        j = _columns(h.shape, 4)
        j[..., 0, :] = 1.0
        h_ = _put(j[..., 1, :], h)
        gh = np.multiply(g, h_, out=j[..., 3, :])
        np.multiply(gh, v, out=j[..., 2, :])
        inv = np.divide(1.0, xs)  # g h b s (1 / xs - 1 / (1 + s))
        inv -= 1.0 / (1.0 + s)
        gh *= b
        gh *= s
        gh *= inv
        np.negative(h_, out=h_)
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- Weibull saturation: A - (A - R0) * exp(-(C / s)^d) ---------------------------------------
def weibull(x: Array, u: Array, th: Array) -> tuple[Array, JacobianFn]:
    a, r0, d, ls = param_columns(th)
    ul, amr = u - ls, a - r0
    t = _exp_in_place(np.multiply(d, ul))
    e = np.negative(t)
    np.exp(e, out=e)
    f = _level_minus(a, amr, e)

    def jac() -> Array:
        j = _columns(e.shape, 4)
        e_ = _put(j[..., 1, :], e)
        np.subtract(1.0, e_, out=j[..., 0, :])
        dt = np.multiply(amr, e_, out=j[..., 3, :])  # amr * e * t
        dt *= t
        np.multiply(dt, ul, out=j[..., 2, :])
        np.negative(dt, out=dt)  # -dt * d
        dt *= d
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- log-linear: a + b * ln(C / C_ref) --------------------------------------------------------
def loglinear(x: Array, u: Array, th: Array) -> tuple[Array, JacobianFn]:
    a, b = param_columns(th)
    f = np.multiply(b, u)
    np.add(a, f, out=f)

    def jac() -> Array:
        j = _columns(f.shape, 2)
        j[..., 0, :] = 1.0
        j[..., 1, :] = u
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- broken power law with one break (Caballero et al. 2022) -----------------------------------
# A - D * x^(-c0) * ((1 + (x/d)^(1/f)) / (1 + d^(-1/f)))^(-c1 f): D is the gap at x = 1.
def bnsl(x: Array, u: Array, th: Array) -> tuple[Array, JacobianFn]:
    a, d, c0, c1, ld, fb = param_columns(th)
    z = np.subtract(u, ld)
    z /= fb  # z = (u - ld) / f
    z0 = -ld / fb
    e = np.abs(z)  # exp(-|z|), kept: the Jacobian's logistic function is worked out from it
    np.exp(np.negative(e, out=e), out=e)
    sp = np.maximum(z, 0.0)  # softplus(z), as elementwise.softplus
    sp += np.log1p(e)
    sp0 = softplus(z0)
    spd = np.subtract(sp, sp0)
    p = np.multiply(-c0, u)  # log p = -c0 u - c1 f spd
    p -= np.multiply(c1 * fb, spd)
    _exp_in_place(p)
    f = _level_minus(a, d, p)

    def jac() -> Array:
        j = _columns(p.shape, 6)
        j[..., 0, :] = 1.0
        p_ = _put(j[..., 1, :], p)
        sg = np.where(z >= 0.0, 1.0, e)  # expit(z) from e = exp(-|z|): no second exp
        sg /= 1.0 + e
        sg0 = expit(z0)
        dp = np.multiply(-d, p_, out=j[..., 2, :])  # d y / d log p; column 2 is dp * -u
        d_c1 = np.multiply(dp, -fb, out=j[..., 3, :])
        d_c1 *= spd
        d_f = sg * z  # -c1 ((sp - sg z) - (sp0 - sg0 z0))
        np.subtract(sp, d_f, out=d_f)
        d_f -= sp0 - sg0 * z0
        np.multiply(-c1, d_f, out=d_f)
        np.multiply(dp, d_f, out=j[..., 5, :])
        sg -= sg0
        d_ld = np.multiply(dp, c1, out=j[..., 4, :])
        d_ld *= sg
        dp *= -u
        np.negative(p_, out=p_)
        return np.swapaxes(j, -1, -2)

    return f, jac
