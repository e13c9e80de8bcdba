"""Scaling and saturation laws as pure formulas, in normalised coordinates.

Every law is written for ``x = C / C_ref`` (compute over the last observed compute, so the data
ends at ``x = 1``) and for a value axis that is standardised and oriented so that *up is better*
(the fitting layer flips loss-like metrics). In those coordinates one set of bounds and starting
grids works for curves of any unit, offset or length.

Each law keeps its linear parameters first (levels and amplitudes): given the non-linear ones they
are solved exactly by weighted least squares, which is how :meth:`Law.starts` searches a grid of
starting points cheaply (variable projection). Scale parameters of the compute axis are stored as
natural logarithms (``kind="log_compute"``); :func:`natural_value` turns any parameter back into the
user's units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

__all__ = ["Param", "Law", "LAWS", "LEVEL_BOUND", "natural_value"]

Array = NDArray[np.float64]
ParamKind = Literal["level", "amplitude", "log_compute", "plain"]

LEVEL_BOUND = 25.0
"""Levels and amplitudes are bounded to +-25 standard deviations of the observed values."""
_LOG_X = (-14.0, 7.0)  # log(C / C_ref): from 1e-6 of the last compute to 1100 times it
_EXP_MAX = 700.0


@dataclass(frozen=True)
class Param:
    """One parameter with its bounds (normalised coordinates) and how to read it back.

    ``kind``: ``level`` (a value of the metric), ``amplitude`` (a difference of values),
    ``log_compute`` (log of a compute scale over ``C_ref``) or ``plain`` (an exponent).
    """

    name: str
    lower: float
    upper: float
    description: str = ""
    kind: ParamKind = "plain"


@dataclass(frozen=True)
class Law:
    """A law ``y = f(x; theta)`` with its analytic Jacobian, starting grid and asymptote."""

    name: str
    formula: str
    params: tuple[Param, ...]
    n_linear: int
    _model: Callable[[Array, Array, bool], tuple[Array, Array | None]] = field(repr=False)
    _basis: Callable[[Array, Array], Array] = field(repr=False)
    _grid: Callable[[Array], Array] = field(repr=False)
    _asymptote: Callable[[Array], Array] = field(repr=False)

    @property
    def k(self) -> int:
        """Number of parameters."""
        return len(self.params)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def lower(self) -> Array:
        return np.array([p.lower for p in self.params])

    @property
    def upper(self) -> Array:
        return np.array([p.upper for p in self.params])

    def __call__(self, x: ArrayLike, theta: ArrayLike) -> Array:
        """Values at ``x`` (n,) for ``theta`` (..., k): shape (..., n)."""
        return self._model(_x(x), np.asarray(theta, dtype=float), False)[0]

    def jacobian(self, x: ArrayLike, theta: ArrayLike) -> Array:
        """d f / d theta at ``x`` (n,) for ``theta`` (..., k): shape (..., n, k)."""
        return self.value_and_jacobian(x, theta)[1]

    def value_and_jacobian(self, x: ArrayLike, theta: ArrayLike) -> tuple[Array, Array]:
        """Both at once (they share most of the work)."""
        f, jac = self._model(_x(x), np.asarray(theta, dtype=float), True)
        assert jac is not None
        return f, jac

    def asymptote(self, theta: ArrayLike) -> Array | float:
        """Value as compute goes to infinity (+-inf when the law does not level off)."""
        out = self._asymptote(np.asarray(theta, dtype=float))
        return float(out) if np.ndim(out) == 0 else out

    def starts(self, x: ArrayLike, y: ArrayLike, w: ArrayLike | None = None, m: int = 4) -> Array:
        """``m`` starting guesses (m, k): the best points of a grid over the non-linear
        parameters, each with its linear parameters solved by weighted least squares."""
        w_arr = np.ones(np.shape(x)) if w is None else np.asarray(w, dtype=float)
        return self.starts_batch(x, y, w_arr[None, :], m)[0]

    def starts_batch(self, x: ArrayLike, y: ArrayLike, w: ArrayLike, m: int = 4) -> Array:
        """Starting guesses for several weightings at once: ``w`` (o, n) -> (o, m, k).

        Used for the rolling-origin fits, where weight 0 hides the points after the origin."""
        x_arr, y_arr = _x(x), np.asarray(y, dtype=float)
        w_arr = np.atleast_2d(np.asarray(w, dtype=float))
        nl = self._grid(x_arr)
        phi = self._basis(x_arr, nl)  # (g, n, p)
        g, n, p = phi.shape
        outer = (phi[..., :, None] * phi[..., None, :]).reshape(g, n, p * p)
        lhs = np.matmul(w_arr, outer).reshape(g, -1, p, p).transpose(1, 0, 2, 3)
        rhs = np.matmul(w_arr, phi * y_arr[:, None]).transpose(1, 0, 2)
        ridge = 1e-9 * (np.trace(lhs, axis1=-2, axis2=-1)[..., None, None] / p + 1e-12)
        lin = np.linalg.solve(lhs + ridge * np.eye(p), rhs[..., None])[..., 0]
        lin = np.clip(lin, self.lower[:p], self.upper[:p])
        theta = np.concatenate([lin, np.broadcast_to(nl, lin.shape[:-1] + nl.shape[-1:])], -1)
        with np.errstate(all="ignore"):
            resid = y_arr - np.einsum("gnp,ogp->ogn", phi, lin)
            sse = np.einsum("ogn,on->og", resid**2, w_arr)
        sse = np.where(np.isfinite(sse), sse, np.inf)
        best = np.argsort(sse, axis=1, kind="stable")[:, :m]
        return np.take_along_axis(theta, best[..., None], axis=1)


def natural_value(
    kind: ParamKind, value: ArrayLike, *, loc: float, scale: float, sign: float, c_ref: float,
    offset: float
) -> Array:
    """A parameter in the user's units: values un-standardised, compute scales un-normalised."""
    v = np.asarray(value, dtype=float)
    if kind == "level":
        return loc + sign * scale * v
    if kind == "amplitude":
        return sign * scale * v
    if kind == "log_compute":
        with np.errstate(over="ignore"):
            return np.exp(v) * c_ref - offset
    return v


