"""The laws' values and analytic Jacobians (the ``_model`` of each :class:`~saturate.fit.laws.Law`).

Each ``f(x, u, theta, out)`` takes ``x``, ``u = log x`` and parameters (..., k) and returns the
values (..., n) (written into ``out`` when given) and a :class:`JacobianFn`. The Jacobian is
worked out only when asked for, only for the rows asked for (the solver needs it where a step was
accepted), from the intermediate results of the values, into a (..., k, n) buffer (the caller's
when given: the solver lays the Jacobians of laws with the same k side by side).

The arithmetic is worked in place, a few (b, n) buffers per law instead of a dozen temporaries:
every operation is the one of the plain formula, in the same order on the same operands, so the
numbers are the same bit for bit (``tests/test_same_numbers.py`` holds the plain formulas).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from saturate.fit.elementwise import (
    jacobian_columns,
    param_columns,
    pick_rows,
    safe_exp,
    safe_log,
    softplus,
)

__all__ = ["JacobianFn", "sigmoid", "power", "power_shifted", "weibull", "loglinear", "bnsl"]

Array = NDArray[np.float64]
Rows = NDArray[np.intp] | None


class JacobianFn(Protocol):
    """``jac(rows, out)``: d f / d theta (..., n, k) of the given rows of a (b, k) batch (``None``:
    all), as a view of ``out`` (..., k, n) when given, else of a new buffer."""

    def __call__(self, rows: Rows, out: Array | None = None) -> Array: ...


def _exp_in_place(z: Array) -> Array:
    """:func:`safe_exp` in ``z``'s memory."""
    return np.exp(np.minimum(z, 700.0, out=z), out=z)


def _level_minus(a: Array, d: Array, p: Array, out: Array | None) -> Array:
    """``a - d * p``, in ``out`` when given."""
    f = np.multiply(d, p, out=out)
    return np.subtract(a, f, out=f)


# --- sigmoid in log compute (ScaleRL): R0 + (A - R0) / (1 + (Cmid / C)^B) -------------------
def sigmoid(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, r0, b, m = param_columns(th)
    um, amr = u - m, a - r0
    s = np.multiply(b, um)
    expit(s, out=s)
    f = np.multiply(amr, s, out=out)  # r0 + amr * s
    np.add(r0, f, out=f)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        s_, um_, amr_, b_ = pick_rows(rows, s, um, amr, b)
        oms = 1.0 - s_
        ds = amr_ * s_  # amr * s * (1 - s)
        ds *= oms
        d_b = ds * um_
        np.negative(ds, out=ds)  # -ds * b
        ds *= b_
        return jacobian_columns([s_, oms, d_b, ds], s_.shape, out)

    return f, jac


# --- saturating power law: A - D * (C / C_ref)^(-b) -------------------------------------------
def power(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, d, b = param_columns(th)
    p = _exp_in_place(np.multiply(-b, u))
    f = _level_minus(a, d, p, out)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        p_, d_ = pick_rows(rows, p, d)
        d_b = d_ * u  # d * u * p
        d_b *= p_
        return jacobian_columns([1.0, -p_, d_b], p_.shape, out)

    return f, jac


# --- shifted power law: A - G * ((C + E) / (C_ref + E))^(-b), i.e. A - (D*C + E)^(-b) -----------
def power_shifted(
    x: Array, u: Array, th: Array, out: Array | None = None
) -> tuple[Array, JacobianFn]:
    a, g, b, ls = param_columns(th)
    s = safe_exp(ls)
    xs = x + s
    v = np.maximum(xs, 1e-300)  # safe_log(xs) - safe_log(1 + s)
    np.log(v, out=v)
    v -= safe_log(1.0 + s)
    h = _exp_in_place(np.multiply(-b, v))
    f = _level_minus(a, g, h, out)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        h_, v_, xs_, g_, b_, s_ = pick_rows(rows, h, v, xs, g, b, s)
        gh = g_ * h_
        d_b = gh * v_
        inv = np.divide(1.0, xs_)  # g h b s (1 / xs - 1 / (1 + s))
        inv -= 1.0 / (1.0 + s_)
        gh *= b_
        gh *= s_
        gh *= inv
        return jacobian_columns([1.0, -h_, d_b, gh], h_.shape, out)

    return f, jac


# --- Weibull saturation: A - (A - R0) * exp(-(C / s)^d) ---------------------------------------
def weibull(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, r0, d, ls = param_columns(th)
    ul, amr = u - ls, a - r0
    t = _exp_in_place(np.multiply(d, ul))
    e = np.negative(t)
    np.exp(e, out=e)
    f = _level_minus(a, amr, e, out)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        e_, t_, ul_, amr_, d_ = pick_rows(rows, e, t, ul, amr, d)
        dt = amr_ * e_  # amr * e * t
        dt *= t_
        d_d = dt * ul_
        np.negative(dt, out=dt)  # -dt * d
        dt *= d_
        return jacobian_columns([1.0 - e_, e_, d_d, dt], e_.shape, out)

    return f, jac


# --- log-linear: a + b * ln(C / C_ref) --------------------------------------------------------
def loglinear(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, b = param_columns(th)
    f = np.multiply(b, u, out=out)
    np.add(a, f, out=f)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        shape = f.shape if rows is None else (rows.shape[0], u.shape[0])
        return jacobian_columns([1.0, u], shape, out)

    return f, jac


# --- broken power law with one break (Caballero et al. 2022) -----------------------------------
# A - D * x^(-c0) * ((1 + (x/d)^(1/f)) / (1 + d^(-1/f)))^(-c1 f): D is the gap at x = 1.
def bnsl(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
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
    f = _level_minus(a, d, p, out)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        z_, z0_, e_, sp_, sp0_, spd_, p_, d_, c1_, fb_ = pick_rows(
            rows, z, z0, e, sp, sp0, spd, p, d, c1, fb
        )
        sg = np.where(z_ >= 0.0, 1.0, e_)  # expit(z) from e = exp(-|z|): no second exp
        sg /= 1.0 + e_
        sg0 = expit(z0_)
        dp = -d_ * p_  # d y / d log p
        d_c1 = dp * -fb_
        d_c1 *= spd_
        d_f = sg * z_  # -c1 ((sp - sg z) - (sp0 - sg0 z0))
        np.subtract(sp_, d_f, out=d_f)
        d_f -= sp0_ - sg0 * z0_
        np.multiply(-c1_, d_f, out=d_f)
        d_f *= dp
        sg -= sg0
        d_ld = dp * c1_
        d_ld *= sg
        return jacobian_columns([1.0, -p_, dp * -u, d_c1, d_ld, d_f], p_.shape, out)

    return f, jac
