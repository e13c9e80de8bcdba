"""The compiled LM solver: the iterates of a plain numpy loop (to rounding: the sums run in
another order), several laws in one call, bounds, robust loss, checked shapes."""

from __future__ import annotations

import numpy as np
import pytest

from saturate.fit.laws import LAWS
from saturate.fit.solver import _rho, robust_cost, solve_batch, solve_laws

X = np.geomspace(0.01, 1.0, 90)


def _reference(law, x, y, w, theta0, loss, f_scale, max_iter, tol):
    """The straightforward loop the solver must reproduce (the numpy solver it replaced)."""
    lower, upper = law.lower, law.upper
    theta = np.clip(np.array(theta0, dtype=float), lower, upper)
    b, k = theta.shape
    y = np.broadcast_to(np.asarray(y, dtype=float), (b, x.shape[0]))
    w = np.broadcast_to(np.asarray(w, dtype=float), (b, x.shape[0]))
    with np.errstate(all="ignore"):
        f, jac = law.value_and_jacobian(x, theta)
        r = y - f
        cost = robust_cost(r, w, loss, f_scale)
    cost[~np.isfinite(cost)] = np.inf
    lam, converged = np.full(b, 1e-3), np.zeros(b, dtype=bool)
    active = np.flatnonzero(np.isfinite(cost))
    span = 1e-9 * (upper - lower)
    for _ in range(max_iter):
        if active.size == 0:
            break
        with np.errstate(all="ignore"):
            ra, wa, ja, th = r[active], w[active], jac[active], theta[active]
            wf = wa / f_scale**2
            z = ra**2 * wf
            om = wf * _rho(z, loss)[1]  # IRLS weights: rho'(z)
            jt = np.ascontiguousarray(ja.transpose(0, 2, 1))  # J' (b, k, n)
            jwt = jt * om[:, None, :]
            lhs = np.matmul(jwt, jt.transpose(0, 2, 1))
            grad = np.matmul(jwt, ra[..., None])[..., 0]
            held = ((th <= lower + span) & (grad < 0)) | ((th >= upper - span) & (grad > 0))
            lhs = np.where(held[:, :, None] | held[:, None, :], 0.0, lhs)
            grad = np.where(held, 0.0, grad)
            diag = np.diagonal(lhs, axis1=1, axis2=2) + held
            damp = lam[active, None] * diag + 1e-12 * (diag.max(axis=1, keepdims=True) + 1e-30)
            step = np.linalg.solve(lhs + damp[..., None] * np.eye(k), grad[..., None])[..., 0]
            trial = np.clip(th + np.where(held, 0.0, step), lower, upper)
            f_t, j_t = law.value_and_jacobian(x, trial)
            r_t = y[active] - f_t
            cost_t = robust_cost(r_t, wa, loss, f_scale)
            old = cost[active]
            ok = np.isfinite(cost_t) & (cost_t <= old)
            acc = active[ok]
            theta[acc], r[acc], jac[acc], cost[acc] = trial[ok], r_t[ok], j_t[ok], cost_t[ok]
            lam[acc] = np.maximum(lam[acc] / 5.0, 1e-9)
            lam[active[~ok]] *= 8.0
            rel = (old - cost_t) / np.maximum(old, 1e-300)
            moved = np.max(np.abs(trial - th) / (np.abs(th) + 1e-3), axis=1)
        small = ok & ((rel < tol) | (old <= 1e-28) | (moved < 1e-8))
        small |= ~ok & (moved < 1e-10)
        done = small | (lam[active] > 1e10)
        converged[active[done]] = True
        active = active[~done]
    return theta, cost, converged


def _assert_same_fits(res, theta, cost, conv):
    """The solver's fits are the reference loop's, to rounding (sums in another order)."""
    np.testing.assert_allclose(res.theta, theta, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.cost, cost, rtol=1e-9)
    np.testing.assert_array_equal(res.converged, conv)