def _x(x: ArrayLike) -> Array:
    return np.asarray(x, dtype=float)


def _col(theta: Array, i: int) -> Array:
    """Parameter i with a trailing axis so it broadcasts against x."""
    return theta[..., i, None]


def _log(x: Array) -> Array:
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(x, 1e-300))


def _exp(z: Array) -> Array:
    return np.exp(np.minimum(z, _EXP_MAX))


def _stack(parts: list[Array], shape: tuple[int, ...]) -> Array:
    out = np.empty(shape + (len(parts),))
    for i, p in enumerate(parts):
        out[..., i] = p
    return out


def _grid(*axes: ArrayLike) -> Array:
    mesh = np.meshgrid(*[np.asarray(a, dtype=float) for a in axes], indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=-1)


def _u_range(x: Array) -> tuple[float, float]:
    u = _log(x[x > 0]) if np.any(x > 0) else np.zeros(1)
    return float(max(u.min(), _LOG_X[0])), float(min(u.max(), _LOG_X[1]))


_LV = LEVEL_BOUND


# --- sigmoid in log compute (ScaleRL): R0 + (A - R0) / (1 + (Cmid / C)^B) -------------------
def _sigmoid(x: Array, th: Array, jac: bool) -> tuple[Array, Array | None]:
    a, r0, b, m = (_col(th, i) for i in range(4))
    u = _log(x)
    s = expit(b * (u - m))
    f = r0 + (a - r0) * s
    if not jac:
        return f, None
    ds = (a - r0) * s * (1.0 - s)
    return f, _stack([s, 1.0 - s, ds * (u - m), -ds * b], f.shape)


def _sigmoid_basis(x: Array, nl: Array) -> Array:
    s = expit(nl[:, 0, None] * (_log(x) - nl[:, 1, None]))
    return np.stack([s, 1.0 - s], axis=-1)


def _sigmoid_grid(x: Array) -> Array:
    lo, hi = _u_range(x)
    return _grid(np.geomspace(0.3, 8.0, 8), np.linspace(lo - 1.0, hi + 3.0, 20))


# --- saturating power law: A - D * (C / C_ref)^(-b) -------------------------------------------
def _power(x: Array, th: Array, jac: bool) -> tuple[Array, Array | None]:
    a, d, b = (_col(th, i) for i in range(3))
    u = _log(x)
    p = _exp(-b * u)
    f = a - d * p
    if not jac:
        return f, None
    return f, _stack([np.ones_like(f), -p, d * u * p], f.shape)


def _power_basis(x: Array, nl: Array) -> Array:
    p = _exp(-nl[:, 0, None] * _log(x))
    return np.stack([np.ones_like(p), -p], axis=-1)


