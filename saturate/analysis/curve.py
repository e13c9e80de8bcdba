"""One curve from its points to its call: observe, measure, fit, gather the evidence
(:class:`~saturate.measure.evidence.Evidence`), decide (:func:`saturate.decide.decide`).

Everything is measured on the larger-is-better scale (:mod:`saturate.vocabulary.names`), so
a gain is positive when the metric improves. :func:`analyze_curve` is a pure function of the
points and the settings; :func:`with_decision` lays a decision (alone, or later with the
siblings' prior) over a result, so every command reaches a curve's call through one path.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from saturate.analysis.settings import AnalysisSettings
from saturate.decide import GroupPrior, decide
from saturate.decide.decision import Decision
from saturate.errors import SaturateError, SettingsError
from saturate.fit import CurveFit, fit_curve
from saturate.fit.domain import FORECAST_HORIZON
from saturate.measure.collapse import detect_collapse
from saturate.measure.evidence import (
    Evidence,
    backtest,
    bounds_of,
    curvature_sd,
    fit_knee,
    misfit_sd,
    recent_noise,
    se_of,
    window_sd,
)
from saturate.measure.quantities import (
    Predict,
    Threshold,
    find_stop_point,
    gain_per_doubling,
    headroom,
    honest_forecast,
    project,
    smoothed_range,
    threshold_for,
)
from saturate.measure.trend import noise_sd, post_drop_trend, thin, trend_test
from saturate.results import (
    Collapse,
    CurveAnalysis,
    Direction,
    Estimate,
    ForecastPoint,
    LawSummary,
    Pooling,
    Trend,
)
from saturate.table.curves import PARAM_PREFIX, is_compute_sorted
from saturate.vocabulary.domains import Domain, metric_domain
from saturate.vocabulary.names import metric_direction, signed

_NOT_ESTIMATED = Estimate(math.nan, identified=False)
_FIT_ERRORS = (SaturateError, ValueError, RuntimeError, FloatingPointError, np.linalg.LinAlgError)


def analyze_curve(points: pd.DataFrame, settings: AnalysisSettings) -> CurveAnalysis:
    """Analyse the tidy rows of ONE curve; a pure function of the points and the settings.

    A curve too short to judge gets ``inconclusive`` with the reason, not an error.
    """
    if points.empty:
        raise SettingsError("analyze_curve: got an empty curve")
    obs = _observe(points, settings)
    base = _base_fields(obs, settings.group_by)
    n_pos = int(np.sum(obs.compute > 0))
    why = ""
    if len(obs.points) < settings.min_points or n_pos < settings.min_points:
        why = (f"only {len(obs.points)} point(s) ({n_pos} with positive compute); at least "
               f"{settings.min_points} are needed")
        flag = "too_few_points"
    elif np.ptp(obs.value) == 0 and not obs.threshold.value > 0:
        why = (f"the metric never changes (constant {obs.value[0]:.4g}) and has no level to take "
               "a share of: no threshold to weigh a gain against")
        flag = "constant"
    if why:
        t = obs.threshold
        ev = Evidence(threshold=t.value, share=t.share, reference=t.reference, basis=t.basis,
                      anchor=t.anchor, scale=math.nan, level=obs.value[-1],
                      direction=obs.direction, why=why)
        result = CurveAnalysis(
            verdict="inconclusive", reasons=(why,), flags=(flag,),
            gain_per_doubling=_NOT_ESTIMATED, asymptote=_NOT_ESTIMATED, headroom=_NOT_ESTIMATED,
            roi=math.nan, roi_stage="unknown", evidence=ev, **base)
        return with_decision(result, decide(ev, None, settings.decision, settings.confidence))
    free = _model_free(obs, settings)
    fit, fit_error = _try_fit(obs, settings)
    fitted = _Fitted() if fit is None else _fitted(fit, obs, free, settings)
    ev = _evidence(obs, free, fitted, fit, fit_error, settings)
    result = CurveAnalysis(
        verdict="inconclusive", reasons=(), gain_per_doubling=_NOT_ESTIMATED,
        asymptote=fitted.asymptote, headroom=fitted.headroom, roi=math.nan,
        roi_stage="unknown", forecast=fitted.forecast, laws=fitted.laws, trend=free.trend,
        collapse=free.collapse, flags=_flags(obs, free, fit, fitted, ev), fit=fit, evidence=ev,
        **base)
    return with_decision(result, decide(ev, None, settings.decision, settings.confidence))


def with_decision(result: CurveAnalysis, d: Decision, prior: GroupPrior | None = None
                  ) -> CurveAnalysis:
    """``result`` with the verdict, P(pays), reasons, gain, ROI, knee, stop point and forecasts
    of the decision ``d`` (made with ``prior``, if any)."""
    ev = result.evidence
    forecast = result.forecast
    if ev is not None and math.isfinite(d.gain.value):
        forecast = project(ev.level, ev.direction, d.gain, (ev.lower, ev.upper), result.forecast,
                           result.compute_last, _fit_shape(result))
    return dataclasses.replace(
        result, verdict=d.verdict, reasons=d.reasons, gain_per_doubling=d.gain, roi=d.roi,
        roi_stage=d.stage, knee=d.knee, stop_point=d.stop_point, forecast=forecast, decision=d,
        pooling=result.pooling if prior is None else _pooling(d, prior))


def _pooling(d: Decision, prior: GroupPrior) -> Pooling:
    return Pooling(runs=tuple(prior.runs), n=prior.n, pooled=d.pooled, mean=prior.mean,
                   sd=math.sqrt(prior.var), spread=math.sqrt(prior.tau2),
                   disagreement=d.disagreement)


# ---- what was observed --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Observed:
    """One curve's points sorted by compute and what is read off them: the values as logged and
    ``signed`` (larger is better), the threshold, and the points ``kept`` for the tests and fit."""

    points: pd.DataFrame
    metric: str
    direction: Direction
    compute: np.ndarray
    value: np.ndarray
    signed: np.ndarray
    steps: np.ndarray
    threshold: Threshold
    run_status: str | None
    kept: np.ndarray
    run_url: str | None = None
    domain: Domain | None = None
    domain_note: str = ""


def _observe(points: pd.DataFrame, settings: AnalysisSettings) -> _Observed:
    pts = points if is_compute_sorted(points) else points.sort_values(["compute", "step"],
                                                                     kind="stable")
    metric = str(pts.iloc[0]["metric"])
    direction = metric_direction(metric, settings.lower_is_better, settings.higher_is_better)
    y = pts["value"].to_numpy(float)
    c = pts["compute"].to_numpy(float)
    status = _fact(pts, "run_status")
    domain, note = metric_domain(metric, y, settings.domains)
    return _Observed(
        points=pts, metric=metric, direction=direction, compute=c,
        value=y, signed=signed(y, direction), steps=pts["step"].to_numpy(),
        threshold=threshold_for(metric, y, settings, seed=settings.seed),
        run_status=status, kept=thin(c), domain=domain, domain_note=note,
        run_url=_fact(pts, "run_url"),
    )


def _fact(pts: pd.DataFrame, column: str) -> str | None:
    """The run fact ``column`` of a curve's points (on every row), None when unknown."""
    value = pts[column].iloc[0] if column in pts.columns else None
    return None if value is None or pd.isna(value) else str(value)


