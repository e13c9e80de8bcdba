"""Fit the scaling and saturation laws to one curve, weigh them, and bootstrap the forecast.

``fit_curve`` is a pure function of its inputs (the seed is a setting). Steps:

1. clean, normalise and bin the curve (:mod:`.prep`);
2. multi-start robust fits of the whole curve and its prefixes (rolling origins), in one call;
3. pseudo-BMA+ weights from AICc and rolling-origin scores (:mod:`.weights`);
4. a sieve bootstrap: each law's AR(p) residual model driven by its innovations with random
   signs (block bootstraps of residuals under-cover), all resamples refitted in one batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from saturate.errors import SettingsError
from saturate.fit.domain import DomainBounds, domain_bounds, drop_outside
from saturate.fit.estimates import averaged_asymptote, build_law_fit, linear_se
from saturate.fit.laws import LAWS, Law
from saturate.fit.model import law_of
from saturate.fit.polish import polish
from saturate.fit.prep import (
    Bins,
    Normalisation,
    ar_fit,
    bin_points,
    bootstrap_burn,
    bootstrap_sign_rows,
    clean_curve,
    noise_level,
    normalisation,
    sieve_noise,
)
from saturate.fit.result import CurveFit, LawFit
from saturate.fit.settings import FitSettings, with_prior
from saturate.fit.solver import BatchResult, solve_laws
from saturate.fit.weights import PointFit, Scores, law_scores, law_weights

Array = NDArray[np.float64]
#: Most noise values the bootstrap holds at once per law (16 MB; see :func:`_bootstrap`).
_BLOCK_ELEMENTS = 2**21


@dataclass(frozen=True)
class _Prepared:
    """One curve ready for fitting: user units (``c``), fitting coordinates (``x``, ``y``), bins,
    the residual scale and the flags so far."""

    c: Array
    x: Array
    y: Array
    norm: Normalisation
    bins: Bins
    yb: Array
    noise: float
    f_scale: float
    flags: tuple[str, ...]


@dataclass(frozen=True)
class _Weighed:
    """Step 3's output: each law's residual sum of squares, AR noise model, scores, weight, and
    its values and Jacobian at the points."""

    rss: dict[str, float]
    best: str
    noise_models: dict[str, tuple[Array, Array, float] | None]
    scores: Scores
    weights: dict[str, float]
    fitted: dict[str, Array]
    jacobians: dict[str, Array]


def fit_curve(
    compute: ArrayLike,
    value: ArrayLike,
    *,
    direction: Literal["higher", "lower"] = "higher",
    settings: FitSettings = FitSettings(),  # noqa: B008 - frozen, safe as a default
) -> CurveFit:
    """Fit every law in ``settings.laws`` to one curve and average them (see module docstring)."""
    if direction not in ("higher", "lower"):
        raise SettingsError(f"direction: expected 'higher' or 'lower', got {direction!r}")
    prep = _prepare(compute, value, direction, settings)
    rng = np.random.default_rng(settings.seed)
    laws = [law_of(item, prep.norm) for item in settings.laws]  # a user's law on this curve
    bounds = domain_bounds(settings.domain, prep.norm, prep.c, settings.forecast_at)
    if bounds is not None:
        laws = bounds.laws(laws)
    eligible, origins, k_max, flags = _plan(laws, prep, settings)
    prep = replace(prep, flags=flags)
    by_name = {law.name: law for law in (*eligible, *laws)}
    points = _fit_points(eligible, prep.bins, prep.yb, origins, settings, prep.f_scale)
    outside: tuple[str, ...] = ()
    if bounds is not None:
        points, outside = drop_outside(points, laws, bounds)
    weighed = _weigh(points, prep, origins, k_max, settings, rng, by_name)
    law_fits, draw_law = _law_fits(laws, points, weighed, prep, settings, rng, bounds)
    if outside:
        note = f"outside_domain: the fit leaves the metric's domain {bounds.text}"  # type: ignore[union-attr]
        law_fits = tuple(replace(lf, flags=(*lf.flags, note)) if lf.name in outside else lf
                         for lf in law_fits)
    best_model = weighed.noise_models[weighed.best]
    return CurveFit(
        laws=law_fits, flags=prep.flags, direction=direction, confidence=settings.confidence,
        n_points=prep.x.shape[0], compute_first=float(prep.c[0]), compute_last=float(prep.c[-1]),
        norm=prep.norm, draw_law=draw_law,
        asymptote=averaged_asymptote(law_fits, prep.norm, float(np.ptp(prep.y)),
                                     settings.confidence),
        noise=prep.noise * prep.norm.scale,
        ar_order=0 if best_model is None else int(best_model[0].shape[0]),
        gain_backtest=_gain_backtest(points, weighed.weights, prep.bins, origins, prep.norm,
                                     by_name),
    )


# ---- step 1: the curve in fitting coordinates ---------------------------------------------------
def _prepare(
    compute: ArrayLike, value: ArrayLike, direction: str, settings: FitSettings
) -> _Prepared:
    """Clean and normalise the curve, bin long curves, and set the robust loss's scale."""
    c, v, flags = clean_curve(compute, value)
    norm, norm_flags = normalisation(c, v, direction)
    flags += norm_flags
    x, y = norm.x(c), norm.y(v)
    n = x.shape[0]
    bins = bin_points(x, settings.max_points)
    if bins.x.shape[0] < n:
        flags += (f"binned:{n}->{bins.x.shape[0]}",)
    noise = noise_level(y)
    return _Prepared(
        c=c, x=x, y=y, norm=norm, bins=bins, yb=bins.mean(y), noise=noise,
        f_scale=settings.f_scale * max(noise, 1e-6), flags=flags,
    )


