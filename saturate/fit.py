"""Fit the scaling and saturation laws to one curve, weigh them, and bootstrap the forecast.

``fit_curve`` is a pure function of its inputs (the seed is a setting). Steps:

1. clean and normalise the curve (:mod:`saturate.fit_prep`); long curves are averaged into narrow
   bins of log compute (at most ``max_points``) so cost does not grow with curve length;
2. per law, multi-start robust fits of the whole curve and of its prefixes (rolling origins), all in
   one batched Levenberg-Marquardt call (:mod:`saturate.fit_solver`), the whole-curve fit polished
   by ``scipy.optimize.least_squares``;
3. weights from AICc (with the sample size discounted for autocorrelated residuals) plus the
   predictive score of the rolling-origin forecasts (one unit of evidence per origin), averaged
   over a Bayesian bootstrap of the in-sample fit (pseudo-BMA+), so laws that the data cannot
   tell apart share the weight and the averaged forecast carries their disagreement;
4. a sieve bootstrap of each law's residuals: an AR(p) model of the residuals driven by its own
   innovations with random signs (a wild bootstrap), so autocorrelation and uneven noise along the
   curve survive; all resamples refitted in one batch warm-started from the point estimate.
   (Block bootstraps of residuals were tried and under-cover: residuals of a fitted curve are
   negatively correlated at the low frequencies that drive parameter uncertainty.) Where the
   refits stall (spread far below the linearised standard error, typical of BNSL's flat
   directions) the parameter's interval takes in the Wald interval and the law is flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares
from scipy.special import ndtri

from saturate.errors import SettingsError
from saturate.fit_prep import (
    Bins,
    Normalisation,
    ar_fit,
    bin_points,
    bootstrap_signs,
    clean_curve,
    noise_level,
    normalisation,
    sieve_noise,
)
from saturate.fit_result import CurveFit, LawFit, parse_at
from saturate.fit_solver import LOSSES, BatchResult, robust_cost, solve_laws
from saturate.laws import LAWS, Law, natural_value
from saturate.results import Estimate

__all__ = ["FitSettings", "fit_curve", "CurveFit", "LawFit", "parse_at"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class FitSettings:
    """How curves are fitted. Defaults suit RL reward and loss curves of 5 to 10,000 points.

    ``f_scale``: scale of the robust loss in units of the point-to-point noise (estimated from
    first differences). ``cv_origins``: rolling origins as fractions of the last compute (each
    prefix is fitted and scored on the rest). ``cv_weight`` scales the predictive score against
    AICc. ``max_ar_order``: highest AR order of the residual noise model (chosen by AIC).
    ``max_points``: bins used for long curves. ``boot_min_weight``: laws with
    less weight get none (they are not bootstrapped and their parameters get no interval).
    """

    laws: tuple[str, ...] = tuple(LAWS)
    n_boot: int = 200
    confidence: float = 0.9
    seed: int = 0
    loss: str = "soft_l1"
    f_scale: float = 2.0
    n_starts: int = 4
    cv_origins: tuple[float, ...] = (0.5, 0.65, 0.8)
    cv_weight: float = 1.0
    max_ar_order: int = 5
    max_points: int = 128
    max_iter: int = 50
    boot_max_iter: int = 20
    boot_min_weight: float = 0.01
    polish: bool = True  # scipy least_squares on a whole-curve fit the batch left unconverged
    forecast_at: tuple[str | float, ...] = field(default=("2x", "4x"))

    def __post_init__(self) -> None:
        unknown = [n for n in self.laws if n not in LAWS]
        if unknown or not self.laws:
            raise SettingsError(
                f"laws: unknown {', '.join(map(repr, unknown)) or '(none given)'}; "
                f"choose from {', '.join(LAWS)}"
            )
        checks = [
            ("n_boot", self.n_boot >= 0, self.n_boot),
            ("confidence", 0 < self.confidence < 1, self.confidence),
            ("loss", self.loss in LOSSES, self.loss),
            ("f_scale", self.f_scale > 0, self.f_scale),
            ("n_starts", self.n_starts >= 1, self.n_starts),
            ("cv_origins", all(0 < f < 1 for f in self.cv_origins), self.cv_origins),
            ("cv_weight", self.cv_weight >= 0, self.cv_weight),
            ("max_ar_order", self.max_ar_order >= 0, self.max_ar_order),
            ("max_points", self.max_points >= 8, self.max_points),
            ("max_iter", self.max_iter >= 1, self.max_iter),
            ("boot_max_iter", self.boot_max_iter >= 1, self.boot_max_iter),
            ("boot_min_weight", 0 <= self.boot_min_weight < 1, self.boot_min_weight),
        ]
        for name, ok, got in checks:
            if not ok:
                raise SettingsError(f"{name}: invalid value {got!r}")


@dataclass(frozen=True)
class _Point:
    """A law's point fit and its rolling-origin fits (internal)."""

    theta: Array
    converged: bool
    cv_theta: Array  # (n_origins, k)


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
    c, v, flags = clean_curve(compute, value)
    norm, norm_flags = normalisation(c, v, direction)
    flags += norm_flags
    x, y = norm.x(c), norm.y(v)
    n = x.shape[0]
    bins = bin_points(x, settings.max_points)
    yb = bins.mean(y)
    if bins.x.shape[0] < n:
        flags += (f"binned:{n}->{bins.x.shape[0]}",)
    noise = noise_level(y)
    f_scale = settings.f_scale * max(noise, 1e-6)
    rng = np.random.default_rng(settings.seed)

    laws = [LAWS[name] for name in settings.laws]
    eligible = [law for law in laws if n >= law.k + 2]
    if not eligible:
        eligible = [LAWS["loglinear"]]
        flags += ("too_few_points",)
    k_max = max(law.k for law in eligible)
    origins = _cv_masks(bins, settings.cv_origins, k_max)
    if origins.shape[0] == 0:
        flags += ("no_cv",)

    points = _fit_points(eligible, bins, yb, origins, settings, f_scale)
    resid = {name: _hc2(LAWS[name], x, y, p.theta) for name, p in points.items()}
    with np.errstate(all="ignore"):
        raw = {name: y - LAWS[name](x, p.theta) for name, p in points.items()}
    rss = {name: float(np.sum(r**2)) if np.all(np.isfinite(r)) else math.inf
           for name, r in raw.items()}
    best = min(rss, key=rss.__getitem__)
    noise_models = {
        name: ar_fit(r, settings.max_ar_order) if math.isfinite(rss[name]) else None
        for name, r in resid.items()
    }
    infl = noise_models[best][2] if noise_models[best] is not None else 1.0
    scores = _scores(points, raw, bins, yb, origins, infl, n, k_max)
    weights = _weights(scores, settings.cv_weight,
                       {k: math.isfinite(v) for k, v in rss.items()}, rng,
                       settings.boot_min_weight)
    aicc, cv_rmse = scores.aicc, scores.cv_rmse

    signs, burn = bootstrap_signs(n, settings.n_boot, rng)
    boot_models = {
        name: model for name, model in noise_models.items()
        if model is not None and weights[name] > 0 and weights[name] >= settings.boot_min_weight
    }
    boot = _bootstrap(points, boot_models, x, bins, signs, burn, settings, f_scale)
    draw_law_names = _allot_draws(weights, boot, settings.n_boot, rng)
    law_fits = tuple(
        _law_fit(law, points.get(law.name), boot.get(law.name), rss, aicc, cv_rmse, weights,
                 norm, settings, n, flags,
                 _linear_se(law, x, points[law.name].theta, rss[law.name] / n,
                            noise_models[law.name][2])
                 if law.name in boot and noise_models[law.name] is not None else None)
        for law in laws
    )
    names = [lf.name for lf in law_fits]
    draw_law = np.array([names.index(nm) for nm in draw_law_names], dtype=np.intp)
    fit = CurveFit(
        laws=law_fits, flags=flags, direction=direction, confidence=settings.confidence,
        n_points=n, compute_first=float(c[0]), compute_last=float(c[-1]), norm=norm,
        draw_law=draw_law, noise=noise * norm.scale,
        ar_order=0 if noise_models[best] is None else int(noise_models[best][0].shape[0]),
    )
    backtest = _gain_backtest(points, weights, bins, origins, norm)
    object.__setattr__(fit, "gain_backtest", backtest)
    asym = _asymptote(fit, float(np.ptp(y)), settings.confidence)
    start = _start_level(fit, settings.confidence)
    object.__setattr__(fit, "asymptote", asym)
    object.__setattr__(fit, "start_level", start)
    return fit


