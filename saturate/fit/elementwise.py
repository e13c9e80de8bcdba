"""Elementwise building blocks of the law formulas: guarded log and exp, softplus, parameters as
columns, basis functions side by side."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

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