def _power_grid(x: Array) -> Array:
    return _grid(np.geomspace(0.01, 4.0, 30))


# --- shifted power law: A - G * ((C + E) / (C_ref + E))^(-b), i.e. A - (D*C + E)^(-b) -----------
def _power_shifted(x: Array, th: Array, jac: bool) -> tuple[Array, Array | None]:
    a, g, b, ls = (_col(th, i) for i in range(4))
    s = _exp(ls)
    v = _log(x + s) - _log(1.0 + s)
    h = _exp(-b * v)
    f = a - g * h
    if not jac:
        return f, None
    dls = g * h * b * s * (1.0 / (x + s) - 1.0 / (1.0 + s))
    return f, _stack([np.ones_like(f), -h, g * h * v, dls], f.shape)


def _power_shifted_basis(x: Array, nl: Array) -> Array:
    s = _exp(nl[:, 1, None])
    h = _exp(-nl[:, 0, None] * (_log(x + s) - _log(1.0 + s)))
    return np.stack([np.ones_like(h), -h], axis=-1)


def _power_shifted_grid(x: Array) -> Array:
    lo, _ = _u_range(x)
    return _grid(np.geomspace(0.02, 6.0, 12), np.linspace(max(lo - 1.0, -9.0), np.log(30.0), 10))


# --- Weibull saturation: A - (A - R0) * exp(-(C / s)^d) ---------------------------------------
def _weibull(x: Array, th: Array, jac: bool) -> tuple[Array, Array | None]:
    a, r0, d, ls = (_col(th, i) for i in range(4))
    z = d * (_log(x) - ls)
    t = _exp(z)
    e = np.exp(-t)
    f = a - (a - r0) * e
    if not jac:
        return f, None
    dt = (a - r0) * e * t
    return f, _stack([1.0 - e, e, dt * (_log(x) - ls), -dt * d], f.shape)


def _weibull_basis(x: Array, nl: Array) -> Array:
    e = np.exp(-_exp(nl[:, 0, None] * (_log(x) - nl[:, 1, None])))
    return np.stack([1.0 - e, e], axis=-1)


def _weibull_grid(x: Array) -> Array:
    lo, hi = _u_range(x)
    return _grid(np.geomspace(0.2, 6.0, 8), np.linspace(lo - 1.0, hi + 3.0, 20))


# --- log-linear: a + b * ln(C / C_ref) --------------------------------------------------------
def _loglinear(x: Array, th: Array, jac: bool) -> tuple[Array, Array | None]:
    a, b = _col(th, 0), _col(th, 1)
    u = _log(x)
    f = a + b * u
    if not jac:
        return f, None
    return f, _stack([np.ones_like(f), np.broadcast_to(u, f.shape)], f.shape)


def _loglinear_basis(x: Array, nl: Array) -> Array:
    u = np.broadcast_to(_log(x), (nl.shape[0], x.shape[0]))
    return np.stack([np.ones_like(u), u], axis=-1)


def _no_grid(x: Array) -> Array:
    return np.zeros((1, 0))


# --- broken power law with one break (Caballero et al. 2022) -----------------------------------
# A - D * x^(-c0) * ((1 + (x/d)^(1/f)) / (1 + d^(-1/f)))^(-c1 f): D is the gap at x = 1.
def _bnsl_terms(u: Array, c0: Array, c1: Array, ld: Array, f: Array) -> tuple[Array, ...]:
    z, z0 = (u - ld) / f, -ld / f
    sp, sp0 = np.logaddexp(0.0, z), np.logaddexp(0.0, z0)
    log_p = -c0 * u - c1 * f * (sp - sp0)
    return z, z0, sp, sp0, log_p


def _bnsl(x: Array, th: Array, jac: bool) -> tuple[Array, Array | None]:
    a, d, c0, c1, ld, fb = (_col(th, i) for i in range(6))
    u = _log(x)
    z, z0, sp, sp0, log_p = _bnsl_terms(u, c0, c1, ld, fb)
    p = _exp(log_p)
    y = a - d * p
    if not jac:
        return y, None
    sg, sg0 = expit(z), expit(z0)
    dp = -d * p  # d y / d log_p
    d_f = -c1 * ((sp - sg * z) - (sp0 - sg0 * z0))
    parts = [np.ones_like(y), -p, dp * -u, dp * -fb * (sp - sp0), dp * c1 * (sg - sg0), dp * d_f]
    return y, _stack(parts, y.shape)