def _gain_backtest(
    points: dict[str, _Point], weights: dict[str, float], bins: Bins, origins: Array,
    norm: Normalisation,
) -> tuple[tuple[float, float, float], ...]:
    """How well the averaged fit of each rolling-origin prefix forecast the gain that followed.

    For each origin ``x_o`` the prefix fits (weighted as the whole-curve laws) forecast the gain
    from ``x_o`` to ``h x_o`` (``h = min(2, 1 / x_o)``: up to one doubling, inside the data); the
    whole-curve fit says what the gain was. Their difference, per doubling of horizon, is the
    curve's own record of extrapolation error, which the bootstrap (noise around ONE law shape)
    does not carry. Returns ``(compute at origin, horizon in doublings, error per doubling)``
    with errors on the larger-is-better scale in the user's units.
    """
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
            law = LAWS[name]
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
def _cv_masks(bins: Bins, fractions: tuple[float, ...], k_max: int) -> Array:
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
) -> dict[str, _Point]:
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
) -> _Point:
    """The best of the ``m`` starts of each fit (the whole curve first, then each origin)."""
    g = res.cost.shape[0] // m
    cost = res.cost.reshape(g, m)
    pick = np.argmin(cost, axis=1)
    theta = res.theta.reshape(g, m, law.k)[np.arange(g), pick]
    conv = res.converged.reshape(g, m)[np.arange(g), pick]
    point, ok = theta[0], bool(conv[0]) and math.isfinite(cost[0, pick[0]])
    if settings.polish and not ok and math.isfinite(cost[0, pick[0]]):
        point, ok = _polish(law, bins, yb, point, float(cost[0, pick[0]]), ok, settings, f_scale)
    if not np.all(np.isfinite(point)) or not math.isfinite(cost[0, pick[0]]):
        point = np.full(law.k, np.nan)
    cv_ok = np.isfinite(cost[np.arange(1, g), pick[1:]])
    cv_theta = np.where(cv_ok[:, None], theta[1:], np.nan)
    return _Point(theta=point, converged=ok, cv_theta=cv_theta)


