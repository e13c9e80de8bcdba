"""Change points of the mean (saturate.measure.trend): ruptures' compiled PELT gives what
its plain PELT gives, and curves too smooth for its cumulative sums take the plain one."""

from __future__ import annotations

import math

import numpy as np
import pytest
import ruptures as rpt

from saturate.measure.collapse import mean_changes


def _pelt(y, sigma, penalty, min_size, jump=1):
    algo = rpt.Pelt(model="l2", min_size=min_size, jump=jump).fit(y.reshape(-1, 1))
    return algo.predict(pen=penalty * sigma**2)


@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_pelt_cuts_where_the_plain_pelt_does(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 320))
    sigma = 10 ** rng.uniform(-3, 1)
    steps = np.cumsum(rng.normal(0, 4 * sigma, 4))[np.minimum(np.arange(n) * 4 // n, 3)]
    y = 10 ** rng.uniform(-2, 3) + steps + np.cumsum(rng.normal(0, sigma / 3, n)) \
        + rng.normal(0, sigma, n)
    min_size = max(3, n // 25)
    penalty = 3.0 * math.log(n)
    assert mean_changes(y, sigma, penalty, min_size) == _pelt(y, sigma, penalty, min_size)


def test_a_curve_too_smooth_for_cumulative_sums_takes_the_plain_pelt():
    """A step of 0.3 with noise 1e-10: the compiled PELT's sums would round far beyond the
    penalty (it cuts the flat stretches every 80-100 points); the plain one finds the step."""
    rng = np.random.default_rng(1)
    n, sigma, min_size = 2000, 1e-10, 80
    y = 1.5 + np.where(np.arange(n) >= 1200, -0.3, 0.0) + rng.normal(0, sigma, n)
    penalty = 3.0 * math.log(n)
    got = mean_changes(y, sigma, penalty, min_size)
    assert got == [1200, n]
    assert got == _pelt(y, sigma, penalty, min_size, jump=n // 200)
    z = (y - y.mean()) / sigma  # what the compiled PELT would have been given
    compiled = rpt.KernelCPD(kernel="linear", min_size=min_size).fit(z.reshape(-1, 1))
    assert len(compiled.predict(pen=penalty)) > 5
