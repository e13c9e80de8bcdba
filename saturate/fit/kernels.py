"""The solver's inner loop compiled with numba: each law's values and Jacobian for one parameter
vector (the formulas of :mod:`saturate.fit.formulas`, operation for operation), and the robust
Levenberg-Marquardt iterations of one row (``tests/test_kernels.py``, ``tests/test_fit_solver.py``).

Laws and loop share one module on purpose: numba's on-disk cache tracks only the compiled
function's own source file, so a law edited elsewhere would leave a stale compiled loop.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["LAW_IDS", "LOSS_IDS", "KernelCacheWarning", "ar_filter", "law_values", "lm_rows", "warm"]


class KernelCacheWarning(UserWarning):
    """numba finds no folder to keep the compiled fit in: every process compiles it again."""


_uncached: list[str] = []  # kernels compiled without a cache (warned about once)


def _compiled(*, nogil: bool = False) -> Callable:
    """numba's ``njit`` with numpy's error model (a division by zero gives inf or NaN) and an
    on-disk cache; without a writable cache folder, compiled in each process (warned once)."""
    def wrap(fn: Callable) -> Callable:
        try:
            return njit(cache=True, error_model="numpy", nogil=nogil)(fn)
        except RuntimeError:  # numba: "cannot cache function ...: no locator available"
            if not _uncached:
                warnings.warn(
                    "numba finds no writable folder for the fit's compiled kernels (beside "
                    f"{__file__} or in the user's cache folder): every run compiles them again, "
                    "about 10 s; set NUMBA_CACHE_DIR to a writable folder", KernelCacheWarning,
                    stacklevel=3)
            _uncached.append(fn.__name__)
            return njit(error_model="numpy", nogil=nogil)(fn)
    return wrap


_jit = _compiled()
_entry = _compiled(nogil=True)  # the entry points release the GIL (a Dask worker's threads)

Array = NDArray[np.float64]
LAW_IDS = {"sigmoid": 0, "power": 1, "power_shifted": 2, "weibull": 3, "loglinear": 4, "bnsl": 5}
"""Each law's number in the kernels (its branch of :func:`_model`)."""
LOSS_IDS = {"linear": 0, "soft_l1": 1, "huber": 2, "cauchy": 3}


