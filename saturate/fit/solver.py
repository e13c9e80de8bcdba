"""Batched robust Levenberg-Marquardt: many fits of one or several laws, solved together in numpy.

A batch holds one parameter vector per row (multi-start points, rolling-origin fits, bootstrap
resamples). Each iteration does one model-and-Jacobian evaluation per law for all of its rows and one
batched k-by-k solve, so 200 resamples cost little more than a few single fits. The robust loss is
handled by iteratively re-weighted least squares with scipy's loss conventions (``cost = 0.5 *
f_scale^2 * sum(rho((r / f_scale)^2))``); bounds by projecting each trial step onto the box.

:func:`solve_laws` runs the batches of several laws in one loop, which turns six small per-law loops
(dominated by Python overhead, not arithmetic) into one. The per-row state is padded to the largest
number of parameters (padding has fixed bounds at 0, so it never moves); the normal equations are
formed and solved per group of laws with the same k on unpadded blocks (BLAS and LAPACK give each
row's k-by-n product and k-by-k solve the same numbers in any batch and row stride), so every
row's iterates are bit for bit those of :func:`solve_batch` on its law alone.

Per iteration only the trial point is evaluated; the normal equations (J'WJ, J'Wr) are kept per row
and rebuilt only for rows whose step was accepted (a rejected step changes only the damping), and
converged rows leave the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from saturate.fit.laws import JacobianFn, Law

try:  # np.linalg.solve's LAPACK gufunc, called without its wrapper (see _State.solve)
    from numpy.linalg import _umath_linalg
except ImportError:  # pragma: no cover - a numpy without it: np.linalg.solve itself
    _umath_linalg = None

__all__ = ["LOSSES", "BatchResult", "robust_cost", "solve_batch", "solve_laws"]

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
    z = np.square(r) * (np.asarray(w) / f_scale**2)  # the solver's order of operations
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
    return solve_laws(
        [(law, y, w, theta0)], x, loss=loss, f_scale=f_scale, max_iter=max_iter, tol=tol
    )[0]


def solve_laws(
    problems: Sequence[tuple[Law, ArrayLike, ArrayLike, ArrayLike]],
    x: Array,
    *,
    loss: str = "soft_l1",
    f_scale: float = 1.0,
    max_iter: int = 50,
    tol: float = 1e-8,
) -> list[BatchResult]:
    """:func:`solve_batch` for several ``(law, y, w, theta0)`` batches on one ``x``, in one loop.

    Returns one result per problem, each as :func:`solve_batch` would give it (``n_iter`` is the
    shared loop's count).
    """
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}")
    if not problems:
        return []
    x = np.asarray(x, dtype=float)
    # rows grouped by number of parameters, so each group's k-by-k solves are one batched call
    order = sorted(range(len(problems)), key=lambda i: problems[i][0].k)
    laws = [problems[i][0] for i in order]
    sizes = [np.shape(problems[i][3])[0] for i in order]
    bounds = np.cumsum([0, *sizes])
    kk = max(law.k for law in laws)
    rows, n = int(bounds[-1]), x.shape[0]
    theta, lower, upper = np.zeros((rows, kk)), np.zeros((rows, kk)), np.zeros((rows, kk))
    yy = np.empty((rows, n))
    ww = _shared_weights([problems[i][2] for i in order])
    for i, law, s, e in zip(order, laws, bounds[:-1], bounds[1:], strict=True):
        _, y, w, theta0 = problems[i]
        theta[s:e, : law.k] = np.clip(np.asarray(theta0, dtype=float), law.lower, law.upper)
        lower[s:e, : law.k], upper[s:e, : law.k] = law.lower, law.upper
        yy[s:e] = np.asarray(y, dtype=float)
    if ww is None:
        ww = np.empty((rows, n))
        for i, s, e in zip(order, bounds[:-1], bounds[1:], strict=True):
            ww[s:e] = np.asarray(problems[i][2], dtype=float)
    st = _State(x, theta, lower, upper, yy, ww / f_scale**2, laws, bounds)
    cost = np.full(rows, np.inf)
    converged = np.zeros(rows, dtype=bool)
    with np.errstate(all="ignore"):
        it = _iterate(st, cost, converged, loss, f_scale**2, max_iter, tol)
    out: list[BatchResult | None] = [None] * len(problems)
    for i, law, s, e in zip(order, laws, bounds[:-1], bounds[1:], strict=True):
        out[i] = BatchResult(theta=st.theta_out[s:e, : law.k].copy(), cost=cost[s:e].copy(),
                             converged=converged[s:e].copy(), n_iter=it)
    return out  # type: ignore[return-value]


def _shared_weights(ws: list[ArrayLike]) -> Array | None:
    """The one weight vector (1, n) every row shares (the bootstrap's bin counts), or None."""
    first = np.asarray(ws[0], dtype=float)
    if first.ndim != 1 or any(np.ndim(w) != 1 or not np.array_equal(w, first) for w in ws[1:]):
        return None
    return first[None, :]


class _State:
    """The active rows' working arrays, compacted as rows finish (internal).

    Rows are in blocks, one per law, and the laws are sorted by their number of parameters k;
    ``seg`` and ``kseg`` are the law blocks' and the k groups' boundaries among the active rows.
    """

    def __init__(self, x: Array, theta: Array, lower: Array, upper: Array, y: Array, wf: Array,
                 laws: list[Law], bounds: NDArray[np.intp]) -> None:
        self.x, self.laws, self.bounds = x, laws, bounds
        self.log_x = np.log(np.maximum(x, 1e-300))  # what every law would work out from x
        self.theta_out = theta.copy()
        self.idx = np.arange(theta.shape[0])
        # wf: the points' weights over f_scale^2, (b, n) or one row (1, n) all rows share
        self.theta, self.lower, self.upper, self.y, self.wf = theta, lower, upper, y, wf
        self.rows_of = ("idx", "theta", "lower", "upper", "y", "lo_held", "hi_held")
        if wf.shape[0] > 1:
            self.rows_of += ("wf",)
        span = 1e-9 * (upper - lower)
        self.lo_held, self.hi_held = lower + span, upper - span
        ks = [law.k for law in laws]
        first = [i for i in range(len(ks)) if i == 0 or ks[i] != ks[i - 1]]
        self.ks = [ks[i] for i in first]
        self.kbounds = np.r_[bounds[first], bounds[-1]]
        self.eyes = {k: np.eye(k) for k in {*self.ks, theta.shape[1]}}
        self.seg, self.kseg = bounds.tolist(), self.kbounds.tolist()

    def keep(self, mask: NDArray[np.bool_], extra: list[Array]) -> list[Array]:
        """Drop the rows not in ``mask`` from the state and from ``extra`` arrays (the kept rows'
        indices found once, not once per array)."""
        rows = np.flatnonzero(mask)
        for name in self.rows_of:
            setattr(self, name, np.take(getattr(self, name), rows, axis=0))
        self.seg = np.searchsorted(self.idx, self.bounds).tolist()
        self.kseg = np.searchsorted(self.idx, self.kbounds).tolist()
        return [np.take(a, rows, axis=0) for a in extra]

    def model(self, theta: Array, shared: bool = False) -> tuple[Array, list[_Block]]:
        """Values (b, n) of every row's law at ``theta`` (each law writes its block in place) and
        each law block's Jacobian function (evaluated later, only for the rows whose step is
        accepted). ``shared``: a block whose rows all hold the same parameters (bootstrap
        resamples warm-started from one fit) is evaluated once."""
        f = np.empty(self.y.shape)
        jacs = []
        for law, s, e in zip(self.laws, self.seg[:-1], self.seg[1:], strict=True):
            if e <= s:
                continue
            th = theta[s:e, : law.k]
            if shared and e - s > 1 and bool(np.all(th == th[0])):
                f[s:e], jac = law.evaluate(self.x, self.log_x, th[:1])
                jac = _broadcast_rows(jac, e - s)
            else:
                jac = law.evaluate(self.x, self.log_x, th, f[s:e])[1]
            jacs.append((law, s, e, jac))
        return f, jacs

    def normal(self, lhs: Array, grad: Array, jacs: list[_Block], om: Array, r: Array,
               ok: NDArray[np.bool_] | None = None) -> None:
        """Rebuild J'WJ and J'Wr (padded to the largest k) of the rows in ``ok`` (default all).

        Small blocks are rebuilt whole and copied where ``ok`` (Python overhead dominates there),
        the laws with the same k in one batched product; large ones one law at a time (their
        buffers stay in cache) and only on the accepted rows (arithmetic dominates)."""
        n = r.shape[1]
        if r.shape[0] * n <= _SMALL_BLOCK * len(jacs):
            _rebuild_small(lhs, grad, jacs, om, r, ok)
            return
        for group in _same_k(jacs):
            s, e = group[0][1], group[-1][2]
            if (e - s) * n <= _SMALL_BLOCK * len(group):
                _rebuild_whole(lhs, grad, group, om, r, ok)
                continue
            for block in group:
                ls, le, fn = block[1], block[2], block[3]
                if ok is None or ok[ls:le].all() or (le - ls) * n <= _SMALL_BLOCK:
                    _rebuild_whole(lhs, grad, [block], om, r, ok)
                    continue
                sel = np.flatnonzero(ok[ls:le])
                if sel.size:
                    k, rows, jac = block[0].k, ls + sel, np.swapaxes(fn(sel), 1, 2)
                    lhs[rows, :k, :k], grad[rows, :k] = _normal(jac, om[rows], r[rows])

    def solve(self, a: Array, damp: Array, g: Array) -> Array:
        """Damped steps, one batched k-by-k solve per group of laws with the same k.

        LAPACK's solver without ``np.linalg.solve``'s wrapper (most of a small batch's time);
        non-finite steps are worked out again by it, which raises on a singular matrix."""
        a = a + damp[..., None] * self.eyes[a.shape[1]]
        gg = g[..., None]
        if len(self.ks) == 1 and self.ks[0] == a.shape[1]:
            step = _gesv(a, gg)
        else:
            step = np.zeros(gg.shape)
            for k, s, e in zip(self.ks, self.kseg[:-1], self.kseg[1:], strict=True):
                if e > s:
                    _gesv(a[s:e, :k, :k], gg[s:e, :k], out=step[s:e, :k])
        if np.isfinite(step).all():
            return step[..., 0]
        step = np.zeros(g.shape)  # np.linalg.solve raises on a singular matrix
        for k, s, e in zip(self.ks, self.kseg[:-1], self.kseg[1:], strict=True):
            if e > s:
                step[s:e, :k] = np.linalg.solve(a[s:e, :k, :k], gg[s:e, :k])[..., 0]
        return step


_SMALL_BLOCK = 4096  # rows x points per law below which normal equations are rebuilt whole


def _gesv(a: Array, b: Array, out: Array | None = None) -> Array:
    """``np.linalg.solve(a, b)`` for float (..., k, k) and (..., k, 1): the gufunc it calls."""
    if _umath_linalg is None:
        x = np.linalg.solve(a, b)
        if out is not None:
            out[...] = x
        return x
    return _umath_linalg.solve(a, b, signature="dd->d", out=out)


def _broadcast_rows(jac: JacobianFn, b: int) -> JacobianFn:
    """The Jacobian function of ``b`` identical rows from that of one row."""

    def wide(rows: NDArray[np.intp] | None, out: Array | None = None) -> Array:
        one = jac(None)
        shape = (b if rows is None else rows.shape[0], *one.shape[1:])
        if out is None:
            return np.broadcast_to(one, shape)
        out[...] = np.swapaxes(one, -1, -2)
        return np.swapaxes(out, -1, -2)

    return wide


_Block = tuple[Law, int, int, JacobianFn]  # a law, its rows s:e, its Jacobian function


def _same_k(jacs: list[_Block]) -> list[list[_Block]]:
    """The law blocks in runs of equal k (laws are sorted by k, so each run is one row range)."""
    groups: list[list[_Block]] = []
    for item in jacs:
        if groups and groups[-1][0][0].k == item[0].k:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _rebuild_small(lhs: Array, grad: Array, jacs: list[_Block], om: Array, r: Array,
                   ok: NDArray[np.bool_] | None) -> None:
    """J'WJ and J'Wr of every row of a small batch, written where ``ok`` (everywhere for None),
    in few numpy calls: every law's Jacobian in one (k_max, b, n) buffer, J'W formed once, one
    batched product per k written straight into place (BLAS gives the same numbers into any
    row stride), one copy for all rows."""
    b, kk, n = lhs.shape[0], lhs.shape[1], r.shape[1]
    jac = np.empty((kk, b, n)).transpose(1, 0, 2)
    for law, s, e, fn in jacs:
        fn(None, out=jac[s:e, : law.k])
    jwt = jac * om[:, None, :]  # the columns past a law's k are never read
    full = ok is None or bool(ok.all())
    a_out, g_out = (lhs, grad) if full else (np.zeros(lhs.shape), np.zeros(grad.shape))
    for group in _same_k(jacs):
        k, s, e = group[0][0].k, group[0][1], group[-1][2]
        np.matmul(jwt[s:e, :k], np.swapaxes(jac[s:e, :k], 1, 2), out=a_out[s:e, :k, :k])
        np.matmul(jwt[s:e, :k], r[s:e, :, None], out=g_out[s:e, :k, None])
    if not full:
        np.copyto(lhs, a_out, where=ok[:, None, None])  # type: ignore[index]
        np.copyto(grad, g_out, where=ok[:, None])  # type: ignore[index]


def _rebuild_whole(lhs: Array, grad: Array, group: list[_Block], om: Array, r: Array,
                   ok: NDArray[np.bool_] | None) -> None:
    """J'WJ and J'Wr of every row of consecutive law blocks with the same k, written where ``ok``
    (everywhere for ``None``)."""
    k, s, e = group[0][0].k, group[0][1], group[-1][2]
    if len(group) == 1:
        jac = np.swapaxes(group[0][3](None), 1, 2)
    else:
        jac = np.empty((k, e - s, r.shape[1])).transpose(1, 0, 2)  # the laws' layout
        for _, ls, le, fn in group:
            fn(None, out=jac[ls - s : le - s])
    a, g = _normal(jac, om[s:e], r[s:e])
    if ok is None or ok[s:e].all():
        lhs[s:e, :k, :k], grad[s:e, :k] = a, g
    else:
        np.copyto(lhs[s:e, :k, :k], a, where=ok[s:e, None, None])
        np.copyto(grad[s:e, :k], g, where=ok[s:e, None])


def _normal(jac: Array, om: Array, r: Array) -> tuple[Array, Array]:
    """J'WJ and J'Wr per row from the Jacobian (b, k, n) (rows of J' contiguous), W the IRLS
    weights ``om``."""
    jwt = jac * om[:, None, :]
    jt = np.swapaxes(jac, 1, 2)
    return np.matmul(jwt, jt), np.matmul(jwt, r[..., None])[..., 0]


def _row_max(a: Array) -> Array:
    """Maximum of each row of a (b, k) array. numpy reduces along a short last axis one row at a
    time (slow for hundreds of rows); column by column gives the same values far faster."""
    if a.shape[1] == 1:
        return a[:, 0].copy()
    out = np.maximum(a[:, 0], a[:, 1])
    for j in range(2, a.shape[1]):
        np.maximum(out, a[:, j], out=out)
    return out


def _residual_cost(st: _State, f: Array, loss: str, f2: float) -> tuple[Array, Array, Array]:
    """Residuals ``y - f`` (in ``f``'s memory), robust costs and IRLS weights (over ``f2``) of
    every row: the formulas of :func:`robust_cost`, worked in place (a few (b, n) buffers instead
    of a dozen, which for hundreds of rows is most of the cost)."""
    r = np.subtract(st.y, f, out=f)
    z = np.square(r)
    np.multiply(z, st.wf, out=z)
    if loss != "soft_l1":
        rho, drho = _rho(z, loss)
        return r, 0.5 * f2 * np.sum(rho, axis=-1), st.wf * drho
    t = np.sqrt(np.add(1.0, z, out=z), out=z)  # soft_l1: rho = 2 (sqrt(1 + z) - 1), rho' = 1/t
    cost = f2 * np.add.reduce(np.subtract(t, 1.0), axis=-1)  # np.sum without its wrapper
    return r, cost, np.divide(st.wf, t, out=t)


def _iterate(st: _State, cost_out: Array, conv_out: NDArray[np.bool_], loss: str,
             f2: float, max_iter: int, tol: float) -> int:
    """The LM loop; writes final parameters, costs and convergence into the output arrays."""
    f, jacs = st.model(st.theta, shared=True)
    r, cost, om = _residual_cost(st, f, loss, f2)
    good = np.isfinite(cost)
    cost_out[good] = cost[good]
    lhs, grad = np.zeros(st.theta.shape + st.theta.shape[1:]), np.zeros(st.theta.shape)
    st.normal(lhs, grad, jacs, om, r)
    if not good.all():
        lhs, grad, cost = st.keep(good, [lhs, grad, cost])
    lam = np.full(cost.shape[0], 1e-3)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - reported below
        if cost.shape[0] == 0:
            break
        th = st.theta
        trial = _trial(st, th, lhs, grad, lam)
        f_t, jacs = st.model(trial)
        r_t, cost_t, om = _residual_cost(st, f_t, loss, f2)
        ok = np.isfinite(cost_t) & (cost_t <= cost)
        rel = (cost - cost_t) / np.maximum(cost, 1e-300)
        moved = np.subtract(trial, th)
        moved = _row_max(np.divide(np.abs(moved, out=moved), np.abs(th) + 1e-3, out=moved))
        small = (rel < tol) | (cost <= 1e-28)
        small |= moved < 1e-8
        small = np.where(ok, small, moved < 1e-10)
        if ok.all():
            st.theta, cost = trial, cost_t
            lam = np.maximum(lam / 5.0, 1e-9)
        elif ok.any():
            np.copyto(th, trial, where=ok[:, None])
            np.copyto(cost, cost_t, where=ok)
            lam = np.where(ok, np.maximum(lam / 5.0, 1e-9), lam * 8.0)
        else:
            lam *= 8.0
        done = small | (lam > 1e10)
        # the normal equations of rows that go on (rows leaving now, or at the end, need none)
        rebuild = ok & ~done
        if it < max_iter and rebuild.any():
            st.normal(lhs, grad, jacs, om, r_t, rebuild)
        if done.any():
            _finish(st, done, cost, cost_out, conv_out, True)
            lhs, grad, cost, lam = st.keep(~done, [lhs, grad, cost, lam])
    _finish(st, np.ones(cost.shape[0], dtype=bool), cost, cost_out, conv_out, False)
    return it


def _trial(st: _State, th: Array, lhs: Array, grad: Array, lam: Array) -> Array:
    """The damped step from ``th``, parameters held at a bound that the gradient pushes against
    left out, projected onto the box."""
    held = (th <= st.lo_held) & (grad < 0)
    held |= (th >= st.hi_held) & (grad > 0)
    any_held = held.any()
    if any_held:
        a = np.where(held[:, :, None] | held[:, None, :], 0.0, lhs)
        g = np.where(held, 0.0, grad)
        diag = np.diagonal(a, axis1=1, axis2=2) + held
    else:
        a, g, diag = lhs, grad, np.diagonal(lhs, axis1=1, axis2=2)
    damp = lam[:, None] * diag + 1e-12 * (_row_max(diag)[:, None] + 1e-30)
    step = st.solve(a, damp, g)
    if any_held:
        step = np.where(held, 0.0, step)
    step += th  # np.clip(th + step, lower, upper), without clip's overhead
    np.maximum(step, st.lower, out=step)
    return np.minimum(step, st.upper, out=step)


def _finish(st: _State, rows: NDArray[np.bool_], cost: Array, cost_out: Array,
            conv_out: NDArray[np.bool_], converged: bool) -> None:
    sel = np.flatnonzero(rows)
    ids = st.idx[sel]
    st.theta_out[ids] = st.theta[sel]
    cost_out[ids] = cost[sel]
    conv_out[ids] = converged