def _polish(
    law: Law, bins: Bins, yb: Array, theta: Array, cost: float, converged: bool,
    settings: FitSettings, f_scale: float,
) -> tuple[Array, bool]:
    """One scipy ``least_squares`` run from the best batched solution; kept if not worse."""
    lo, hi = law.lower, law.upper
    eps = 1e-9 * (hi - lo)
    sw = np.sqrt(bins.counts)

    def fun(t: Array) -> Array:
        return sw * (yb - law(bins.x, t))

    def jac(t: Array) -> Array:
        return -sw[:, None] * law.jacobian(bins.x, t)

    try:
        with np.errstate(all="ignore"):
            res = least_squares(
                fun, np.clip(theta, lo + eps, hi - eps), jac=jac, bounds=(lo, hi),
                loss=settings.loss, f_scale=f_scale, x_scale="jac", max_nfev=60,
            )
    except (ValueError, np.linalg.LinAlgError):
        return theta, converged
    new_cost = float(robust_cost(fun(res.x), np.ones_like(sw), settings.loss, f_scale))
    if np.all(np.isfinite(res.x)) and new_cost <= cost * (1 + 1e-9):
        return res.x, bool(res.status > 0) or converged
    return theta, converged


def _hc2(law: Law, x: Array, y: Array, theta: Array) -> Array:
    """Residuals scaled by 1/sqrt(1 - leverage), undoing the shrinkage of fitted residuals (most
    at the sparse early points, which pin the scale parameters) so the bootstrap is not too
    narrow. Sums of squares are barely changed."""
    with np.errstate(all="ignore"):
        f, jac = law.value_and_jacobian(x, theta)
        r = y - f
        if not np.all(np.isfinite(r)):
            return r
        q, _ = np.linalg.qr(jac)
    h = np.clip(np.sum(q**2, axis=1), 0.0, 0.9)
    return r / np.sqrt(1.0 - h)


# ---- step 3: scores and weights -----------------------------------------------------------------
@dataclass(frozen=True)
class _Scores:
    """What the weights are made of (internal). ``mse`` (laws, n_bins): mean squared residual of
    each bin; ``penalty``: AICc's parameter penalty; ``cv``: rolling-origin predictive score
    (-2 log likelihood scale); ``n_eff``: effective sample size."""

    names: tuple[str, ...]
    aicc: dict[str, float]
    cv_rmse: dict[str, float]
    mse: Array
    penalty: Array
    cv: Array
    counts: Array
    n_eff: float
    infl: float