# ---- the laws, one parameter vector at a time -------------------------------------------------
# Each fills f (n,) with the values and, when ``jac``, J (k, n) with d f / d theta.
@_jit
def _sigmoid(u: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    a, r0, b, m = th[0], th[1], th[2], th[3]
    amr = a - r0
    for i in range(u.shape[0]):
        um = u[i] - m
        s = 1.0 / (1.0 + math.exp(-(b * um)))
        f[i] = r0 + amr * s
        if jac:
            ds = amr * s * (1.0 - s)
            J[0, i] = s
            J[1, i] = 1.0 - s
            J[2, i] = ds * um
            J[3, i] = -ds * b


@_jit
def _power(u: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    a, d, b = th[0], th[1], th[2]
    for i in range(u.shape[0]):
        p = math.exp(min(-b * u[i], 700.0))
        f[i] = a - d * p
        if jac:
            J[0, i] = 1.0
            J[1, i] = -p
            J[2, i] = d * u[i] * p


@_jit
def _power_shifted(x: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    a, g, b, ls = th[0], th[1], th[2], th[3]
    s = math.exp(min(ls, 700.0))
    log_1s = math.log(max(1.0 + s, 1e-300))
    inv_1s = 1.0 / (1.0 + s)
    for i in range(x.shape[0]):
        xs = x[i] + s
        v = math.log(max(xs, 1e-300)) - log_1s
        h = math.exp(min(-b * v, 700.0))
        f[i] = a - g * h
        if jac:
            gh = g * h
            J[0, i] = 1.0
            J[1, i] = -h
            J[2, i] = gh * v
            J[3, i] = gh * b * s * (1.0 / xs - inv_1s)


@_jit
def _weibull(u: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    a, r0, d, ls = th[0], th[1], th[2], th[3]
    amr = a - r0
    for i in range(u.shape[0]):
        ul = u[i] - ls
        t = math.exp(min(d * ul, 700.0))
        e = math.exp(-t)
        f[i] = a - amr * e
        if jac:
            dt = amr * e * t
            J[0, i] = 1.0 - e
            J[1, i] = e
            J[2, i] = dt * ul
            J[3, i] = -dt * d


@_jit
def _loglinear(u: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    a, b = th[0], th[1]
    for i in range(u.shape[0]):
        f[i] = a + b * u[i]
        if jac:
            J[0, i] = 1.0
            J[1, i] = u[i]


@_jit
def _softplus(z: float) -> float:
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


@_jit
def _bnsl(u: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    a, d, c0, c1, ld, fb = th[0], th[1], th[2], th[3], th[4], th[5]
    z0 = -ld / fb
    sp0 = _softplus(z0)
    sg0 = 1.0 / (1.0 + math.exp(-z0))
    c1f = c1 * fb
    for i in range(u.shape[0]):
        z = (u[i] - ld) / fb
        e = math.exp(-abs(z))
        sp = max(z, 0.0) + math.log1p(e)
        spd = sp - sp0
        p = math.exp(min(-c0 * u[i] - c1f * spd, 700.0))
        f[i] = a - d * p
        if jac:
            sg = (1.0 if z >= 0.0 else e) / (1.0 + e)
            dp = -d * p
            J[0, i] = 1.0
            J[1, i] = -p
            J[2, i] = dp * -u[i]
            J[3, i] = dp * -fb * spd
            J[4, i] = dp * c1 * (sg - sg0)
            J[5, i] = dp * (-c1 * ((sp - sg * z) - (sp0 - sg0 * z0)))


@_jit
def _model(law: int, x: Array, u: Array, th: Array, f: Array, J: Array, jac: bool) -> None:
    """Values (and the Jacobian when ``jac``) of law number ``law`` (see :data:`LAW_IDS`)."""
    if law == 0:
        _sigmoid(u, th, f, J, jac)
    elif law == 1:
        _power(u, th, f, J, jac)
    elif law == 2:
        _power_shifted(x, th, f, J, jac)
    elif law == 3:
        _weibull(u, th, f, J, jac)
    elif law == 4:
        _loglinear(u, th, f, J, jac)
    else:
        _bnsl(u, th, f, J, jac)


@_entry
def law_values(law: int, x: Array, u: Array, theta: Array, jac: bool) -> tuple[Array, Array]:
    """Values (b, n) and Jacobians (b, k, n) of every row of ``theta`` (b, k) (the Jacobians
    only when ``jac``; else an empty array)."""
    b, k, n = theta.shape[0], theta.shape[1], x.shape[0]
    f = np.empty((b, n))
    J = np.empty((b, k, n)) if jac else np.empty((b, k, 0))
    scratch = np.empty((k, n))
    for r in range(b):
        _model(law, x, u, theta[r], f[r], J[r] if jac else scratch, jac)
    return f, J


# ---- the robust cost and its IRLS weights -------------------------------------------------------
@_jit
def _cost(loss: int, y: Array, f: Array, wf: Array, f2: float, r: Array, om: Array) -> float:
    """Residuals ``y - f`` into ``r``, IRLS weights into ``om``; returns the robust cost
    ``0.5 f_scale^2 sum rho(z)``, ``z = r^2 w / f_scale^2`` (scipy's conventions)."""
    total = 0.0  # sum of rho(z) / 2
    for i in range(f.shape[0]):
        ri = y[i] - f[i]
        r[i] = ri
        z = ri * ri * wf[i]
        if loss == 1:  # soft_l1
            t = math.sqrt(1.0 + z)
            total += t - 1.0
            om[i] = wf[i] / t
        elif loss == 0:
            total += 0.5 * z
            om[i] = wf[i]
        elif loss == 2:  # huber
            if z > 1.0:
                sq = math.sqrt(z)
                total += sq - 0.5
                om[i] = wf[i] / sq
            else:
                total += 0.5 * z
                om[i] = wf[i]
        else:  # cauchy
            total += 0.5 * math.log1p(z)
            om[i] = wf[i] / (1.0 + z)
    return f2 * total


@_jit
def _normal(J: Array, om: Array, r: Array, k: int, lhs: Array, grad: Array) -> None:
    """J'WJ and J'Wr (W the IRLS weights ``om``) into ``lhs`` (k, k) and ``grad`` (k,)."""
    n = r.shape[0]
    for i in range(k):
        for j in range(i, k):
            s = 0.0
            for t in range(n):
                s += J[i, t] * om[t] * J[j, t]
            lhs[i, j] = s
            lhs[j, i] = s
        g = 0.0
        for t in range(n):
            g += J[i, t] * om[t] * r[t]
        grad[i] = g


@_jit
def _solve(a: Array, g: Array, k: int, out: Array) -> None:
    """``a x = g`` for a k-by-k ``a`` by Gaussian elimination with partial pivoting (``a`` and
    ``g`` are overwritten); NaN where ``a`` is singular."""
    for c in range(k):
        p = c
        for i in range(c + 1, k):
            if abs(a[i, c]) > abs(a[p, c]):
                p = i
        if a[p, c] == 0.0:
            out[:k] = np.nan
            return
        if p != c:
            for j in range(k):
                a[c, j], a[p, j] = a[p, j], a[c, j]
            g[c], g[p] = g[p], g[c]
        for i in range(c + 1, k):
            m = a[i, c] / a[c, c]
            for j in range(c, k):
                a[i, j] -= m * a[c, j]
            g[i] -= m * g[c]
    for i in range(k - 1, -1, -1):
        s = g[i]
        for j in range(i + 1, k):
            s -= a[i, j] * out[j]
        out[i] = s / a[i, i]


# ---- Levenberg-Marquardt, one row at a time -----------------------------------------------------
@_jit
def _trial(th: Array, lhs: Array, grad: Array, lam: float, lower: Array, upper: Array, k: int,
           held: Array, a: Array, g: Array, step: Array, trial: Array) -> None:
    """The damped step from ``th`` into ``trial``: parameters held at a bound that the gradient
    pushes against are left out, the step is projected onto the box."""
    for i in range(k):
        span = 1e-9 * (upper[i] - lower[i])
        at_lo = th[i] <= lower[i] + span and grad[i] < 0.0
        held[i] = 1.0 if at_lo or (th[i] >= upper[i] - span and grad[i] > 0.0) else 0.0
    dmax = -np.inf
    for i in range(k):
        for j in range(k):
            a[i, j] = 0.0 if (held[i] > 0.0 or held[j] > 0.0) else lhs[i, j]
        g[i] = 0.0 if held[i] > 0.0 else grad[i]
        dmax = max(dmax, a[i, i] + held[i])
    for i in range(k):
        a[i, i] += lam * (a[i, i] + held[i]) + 1e-12 * (dmax + 1e-30)
    _solve(a, g, k, step)
    for i in range(k):
        t = th[i] + (0.0 if held[i] > 0.0 else step[i])
        trial[i] = min(max(t, lower[i]), upper[i])


@_jit
def _moved(trial: Array, th: Array, k: int) -> float:
    """The largest relative move of a parameter."""
    out = 0.0
    for i in range(k):
        out = max(out, abs(trial[i] - th[i]) / (abs(th[i]) + 1e-3))
    return out


@_entry
def lm_rows(law: int, x: Array, u: Array, y: Array, w: Array, theta: Array, lower: Array,
            upper: Array, loss: int, f_scale: float, max_iter: int, tol: float, cost_out: Array,
            conv_out: NDArray[np.bool_]) -> int:
    """Minimise the robust weighted cost of ``y - law(x, theta)`` for every row of ``theta``
    (b, k), in place; ``y`` and ``w`` are (b, n) or (1, n). Each iteration takes a damped step
    (kept if the cost does not rise); a row stops when the cost's relative fall is below ``tol``,
    its parameters stop moving, or at ``max_iter``. Writes each row's cost (inf for a start of
    non-finite cost) and whether it converged; returns the most iterations a row took."""
    b, k, n = theta.shape[0], theta.shape[1], x.shape[0]
    f2 = f_scale * f_scale
    f, r, om, wf = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    J = np.empty((k, n))
    lhs, a = np.empty((k, k)), np.empty((k, k))
    grad, g, held = np.empty(k), np.empty(k), np.empty(k)
    step, trial = np.empty(k), np.empty(k)
    most = 0
    for row in range(b):
        yr = y[row] if y.shape[0] > 1 else y[0]
        wr = w[row] if w.shape[0] > 1 else w[0]
        for i in range(n):
            wf[i] = wr[i] / f2
        th = theta[row]
        for i in range(k):
            th[i] = min(max(th[i], lower[i]), upper[i])
        _model(law, x, u, th, f, J, True)
        cost = _cost(loss, yr, f, wf, f2, r, om)
        conv_out[row] = False
        cost_out[row] = np.inf
        if not math.isfinite(cost):
            continue
        _normal(J, om, r, k, lhs, grad)
        lam = 1e-3
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - counted below
            _trial(th, lhs, grad, lam, lower, upper, k, held, a, g, step, trial)
            _model(law, x, u, trial, f, J, True)
            cost_t = _cost(loss, yr, f, wf, f2, r, om)
            ok = math.isfinite(cost_t) and cost_t <= cost
            if ok:
                small = ((cost - cost_t) / max(cost, 1e-300) < tol or cost <= 1e-28
                         or _moved(trial, th, k) < 1e-8)
                th[:] = trial
                cost = cost_t
                lam = max(lam / 5.0, 1e-9)
            else:
                small = _moved(trial, th, k) < 1e-10
                lam *= 8.0
            if small or lam > 1e10:
                conv_out[row] = True
                break
            if ok:  # the normal equations at the new point
                _normal(J, om, r, k, lhs, grad)
        cost_out[row] = cost
        most = max(most, it)
    return most


def warm() -> None:
    """Compile the entry points now (or load them from the cache): a fresh install's first fit
    otherwise waits for numba, about 10 s."""
    x = np.array([0.5, 1.0])
    u, th = np.log(x), np.zeros((1, 6))
    law_values(0, x, u, th[:, :4], True)
    lm_rows(0, x, u, np.zeros((1, 2)), np.ones((1, 2)), th[:, :4], np.full(4, -1.0),
            np.ones(4), 1, 1.0, 1, 1e-8, np.empty(1), np.empty(1, dtype=np.bool_))
    ar_filter(np.zeros(1), np.zeros((1, 2)))


# ---- the bootstrap's noise filter ---------------------------------------------------------------
@_entry
def ar_filter(phi: Array, drive: Array) -> Array:
    """``drive`` (b, n) through the AR filter ``y[t] = drive[t] + sum_k phi[k] y[t-1-k]`` from
    rest: scipy's ``lfilter([1], [1, -phi], drive, axis=1)`` in its order of summation, without
    importing scipy.signal (a second of start-up)."""
    b, n, p = drive.shape[0], drive.shape[1], phi.shape[0]
    out = np.empty((b, n))
    for row in range(b):
        for t in range(n):
            acc = 0.0
            for k in range(min(p, t) - 1, -1, -1):
                acc = acc + out[row, t - 1 - k] * phi[k]
            out[row, t] = drive[row, t] + acc
    return out
