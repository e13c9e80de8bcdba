"""The laws' values and analytic Jacobians (the ``_model`` of each :class:`~saturate.fit.laws.Law`).

Each ``f(x, u, theta, out)`` takes ``x``, ``u = log x`` and parameters (..., k) and returns the
values (..., n) (written into ``out`` when given) and a :class:`JacobianFn`. The Jacobian is
worked out only when asked for, only for the rows asked for (the solver needs it where a step was
accepted), from the intermediate results of the values, each column straight into its place in a
buffer laid out (k, ..., n): every column one contiguous block, so writing it costs no copy and
no strided loop. ``out`` is such a buffer's (..., k, n) view (the solver lays the Jacobians of
laws with the same k side by side in one).

The arithmetic is worked in place, a few (b, n) buffers per law instead of a dozen temporaries:
every operation is the one of the plain formula, in the same order on the same operands, so the
numbers are the same bit for bit (``tests/test_same_numbers.py`` holds the plain formulas).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from saturate.fit.elementwise import param_columns, pick_rows, safe_exp, safe_log, softplus

__all__ = ["JacobianFn", "sigmoid", "power", "power_shifted", "weibull", "loglinear", "bnsl"]

Array = NDArray[np.float64]
Rows = NDArray[np.intp] | None


class JacobianFn(Protocol):
    """``jac(rows, out)``: d f / d theta (..., n, k) of the given rows of a (b, k) batch (``None``:
    all), as a view of ``out`` (..., k, n) when given, else of a new (k, ..., n) buffer."""

    def __call__(self, rows: Rows, out: Array | None = None) -> Array: ...


def _columns(out: Array | None, shape: tuple[int, ...], k: int) -> Array:
    """The (..., k, n) view of a (k, ..., n) buffer (``out`` when given) for values of ``shape``."""
    if out is not None:
        return out
    buf = np.empty((k, *shape))
    if len(shape) == 1:
        return buf
    return buf.transpose(1, 0, 2) if len(shape) == 2 else np.moveaxis(buf, 0, -2)


def _put(col: Array, a: Array, rows: Rows) -> Array:
    """``a`` (its ``rows`` when given) copied into the column ``col``; returns ``col``."""
    if rows is None:
        np.copyto(col, a)
    else:
        np.take(a, rows, axis=0, out=col, mode="clip")
    return col


def _exp_in_place(z: Array) -> Array:
    """:func:`safe_exp` in ``z``'s memory."""
    return np.exp(np.minimum(z, 700.0, out=z), out=z)


def _level_minus(a: Array, d: Array, p: Array, out: Array | None) -> Array:
    """``a - d * p``, in ``out`` when given."""
    f = np.multiply(d, p, out=out)
    return np.subtract(a, f, out=f)


def _shape(rows: Rows, values: Array) -> tuple[int, ...]:
    return values.shape if rows is None else (rows.shape[0], values.shape[-1])


# --- sigmoid in log compute (ScaleRL): R0 + (A - R0) / (1 + (Cmid / C)^B) -------------------
def sigmoid(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, r0, b, m = param_columns(th)
    um, amr = u - m, a - r0
    s = np.multiply(b, um)
    expit(s, out=s)
    f = np.multiply(amr, s, out=out)  # r0 + amr * s
    np.add(r0, f, out=f)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        um_, amr_, b_ = pick_rows(rows, um, amr, b)
        j = _columns(out, _shape(rows, s), 4)
        s_ = _put(j[..., 0, :], s, rows)
        oms = np.subtract(1.0, s_, out=j[..., 1, :])
        ds = np.multiply(amr_, s_, out=j[..., 3, :])  # amr * s * (1 - s)
        ds *= oms
        np.multiply(ds, um_, out=j[..., 2, :])
        np.negative(ds, out=ds)  # -ds * b
        ds *= b_
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- saturating power law: A - D * (C / C_ref)^(-b) -------------------------------------------
def power(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, d, b = param_columns(th)
    p = _exp_in_place(np.multiply(-b, u))
    f = _level_minus(a, d, p, out)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        (d_,) = pick_rows(rows, d)
        j = _columns(out, _shape(rows, p), 3)
        j[..., 0, :] = 1.0
        p_ = _put(j[..., 1, :], p, rows)
        d_b = np.multiply(d_, u, out=j[..., 2, :])  # d * u * p
        d_b *= p_
        np.negative(p_, out=p_)
        return np.swapaxes(j, -1, -2)

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
        v_, xs_, g_, b_, s_ = pick_rows(rows, v, xs, g, b, s)
        j = _columns(out, _shape(rows, h), 4)
        j[..., 0, :] = 1.0
        h_ = _put(j[..., 1, :], h, rows)
        gh = np.multiply(g_, h_, out=j[..., 3, :])
        np.multiply(gh, v_, out=j[..., 2, :])
        inv = np.divide(1.0, xs_)  # g h b s (1 / xs - 1 / (1 + s))
        inv -= 1.0 / (1.0 + s_)
        gh *= b_
        gh *= s_
        gh *= inv
        np.negative(h_, out=h_)
        return np.swapaxes(j, -1, -2)

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
        t_, ul_, amr_, d_ = pick_rows(rows, t, ul, amr, d)
        j = _columns(out, _shape(rows, e), 4)
        e_ = _put(j[..., 1, :], e, rows)
        np.subtract(1.0, e_, out=j[..., 0, :])
        dt = np.multiply(amr_, e_, out=j[..., 3, :])  # amr * e * t
        dt *= t_
        np.multiply(dt, ul_, out=j[..., 2, :])
        np.negative(dt, out=dt)  # -dt * d
        dt *= d_
        return np.swapaxes(j, -1, -2)

    return f, jac


# --- log-linear: a + b * ln(C / C_ref) --------------------------------------------------------
def loglinear(x: Array, u: Array, th: Array, out: Array | None = None) -> tuple[Array, JacobianFn]:
    a, b = param_columns(th)
    f = np.multiply(b, u, out=out)
    np.add(a, f, out=f)

    def jac(rows: Rows, out: Array | None = None) -> Array:
        j = _columns(out, _shape(rows, f), 2)
        j[..., 0, :] = 1.0
        j[..., 1, :] = u
        return np.swapaxes(j, -1, -2)

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
        z_, z0_, e_, sp_, sp0_, spd_, d_, c1_, fb_ = pick_rows(
            rows, z, z0, e, sp, sp0, spd, d, c1, fb
        )
        j = _columns(out, _shape(rows, p), 6)
        j[..., 0, :] = 1.0
        p_ = _put(j[..., 1, :], p, rows)
        sg = np.where(z_ >= 0.0, 1.0, e_)  # expit(z) from e = exp(-|z|): no second exp
        sg /= 1.0 + e_
        sg0 = expit(z0_)
        dp = np.multiply(-d_, p_, out=j[..., 2, :])  # d y / d log p; column 2 is dp * -u
        d_c1 = np.multiply(dp, -fb_, out=j[..., 3, :])
        d_c1 *= spd_
        d_f = sg * z_  # -c1 ((sp - sg z) - (sp0 - sg0 z0))
        np.subtract(sp_, d_f, out=d_f)
        d_f -= sp0_ - sg0 * z0_
        np.multiply(-c1_, d_f, out=d_f)
        np.multiply(dp, d_f, out=j[..., 5, :])
        sg -= sg0
        d_ld = np.multiply(dp, c1_, out=j[..., 4, :])
        d_ld *= sg
        dp *= -u
        np.negative(p_, out=p_)
        return np.swapaxes(j, -1, -2)

    return f, jac
