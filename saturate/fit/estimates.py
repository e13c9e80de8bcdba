"""Assembling a fit's results: per-law parameter estimates in the user's units (with the
stalled-bootstrap check) and the averaged asymptote."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

from saturate.fit.laws import LAWS, Law, Param, natural_value
from saturate.fit.prep import Normalisation
from saturate.fit.result import LawFit
from saturate.fit.settings import FitSettings
from saturate.fit.weights import PointFit
from saturate.results import Estimate

STALL_RATIO = 0.5
"""Bootstrap refits have stalled when their spread is below this share of the linearised standard
error (BNSL's flat directions); the parameter's interval then takes in the Wald one."""

SPREAD_TAIL = 0.05
"""The bootstrap spread compared with the linearised standard error is the 5-95% quantile range
over ``2 * z(0.95)``: a robust standard deviation (so it ignores the confidence setting)."""

Array = NDArray[np.float64]


def build_law_fit(
    law: Law, point: PointFit | None, boot: Array | None, rss: dict[str, float],
    aicc: dict[str, float], cv_rmse: dict[str, float], weights: dict[str, float],
    norm: Normalisation, settings: FitSettings, n: int, curve_flags: tuple[str, ...],
    se_lin: Array | None = None,
) -> LawFit:
    """One law's result in the user's units: parameters with bootstrap intervals (widened to the
    Wald interval where the bootstrap stalled), scores, weight, and flags saying why."""
    flags: list[str] = []
    if point is None:
        theta = np.full(law.k, np.nan)
        flags.append(f"not_fitted: needs at least {law.k + 2} points, got {n}")
    else:
        theta = point.theta
    draws = boot if boot is not None else np.empty((0, law.k))
    if point is not None and boot is None:
        flags.append("no_bootstrap: negligible weight")
    degenerate = "constant" in curve_flags or "too_few_points" in curve_flags
    # every parameter's quantiles in one call (the same numbers as one call per parameter)
    conf = settings.confidence
    quantiles = (np.quantile(draws, [SPREAD_TAIL, 1.0 - SPREAD_TAIL, (1 - conf) / 2,
                                     (1 + conf) / 2], axis=0)
                 if draws.shape[0] else np.full((4, law.k), np.nan))
    params = {}
    stalled = []
    for i, p in enumerate(law.params):
        wald = None
        if (se_lin is not None and draws.shape[0] >= 10
                and _boot_sd(quantiles[:2, i]) < STALL_RATIO * se_lin[i]):
            stalled.append(p.name)
            z = float(ndtri((1 + settings.confidence) / 2))
            wald = (theta[i] - z * se_lin[i], theta[i] + z * se_lin[i])
        est = _param_estimate(p, theta[i], quantiles[2:, i] if draws.shape[0] else None, norm,
                              wald)
        if degenerate and est.identified:
            est = Estimate(est.value, est.lo, est.hi, identified=False)
        params[p.name] = est
    if stalled:
        flags.append("bootstrap_stalled: " + ", ".join(stalled) + " (Wald interval used)")
    on_bound = [nm for nm, e in params.items() if not e.identified and point is not None]
    if on_bound and not degenerate:
        flags.append("not_identified: " + ", ".join(on_bound))
    name = law.name
    return LawFit(
        name=name, theta=theta, params=params,
        rss=rss.get(name, math.nan) * (norm.scale * norm.scale), aicc=aicc.get(name, math.nan),
        cv_error=cv_rmse.get(name, math.nan) * norm.scale, weight=weights.get(name, 0.0),
        converged=bool(point is not None and point.converged), theta_boot=draws,
        flags=tuple(flags), user_law=None if name in LAWS else law,
    )


_Z_SPREAD = float(ndtri(1.0 - SPREAD_TAIL))


def _boot_sd(tails: Array) -> float:
    """A robust standard deviation of bootstrap draws from their ``SPREAD_TAIL`` and
    ``1 - SPREAD_TAIL`` quantiles (``tails``)."""
    qlo, qhi = tails
    return float((qhi - qlo) / (2 * _Z_SPREAD))


def linear_se(law: Law, x: Array, theta: Array, sigma2: float, infl: float,
              jac: Array | None = None) -> Array | None:
    """Linearised standard errors of the parameters (fitting coordinates) from sigma^2 *
    inflation * (J'J)^-1: the spread the bootstrap should reach when refits are not stuck."""
    if jac is None:
        with np.errstate(all="ignore"):
            jac = law.jacobian(x, theta)
    if not (np.all(np.isfinite(jac)) and math.isfinite(sigma2)):
        return None
    cov = np.linalg.pinv(jac.T @ jac, rcond=1e-12, hermitian=True) * sigma2 * infl
    return np.sqrt(np.maximum(np.diagonal(cov), 0.0))


def _param_estimate(
    p: Param, value: float, interval: Array | None, norm: Normalisation,
    wald: tuple[float, float] | None = None,
) -> Estimate:
    """Point value and percentile interval in user units; not identified when the estimate or
    its interval reaches a bound. ``interval``: the draws' quantiles (fitting coordinates) or
    None; ``wald``: a wider interval to take the union with, when the bootstrap stalled."""
    kw = dict(loc=norm.loc, scale=norm.scale, sign=norm.sign, c_ref=norm.c_ref, offset=norm.offset)
    if not math.isfinite(value):
        return Estimate(math.nan, identified=False)
    span = p.upper - p.lower  # infinite for a user's unbounded parameter: no bound to reach
    tol = 1e-3 * span if math.isfinite(span) else 0.0
    on_bound = value <= p.lower + tol or value >= p.upper - tol
    lo = hi = math.nan
    if interval is not None:
        qlo, qhi = interval
        if wald is not None:  # the Wald interval, within the parameter's bounds (its space)
            qlo, qhi = max(min(qlo, wald[0]), p.lower), min(max(qhi, wald[1]), p.upper)
        on_bound |= bool(qlo <= p.lower + tol or qhi >= p.upper - tol)
        ends = natural_value(p.kind, np.array([qlo, qhi]), **kw)
        lo, hi = float(ends.min()), float(ends.max())
    val = float(natural_value(p.kind, value, **kw))
    if math.isfinite(lo) and math.isfinite(hi):  # the estimate lies inside its own interval
        lo, hi = min(lo, val), max(hi, val)
    return Estimate(val, lo, hi, identified=not on_bound)


def averaged_asymptote(
    laws: Sequence[LawFit], norm: Normalisation, y_range: float, conf: float
) -> Estimate:
    """The asymptote weighted over the laws with a finite one; not identified when most weight is
    elsewhere, the dominant asymptotes sit on their bounds, or the interval is over four times
    the curve's range ``y_range`` (fitting coordinates)."""
    cands = []
    for i, lf in enumerate(laws):
        if lf.weight <= 0 or not lf.fitted:
            continue
        a = float(lf.law.asymptote(lf.theta))
        if math.isfinite(a):
            cands.append((i, lf, a))
    if not cands:
        return Estimate(math.nan, identified=False)
    share = sum(lf.weight for _, lf, _ in cands)
    value = sum(lf.weight * a for _, lf, a in cands) / share
    held = sum(lf.weight for _, lf, _ in cands if lf.params[lf.law.params[0].name].identified)
    vals, wts = [], []
    for _, lf, _ in cands:
        if lf.theta_boot.shape[0]:
            vals.append(np.asarray(lf.law.asymptote(lf.theta_boot), dtype=float))
            wts.append(np.full(lf.theta_boot.shape[0], lf.weight / lf.theta_boot.shape[0]))
    lo = hi = math.nan
    if vals:
        lo_n, hi_n = weighted_quantile(np.concatenate(vals), np.concatenate(wts),
                                        [(1 - conf) / 2, (1 + conf) / 2])
        lo, hi = sorted(float(v) for v in norm.value(np.array([lo_n, hi_n])))
    point = float(norm.value(value))
    if math.isfinite(lo) and math.isfinite(hi):
        # the weighted mean of the laws' asymptotes may fall outside the quantiles of their
        # draws (laws of very different asymptotes): the interval always holds the estimate
        lo, hi = min(lo, point), max(hi, point)
    width_ok = math.isfinite(lo) and math.isfinite(hi) and (
        (hi - lo) / norm.scale <= 4.0 * y_range + 1e-9
    )
    identified = share >= 0.5 and held >= 0.5 * share and width_ok
    return Estimate(point, lo, hi, identified=bool(identified))


def weighted_quantile(values: Array, weights: Array, qs: list[float]) -> Array:
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w) / w.sum()
    idx = np.minimum(np.searchsorted(cum, qs, side="left"), v.shape[0] - 1)
    return v[idx]
