"""Per-curve saturation analysis: gain per doubling, ROI stage, knee, stop point, headroom, verdict.

Everything works on the larger-is-better scale (:mod:`saturate.vocabulary.direction`), so a gain
is positive when the metric improves. The gain per doubling ``G = f(2C) - f(C)`` (``C`` the last
compute, ``f`` the model-averaged fit) has an interval from the bootstrap widened by the fit's
rolling-origin extrapolation error and the seed spread; :mod:`.quantities` holds the definitions.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from saturate.analysis.refine import refine
from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.verdict import Evidence, decide_verdict, fit_matches_trend
from saturate.errors import SaturateError, SettingsError
from saturate.fit import CurveFit, fit_curve
from saturate.fit.domain import FORECAST_HORIZON
from saturate.measure.collapse import detect_collapse
from saturate.measure.quantities import (
    Predict,
    elasticity,
    find_knee,
    find_stop_point,
    gain_per_doubling,
    headroom,
    honest_forecast,
    noise_range,
    recent_slope,
    roi_stage,
    share_above,
    smoothed_range,
    stop_point_note,
    threshold_for,
)
from saturate.measure.trend import noise_sd, thin, trend_test
from saturate.results import (
    Collapse,
    CurveAnalysis,
    Direction,
    Estimate,
    ForecastPoint,
    LawSummary,
    Trend,
)
from saturate.table.curves import PARAM_PREFIX, is_compute_sorted
from saturate.vocabulary.direction import metric_direction, signed
from saturate.vocabulary.domains import Domain, metric_domain

_NOT_ESTIMATED = Estimate(math.nan, identified=False)
_FIT_ERRORS = (SaturateError, ValueError, RuntimeError, FloatingPointError, np.linalg.LinAlgError)


def analyze_curve(points: pd.DataFrame, settings: AnalysisSettings) -> CurveAnalysis:
    """Analyse the tidy rows of ONE curve; a pure function of the points and the settings.

    Curves too short or without variation get ``inconclusive`` with the reason, not an error.
    """
    if points.empty:
        raise SettingsError("analyze_curve: got an empty curve")
    obs = _observe(points, settings)
    base = _base_fields(obs, settings.group_by)
    degenerate = _degenerate(obs, settings)
    if degenerate is not None:
        why, flag = degenerate
        return CurveAnalysis(
            verdict="inconclusive", reasons=(why,), flags=(flag,), gain_per_doubling=_NOT_ESTIMATED,
            asymptote=_NOT_ESTIMATED, headroom=_NOT_ESTIMATED, roi=math.nan, roi_stage="unknown",
            **base,
        )
    free = _model_free(obs, settings)
    fit, fit_error = _try_fit(obs, settings)
    fitted = _Fitted() if fit is None else _fitted(fit, obs, free, settings)
    ev = _evidence(obs, free, fitted, settings)
    verdict, reasons = decide_verdict(ev)
    reasons, flags = _notes(reasons, ev, obs, free, fit, fit_error)
    note = stop_point_note(verdict, fitted.stop, obs.compute[-1], fitted.gain, obs.threshold)
    reasons = (*reasons, note) if note else reasons
    result = CurveAnalysis(
        verdict=verdict, reasons=reasons,
        gain_per_doubling=fitted.gain if fitted.gain is not None else _NOT_ESTIMATED,
        asymptote=fitted.asymptote, headroom=fitted.headroom, roi=fitted.roi,
        roi_stage=roi_stage(fitted.roi), knee=fitted.knee, stop_point=fitted.stop,
        forecast=fitted.forecast, laws=fitted.laws, trend=free.trend,
        collapse=_in_metric_units(free.collapse, obs.direction), flags=flags, fit=fit, **base,
    )
    # the call weighs P(next doubling pays) (saturate.analysis.refine); the group prior of the
    # curve's siblings is added once the whole table is analysed (saturate.analysis.table)
    return refine(result, None, settings.decision, None, settings.confidence, settings.seed)


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
    threshold: float
    threshold_text: str
    run_status: str | None
    kept: np.ndarray
    domain: Domain | None = None
    domain_note: str = ""


def _observe(points: pd.DataFrame, settings: AnalysisSettings) -> _Observed:
    pts = points if is_compute_sorted(points) else points.sort_values(["compute", "step"],
                                                                     kind="stable")
    metric = str(pts.iloc[0]["metric"])
    direction = metric_direction(metric, settings.lower_is_better, settings.higher_is_better)
    y = pts["value"].to_numpy(float)
    c = pts["compute"].to_numpy(float)
    threshold, text = threshold_for(metric, y, settings)
    status = pts.iloc[0].get("run_status") if "run_status" in pts.columns else None
    domain, note = metric_domain(metric, y, settings.domains)
    return _Observed(
        points=pts, metric=metric, direction=direction, compute=c,
        value=y, signed=signed(y, direction), steps=pts["step"].to_numpy(),
        threshold=float(threshold), threshold_text=text,
        run_status=None if status is None or pd.isna(status) else str(status), kept=thin(c),
        domain=domain, domain_note=note,
    )


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
        "threshold": obs.threshold,
        "run_status": obs.run_status,
        "group": _group_info(pts, group_by),
        "points": pts,
        "domain": None if obs.domain is None else (obs.domain.lo, obs.domain.hi),
    }


def _group_info(points: pd.DataFrame, group_by: str | None) -> dict[str, Any] | None:
    """The seeds pooled into this curve (:func:`saturate.analysis.seeds.pool_seeds`)."""
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


def _degenerate(obs: _Observed, settings: AnalysisSettings) -> tuple[str, str] | None:
    """The reason and flag of a curve too short or too flat to analyse, else None."""
    n, n_pos = len(obs.points), int(np.sum(obs.compute > 0))
    if n < settings.min_points or n_pos < settings.min_points:
        return (f"only {n} point(s) ({n_pos} with positive compute); at least "
                f"{settings.min_points} are needed", "too_few_points")
    if np.ptp(obs.value) == 0:
        return (f"the metric never changes (constant {obs.value[0]:.4g}); nothing to extrapolate",
                "constant")
    return None


# ---- model-free evidence ------------------------------------------------------------------------


@dataclass(frozen=True)
class _ModelFree:
    """What the curve shows without a law (larger-is-better scale)."""

    seed_se: float
    trend: Trend | None
    span: float
    noise: float
    collapse: Collapse | None


def _model_free(obs: _Observed, settings: AnalysisSettings) -> _ModelFree:
    k = obs.kept
    c, ys = obs.compute[k], obs.signed[k]
    seed_se = seed_doubling_se(obs.points)
    span = smoothed_range(obs.value)
    return _ModelFree(
        seed_se=seed_se,
        trend=trend_test(c, ys, confidence=settings.confidence, extra_se=seed_se),
        span=span,
        noise=noise_sd(obs.signed),
        collapse=detect_collapse(c, ys, steps=obs.steps[k], scale=span,
                                 confidence=settings.confidence),
    )


def seed_doubling_se(points: pd.DataFrame) -> float:
    """The spread across seeds of the gain per doubling (median of the last three), 0 without."""
    if "doubling_se" not in points.columns:
        return 0.0
    d = pd.to_numeric(points["doubling_se"], errors="coerce").to_numpy(float)
    d = d[np.isfinite(d)]
    return float(np.median(d[-3:])) if d.size else 0.0


# ---- the fit and what it says -------------------------------------------------------------------


def _try_fit(obs: _Observed, settings: AnalysisSettings) -> tuple[CurveFit | None, str]:
    """The fit, or None and the reason why no law could be fitted."""
    try:
        bounds = None if obs.domain is None else (obs.domain.lo, obs.domain.hi)
        return fit_curve(obs.compute[obs.kept], obs.value[obs.kept], direction=obs.direction,
                         settings=settings.fit_settings(bounds)), ""
    except _FIT_ERRORS as e:
        return None, f"no law could be fitted ({e}); the verdict rests on the trend test alone"


@dataclass(frozen=True)
class _Fitted:
    """What the fit says about the curve (defaults: no law fitted). ``gain``, ``p_above``,
    ``fit_recent``, ``roi`` and ``level_above`` (``f(C) - R0``) are larger-is-better."""

    gain: Estimate | None = None
    p_above: float | None = None
    fit_recent: float | None = None
    roi: float = math.nan
    level_above: float = math.nan
    knee: float | None = None
    stop: Estimate | None = None
    forecast: tuple[ForecastPoint, ...] = ()
    laws: tuple[LawSummary, ...] = ()
    asymptote: Estimate = _NOT_ESTIMATED
    headroom: Estimate = _NOT_ESTIMATED


def _signed_predictions(fit: CurveFit, direction: Direction) -> tuple[Predict, Predict]:
    """The fit's prediction and its bootstrap draws on the larger-is-better scale."""

    def f(x: np.ndarray) -> np.ndarray:
        return signed(np.asarray(fit.predict(np.asarray(x, dtype=float)), dtype=float), direction)

    def fs(x: np.ndarray) -> np.ndarray:
        draws = fit.predict_samples(np.asarray(x, dtype=float))
        return signed(np.asarray(draws, dtype=float), direction)

    return f, fs


