"""The law formulas: Jacobians, broadcasting, starting grids, asymptotes, units."""

from __future__ import annotations

import numpy as np
import pytest

from saturate.fit.laws import LAWS, natural_value

X = np.geomspace(0.005, 4.0, 60)


def _theta(law, rng, size=3):
    lo, hi = law.lower, law.upper
    th = lo + (hi - lo) * rng.uniform(0.35, 0.6, size=(size, law.k))
    if law.name == "bnsl":
        th[:, 5] = 0.3
    return th


@pytest.mark.parametrize("name", list(LAWS))
def test_jacobian_matches_finite_differences(name):
    law = LAWS[name]
    th = _theta(law, np.random.default_rng(0))
    jac = law.jacobian(X, th)
    num = np.empty_like(jac)
    for i in range(law.k):
        h = 1e-6 * max(1.0, abs(th[0, i]))
        e = np.zeros(law.k)
        e[i] = h
        num[..., i] = (law(X, th + e) - law(X, th - e)) / (2 * h)
    assert np.max(np.abs(jac - num)) <= 1e-6 * (1 + np.max(np.abs(num)))


@pytest.mark.parametrize("name", list(LAWS))
def test_broadcasts_over_leading_axes(name):
    law = LAWS[name]
    th = _theta(law, np.random.default_rng(1), size=6).reshape(2, 3, law.k)
    assert law(X, th).shape == (2, 3, X.size)
    assert law.jacobian(X, th).shape == (2, 3, X.size, law.k)
    np.testing.assert_allclose(law(X, th)[1, 2], law(X, th[1, 2]))


@pytest.mark.parametrize("name", list(LAWS))
def test_starts_are_in_bounds_and_ranked(name):
    law = LAWS[name]
    rng = np.random.default_rng(2)
    y = np.tanh(2 + np.log(X)) + 0.01 * rng.standard_normal(X.size)
    starts = law.starts(X, y, m=4)
    assert starts.shape == (min(4, len(law._grid(X))), law.k)
    assert np.all(starts >= law.lower) and np.all(starts <= law.upper)
    sse = np.sum((y - law(X, starts)) ** 2, axis=1)
    assert np.all(np.diff(sse) >= -1e-9)


@pytest.mark.parametrize("name", ["sigmoid", "power", "power_shifted", "weibull", "loglinear"])
def test_best_start_is_close_on_exact_data(name):
    """The variable-projection grid alone lands near the truth (the solver only polishes)."""
    law = LAWS[name]
    truth = {
        "sigmoid": [1.0, -1.0, 1.5, np.log(0.3)],
        "power": [1.0, 0.5, 0.5],
        "power_shifted": [1.0, 0.5, 1.0, np.log(0.2)],
        "weibull": [1.0, -1.0, 1.2, np.log(0.3)],
        "loglinear": [0.5, 0.3],
    }[name]
    y = law(X[X <= 1], np.array(truth))
    best = law.starts(X[X <= 1], y, m=1)[0]
    rms = np.sqrt(np.mean((law(X[X <= 1], best) - y) ** 2))
    assert rms < 0.1 * np.std(y)


def test_asymptotes():
    assert LAWS["sigmoid"].asymptote(np.array([0.7, 0.1, 1.0, 0.0])) == 0.7
    assert LAWS["power"].asymptote(np.array([0.9, 0.2, 0.5])) == 0.9
    assert LAWS["loglinear"].asymptote(np.array([0.5, 0.1])) == np.inf
    assert LAWS["loglinear"].asymptote(np.array([0.5, -0.1])) == -np.inf
    bnsl = LAWS["bnsl"]
    assert bnsl.asymptote(np.array([1.0, 0.5, 0.2, 1.0, 0.0, 0.3])) == 1.0
    # c0 + c1 < 0: the power term grows without bound, towards -inf when D > 0
    assert bnsl.asymptote(np.array([1.0, 0.5, 0.2, -1.0, 0.0, 0.3])) == -np.inf
    # numerically, the law approaches its asymptote far out
    th = np.array([0.8, 0.3, 1.2, np.log(0.5)])
    assert abs(LAWS["weibull"](np.array([1e3]), th)[0] - 0.8) < 1e-9


def test_natural_values():
    kw = dict(loc=10.0, scale=2.0, sign=-1.0, c_ref=1000.0, offset=5.0)
    assert natural_value("level", 1.0, **kw) == 8.0
    assert natural_value("amplitude", 1.0, **kw) == -2.0
    assert natural_value("log_compute", np.log(0.5), **kw) == pytest.approx(495.0)
    assert natural_value("plain", 1.5, **kw) == 1.5


def test_laws_are_within_bounds_of_their_own_params():
    for law in LAWS.values():
        assert np.all(law.lower < law.upper)
        assert law.n_linear <= law.k
        assert len(set(law.names)) == law.k