def _plan(
    laws: list[Law], prep: _Prepared, settings: FitSettings
) -> tuple[list[Law], Array, int, tuple[str, ...]]:
    """The laws the curve has enough points for (log-linear when none), the rolling origins, the
    most parameters of a law, and the flags."""
    n, flags = prep.x.shape[0], prep.flags
    eligible = [law for law in laws if n >= law.k + 2]
    if not eligible:
        eligible = [LAWS["loglinear"]]
        flags += ("too_few_points",)
    k_max = max(law.k for law in eligible)
    origins = cv_masks(prep.bins, settings.cv_origins, k_max)
    if origins.shape[0] == 0:
        flags += ("no_cv",)
    return eligible, origins, k_max, flags


# ---- step 3: weights ----------------------------------------------------------------------------
def _weigh(
    points: dict[str, PointFit], prep: _Prepared, origins: Array, k_max: int,
    settings: FitSettings, rng: np.random.Generator, laws: dict[str, Law],
) -> _Weighed:
    """Residuals, AR noise models, AICc and rolling-origin scores, and the pseudo-BMA+ weights."""
    x, y = prep.x, prep.y
    with np.errstate(all="ignore"):
        fits = {name: laws[name].value_and_jacobian(x, p.theta) for name, p in points.items()}
        raw = {name: y - f for name, (f, _) in fits.items()}
    resid = {name: _hc2(raw[name], jac) for name, (_, jac) in fits.items()}
    rss = {name: float(np.sum(r**2)) if np.all(np.isfinite(r)) else math.inf
           for name, r in raw.items()}
    best = min(rss, key=rss.__getitem__)
    noise_models = {
        name: ar_fit(r, settings.max_ar_order) if math.isfinite(rss[name]) else None
        for name, r in resid.items()
    }
    best_model = noise_models[best]
    infl = best_model[2] if best_model is not None else 1.0
    scores = law_scores(points, raw, prep.bins, prep.yb, origins, infl, x.shape[0], k_max, laws)
    scores = with_prior(scores, settings.law_prior)  # prior odds of the laws (fit.priors)
    weights = law_weights(scores, settings.cv_weight,
                          {k: math.isfinite(v) for k, v in rss.items()}, rng,
                          settings.boot_min_weight)
    return _Weighed(rss=rss, best=best, noise_models=noise_models, scores=scores, weights=weights,
                    fitted={name: f for name, (f, _) in fits.items()},
                    jacobians={name: jac for name, (_, jac) in fits.items()})


