"""How the laws fitted to one curve are weighed: AICc with an effective sample size, rolling-origin
predictive scores, and pseudo-BMA+ weights over a Bayesian bootstrap."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from saturate.fit.laws import LAWS, Law
from saturate.fit.prep import Bins

Array = NDArray[np.float64]


@dataclass(frozen=True)
class PointFit:
    """A law's point fit and its rolling-origin fits (internal)."""

    theta: Array
    converged: bool
    cv_theta: Array  # (n_origins, k)


@dataclass(frozen=True)
class Scores:
    """What the weights are made of (internal). ``mse`` (laws, n_bins): mean squared residual per
    bin; ``penalty``: AICc's; ``cv``: rolling-origin score (-2 log likelihood scale)."""

    names: tuple[str, ...]
    aicc: dict[str, float]
    cv_rmse: dict[str, float]
    mse: Array
    penalty: Array
    cv: Array
    counts: Array
    n_eff: float
    infl: float


def law_scores(
    points: dict[str, PointFit], raw: dict[str, Array], bins: Bins, yb: Array, origins: Array,
    infl: float, n: int, k_max: int, laws: Mapping[str, Law] = LAWS,
) -> Scores:
    """AICc with an effective sample size (n over the residuals' long-run variance ratio), the
    per-bin squared residuals behind it, and the rolling-origin predictive scores."""
    n_eff = float(np.clip(n / infl, min(n, k_max + 3), n))
    names = tuple(points)
    mse = np.full((len(names), bins.x.shape[0]), np.inf)
    penalty = np.full(len(names), np.inf)
    aicc, rmse = {}, {}
    for j, name in enumerate(names):
        k, r = laws[name].k, raw[name]
        dof = n_eff - k - 1
        if not np.all(np.isfinite(r)) or dof <= 0:
            aicc[name] = math.inf
            continue
        mse[j] = bins.mean(r**2)
        penalty[j] = 2 * k + 2 * k * (k + 1) / dof
        aicc[name] = n_eff * math.log(max(float(np.mean(r**2)), 1e-20)) + float(penalty[j])
    cv = np.zeros(len(names))
    for j, name in enumerate(names):
        cv[j], rmse[name] = cv_score(laws[name], points[name].cv_theta, bins, yb, origins)
    return Scores(names, aicc, rmse, mse, penalty, cv, bins.counts, n_eff, infl)


def cv_score(
    law: Law, cv_theta: Array, bins: Bins, yb: Array, origins: Array
) -> tuple[float, float]:
    """Predictive score of the rolling-origin fits (-2 log likelihood scale) and their RMSE. The
    points after an origin share one extrapolation error, so each origin is one piece of evidence:
    the score sums ``log(MSE)`` of each origin's forecasts."""
    if origins.shape[0] == 0:
        return 0.0, math.nan
    with np.errstate(all="ignore"):
        err = yb - law(bins.x, cv_theta)  # (o, nb)
    test = (1.0 - origins) * bins.counts
    mse = np.sum(test * err**2, axis=1) / np.sum(test, axis=1)
    if not np.all(np.isfinite(mse)):
        return math.inf, math.inf
    return float(np.sum(np.log(np.maximum(mse, 1e-20)))), math.sqrt(float(np.mean(mse)))


_N_WEIGHT_DRAWS = 400


def law_weights(
    sc: Scores, cv_weight: float, fitted: dict[str, bool], rng: np.random.Generator,
    min_weight: float = 0.0,
) -> dict[str, float]:
    """Pseudo-BMA+ weights: Akaike weights of AICc + cv_weight * predictive score, averaged over
    a Bayesian bootstrap of the bins, so laws whose advantage rests on a few points or is within
    the noise share the weight instead of one taking it all."""
    names = sc.names
    total = sc.penalty + cv_weight * sc.cv
    ok = np.isfinite(total) & np.all(np.isfinite(sc.mse), axis=1)
    if not ok.any():  # too few points for AICc: share equally among the laws that fitted
        share = [k for k in names if fitted[k]]
        return {k: (1.0 / len(share) if k in share else 0.0) for k in names}
    # Dirichlet(count / inflation): a bin of `count` points holds count / inflation units of
    # evidence, so the draws total the effective sample size
    alpha = np.maximum(sc.counts / sc.infl, 1e-3)
    pi = rng.gamma(np.broadcast_to(alpha, (_N_WEIGHT_DRAWS, alpha.shape[0])))
    pi /= np.sum(pi, axis=1, keepdims=True)
    dev = sc.n_eff * np.log(np.maximum(pi @ sc.mse[ok].T, 1e-20)) + total[ok]  # (draws, laws)
    dev -= dev.min(axis=1, keepdims=True)
    w = np.exp(-0.5 * dev)
    w /= np.sum(w, axis=1, keepdims=True)
    mean_w = np.mean(w, axis=0)
    # laws below min_weight are dropped (they are not bootstrapped, so they would move the
    # averaged point forecast without appearing in its interval)
    mean_w = np.where((mean_w >= min_weight) | (mean_w == mean_w.max()), mean_w, 0.0)
    mean_w /= mean_w.sum()
    out = dict.fromkeys(names, 0.0)
    for name, wk in zip(np.array(names)[ok], mean_w, strict=True):
        out[str(name)] = float(wk)
    return out

