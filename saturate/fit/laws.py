"""Scaling and saturation laws as pure formulas, in normalised coordinates.

Every law is written for ``x = C / C_ref`` (the data end at ``x = 1``) and values standardised and
oriented so that *up is better*, so one set of bounds and starting grids fits curves of any unit.
Linear parameters (levels, amplitudes) come first: :meth:`Law.starts` solves them exactly on a grid
of the others. Compute scales are stored as logs; :func:`natural_value` gives the user's units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from saturate.fit import formulas
from saturate.fit.formulas import JacobianFn, basis_columns, safe_exp, safe_log, softplus

Array = NDArray[np.float64]


def grid_starts(
    grid: Callable[[Array], Array], basis: Callable[[Array, Array], Array], lower: Array,
    upper: Array, x: ArrayLike, y: ArrayLike, w: ArrayLike, m: int = 4,
) -> Array:
    """The ``m`` best grid points (o, m, k) for each weighting ``w`` (o, n) of the points.
    ``grid(x)``: non-linear parameters (g, k - p); ``basis(x, grid)``: basis functions (g, n, p)."""
    x_arr, y_arr = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    w_arr = np.atleast_2d(np.asarray(w, dtype=float))
    nl = grid(x_arr)
    phi = basis(x_arr, nl)  # (g, n, p)
    g, n, p = phi.shape
    outer = np.empty((g, n, p * p))
    for i in range(p):
        for j in range(p):
            np.multiply(phi[..., i], phi[..., j], out=outer[..., i * p + j])
    lhs = np.matmul(w_arr, outer).reshape(g, -1, p, p).transpose(1, 0, 2, 3)
    phi_y = np.empty_like(phi)
    for j in range(p):
        np.multiply(phi[..., j], y_arr, out=phi_y[..., j])
    rhs = np.matmul(w_arr, phi_y).transpose(1, 0, 2)
    trace = lhs[..., 0, 0]  # np.trace's sum, in its order (a strided trace is slow)
    for i in range(1, p):
        trace = trace + lhs[..., i, i]
    ridge = 1e-9 * (trace[..., None, None] / p + 1e-12)
    lin = np.linalg.solve(lhs + ridge * np.eye(p), rhs[..., None])[..., 0]
    lin = np.clip(lin, lower[:p], upper[:p])
    theta = np.concatenate([lin, np.broadcast_to(nl, lin.shape[:-1] + nl.shape[-1:])], -1)
    with np.errstate(all="ignore"):
        sse = _weighted_sse(lhs, rhs, lin, w_arr, y_arr)
    sse = np.where(np.isfinite(sse), sse, np.inf)
    best = np.argsort(sse, axis=1, kind="stable")[:, :m]
    return np.take_along_axis(theta, best[..., None], axis=1)


def _weighted_sse(lhs: Array, rhs: Array, lin: Array, w: Array, y: Array) -> Array:
    """``sum_n w[o, n] (y_n - phi[g, n] . lin[o, g])^2`` as (o, g) from the normal equations:
    ``y'Wy - 2 lin'(Phi'Wy) + lin'(Phi'W Phi) lin``, O(g p^2) instead of O(o g n). Only the
    rounding differs from the plain sum (``tests/test_same_numbers.py``), far below the gaps the
    ranking looks at."""
    yy = w @ np.square(y)  # (o,)
    quad = np.einsum("ogp,ogpq,ogq->og", lin, lhs, lin)
    return yy[:, None] - 2.0 * np.einsum("ogp,ogp->og", lin, rhs) + quad


__all__ = ["Param", "Law", "LAWS", "LEVEL_BOUND", "natural_value"]
ParamKind = Literal["level", "amplitude", "log_compute", "plain"]

LEVEL_BOUND = 25.0
"""Levels and amplitudes are bounded to +-25 standard deviations of the observed values."""
_LOG_X = (-14.0, 7.0)  # log(C / C_ref): from 1e-6 of the last compute to 1100 times it


@dataclass(frozen=True)
class Param:
    """One parameter with its bounds (normalised coordinates) and how to read it back: ``kind``
    ``level`` (a value of the metric), ``amplitude`` (a difference of values), ``log_compute``
    (log of a compute scale over ``C_ref``) or ``plain`` (an exponent)."""

    name: str
    lower: float
    upper: float
    description: str = ""
    kind: ParamKind = "plain"


@dataclass(frozen=True)
class Law:
    """A law ``y = f(x; theta)`` with its analytic Jacobian, starting grid and asymptote.
    ``_model(x, log_x, theta)`` gives the values and a :class:`JacobianFn`
    (:mod:`saturate.fit.formulas`); the solver uses the compiled twin
    (:mod:`saturate.fit.kernels`)."""

    name: str
    formula: str
    params: tuple[Param, ...]
    n_linear: int
    _model: Callable[[Array, Array, Array], tuple[Array, JacobianFn]] = field(repr=False)
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
        return self.model(x, theta)[0]

    def jacobian(self, x: ArrayLike, theta: ArrayLike) -> Array:
        """d f / d theta at ``x`` (n,) for ``theta`` (..., k): shape (..., n, k)."""
        return self.value_and_jacobian(x, theta)[1]

    def value_and_jacobian(self, x: ArrayLike, theta: ArrayLike) -> tuple[Array, Array]:
        """Both at once (they share most of the work)."""
        f, jac = self.model(x, theta)
        return f, jac()

    def model(
        self, x: ArrayLike, theta: ArrayLike, log_x: Array | None = None
    ) -> tuple[Array, JacobianFn]:
        """Values and a function giving the Jacobian on demand; ``log_x``: ``log(x)`` if known."""
        x_arr = np.asarray(x, dtype=float)
        return self._model(x_arr, safe_log(x_arr) if log_x is None else log_x,
                           np.asarray(theta, dtype=float))

    def evaluate(self, x: Array, log_x: Array, theta: Array) -> tuple[Array, JacobianFn]:
        """:meth:`model` for float arrays, without its conversions (called at every polish step)."""
        return self._model(x, log_x, theta)

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
        """Starting guesses for several weightings at once (rolling origins): ``w`` (o, n) ->
        (o, m, k)."""
        return grid_starts(self._grid, self._basis, self.lower, self.upper, x, y, w, m)


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


def _grid(*axes: ArrayLike) -> Array:
    """Every combination of the axes' values (g, d), the first varying slowest (the rows of
    ``np.meshgrid(*axes, indexing="ij")``)."""
    arrs = [np.asarray(a, dtype=float) for a in axes]
    out = np.empty((*(a.size for a in arrs), len(arrs)))
    for i, a in enumerate(arrs):
        out[..., i] = a.reshape((-1,) + (1,) * (len(arrs) - 1 - i))
    return out.reshape(-1, len(arrs))


def _u_range(x: Array) -> tuple[float, float]:
    u = safe_log(x[x > 0]) if np.any(x > 0) else np.zeros(1)
    return float(max(u.min(), _LOG_X[0])), float(min(u.max(), _LOG_X[1]))


_LV = LEVEL_BOUND
# the starting grids' axes that do not depend on the curve
_SIGMOID_B, _WEIBULL_D = np.geomspace(0.3, 8.0, 8), np.geomspace(0.2, 6.0, 8)
_SHIFTED_B, _POWER_GRID = np.geomspace(0.02, 6.0, 12), _grid(np.geomspace(0.01, 4.0, 30))


# --- sigmoid in log compute (ScaleRL): R0 + (A - R0) / (1 + (Cmid / C)^B) -------------------
def _sigmoid_basis(x: Array, nl: Array) -> Array:
    s = expit(nl[:, 0, None] * (safe_log(x) - nl[:, 1, None]))
    return basis_columns(s, 1.0 - s)


def _sigmoid_grid(x: Array) -> Array:
    lo, hi = _u_range(x)
    return _grid(_SIGMOID_B, np.linspace(lo - 1.0, hi + 3.0, 20))


# --- saturating power law: A - D * (C / C_ref)^(-b) -------------------------------------------
def _power_basis(x: Array, nl: Array) -> Array:
    p = safe_exp(-nl[:, 0, None] * safe_log(x))
    return basis_columns(1.0, -p)


def _power_grid(x: Array) -> Array:
    return _POWER_GRID.copy()


# --- shifted power law: A - G * ((C + E) / (C_ref + E))^(-b), i.e. A - (D*C + E)^(-b) -----------
def _power_shifted_basis(x: Array, nl: Array) -> Array:
    ls, inv = np.unique(nl[:, 1], return_inverse=True)  # the shift term once per shift
    s = safe_exp(ls[:, None])
    v = (safe_log(x + s) - safe_log(1.0 + s))[inv.reshape(-1)]
    h = safe_exp(-nl[:, 0, None] * v)
    return basis_columns(1.0, -h)


def _power_shifted_grid(x: Array) -> Array:
    lo, _ = _u_range(x)
    return _grid(_SHIFTED_B, np.linspace(max(lo - 1.0, -9.0), np.log(30.0), 10))


# --- Weibull saturation: A - (A - R0) * exp(-(C / s)^d) ---------------------------------------
def _weibull_basis(x: Array, nl: Array) -> Array:
    e = np.exp(-safe_exp(nl[:, 0, None] * (safe_log(x) - nl[:, 1, None])))
    return basis_columns(1.0 - e, e)


def _weibull_grid(x: Array) -> Array:
    lo, hi = _u_range(x)
    return _grid(_WEIBULL_D, np.linspace(lo - 1.0, hi + 3.0, 20))


# --- log-linear: a + b * ln(C / C_ref) --------------------------------------------------------
def _loglinear_basis(x: Array, nl: Array) -> Array:
    u = np.broadcast_to(safe_log(x), (nl.shape[0], x.shape[0]))
    return np.stack([np.ones_like(u), u], axis=-1)


def _no_grid(x: Array) -> Array:
    return np.zeros((1, 0))


# --- broken power law with one break (Caballero et al. 2022) -----------------------------------
def _bnsl_basis(x: Array, nl: Array) -> Array:
    u = safe_log(x)
    # the break terms depend on (Cb, f) only: worked out once per pair (36 on the grid, not 900)
    # (grouped by a complex key: np.unique along axis 0 is several times slower)
    _, first, inv = np.unique(nl[:, 2] + 1j * nl[:, 3], return_index=True, return_inverse=True)
    ld, fb = nl[first, 2, None], nl[first, 3, None]
    spd = (softplus((u - ld) / fb) - softplus(-ld / fb))[inv.reshape(-1)]
    # -c0 u - (c1 f) spd, worked in spd's memory (large (g, n) temporaries cost page faults)
    log_p = np.multiply(nl[:, 1, None] * nl[:, 3, None], spd, out=spd)
    log_p = np.subtract(-nl[:, 0, None] * u, log_p, out=log_p)
    phi = np.empty(log_p.shape + (2,))  # basis_columns(1.0, -safe_exp(log_p)), in place
    phi[..., 0] = 1.0
    np.negative(np.exp(np.minimum(log_p, 700.0, out=log_p), out=log_p), out=phi[..., 1])
    return phi


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
            2, formulas.sigmoid, _sigmoid_basis, _sigmoid_grid, _asym_level,
        ),
        Law(
            "power",
            "A - D * (C / C_last)^(-b)",
            (
                _level("A", "asymptote"),
                _amplitude("D", "gap to the asymptote at the last compute"),
                Param("b", 1e-3, 5.0, "power-law exponent"),
            ),
            2, formulas.power, _power_basis, _power_grid, _asym_level,
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
            2, formulas.power_shifted, _power_shifted_basis, _power_shifted_grid, _asym_level,
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
            2, formulas.weibull, _weibull_basis, _weibull_grid, _asym_level,
        ),
        Law(
            "loglinear",
            "a + b * ln(C / C_last)",
            (
                _level("a", "level at the last compute"),
                _amplitude("b", "gain per e-fold of compute"),
            ),
            2, formulas.loglinear, _loglinear_basis, _no_grid, _asym_none,
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
            2, formulas.bnsl, _bnsl_basis, _bnsl_grid, _asym_bnsl,
        ),
    )
}
