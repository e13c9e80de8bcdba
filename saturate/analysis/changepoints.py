"""Change points of a curve's mean: PELT with the least-squared-deviation cost and a penalty per
change, with ``ruptures``.

:func:`mean_changes` runs ruptures' compiled PELT (``KernelCPD`` with the linear kernel, whose
cost is the least squared deviation) on the curve centred and in units of its noise, where that
is exact enough, and ruptures' ``Pelt`` (pure Python) otherwise. The compiled PELT works from
cumulative sums of the squared values, so its costs carry an error of about ``n * max(z^2) *
2.2e-16``; where that could reach a thousandth of the penalty (a curve whose range is millions of
times its noise, as a noiseless one), the plain ``Pelt`` takes over, with the lean cost below and
a change considered every ``n // COLLAPSE_JUMP_DIVISOR`` points to bound its time.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from saturate.analysis.constants import COLLAPSE_JUMP_DIVISOR

_EXACT_ENOUGH = 1e-3
"""The compiled PELT is used while its worst rounding of a cost stays under this share of the
penalty."""


def mean_changes(y: np.ndarray, sigma: float, penalty: float, min_size: int) -> list[int]:
    """The ends of the segments of constant mean of ``y`` (the last is ``len(y)``), cut where a
    change lowers the squared deviations by more than ``penalty * sigma^2`` (``sigma``: the
    noise), with segments at least ``min_size`` long."""
    import ruptures as rpt  # heavy import, only when a change is looked for

    n = y.shape[0]
    z = (y - np.mean(y)) / sigma
    worst = n * float(np.max(z * z)) * np.finfo(float).eps
    if math.isfinite(worst) and worst <= _EXACT_ENOUGH * penalty:
        algo = rpt.KernelCPD(kernel="linear", min_size=min_size).fit(z.reshape(-1, 1))
        return [int(b) for b in algo.predict(pen=penalty)]
    jump = max(1, n // COLLAPSE_JUMP_DIVISOR)
    algo = rpt.Pelt(custom_cost=_lean_cost_l2(), min_size=min_size, jump=jump)
    return [int(b) for b in algo.fit(y.reshape(-1, 1)).predict(pen=penalty * sigma**2)]


@functools.cache
def _lean_cost_class() -> type:
    """ruptures' least-squared-deviation cost, the same numbers bit for bit (numpy's ``var``
    spelled out: mean, squared deviations, pairwise sums), without ``np.var``'s Python overhead:
    PELT calls it thousands of times per curve. Built on first use so that ruptures is imported
    only when a change is looked for (tests/test_same_numbers.py checks it against CostL2)."""
    import ruptures as rpt

    class LeanCostL2(rpt.costs.CostL2):
        def fit(self, signal: np.ndarray) -> LeanCostL2:
            super().fit(signal)
            one = self.signal.shape[1] == 1
            self._flat = np.ascontiguousarray(self.signal[:, 0]) if one else None
            return self

        def error(self, start: int, end: int) -> float:
            if self._flat is None or end - start < self.min_size:
                return super().error(start, end)
            seg = self._flat[start:end]
            m = end - start
            d = seg - np.add.reduce(seg) / m
            return np.add.reduce(d * d) / m * m

    return LeanCostL2


def _lean_cost_l2() -> object:
    """A fresh lean L2 cost for one PELT run."""
    return _lean_cost_class()()