def _problem(name, rng, rows=12, weighted=False):
    """Noisy data from a rough fit of the law, starts from its grid, some rows with a prefix
    weighting (rolling origins) and one non-finite start."""
    law = LAWS[name]
    y = 0.3 * np.log(X) + 0.4 * np.tanh(3 * X) + rng.normal(0, 0.03, X.size)
    y[::17] += 0.5  # outliers for the robust loss
    starts = law.starts(X, y, m=4)
    theta0 = starts[rng.integers(0, starts.shape[0], rows)]
    theta0 = theta0 + rng.normal(0, 0.05, theta0.shape)
    theta0[-1, 0] = np.nan
    w = np.ones((rows, X.size))
    if weighted:
        w[: rows // 2, 60:] = 0.0
    return law, y, w, theta0


@pytest.mark.parametrize("name", list(LAWS))
@pytest.mark.parametrize("loss", ["soft_l1", "linear"])
def test_same_iterates_as_the_plain_loop(name, loss):
    law, y, w, theta0 = _problem(name, np.random.default_rng(1), weighted=True)
    for max_iter in (3, 40):
        res = solve_batch(law, X, y, w, theta0, loss=loss, f_scale=0.05, max_iter=max_iter)
        theta, cost, conv = _reference(law, X, y, w, theta0, loss, 0.05, max_iter, 1e-8)
        _assert_same_fits(res, theta, cost, conv)
    assert np.isinf(res.cost[-1]) and not res.converged[-1]  # the non-finite start
    assert np.all((res.theta[:-1] >= law.lower) & (res.theta[:-1] <= law.upper))


def test_several_laws_in_one_loop_match_one_law_at_a_time():
    rng = np.random.default_rng(2)
    problems = [_problem(name, rng, rows=int(rng.integers(1, 20))) for name in LAWS]
    problems.append((LAWS["power"], problems[1][1], problems[1][2][:0], problems[1][3][:0]))
    fused = solve_laws(problems, X, f_scale=0.05, max_iter=30)
    backwards = solve_laws(problems[::-1], X, f_scale=0.05, max_iter=30)[::-1]
    for (law, y, w, theta0), a, b in zip(problems, fused, backwards, strict=True):
        one = solve_batch(law, X, y, w, theta0, f_scale=0.05, max_iter=30)
        assert a.theta.shape == theta0.shape
        for res in (a, b):
            np.testing.assert_array_equal(res.theta, one.theta)
            np.testing.assert_array_equal(res.cost, one.cost)
            np.testing.assert_array_equal(res.converged, one.converged)
    assert solve_laws([], X) == []


def test_large_batches_match_the_plain_loop():
    """Bootstrap-like batches (each row its own data, all sharing the weights and the start)
    give the plain loop's iterates too."""
    rng = np.random.default_rng(4)
    problems = []
    for name in ("sigmoid", "weibull", "bnsl"):
        law, y, w, theta0 = _problem(name, rng, rows=60)
        ys = law(X, np.nan_to_num(theta0[:1])) + rng.normal(0, 0.03, (60, X.size))
        problems.append((law, ys, np.ones(X.size), np.tile(theta0[0], (60, 1))))
    fused = solve_laws(problems, X, f_scale=0.05, max_iter=20, tol=1e-6)
    for (law, ys, w, theta0), res in zip(problems, fused, strict=True):
        theta, cost, conv = _reference(law, X, ys, w, theta0, "soft_l1", 0.05, 20, 1e-6)
        _assert_same_fits(res, theta, cost, conv)


@pytest.mark.parametrize("name", list(LAWS))
def test_recovers_parameters_of_noiseless_data(name):
    law = LAWS[name]
    y = 0.3 * np.log(X) + 0.4 * np.tanh(3 * X)
    truth = solve_batch(law, X, y, np.ones(X.size), law.starts(X, y, m=4), max_iter=200).theta
    best = truth[0]
    y_true = law(X, best)
    start = np.clip(best + 0.01 * np.minimum(law.upper - law.lower, 10.0), law.lower, law.upper)
    res = solve_batch(law, X, y_true, np.ones(X.size), np.tile(start, (3, 1)), max_iter=200,
                      loss="linear")
    assert np.all(res.cost < 1e-10)
    np.testing.assert_allclose(law(X, res.theta), np.broadcast_to(y_true, (3, X.size)),
                               atol=1e-5)


def test_robust_loss_resists_outliers():
    law = LAWS["power"]
    rng = np.random.default_rng(3)
    y = law(X, np.array([1.0, 0.5, 0.7])) + rng.normal(0, 0.01, X.size)
    y[5::10] += 1.0
    start = np.array([[0.8, 0.3, 0.5]])
    robust = solve_batch(law, X, y, np.ones(X.size), start, loss="soft_l1", f_scale=0.02)
    plain = solve_batch(law, X, y, np.ones(X.size), start, loss="linear")
    assert abs(robust.theta[0, 2] - 0.7) < 0.05
    assert abs(robust.theta[0, 2] - 0.7) < abs(plain.theta[0, 2] - 0.7)
    with pytest.raises(ValueError, match="loss"):
        solve_batch(law, X, y, np.ones(X.size), start, loss="l3")


@pytest.mark.parametrize("loss", ["huber", "cauchy"])
def test_other_losses_match_the_plain_loop(loss):
    law, y, w, theta0 = _problem("weibull", np.random.default_rng(5))
    for max_iter in (3, 40):
        res = solve_batch(law, X, y, w, theta0, loss=loss, f_scale=0.05, max_iter=max_iter)
        _assert_same_fits(res, *_reference(law, X, y, w, theta0, loss, 0.05, max_iter, 1e-8))


def test_shapes_are_checked_before_the_compiled_loop():
    law, y, w, theta0 = _problem("sigmoid", np.random.default_rng(6))
    with pytest.raises(ValueError, match="theta0 for sigmoid: expected 4 columns, got 3"):
        solve_batch(law, X, y, w, theta0[:, :3])
    with pytest.raises(ValueError, match=r"y for sigmoid: expected \(90,\) or \(12, 90\)"):
        solve_batch(law, X, y[:-1], w, theta0)
    with pytest.raises(ValueError, match="w for sigmoid"):
        solve_batch(law, X, y, w[:5], theta0)
    assert solve_batch(law, X, y, w[:1], theta0[:0]).theta.shape == (0, 4)


def test_a_law_without_a_compiled_kernel_takes_the_general_path():
    """A law the kernels do not know (a user's ``saturate.Model``) is solved by scipy's
    ``least_squares``: on a curve it fits exactly, the solution the compiled kernel finds."""
    from dataclasses import replace

    law, truth = replace(LAWS["power"], name="my_law"), np.array([1.0, 0.5, 0.7])
    y, start = LAWS["power"](X, truth), np.array([[0.5, 0.2, 1.0], [2.0, 1.0, 0.3]])
    general = solve_batch(law, X, y, np.ones(X.size), start, max_iter=200)
    compiled = solve_batch(LAWS["power"], X, y, np.ones(X.size), start, max_iter=200)
    np.testing.assert_allclose(general.theta, np.tile(truth, (2, 1)), rtol=1e-6)
    np.testing.assert_allclose(compiled.theta, general.theta, rtol=1e-6)
    assert general.converged.all() and np.all(general.cost < 1e-12)
