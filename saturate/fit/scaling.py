"""Exact rescaling, so the maths on a curve neither overflows nor underflows whatever its units.

Curves come in any units: rewards near 1, losses near 1e-300, FLOP counts near 1e300. Squares, sums
of squares and ratios of squares overflow or underflow long before the values themselves do
(``(1e200)**2`` raises ``OverflowError``; ``1e-200 * 1e-200`` is 0). Functions that square values
divide them first by :func:`pow2_scale`, work there, and multiply back. Dividing by a power of two
is exact in binary floating point, and the scale is 1 for values of ordinary magnitude, so results
for ordinary curves are bit-identical to the unscaled maths.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

#: Largest finite magnitudes left unscaled: their squares and sums of squares stay far from the
#: limits of a float (about 1e-308 to 1e308).
SAFE_MAGNITUDE: tuple[float, float] = (2.0**-60, 2.0**60)


def pow2_scale(*values: ArrayLike) -> float:
    """A power of two ``s`` with ``1 <= m / s < 2`` for the largest finite magnitude ``m`` among
    ``values``; 1.0 when ``m`` lies in :data:`SAFE_MAGNITUDE` or no value is finite and non-zero.

    Divide by ``s`` (never multiply by ``1 / s``, which may overflow) before squaring; multiply
    results in the values' units by ``s`` afterwards.
    """
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