def _bnsl_basis(x: Array, nl: Array) -> Array:
    u = _log(x)
    c0, c1, ld, fb = (nl[:, i, None] for i in range(4))
    p = _exp(_bnsl_terms(u, c0, c1, ld, fb)[-1])
    return np.stack([np.ones_like(p), -p], axis=-1)


def _bnsl_grid(x: Array) -> Array:
    lo, hi = _u_range(x)
    return _grid(
        [-0.2, 0.0, 0.1, 0.3, 0.8],
        [-0.5, 0.3, 1.0, 2.5, 6.0],
        np.linspace(lo, hi + 1.5, 12),
        [0.05, 0.2, 0.7],
    )


def _asym_level(theta: Array) -> Array:
    return theta[..., 0]


def _asym_none(theta: Array) -> Array:
    b = theta[..., 1]
    return np.where(b > 0, np.inf, np.where(b < 0, -np.inf, theta[..., 0]))


def _asym_bnsl(theta: Array) -> Array:
    a, d, total = theta[..., 0], theta[..., 1], theta[..., 2] + theta[..., 3]
    grows = np.where(d > 0, -np.inf, np.where(d < 0, np.inf, a))
    return np.where(total > 0, a, grows)


def _level(name: str, description: str) -> Param:
    return Param(name, -_LV, _LV, description, "level")


def _amplitude(name: str, description: str) -> Param:
    return Param(name, -_LV, _LV, description, "amplitude")


def _log_compute(name: str, description: str) -> Param:
    return Param(name, _LOG_X[0], _LOG_X[1], description, "log_compute")


LAWS: dict[str, Law] = {
    law.name: law
    for law in (
        Law(
            "sigmoid",
            "R0 + (A - R0) / (1 + (Cmid / C)^B)",
            (
                _level("A", "asymptote"),
                _level("R0", "level at zero compute"),
                Param("B", 0.05, 20.0, "efficiency exponent"),
                _log_compute("Cmid", "compute at half the gain"),
            ),
            2, _sigmoid, _sigmoid_basis, _sigmoid_grid, _asym_level,
        ),
        Law(
            "power",
            "A - D * (C / C_last)^(-b)",
            (
                _level("A", "asymptote"),
                _amplitude("D", "gap to the asymptote at the last compute"),
                Param("b", 1e-3, 5.0, "power-law exponent"),
            ),
            2, _power, _power_basis, _power_grid, _asym_level,
        ),
        Law(
            "power_shifted",
            "A - (D * C + E)^(-b)  [= A - G * ((C + Cs) / (C_last + Cs))^(-b)]",
            (
                _level("A", "asymptote"),
                _amplitude("G", "gap to the asymptote at the last compute"),
                Param("b", 1e-3, 8.0, "power-law exponent"),
                _log_compute("Cs", "compute shift E / D"),
            ),
            2, _power_shifted, _power_shifted_basis, _power_shifted_grid, _asym_level,
        ),
        Law(
            "weibull",
            "A - (A - R0) * exp(-(C / s)^d)",
            (
                _level("A", "asymptote"),
                _level("R0", "level at zero compute"),
                Param("d", 0.05, 10.0, "shape exponent"),
                _log_compute("s", "compute scale (63% of the gain)"),
            ),
            2, _weibull, _weibull_basis, _weibull_grid, _asym_level,
        ),
        Law(
            "loglinear",
            "a + b * ln(C / C_last)",
            (
                _level("a", "level at the last compute"),
                _amplitude("b", "gain per e-fold of compute"),
            ),
            2, _loglinear, _loglinear_basis, _no_grid, _asym_none,
        ),
        Law(
            "bnsl",
            "A - D * x^(-c0) * ((1 + (x/Cb)^(1/f)) / (1 + (1/Cb)^(1/f)))^(-c1*f), x = C/C_last",
            (
                _level("A", "asymptote (when c0 + c1 > 0)"),
                _amplitude("D", "gap to the asymptote at the last compute"),
                Param("c0", -3.0, 5.0, "exponent before the break"),
                Param("c1", -5.0, 20.0, "change of exponent at the break"),
                _log_compute("Cb", "compute at the break"),
                Param("f", 0.01, 5.0, "sharpness of the break (small = sharp)"),
            ),
            2, _bnsl, _bnsl_basis, _bnsl_grid, _asym_bnsl,
        ),
    )
}