def _base_fields(obs: _Observed, group_by: str | None) -> dict[str, Any]:
    """The fields every result has, whatever the analysis finds (the caller names the x axis)."""
    pts, c = obs.points, obs.compute
    first = pts.iloc[0]
    return {
        "source": str(first["source"]),
        "experiment": str(first["experiment"]),
        "run_id": str(first["run_id"]),
        "run": str(first["run"]),
        "metric": obs.metric,
        "direction": obs.direction,
        "n_points": int(len(pts)),
        "compute_first": float(c[0]),
        "compute_last": float(c[-1]),
        "value_last": float(obs.value[-1]),
        "threshold": obs.threshold.value,
        "run_status": obs.run_status,
        "run_url": obs.run_url,
        "group": _group_info(pts, group_by),
        "points": pts,
        "domain": None if obs.domain is None else (obs.domain.lo, obs.domain.hi),
    }


def _group_info(points: pd.DataFrame, group_by: str | None) -> dict[str, Any] | None:
    """The seeds averaged into this curve (:func:`saturate.analysis.seed_mean.pool_seeds`)."""
    if "n_seeds" not in points.columns:
        return None
    by = None if not group_by else next(
        (c for c in (group_by, PARAM_PREFIX + group_by) if c in points.columns), None)
    n = int(points["n_seeds"].iloc[0])
    runs = str(points["group_runs"].iloc[0]) if "group_runs" in points.columns else ""
    info: dict[str, Any] = {"n_seeds": n, "runs": runs.split("; ") if runs else []}
    if by and by in points.columns:
        info["by"] = by
        info["value"] = points[by].iloc[0]
    return info


