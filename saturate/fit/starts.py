"""Starting points for the fits: a grid over a law's non-linear parameters, its linear parameters
solved by weighted least squares at every grid point (variable projection), the best few kept.

The normal equations are formed plane by plane, the same sums in the same order as one broadcast
product; grid points are ranked by sums of squares worked out from them (``_weighted_sse``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

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
