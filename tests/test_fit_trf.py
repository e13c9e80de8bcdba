"""The polish's least_squares (saturate.fit.trf) is scipy's, bit for bit, and raises where it does."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares

from saturate.fit.laws import LAWS
from saturate.fit.solver import LOSSES
from saturate.fit.trf import least_squares_trf

X = np.geomspace(0.005, 1.0, 70)


def _problem(name: str, rng: np.random.Generator, outliers: bool):
    """Residuals and Jacobian of a law on noisy data, weighted like the polish (sqrt of counts)."""
    law = LAWS[name]
    y = 0.4 * np.tanh(2.0 + np.log(X)) + rng.normal(0.0, 0.03, X.size)
    if outliers:
        y[::11] += 0.6
    sw = np.sqrt(rng.integers(1, 4, X.size).astype(float))
    u = np.log(X)

    def fun(t):
        return sw * (y - law.model(X, t, u)[0])

    def jac(t):
        return -sw[:, None] * law.model(X, t, u)[1](None)

    return law, fun, jac, law.starts(X, y, m=3)


@pytest.mark.parametrize("name", list(LAWS))
@pytest.mark.parametrize("loss", LOSSES)
def test_same_solution_and_status_as_scipy(name, loss):
    rng = np.random.default_rng(7)
    for outliers in (False, True):
        law, fun, jac, starts = _problem(name, rng, outliers)
        lo, hi = law.lower, law.upper
        eps = 1e-9 * (hi - lo)
        for start in starts:
            x0 = np.clip(start + rng.normal(0, 0.3, start.shape), lo + eps, hi - eps)
            for max_nfev in (4, 60):
                with np.errstate(all="ignore"):
                    try:
                        ref = least_squares(fun, x0, jac=jac, bounds=(lo, hi), loss=loss,
                                            f_scale=0.05, x_scale="jac", max_nfev=max_nfev)
                    except (ValueError, np.linalg.LinAlgError) as err:
                        with pytest.raises(type(err)):
                            least_squares_trf(fun, jac, x0, lo, hi, loss, 0.05, max_nfev)
                        continue
                    x, status = least_squares_trf(fun, jac, x0, lo, hi, loss, 0.05, max_nfev)
                np.testing.assert_array_equal(x, ref.x)
                assert status == ref.status


def test_raises_as_scipy_on_a_bad_start():
    law, fun, jac, starts = _problem("power", np.random.default_rng(1), False)
    lo, hi = law.lower, law.upper
    with pytest.raises(ValueError):
        least_squares_trf(fun, jac, hi + 1.0, lo, hi, "soft_l1", 0.05, 60)  # outside the box

    def nan_fun(t):
        return np.full(X.size, np.nan)

    with pytest.raises(ValueError):
        least_squares(nan_fun, starts[0], jac=jac, bounds=(lo, hi), max_nfev=5)
    with pytest.raises(ValueError):
        least_squares_trf(nan_fun, jac, starts[0], lo, hi, "linear", 1.0, 5)