# ---- step 4: bootstrap and per-law results ------------------------------------------------------
def _law_fits(
    laws: list[Law], points: dict[str, PointFit], weighed: _Weighed, prep: _Prepared,
    settings: FitSettings, rng: np.random.Generator, bounds: DomainBounds | None = None,
) -> tuple[tuple[LawFit, ...], NDArray[np.intp]]:
    """Bootstrap the laws with weight, build every law's :class:`LawFit`, and allot the averaged
    curve's draws to the laws (``draw_law``)."""
    x, n, weights = prep.x, prep.x.shape[0], weighed.weights
    burn = bootstrap_burn(n, settings.n_boot, rng)
    boot_models = {
        name: model for name, model in weighed.noise_models.items()
        if model is not None and weights[name] > 0 and weights[name] >= settings.boot_min_weight
    }
    by_name = {law.name: law for law in laws}
    boot = _bootstrap(points, boot_models, weighed.fitted, x, prep.bins, burn, rng, settings,
                      prep.f_scale, by_name)
    if bounds is not None:
        boot = {name: bounds.keep_inside(by_name[name], th, points[name].theta)
                for name, th in boot.items()}
    draw_law_names = _allot_draws(weights, boot, settings.n_boot, rng)

    def se_lin(law: Law) -> Array | None:
        model = weighed.noise_models.get(law.name)
        if law.name not in boot or model is None:
            return None
        return linear_se(law, x, points[law.name].theta, weighed.rss[law.name] / n, model[2],
                         weighed.jacobians[law.name])

    law_fits = tuple(
        build_law_fit(law, points.get(law.name), boot.get(law.name), weighed.rss,
                      weighed.scores.aicc, weighed.scores.cv_rmse, weights, prep.norm, settings,
                      n, prep.flags, se_lin(law))
        for law in laws
    )
    names = [lf.name for lf in law_fits]
    return law_fits, np.array([names.index(nm) for nm in draw_law_names], dtype=np.intp)


def _gain_backtest(
    points: dict[str, PointFit], weights: dict[str, float], bins: Bins, origins: Array,
    norm: Normalisation, laws: dict[str, Law],
) -> tuple[tuple[float, float, float], ...]:
    """How well the averaged fit of each rolling-origin prefix forecast the gain that followed
    (up to one doubling, inside the data), against the whole-curve fit: the extrapolation error
    the bootstrap does not carry. ``(compute at origin, horizon in doublings, error per
    doubling)``, errors on the larger-is-better scale in the user's units."""
    out = []
    for o in range(origins.shape[0]):
        size = int(origins[o].sum())
        if size < 1 or size > bins.x.shape[0]:
            continue
        x_o = float(bins.x[size - 1])
        h = min(2.0, 1.0 / x_o)
        if not (x_o > 0 and h > 1.05):
            continue
        at = np.array([x_o, h * x_o])
        pred = real = total = 0.0
        for name, p in points.items():
            w = weights.get(name, 0.0)
            if w <= 0 or not np.all(np.isfinite(p.cv_theta[o])) or not np.all(np.isfinite(p.theta)):
                continue
            law = laws[name]
            with np.errstate(all="ignore"):
                fp, ff = law(at, p.cv_theta[o]), law(at, p.theta)
            if not (np.all(np.isfinite(fp)) and np.all(np.isfinite(ff))):
                continue
            pred += w * float(fp[1] - fp[0])
            real += w * float(ff[1] - ff[0])
            total += w
        if total <= 0:
            continue
        doublings = math.log2(h)
        err = (pred - real) / total / doublings * norm.scale
        compute = x_o * norm.c_ref - norm.offset
        out.append((float(compute), float(doublings), float(err)))
    return tuple(out)


# ---- step 2: point and rolling-origin fits ------------------------------------------------------
def cv_masks(bins: Bins, fractions: tuple[float, ...], k_max: int) -> Array:
    """Training masks (n_origins, n_bins): bins up to each origin, at least k_max + 2 of them,
    leaving at least one bin to forecast."""
    nb = bins.x.shape[0]
    sizes = set()
    for frac in fractions:
        size = max(int(np.searchsorted(bins.x, frac, side="right")), k_max + 2)
        if size < nb:
            sizes.add(size)
    masks = np.zeros((len(sizes), nb))
    for i, size in enumerate(sorted(sizes)):
        masks[i, :size] = 1.0
    return masks


def _fit_points(
    laws: list[Law], bins: Bins, yb: Array, origins: Array, settings: FitSettings, f_scale: float
) -> dict[str, PointFit]:
    """Every law's multi-start whole-curve and rolling-origin fits, solved in one batch."""
    weights = np.vstack([bins.counts, origins * bins.counts])  # (1 + n_origins, n_bins)
    starts = [law.starts_batch(bins.x, yb, weights, settings.n_starts) for law in laws]
    results = solve_laws(
        [(law, yb, np.repeat(weights, s.shape[1], axis=0), s.reshape(-1, law.k))
         for law, s in zip(laws, starts, strict=True)],
        bins.x, loss=settings.loss, f_scale=f_scale, max_iter=settings.max_iter,
    )
    return {
        law.name: _fit_point(law, s.shape[1], res, bins, yb, settings, f_scale)
        for law, s, res in zip(laws, starts, results, strict=True)
    }