def _fitted(
    fit: CurveFit, obs: _Observed, free: _ModelFree, settings: AnalysisSettings
) -> _Fitted:
    """Gain per doubling, ROI, knee, stop point, forecasts and headroom from the fit."""
    c, direction, conf = obs.compute, obs.direction, settings.confidence
    last, first_pos = float(c[-1]), float(c[c > 0][0])
    f, fs = _signed_predictions(fit, direction)
    extrap = fit.extrapolation_se
    gain_se = math.hypot(free.seed_se, extrap if math.isfinite(extrap) else 0.0)
    start = fit.start_level.value
    r0 = float(signed(start, direction) if math.isfinite(start) else f(np.array([first_pos]))[0])
    level_last = float(fit.predict(np.array([last]))[0])
    trend = free.trend
    return _Fitted(
        gain=gain_per_doubling(f, fs, last, conf, extra_se=gain_se),
        p_above=share_above(fs, last, obs.threshold, extra_se=gain_se),
        fit_recent=None if trend is None else recent_slope(f, trend.compute_from,
                                                           trend.compute_to, c[obs.kept]),
        roi=float(elasticity(f, last, r0)[0]),
        level_above=float(f(np.array([last]))[0]) - r0,
        knee=find_knee(f, r0, first_pos, last),
        stop=find_stop_point(f, fs, first_pos, FORECAST_HORIZON * last, obs.threshold, conf),
        forecast=honest_forecast(
            fit.forecast(tuple(settings.forecast_at)), last, level_last, gain_se, conf,
            domain=None if obs.domain is None else (obs.domain.lo, obs.domain.hi),
        ),
        laws=fit.law_summaries(),
        asymptote=fit.asymptote,
        headroom=headroom(fit.asymptote, level_last, direction),
    )