# ---- model-free evidence ------------------------------------------------------------------------


@dataclass(frozen=True)
class _ModelFree:
    """What the curve shows without a law (larger-is-better scale): the seeds' spread of a
    doubling's gain, the recent trend, the range, today's and the history's noise, and a
    collapse (in metric units)."""

    seed_se: float
    trend: Trend | None
    span: float
    noise: float
    noise_history: float
    collapse: Collapse | None


def _model_free(obs: _Observed, settings: AnalysisSettings) -> _ModelFree:
    k = obs.kept
    c, ys = obs.compute[k], obs.signed[k]
    seed_se = seed_doubling_se(obs.points)
    span = smoothed_range(obs.value)
    collapse = detect_collapse(c, ys, steps=obs.steps[k], scale=span,
                               confidence=settings.confidence)
    return _ModelFree(
        seed_se=seed_se,
        trend=trend_test(c, ys, confidence=settings.confidence, extra_se=seed_se),
        span=span, noise=recent_noise(c, ys), noise_history=noise_sd(obs.signed),
        collapse=None if collapse is None else _in_metric_units(collapse, obs.direction),
    )


def seed_doubling_se(points: pd.DataFrame) -> float:
    """The spread across seeds of the gain per doubling (median of the last three), 0 without."""
    if "doubling_se" not in points.columns:
        return 0.0
    d = pd.to_numeric(points["doubling_se"], errors="coerce").to_numpy(float)
    d = d[np.isfinite(d)]
    return float(np.median(d[-3:])) if d.size else 0.0


def _in_metric_units(collapse: Collapse, direction: Direction) -> Collapse:
    """The collapse with its levels back in the metric's own units (the drop stays positive)."""
    return dataclasses.replace(
        collapse, level_before=float(signed(collapse.level_before, direction)),
        level_after=float(signed(collapse.level_after, direction)))


# ---- the fit and what it says -------------------------------------------------------------------


def _try_fit(obs: _Observed, settings: AnalysisSettings) -> tuple[CurveFit | None, str]:
    """The fit, or None and the reason why no law could be fitted."""
    try:
        bounds = None if obs.domain is None else (obs.domain.lo, obs.domain.hi)
        return fit_curve(obs.compute[obs.kept], obs.value[obs.kept], direction=obs.direction,
                         settings=settings.fit_settings(bounds)), ""
    except _FIT_ERRORS as e:
        return None, f"no law could be fitted ({e}); the call rests on the recent trend alone"