def _scores(
    points: dict[str, _Point], raw: dict[str, Array], bins: Bins, yb: Array, origins: Array,
    infl: float, n: int, k_max: int,
) -> _Scores:
    """AICc with an effective sample size (n over the residuals' long-run variance ratio), the
    per-bin squared residuals behind it, and the rolling-origin predictive scores."""
    n_eff = float(np.clip(n / infl, min(n, k_max + 3), n))
    names = tuple(points)
    mse = np.full((len(names), bins.x.shape[0]), np.inf)
    penalty = np.full(len(names), np.inf)
    aicc, rmse = {}, {}
    for j, name in enumerate(names):
        k, r = LAWS[name].k, raw[name]
        dof = n_eff - k - 1
        if not np.all(np.isfinite(r)) or dof <= 0:
            aicc[name] = math.inf
            continue
        mse[j] = bins.mean(r**2)
        penalty[j] = 2 * k + 2 * k * (k + 1) / dof
        aicc[name] = n_eff * math.log(max(float(np.mean(r**2)), 1e-20)) + float(penalty[j])
    cv = np.zeros(len(names))
    for j, name in enumerate(names):
        cv[j], rmse[name] = _cv_score(LAWS[name], points[name].cv_theta, bins, yb, origins)
    return _Scores(names, aicc, rmse, mse, penalty, cv, bins.counts, n_eff, infl)


def _cv_score(
    law: Law, cv_theta: Array, bins: Bins, yb: Array, origins: Array
) -> tuple[float, float]:
    """Predictive score of the rolling-origin fits (-2 log likelihood scale) and their RMSE.

    The points after an origin share one extrapolation error (the prefix fit's), so each origin
    is one piece of evidence, not hundreds: it scores the Gaussian deviance ``log(MSE)`` of its
    forecasts, and the origins' scores are summed. The MSE includes the noise, so laws whose
    forecasts differ by less than the noise score alike, while a law whose forecasts miss by
    several noise levels loses a few units per origin."""
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


def _weights(
    sc: _Scores, cv_weight: float, fitted: dict[str, bool], rng: np.random.Generator,
    min_weight: float = 0.0,
) -> dict[str, float]:
    """Pseudo-BMA+ weights: Akaike weights of AICc + cv_weight * predictive score, averaged over
    a Bayesian bootstrap of the in-sample fit.

    The bootstrap puts Dirichlet weights on the bins with concentration counts / inflation (so
    the total is the effective sample size under autocorrelation). Laws whose in-sample
    advantage rests on a few points or is within the noise then share the weight, instead of
    one taking it all on a small difference in AICc."""
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


# ---- step 4: bootstrap --------------------------------------------------------------------------
def _bootstrap(
    points: dict[str, _Point], models: dict[str, tuple[Array, Array, float]], x: Array,
    bins: Bins, signs: Array, burn: NDArray[np.intp], settings: FitSettings, f_scale: float,
) -> dict[str, Array]:
    """Refit each law in ``models`` to (its fit + sieve-bootstrap noise), warm-started from its
    point estimate; all the laws' resamples in one batch."""
    n = x.shape[0]
    problems = []
    for name, (phi, innov, _) in models.items():
        law, theta = LAWS[name], points[name].theta
        innov = innov * math.sqrt(n / max(n - phi.shape[0], 1))
        y_star = bins.mean(law(x, theta) + sieve_noise(phi, innov, signs, burn))
        problems.append((law, y_star, bins.counts, np.tile(theta, (signs.shape[0], 1))))
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


