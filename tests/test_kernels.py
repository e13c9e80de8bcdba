"""The compiled kernels: each law's values and Jacobian are the numpy formulas', the bootstrap's
AR filter is scipy's, and the polish of an unconverged whole-curve fit never leaves it worse."""

from __future__ import annotations

import numpy as np
import pytest

from saturate.fit.kernels import LAW_IDS, LOSS_IDS, ar_filter, law_values
from saturate.fit.laws import LAWS
from saturate.fit.polish import polish
from saturate.fit.prep import _residual_filter, bin_points
from saturate.fit.settings import FitSettings
from saturate.fit.solver import LOSSES, robust_cost, solve_batch

X = np.concatenate([np.geomspace(1e-6, 1.0, 120), [1e-300, 3.0, 1100.0]])


def _thetas(law, rng, b=400):
    """Parameters all over the box, some rows at a bound."""
    lo, hi = law.lower, law.upper
    th = lo + (hi - lo) * rng.uniform(0.0, 1.0, (b, law.k))
    th[: b // 10] = np.where(rng.random((b // 10, law.k)) < 0.5, lo, hi)
    return th


def test_every_law_and_loss_has_a_kernel():
    assert set(LAW_IDS) == set(LAWS)
    assert set(LOSS_IDS) == set(LOSSES)


@pytest.mark.parametrize("name", list(LAWS))
def test_kernel_values_and_jacobian_are_the_numpy_formulas(name):
    """Equal to rounding: on a CPU where numpy's exp and log are libm's (as here) they agree bit
    for bit; numpy's own SIMD versions (AVX-512) may differ in the last bits."""
    law = LAWS[name]
    th = _thetas(law, np.random.default_rng(LAW_IDS[name]))
    u = np.log(np.maximum(X, 1e-300))
    f, jac = law_values(LAW_IDS[name], X, u, th, True)
    with np.errstate(all="ignore"):
        f0, j0 = law.value_and_jacobian(X, th)
    assert f.shape == f0.shape and jac.shape == (th.shape[0], law.k, X.size)
    np.testing.assert_allclose(f, f0, rtol=1e-12, atol=1e-300)
    j0 = np.swapaxes(j0, 1, 2)
    finite = np.isfinite(j0)
    np.testing.assert_array_equal(np.isfinite(jac), finite)
    # a column's entries near zero come from differences (1 - s): compared at the column's scale
    scale = np.max(np.abs(np.where(finite, j0, 0.0)), axis=-1, keepdims=True)
    with np.errstate(over="ignore"):  # entries near the float limit: inf bounds admit them
        err = np.abs(np.where(finite, jac - j0, 0.0))
        bound = 1e-12 * (np.abs(np.where(finite, j0, 0.0)) + scale)
    assert np.all(err <= bound)
    values_only, none = law_values(LAW_IDS[name], X, u, th, False)
    np.testing.assert_array_equal(values_only, f)
    assert none.size == 0


@pytest.mark.parametrize("order", range(6))
def test_the_ar_filters_are_scipys_lfilter_bit_for_bit(order):
    """The bootstrap's noise and the AR fit's innovations are what scipy.signal.lfilter gives
    (the same sums in the same order), so leaving scipy.signal out of start-up moves no number."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(order)
    for n in (1, max(order, 2), order + 1, 60, 700):
        phi, r, drive = rng.normal(0, 0.4, order), rng.normal(size=n), rng.normal(size=(5, n))
        np.testing.assert_array_equal(_residual_filter(phi, r),
                                      lfilter(np.r_[1.0, -phi], [1.0], r))
        np.testing.assert_array_equal(ar_filter(phi, drive),
                                      lfilter([1.0], np.r_[1.0, -phi], drive, axis=1))


def _hard_curve(seed):
    """A broken power law with a flat tail: BNSL's batch fit usually stops unconverged."""
    rng = np.random.default_rng(seed)
    x = np.geomspace(1e-3, 1.0, 300)
    y = 0.2 * np.log(x) / (1 + (x / 0.05) ** 2) + rng.normal(0, 0.05, x.size)
    return x, y


@pytest.mark.parametrize("seed", range(4))
def test_polish_never_leaves_a_fit_worse(seed):
    x, y = _hard_curve(seed)
    bins = bin_points(x, 128)
    yb = bins.mean(y)
    settings = FitSettings()
    law = LAWS["bnsl"]
    f_scale = 0.1
    start = solve_batch(law, bins.x, yb, bins.counts, law.starts(bins.x, yb, bins.counts, m=1),
                        f_scale=f_scale, max_iter=5)
    before = float(start.cost[0])
    theta, _ = polish(law, bins, yb, start.theta[0], before, False, settings.loss, f_scale)
    after = float(robust_cost(yb - law(bins.x, theta), bins.counts, settings.loss, f_scale))
    assert np.all(np.isfinite(theta))
    assert np.all((theta >= law.lower) & (theta <= law.upper))
    assert after <= before * (1 + 1e-9)
    more = solve_batch(law, bins.x, yb, bins.counts, start.theta, f_scale=f_scale, max_iter=60)
    assert after <= float(more.cost[0]) * (1 + 1e-9)  # at least 60 LM iterations' worth


@pytest.mark.subprocess  # a fresh interpreter that imports the kernels
def test_kernels_work_where_numba_cannot_cache_them():
    """No cache folder numba may use (here: only IPython's locator allowed): one warning, and
    the kernels compile in the process."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import warnings
        import numpy as np
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as seen:
            from saturate.fit.kernels import law_values
        f, _ = law_values(4, np.array([0.5, 1.0]), np.log([0.5, 1.0]), np.ones((1, 2)), False)
        print([type(w.message).__name__ for w in seen], f.tolist())
    """)
    env = {**os.environ, "NUMBA_CACHE_LOCATOR_CLASSES": "IPythonCacheLocator"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("['KernelCacheWarning'] ")  # once, not once per kernel
    assert out.stdout.strip().endswith("[[0.3068528194400547, 1.0]]")
