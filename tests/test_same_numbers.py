"""The fast paths give the same numbers, bit for bit, as the plain formulations they replace.

Each speed-up keeps the arithmetic of what it replaces; these tests hold the plain version and
compare with exact equality, so a change of rounding anywhere fails them. (The fits amplify
rounding: a last-bit change in a Jacobian moves some bootstrap intervals by several percent,
because refits that stop at their iteration cap stop wherever the path led.) The one exception is
a comparison with one of numpy's own kernels (``np.logaddexp``), whose rounding depends on the
CPU it dispatches to and on numpy's release: there a few units in the last place are allowed.
"""

from __future__ import annotations

import numpy as np
import pytest
import ruptures as rpt

from saturate.fit.formulas import softplus
from saturate.fit.laws import LAWS, _grid
from saturate.fit.prep import _solve_toeplitz
from saturate.fit.solver import solve_batch
from saturate.measure.collapse import _lean_cost_l2
from saturate.measure.quantities import _unit_noise_range, noise_range

X = np.geomspace(0.002, 1.0, 128)


def test_softplus_is_numpys_logaddexp():
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.normal(0, s, 20_000) for s in (0.1, 1, 5, 30, 300)])
    z = np.concatenate([z, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-320, -1e-320, 709.0, -745.0]])
    with np.errstate(all="ignore"):
        np.testing.assert_array_max_ulp(softplus(z), np.logaddexp(0.0, z), maxulp=4)


def _thetas(law, rng, b=9):
    lo, hi = law.lower, np.minimum(law.upper, law.lower + 20)
    return lo + (hi - lo) * rng.uniform(0.2, 0.8, (b, law.k))


@pytest.mark.parametrize("name", list(LAWS))
def test_the_lazy_jacobian_is_the_jacobian(name):
    law = LAWS[name]
    th = _thetas(law, np.random.default_rng(1))
    f, jac = law.model(X, th)
    full = jac()
    assert full.shape == (th.shape[0], X.size, law.k)
    np.testing.assert_array_equal(f, law(X, th))
    np.testing.assert_array_equal(full, law.jacobian(X, th))
    one_f, one_j = law.value_and_jacobian(X, th[3])  # one parameter vector: (n,), (n, k)
    np.testing.assert_array_equal(one_f, f[3])
    np.testing.assert_array_equal(one_j, full[3])


def _plain_law(name, x, th):
    """Values and Jacobian (..., n, k) of a law as plain expressions (the formulas before they
    were worked in place)."""
    from scipy.special import expit

    from saturate.fit.formulas import safe_exp, safe_log

    u = np.log(np.maximum(x, 1e-300))
    c = [th[..., i, None] for i in range(th.shape[-1])]
    if name == "sigmoid":
        a, r0, b, m = c
        um, amr = u - m, a - r0
        s = expit(b * um)
        ds = amr * s * (1.0 - s)
        return r0 + amr * s, [s, 1.0 - s, ds * um, -ds * b]
    if name == "power":
        a, d, b = c
        p = safe_exp(-b * u)
        return a - d * p, [1.0, -p, d * u * p]
    if name == "power_shifted":
        a, g, b, ls = c
        s = safe_exp(ls)
        v = safe_log(x + s) - safe_log(1.0 + s)
        h = safe_exp(-b * v)
        dls = g * h * b * s * (1.0 / (x + s) - 1.0 / (1.0 + s))
        return a - g * h, [1.0, -h, g * h * v, dls]
    if name == "weibull":
        a, r0, d, ls = c
        t = safe_exp(d * (u - ls))
        e = np.exp(-t)
        dt = (a - r0) * e * t
        return a - (a - r0) * e, [1.0 - e, e, dt * (u - ls), -dt * d]
    if name == "loglinear":
        a, b = c
        return a + b * u, [1.0, u]
    a, d, c0, c1, ld, fb = c
    z, z0 = (u - ld) / fb, -ld / fb
    e = np.exp(-np.abs(z))
    sp, sp0 = np.maximum(z, 0.0) + np.log1p(e), softplus(z0)
    p = safe_exp(-c0 * u - c1 * fb * (sp - sp0))
    sg = np.where(z >= 0.0, 1.0, e) / (1.0 + e)
    sg0 = expit(z0)
    dp = -d * p
    d_f = -c1 * ((sp - sg * z) - (sp0 - sg0 * z0))
    return a - d * p, [1.0, -p, dp * -u, dp * -fb * (sp - sp0), dp * c1 * (sg - sg0), dp * d_f]