@dataclass(frozen=True)
class _Fitted:
    """What the fit says about the curve (defaults: no law fitted), larger-is-better where a
    gain: the next doubling's ``gain`` (bootstrap, extrapolation error and seed spread), the
    ``last`` doubling's, the ``knee``, the ``stop`` point, the fit's own ``forecast``, ``laws``,
    ``asymptote``, ``headroom`` and the ``level`` at the last compute (metric units)."""

    gain: Estimate | None = None
    last: float = math.nan
    knee: float = math.nan
    stop: Estimate | None = None
    forecast: tuple[ForecastPoint, ...] = ()
    laws: tuple[LawSummary, ...] = ()
    asymptote: Estimate = _NOT_ESTIMATED
    headroom: Estimate = _NOT_ESTIMATED
    level: float = math.nan
    predict: Predict | None = None


def _signed_predictions(fit: CurveFit, direction: Direction) -> tuple[Predict, Predict]:
    """The fit's prediction and its bootstrap draws on the larger-is-better scale."""

    def f(x: np.ndarray) -> np.ndarray:
        return signed(np.asarray(fit.predict(np.asarray(x, dtype=float)), dtype=float), direction)

    def fs(x: np.ndarray) -> np.ndarray:
        draws = fit.predict_samples(np.asarray(x, dtype=float))
        return signed(np.asarray(draws, dtype=float), direction)

    return f, fs


def _fitted(fit: CurveFit, obs: _Observed, free: _ModelFree, settings: AnalysisSettings
            ) -> _Fitted:
    c, conf = obs.compute, settings.confidence
    last, first_pos = float(c[-1]), float(c[c > 0][0])
    f, fs = _signed_predictions(fit, obs.direction)
    extrap = fit.extrapolation_se
    gain_se = math.hypot(free.seed_se, extrap if math.isfinite(extrap) else 0.0)
    around = f(np.array([last / 2.0, last]))
    level = float(fit.predict(np.array([last]))[0])
    return _Fitted(
        gain=gain_per_doubling(f, fs, last, conf, extra_se=gain_se),
        last=float(around[1] - around[0]) if last / 2.0 >= first_pos else math.nan,
        knee=fit_knee(f, first_pos, last),
        stop=find_stop_point(f, fs, first_pos, FORECAST_HORIZON * last, obs.threshold.value,
                             conf),
        forecast=honest_forecast(
            fit.forecast(tuple(settings.forecast_at)), last, level, gain_se, conf,
            domain=None if obs.domain is None else (obs.domain.lo, obs.domain.hi),
        ),
        laws=fit.law_summaries(), asymptote=fit.asymptote,
        headroom=headroom(fit.asymptote, level, obs.direction), level=level, predict=f,
    )


# ---- the evidence ------------------------------------------------------------------------------


def _persistence(obs: _Observed, free: _ModelFree, conf: float) -> Trend | None:
    """The recent trend as an estimate of the next doubling; after a collapse, the trend since
    the drop (the drop itself does not repeat)."""
    if free.collapse is None:
        return free.trend
    k = obs.kept
    return post_drop_trend(obs.compute[k], obs.signed[k], free.collapse.compute, confidence=conf)