# ---- the verdict and its notes ------------------------------------------------------------------


def _evidence(
    obs: _Observed, free: _ModelFree, fitted: _Fitted, settings: AnalysisSettings
) -> Evidence:
    """What :func:`~saturate.analysis.verdict.decide_verdict` weighs."""
    return Evidence(
        threshold=obs.threshold, threshold_text=obs.threshold_text, gain=fitted.gain,
        trend=free.trend, collapse=free.collapse, roi=fitted.roi, scale=free.span,
        fit_recent=fitted.fit_recent, confidence=settings.confidence, p_above=fitted.p_above,
        noise=free.noise, level_above_start=fitted.level_above,
        noise_range=noise_range(len(obs.signed), free.noise, seed=settings.seed),
    )


def _notes(
    reasons: tuple[str, ...], ev: Evidence, obs: _Observed, free: _ModelFree,
    fit: CurveFit | None, fit_error: str,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The verdict's reasons with what else the reader should know, and the curve's flags."""
    flags: list[str] = ["fit_failed"] if fit is None else list(fit.flags)
    if fit_matches_trend(ev) is False:
        flags.append("fit_misses_recent_trend")
    if fit is None:
        reasons = (fit_error, *reasons)
    reasons = (*reasons, *domain_reasons(obs.domain, obs.domain_note, fit))
    if free.seed_se > 0:
        reasons = (*reasons,
                   f"spread across seeds adds {free.seed_se:.3g} (standard error) per doubling")
    if obs.run_status == "RUNNING":
        flags.append("run_in_progress")
        reasons = (*reasons, "the run is still RUNNING: its curve is partial and this may change")
    if free.collapse is not None:
        flags.append("collapse")
    if obs.kept.shape[0] < obs.compute.shape[0]:
        flags.append(f"thinned:{obs.compute.shape[0]}->{obs.kept.shape[0]}")
    return reasons, tuple(dict.fromkeys(flags))


def _in_metric_units(collapse: Collapse | None, direction: Direction) -> Collapse | None:
    """The collapse with its levels back in the metric's own units (the drop stays positive)."""
    if collapse is None:
        return None
    return dataclasses.replace(
        collapse, level_before=float(signed(collapse.level_before, direction)),
        level_after=float(signed(collapse.level_after, direction)))


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