# ---- assembling results -------------------------------------------------------------------------
def _law_fit(
    law: Law, point: _Point | None, boot: Array | None, rss: dict[str, float],
    aicc: dict[str, float], cv_rmse: dict[str, float], weights: dict[str, float],
    norm: Normalisation, settings: FitSettings, n: int, curve_flags: tuple[str, ...],
    se_lin: Array | None = None,
) -> LawFit:
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
    params = {}
    stalled = []
    for i, p in enumerate(law.params):
        wald = None
        if se_lin is not None and draws.shape[0] >= 10:
            qlo, qhi = np.quantile(draws[:, i], [0.05, 0.95])
            if (qhi - qlo) / (2 * _Z90) < _STALL * se_lin[i]:
                stalled.append(p.name)
                z = float(ndtri((1 + settings.confidence) / 2))
                wald = (theta[i] - z * se_lin[i], theta[i] + z * se_lin[i])
        est = _param_estimate(p, theta[i], draws[:, i], norm, settings.confidence, wald)
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
        rss=rss.get(name, math.nan) * norm.scale**2, aicc=aicc.get(name, math.nan),
        cv_error=cv_rmse.get(name, math.nan) * norm.scale, weight=weights.get(name, 0.0),
        converged=bool(point is not None and point.converged), theta_boot=draws,
        flags=tuple(flags),
    )


_STALL = 0.5  # bootstrap spread below this fraction of the linearised one: refits stalled
_Z90 = 1.6448536269514722


def _linear_se(law: Law, x: Array, theta: Array, sigma2: float, infl: float) -> Array | None:
    """Linearised standard errors of the parameters (fitting coordinates): sigma^2 * inflation *
    (J'J)^-1, the scale the bootstrap spread should reach when refits are not stuck."""
    with np.errstate(all="ignore"):
        jac = law.jacobian(x, theta)
    if not (np.all(np.isfinite(jac)) and math.isfinite(sigma2)):
        return None
    cov = np.linalg.pinv(jac.T @ jac, rcond=1e-12, hermitian=True) * sigma2 * infl
    return np.sqrt(np.maximum(np.diagonal(cov), 0.0))


def _param_estimate(
    p, value: float, draws: Array, norm: Normalisation, conf: float,
    wald: tuple[float, float] | None = None,
) -> Estimate:
    """Point value and percentile interval in user units; not identified when the estimate or
    its interval reaches a bound (the data do not hold the parameter in). ``wald``: a wider
    interval (fitting coordinates) to take the union with, when the bootstrap stalled."""
    kw = dict(loc=norm.loc, scale=norm.scale, sign=norm.sign, c_ref=norm.c_ref, offset=norm.offset)
    if not math.isfinite(value):
        return Estimate(math.nan, identified=False)
    tol = 1e-3 * (p.upper - p.lower)
    on_bound = value <= p.lower + tol or value >= p.upper - tol
    lo = hi = math.nan
    if draws.size:
        qlo, qhi = np.quantile(draws, [(1 - conf) / 2, (1 + conf) / 2])
        if wald is not None:
            qlo, qhi = min(qlo, wald[0]), max(qhi, wald[1])
        on_bound |= bool(qlo <= p.lower + tol or qhi >= p.upper - tol)
        ends = natural_value(p.kind, np.array([qlo, qhi]), **kw)
        lo, hi = float(ends.min()), float(ends.max())
    val = float(natural_value(p.kind, value, **kw))
    return Estimate(val, lo, hi, identified=not on_bound)


def _asymptote(fit: CurveFit, y_range: float, conf: float) -> Estimate:
    """Weighted over laws with a finite asymptote; not identified when most weight is elsewhere,
    the dominant asymptotes sit on their bounds, or the interval is huge."""
    cands = []
    for i, lf in enumerate(fit.laws):
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
        lo_n, hi_n = _weighted_quantile(np.concatenate(vals), np.concatenate(wts),
                                        [(1 - conf) / 2, (1 + conf) / 2])
        lo, hi = sorted(float(v) for v in fit.norm.value(np.array([lo_n, hi_n])))
    width_ok = math.isfinite(lo) and math.isfinite(hi) and (
        (hi - lo) / fit.norm.scale <= 4.0 * y_range + 1e-9
    )
    identified = share >= 0.5 and held >= 0.5 * share and width_ok
    return Estimate(float(fit.norm.value(value)), lo, hi, identified=bool(identified))


def _start_level(fit: CurveFit, conf: float) -> Estimate:
    value = float(fit.predict(fit.compute_first)[0])
    lo, hi = fit.interval(fit.compute_first, conf)
    return Estimate(value, float(lo[0]), float(hi[0]), identified=True)


def _weighted_quantile(values: Array, weights: Array, qs: list[float]) -> Array:
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w) / w.sum()
    idx = np.minimum(np.searchsorted(cum, qs, side="left"), v.shape[0] - 1)
    return v[idx]