@pytest.mark.parametrize("name", list(LAWS))
def test_law_formulas_are_the_plain_expressions(name):
    law = LAWS[name]
    rng = np.random.default_rng(8)
    for th in (_thetas(law, rng), _thetas(law, rng, b=1)[0]):
        with np.errstate(all="ignore"):
            f, jac = law.value_and_jacobian(X, th)
            f0, cols = _plain_law(name, X, th)
        np.testing.assert_array_equal(f, f0)
        np.testing.assert_array_equal(
            jac, np.stack([np.broadcast_to(col, f0.shape) for col in cols], axis=-1))


def _plain_starts(law, x, y, w, m=4):
    """The starting grid as first written: one broadcast product per step (the reference)."""
    nl = law._grid(x)
    phi = law._basis(x, nl)
    g, n, p = phi.shape
    outer = (phi[..., :, None] * phi[..., None, :]).reshape(g, n, p * p)
    lhs = np.matmul(w, outer).reshape(g, -1, p, p).transpose(1, 0, 2, 3)
    rhs = np.matmul(w, phi * y[:, None]).transpose(1, 0, 2)
    ridge = 1e-9 * (np.trace(lhs, axis1=-2, axis2=-1)[..., None, None] / p + 1e-12)
    lin = np.linalg.solve(lhs + ridge * np.eye(p), rhs[..., None])[..., 0]
    lin = np.clip(lin, law.lower[:p], law.upper[:p])
    theta = np.concatenate([lin, np.broadcast_to(nl, lin.shape[:-1] + nl.shape[-1:])], -1)
    with np.errstate(all="ignore"):
        resid = y - np.einsum("gnp,ogp->ogn", phi, lin)
        sse = np.einsum("ogn,on->og", resid**2, w)
    sse = np.where(np.isfinite(sse), sse, np.inf)
    best = np.argsort(sse, axis=1, kind="stable")[:, :m]
    return np.take_along_axis(theta, best[..., None], axis=1)


def _plain_basis(name, x, nl):
    """BNSL's and the shifted power law's basis on every grid point (no shared terms)."""
    u = np.log(x)
    if name == "bnsl":
        c0, c1, ld, fb = (nl[:, i, None] for i in range(4))
        spd = np.logaddexp(0.0, (u - ld) / fb) - np.logaddexp(0.0, -ld / fb)
        p = np.exp(np.minimum(-c0 * u - c1 * fb * spd, 700.0))
        return np.stack([np.ones_like(p), -p], axis=-1)
    s = np.exp(nl[:, 1, None])
    h = np.exp(np.minimum(-nl[:, 0, None] * (np.log(x + s) - np.log(1.0 + s)), 700.0))
    return np.stack([np.ones_like(h), -h], axis=-1)


@pytest.mark.parametrize("name", list(LAWS))
def test_starting_grid_matches_the_plain_computation(name):
    law = LAWS[name]
    rng = np.random.default_rng(2)
    y = np.tanh(2 + np.log(X)) + 0.02 * rng.standard_normal(X.size)
    w = np.vstack([rng.integers(1, 5, X.size)] + [(np.arange(X.size) < s) * 2.0
                                                   for s in (60, 85, 110)]).astype(float)
    np.testing.assert_array_equal(law.starts_batch(X, y, w), _plain_starts(law, X, y, w))
    if name in ("bnsl", "power_shifted"):
        nl = law._grid(X)
        # the plain basis calls np.logaddexp (see the module docstring): equal to rounding
        np.testing.assert_allclose(law._basis(X, nl), _plain_basis(name, X, nl), rtol=1e-13, atol=0)


