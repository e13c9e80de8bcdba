"""Exact rescaling, so the maths on a curve neither overflows nor underflows whatever its units.

Squares of values near 1e200 overflow and of values near 1e-200 underflow: functions that square
values divide them first by :func:`pow2_scale` and multiply back. A power of two divides exactly,
and the scale is 1 for ordinary magnitudes, so ordinary curves get bit-identical results.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

#: Magnitudes left unscaled: their squares and sums of squares stay far from a float's limits.
SAFE_MAGNITUDE: tuple[float, float] = (2.0**-60, 2.0**60)


def pow2_scale(*values: ArrayLike) -> float:
    """A power of two ``s`` with ``1 <= m / s < 2`` for the largest finite magnitude ``m`` among
    ``values``; 1.0 when ``m`` lies in :data:`SAFE_MAGNITUDE` or no value is finite and non-zero.
    Divide by ``s`` (never multiply by ``1 / s``, which may overflow)."""
    m = 0.0
    for v in values:
        if isinstance(v, (float, int)):
            a = abs(float(v))
            if a < math.inf:  # also False for NaN
                m = max(m, a)
            continue
        arr = np.abs(np.asarray(v, dtype=float))
        arr = arr[np.isfinite(arr)]
        if arr.size:
            m = max(m, float(arr.max()))
    if m == 0.0 or SAFE_MAGNITUDE[0] <= m <= SAFE_MAGNITUDE[1]:
        return 1.0
    return math.ldexp(1.0, math.frexp(m)[1] - 1)