def _evidence(obs: _Observed, free: _ModelFree, fitted: _Fitted, fit: CurveFit | None,
              fit_error: str, settings: AnalysisSettings) -> Evidence:
    """What :func:`~saturate.decide.decide` weighs (see :class:`Evidence`)."""
    conf, k = settings.confidence, obs.kept
    c, ys = obs.compute[k], obs.signed[k]
    level = fitted.level if math.isfinite(fitted.level) else float(
        np.mean(obs.value[-max(1, obs.value.size // 10):]))
    domain = None if obs.domain is None else (obs.domain.lo, obs.domain.hi)
    if domain is not None:
        level = min(max(level, domain[0]), domain[1])
    lower, upper = bounds_of(level, obs.direction, domain)
    held = _held_at_maximum(ys)
    if held:
        level, upper = float(obs.value[-1]), min(upper, 0.0)
    g = fitted.gain
    fit_se = math.nan
    if g is not None and g.identified:
        misfit = 0.0
        if free.trend is not None and fitted.predict is not None and free.collapse is None:
            misfit = misfit_sd(fitted.predict, c, free.trend, conf)
        fit_se = math.hypot(se_of(g, conf), misfit)
    tr = _persistence(obs, free, conf)
    trend_se = math.nan
    if tr is not None:
        bend = 0.0 if free.collapse is not None else curvature_sd(c, ys, tr, conf)
        trend_se = math.hypot(se_of(tr.slope_per_doubling, conf), bend)
    t = tr.slope_per_doubling if tr is not None else None
    falling = (free.trend is not None and free.trend.slope_per_doubling.hi < 0
               and free.trend.slope_per_doubling.value < -obs.threshold.value)
    since = c >= free.collapse.compute if free.collapse is not None else np.ones(c.size, bool)
    # what the doublings did beyond the curve's smooth shape: the backtest runs on the points
    # less the fit (the fit's own out-of-sample error is in fit_se), else on the points
    beyond = ys - fitted.predict(c) if fitted.predict is not None else ys
    if not np.all(np.isfinite(beyond)):
        beyond = ys
    history_n, history = backtest(c[since], beyond[since])  # the past of today's regime
    last_gain = fitted.last if math.isfinite(fitted.last) else (
        t.value if t is not None else math.nan)
    return Evidence(
        threshold=obs.threshold.value, share=obs.threshold.share,
        reference=obs.threshold.reference, basis=obs.threshold.basis,
        anchor=obs.threshold.anchor, scale=free.span,
        level=float(level), direction=obs.direction,
        moved=obs.threshold.basis in ("range", "units"), lower=lower, upper=upper,
        fit_gain=float(g.value) if g is not None and math.isfinite(fit_se) else math.nan,
        fit_se=fit_se,
        trend_gain=float(t.value) if t is not None and math.isfinite(trend_se) else math.nan,
        trend_se=trend_se, noise=free.noise, window_sd=window_sd(c, ys, free.noise),
        history_n=history_n, history_excess=history, last_gain=float(last_gain),
        fit_knee=fitted.knee, compute_last=float(obs.compute[-1]), stop_point=fitted.stop,
        trend=tr, collapse=free.collapse, falling=bool(falling),
        notes=_notes(obs, free, fit, fit_error) + ((
            f"held at its maximum {obs.value[-1]:.4g} for its last {held} points: a ceiling "
            "the next doubling is not expected to pass",) if held else ()),
    )


def _held_at_maximum(ys: np.ndarray) -> int:
    """How many of the last points sit exactly at the curve's maximum (larger-is-better) when
    they are the last quarter or more (at least 8): a metric held at a ceiling, such as an
    environment's top score; 0 otherwise."""
    k = max(8, ys.size // 4)
    if ys.size < 2 * k or ys[-1] < np.max(ys):
        return 0
    at = np.flatnonzero(ys != ys[-1])
    held = ys.size - (int(at[-1]) + 1 if at.size else 0)
    return held if held >= k else 0


def _notes(obs: _Observed, free: _ModelFree, fit: CurveFit | None, fit_error: str
           ) -> tuple[str, ...]:
    """What the reader should know about the data whatever the call."""
    out = [fit_error] if fit is None else []
    out += domain_reasons(obs.domain, obs.domain_note, fit)
    if free.seed_se > 0:
        pts = obs.points
        of = str(pts["spread_of"].iloc[0]) if "spread_of" in pts.columns else "seeds"
        out.append(f"spread across {of} adds {free.seed_se:.3g} (standard error) per doubling")
    if obs.run_status == "RUNNING":
        out.append("the run is still RUNNING: its curve is partial and this may change")
    return tuple(out)


def _flags(obs: _Observed, free: _ModelFree, fit: CurveFit | None, fitted: _Fitted,
           ev: Evidence) -> tuple[str, ...]:
    """The curve's flags: the fit's, and what else the data show."""
    flags: list[str] = ["fit_failed"] if fit is None else list(fit.flags)
    if fitted.predict is not None and free.trend is not None and math.isfinite(ev.fit_se):
        from saturate.measure.quantities import recent_slope

        s = free.trend.slope_per_doubling
        fr = recent_slope(fitted.predict, free.trend.compute_from, free.trend.compute_to,
                          obs.compute[obs.kept])
        if math.isfinite(fr) and not s.lo <= fr <= s.hi:
            flags.append("fit_misses_recent_trend")
    if obs.run_status == "RUNNING":
        flags.append("run_in_progress")
    if free.collapse is not None:
        flags.append("collapse")
    if obs.kept.shape[0] < obs.compute.shape[0]:
        flags.append(f"thinned:{obs.compute.shape[0]}->{obs.kept.shape[0]}")
    return tuple(dict.fromkeys(flags))


def domain_reasons(domain: Domain | None, note: str, fit: CurveFit | None) -> tuple[str, ...]:
    """What the reader should know where the domain binds: a domain refused by the data, laws
    that leave it, an asymptote held at one of its ends."""
    out = [note] if note else []
    if domain is None or fit is None:
        return tuple(out)
    gone = [lf.name for lf in fit.laws if any(f.startswith("outside_domain") for f in lf.flags)]
    if gone:
        out.append(f"{', '.join(gone)} left the metric's domain {domain.text} within the forecast "
                   f"horizon and got no weight")
    a = fit.asymptote.value
    width = domain.hi - domain.lo
    tol = 1e-6 * (width if math.isfinite(width) else max(abs(a), 1.0))
    for end in (domain.lo, domain.hi):
        if math.isfinite(end) and math.isfinite(a) and abs(a - end) <= tol:
            out.append(f"the asymptote is held at the end {end:g} of the metric's domain "
                       f"{domain.text}: the fit would go beyond it")
    return tuple(out)


# ---- the forecasts' shape ----------------------------------------------------------------------


def _fit_shape(analysis: CurveAnalysis) -> Any:
    """``h -> f(2^h C) - f(C)`` of the fitted laws on the larger-is-better scale (None without)."""
    fit = analysis.fit
    if fit is None:
        return None
    c = analysis.compute_last
    sign = 1.0 if analysis.direction == "higher" else -1.0

    def shape(h: float) -> float:
        p = np.asarray(fit.predict(np.array([c, c * 2.0**h])), dtype=float)
        return float(sign * (p[1] - p[0]))

    return shape


def projected_path(analysis: CurveAnalysis, computes: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The forecast the call reports (value, lo, hi) at each of ``computes`` beyond the last
    compute, so a drawn line passes through the reported forecasts; None without a call."""
    ev, d = analysis.evidence, analysis.decision
    if ev is None or d is None or not math.isfinite(d.gain.value):
        return None
    last = analysis.compute_last
    pts = tuple(ForecastPoint(float(c), float(c), ev.level, ev.level, ev.level) for c in computes)
    shape, fit = _fit_shape(analysis), analysis.fit
    hs = [1.0, *(math.log2(x / last) for x in computes if x > last)]
    if shape is not None and fit is not None and len(hs) >= 3:
        sign = 1.0 if analysis.direction == "higher" else -1.0
        p = np.asarray(fit.predict(np.array([last, *(last * 2.0**h for h in hs)])), dtype=float)
        known = {h: float(sign * (v - p[0])) for h, v in zip(hs, p[1:], strict=True)}
        slow = shape

        def shape(h: float) -> float:  # one prediction for the whole path
            return known[h] if h in known else slow(h)

    out = project(ev.level, ev.direction, d.gain, (ev.lower, ev.upper), pts, last, shape)
    return tuple(np.array([getattr(f, k) for f in out], dtype=float)  # type: ignore[return-value]
                 for k in ("value", "lo", "hi"))