def test_resamples_started_from_one_fit_match_solving_each_alone():
    """The bootstrap batch (every row starts at the same point) gives each row what it gets
    solved on its own."""
    rng = np.random.default_rng(3)
    for name in ("bnsl", "weibull", "loglinear"):
        law = LAWS[name]
        y0 = 0.3 * np.log(X) + 0.4 * np.tanh(3 * X)
        start = solve_batch(law, X, y0, np.ones(X.size), law.starts(X, y0, m=1)).theta[0]
        ys = law(X, start) + rng.normal(0, 0.02, (6, X.size))
        batch = solve_batch(law, X, ys, np.ones(X.size), np.tile(start, (6, 1)), max_iter=20,
                            tol=1e-6, f_scale=0.04)
        for i in range(6):
            one = solve_batch(law, X, ys[i], np.ones(X.size), start[None], max_iter=20,
                              tol=1e-6, f_scale=0.04)
            np.testing.assert_array_equal(batch.theta[i], one.theta[0])
            np.testing.assert_array_equal(batch.cost[i], one.cost[0])


def test_lean_l2_cost_is_ruptures_cost():
    rng = np.random.default_rng(4)
    for _ in range(10):
        n = int(rng.integers(12, 1500))
        y = np.cumsum(rng.normal(size=n)) * 0.01 + np.where(np.arange(n) > n // 2, -0.3, 0.0)
        y += 10 ** rng.uniform(-2, 4)
        plain, lean = rpt.costs.CostL2().fit(y.reshape(-1, 1)), _lean_cost_l2().fit(y.reshape(-1, 1))
        for _ in range(200):
            s = int(rng.integers(0, n - 1))
            e = int(rng.integers(s + 1, n + 1))
            assert lean.error(s, e) == plain.error(s, e)
        pen = 3 * np.var(np.diff(y)) * np.log(n)
        kw = dict(min_size=max(3, n // 25), jump=max(1, n // 200))
        assert (rpt.Pelt(custom_cost=_lean_cost_l2(), **kw).fit(y.reshape(-1, 1)).predict(pen=pen)
                == rpt.Pelt(model="l2", **kw).fit(y.reshape(-1, 1)).predict(pen=pen))


def test_noise_range_is_one_simulation_per_length():
    _unit_noise_range.cache_clear()
    a, b = noise_range(240, 0.5, seed=3), noise_range(240, 2.0, seed=3)
    assert _unit_noise_range.cache_info().misses == 1
    assert b == float(_unit_noise_range(240, 3, 100) * 2.0) and a > 0
    assert noise_range(240, 0.5, seed=4) != a


def test_toeplitz_solve_is_scipys():
    from scipy.linalg import solve_toeplitz

    rng = np.random.default_rng(6)
    for p in range(1, 7):
        r = rng.normal(size=400)
        acov = np.array([np.dot(r[: 400 - j], r[j:]) / 400 for j in range(p + 1)])
        np.testing.assert_array_equal(_solve_toeplitz(acov[:p], acov[1:]),
                                      solve_toeplitz(acov[:p], acov[1:]))


def test_grid_is_meshgrid():
    axes = ([0.1, 0.2, 0.3], np.linspace(-1, 2, 5), [7.0, 8.0])
    mesh = np.meshgrid(*[np.asarray(a, dtype=float) for a in axes], indexing="ij")
    np.testing.assert_array_equal(_grid(*axes), np.stack([m.ravel() for m in mesh], axis=-1))
    np.testing.assert_array_equal(_grid([1.0, 2.0]), np.array([[1.0], [2.0]]))