def _fit_point(
    law: Law, m: int, res: BatchResult, bins: Bins, yb: Array, settings: FitSettings,
    f_scale: float,
) -> PointFit:
    """The best of the ``m`` starts of each fit (the whole curve first, then each origin)."""
    g = res.cost.shape[0] // m
    cost = res.cost.reshape(g, m)
    pick = np.argmin(cost, axis=1)
    theta = res.theta.reshape(g, m, law.k)[np.arange(g), pick]
    conv = res.converged.reshape(g, m)[np.arange(g), pick]
    point, ok = theta[0], bool(conv[0]) and math.isfinite(cost[0, pick[0]])
    if settings.polish and not ok and math.isfinite(cost[0, pick[0]]):
        point, ok = polish(law, bins, yb, point, float(cost[0, pick[0]]), ok, settings.loss,
                           f_scale)
    if not np.all(np.isfinite(point)) or not math.isfinite(cost[0, pick[0]]):
        point = np.full(law.k, np.nan)
    cv_ok = np.isfinite(cost[np.arange(1, g), pick[1:]])
    cv_theta = np.where(cv_ok[:, None], theta[1:], np.nan)
    return PointFit(theta=point, converged=ok, cv_theta=cv_theta)


def _hc2(r: Array, jac: Array) -> Array:
    """Residuals ``r`` scaled by 1/sqrt(1 - leverage) (``jac``: the fit's Jacobian), undoing the
    shrinkage of fitted residuals so the bootstrap is not too narrow."""
    if not np.all(np.isfinite(r)):
        return r
    with np.errstate(all="ignore"):
        q, _ = np.linalg.qr(jac)
    h = np.clip(np.sum(q**2, axis=1), 0.0, 0.9)
    return r / np.sqrt(1.0 - h)


# ---- step 4: bootstrap --------------------------------------------------------------------------
def _bootstrap(
    points: dict[str, PointFit], models: dict[str, tuple[Array, Array, float]],
    fitted: dict[str, Array], x: Array, bins: Bins, burn: NDArray[np.intp],
    rng: np.random.Generator, settings: FitSettings, f_scale: float,
    laws: dict[str, Law] | None = None,
) -> dict[str, Array]:
    """Refit each law in ``models`` to (its fit ``fitted`` + sieve-bootstrap noise), warm-started
    from its point estimate; all the laws' resamples in one batch. The noise is drawn a block of
    resamples at a time (same numbers as one draw) and reduced to bin means, to bound memory."""
    n, n_boot, burn_len = x.shape[0], burn.shape[0], burn.shape[1]
    innovs = {name: innov * math.sqrt(n / max(n - phi.shape[0], 1))
              for name, (phi, innov, _) in models.items()}
    y_star = {name: np.empty((n_boot, bins.x.shape[0])) for name in models}
    rows = max(1, _BLOCK_ELEMENTS // (burn_len + n))
    for start in range(0, n_boot, rows):  # every block is drawn, so rng ends where it always did
        stop = min(n_boot, start + rows)
        signs = bootstrap_sign_rows(stop - start, n, burn_len, rng)
        for name, (phi, _, _) in models.items():
            noise = sieve_noise(phi, innovs[name], signs, burn[start:stop])
            y_star[name][start:stop] = bins.mean(fitted[name] + noise)
    # the laws as fitted (their bounds may hold the metric's domain)
    law_of = laws or LAWS
    problems = [(law_of[name], y_star[name], bins.counts,
                 np.tile(points[name].theta, (n_boot, 1))) for name in models]
    results = solve_laws(problems, bins.x, loss=settings.loss, f_scale=f_scale,
                         max_iter=settings.boot_max_iter, tol=1e-6)
    out = {}
    for name, res in zip(models, results, strict=True):
        out[name] = res.theta
        out[name][~np.isfinite(res.cost)] = points[name].theta
    return out


def _allot_draws(
    weights: dict[str, float], boot: dict[str, Array], n_boot: int, rng: np.random.Generator
) -> list[str]:
    """Systematic allotment of the n_boot averaged draws to laws, in proportion to weight."""
    names = [k for k in weights if k in boot]
    if not names or n_boot == 0:
        return []
    w = np.array([weights[k] for k in names])
    cum = np.cumsum(w / w.sum())
    u = (rng.random() + np.arange(n_boot)) / n_boot
    idx = np.minimum(np.searchsorted(cum, u, side="right"), len(names) - 1)
    return [names[i] for i in idx]

