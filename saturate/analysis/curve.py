"""Per-curve saturation analysis: gain per doubling, ROI stage, knee, stop point, headroom, verdict.

Everything here works on the "larger is better" scale (see :mod:`saturate.analysis.direction`), so a gain is
positive when the metric improves, whichever way the metric points. Quantities (``C`` the last
observed compute, ``f`` the model-averaged fit, ``R0`` its starting level):

* gain per doubling ``G = f(2C) - f(C)``, interval from the fit's bootstrap draws widened in
  quadrature by the fit's rolling-origin extrapolation error per doubling (how far the fits of
  the curve's own prefixes missed the gain that followed) and the seed spread;
* threshold ``T``: ``--min-gain`` in metric units per doubling or ``N%`` of the range of the
  smoothed observed curve (default ``3%``);
* ROI, the elasticity ``d ln(f(C) - R0) / d ln C``, and its stage (initial > 1.5, transition
  0.8-1.5, knee 0.3-0.8, saturation < 0.3, negative < 0);
* knee: first compute where ROI falls below 0.8; stop point: first compute where
  ``f(2c) - f(c)`` falls below ``T`` (with an interval from the bootstrap draws);
* headroom: asymptote minus current level, when the asymptote is identified.

The verdict weighs the fit's gain against a model-free trend test and collapse detection
(:mod:`saturate.analysis.evidence`); :func:`decide_verdict` holds the rules and writes the reasons.
Forecasts beyond the data carry the same extrapolation error and are shrunk toward the current
level when they cannot be told from "no change" (:func:`honest_forecast`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from saturate.analysis.direction import metric_direction, signed
from saturate.analysis.evidence import detect_collapse, noise_sd, trend_test
from saturate.analysis.quantities import (
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
    threshold_for,
)
from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.verdict import Evidence, decide_verdict, fit_matches_trend
from saturate.curves import iter_curves
from saturate.errors import SaturateError, SettingsError
from saturate.results import (
    Collapse,
    CurveAnalysis,
    Direction,
    Estimate,
    ForecastPoint,
    LawSummary,
)

# ---------------------------------------------------------------------------------------------
# One curve


def _seed_doubling_se(points: pd.DataFrame) -> float:
    if "doubling_se" not in points.columns:
        return 0.0
    d = pd.to_numeric(points["doubling_se"], errors="coerce").to_numpy(float)
    d = d[np.isfinite(d)]
    return float(np.median(d[-3:])) if d.size else 0.0


def _group_info(points: pd.DataFrame) -> dict[str, Any] | None:
    if "n_seeds" not in points.columns:
        return None
    by = points.attrs.get("group_by")
    n = int(points["n_seeds"].iloc[0])
    runs = str(points["group_runs"].iloc[0]) if "group_runs" in points.columns else ""
    info: dict[str, Any] = {"n_seeds": n, "runs": runs.split("; ") if runs else []}
    if by and by in points.columns:
        info["by"] = by
        info["value"] = points[by].iloc[0]
    return info


def analyze_curve(points: pd.DataFrame, settings: AnalysisSettings) -> CurveAnalysis:
    """Analyse the tidy rows of ONE curve; a pure function of the points and the settings.

    Curves too short or without variation get ``inconclusive`` with the reason, not an error.
    """
    if points.empty:
        raise SettingsError("analyze_curve: got an empty curve")
    pts = points.sort_values(["compute", "step"], kind="stable")
    first = pts.iloc[0]
    metric = str(first["metric"])
    direction = metric_direction(metric, settings.lower_is_better, settings.higher_is_better)
    c = pts["compute"].to_numpy(float)
    y = pts["value"].to_numpy(float)
    steps = pts["step"].to_numpy()
    ys = signed(y, direction)
    threshold, thr_text = threshold_for(metric, y, settings)
    status = first.get("run_status") if "run_status" in pts.columns else None
    base: dict[str, Any] = {
        "source": str(first["source"]),
        "experiment": str(first["experiment"]),
        "run_id": str(first["run_id"]),
        "run": str(first["run"]),
        "metric": metric,
        "direction": direction,
        "n_points": int(len(pts)),
        "compute_first": float(c[0]),
        "compute_last": float(c[-1]),
        "value_last": float(y[-1]),
        "threshold": float(threshold),
        "run_status": None if status is None or pd.isna(status) else str(status),
        "group": _group_info(pts),
        "compute_name": str(points.attrs.get("compute_name", "step")),
        "points": pts,
    }
    nan_est = Estimate(math.nan, identified=False)
    empty = {
        "gain_per_doubling": nan_est,
        "asymptote": nan_est,
        "headroom": nan_est,
        "roi": math.nan,
        "roi_stage": "unknown",
    }
    n_pos = int(np.sum(c > 0))
    if len(pts) < settings.min_points or n_pos < settings.min_points:
        why = (
            f"only {len(pts)} point(s) ({n_pos} with positive compute); "
            f"at least {settings.min_points} are needed"
        )
        return CurveAnalysis(
            verdict="inconclusive", reasons=(why,), flags=("too_few_points",), **base, **empty
        )
    if np.ptp(y) == 0:
        why = f"the metric never changes (constant {y[0]:.4g}); nothing to extrapolate"
        return CurveAnalysis(
            verdict="inconclusive", reasons=(why,), flags=("constant",), **base, **empty
        )

    flags: list[str] = []
    seed_se = _seed_doubling_se(pts)
    trend = trend_test(c, ys, confidence=settings.confidence, extra_se=seed_se)
    span = smoothed_range(y)
    collapse = detect_collapse(c, ys, steps=steps, scale=span, confidence=settings.confidence)

    fit = None
    try:
        fit = _fit(c, y, direction, settings)
    except (
        SaturateError,
        ValueError,
        RuntimeError,
        FloatingPointError,
        np.linalg.LinAlgError,
    ) as e:
        flags.append("fit_failed")
        fit_error = f"no law could be fitted ({e}); the verdict rests on the trend test alone"
    last = float(c[-1])
    gain = None
    p_above = None
    fit_recent = None
    roi = math.nan
    level_above = math.nan
    knee = stop = None
    forecast: tuple[ForecastPoint, ...] = ()
    laws: tuple[LawSummary, ...] = ()
    asym = nan_est
    head = nan_est
    if fit is not None:
        flags.extend(getattr(fit, "flags", ()))

        def f(x: np.ndarray) -> np.ndarray:
            return signed(
                np.asarray(fit.predict(np.asarray(x, dtype=float)), dtype=float), direction
            )

        def fs(x: np.ndarray) -> np.ndarray:
            return signed(
                np.asarray(fit.predict_samples(np.asarray(x, dtype=float)), dtype=float), direction
            )

        extrap = fit.extrapolation_se() if hasattr(fit, "extrapolation_se") else math.nan
        gain_se = math.hypot(seed_se, extrap if math.isfinite(extrap) else 0.0)
        gain = gain_per_doubling(f, fs, last, settings.confidence, extra_se=gain_se)
        p_above = share_above(fs, last, threshold, extra_se=gain_se)
        if trend is not None:
            fit_recent = recent_slope(f, trend.compute_from, trend.compute_to, c)
        r0_est = getattr(fit, "start_level", None)
        first_pos = float(c[c > 0][0])
        r0 = (
            float(signed(r0_est.value, direction))
            if r0_est is not None and math.isfinite(r0_est.value)
            else float(f(np.array([first_pos]))[0])
        )
        roi = float(elasticity(f, last, r0)[0])
        level_above = float(f(np.array([last]))[0]) - r0
        knee = find_knee(f, r0, first_pos, last)
        stop = find_stop_point(f, fs, first_pos, 64.0 * last, threshold, settings.confidence)
        forecast = honest_forecast(
            tuple(fit.forecast(list(settings.forecast_at))),
            last,
            float(fit.predict(np.array([last]))[0]),
            gain_se,
            settings.confidence,
        )
        laws = tuple(fit.law_summaries())
        asym = fit.asymptote
        head = headroom(asym, float(fit.predict(np.array([last]))[0]), direction)

    ev = Evidence(
        threshold=threshold,
        threshold_text=thr_text,
        gain=gain,
        trend=trend,
        collapse=collapse,
        roi=roi,
        scale=span,
        fit_recent=fit_recent,
        confidence=settings.confidence,
        p_above=p_above,
        noise=noise_sd(ys),
        level_above_start=level_above,
        noise_range=noise_range(len(ys), noise_sd(ys), seed=settings.seed),
    )
    verdict, reasons = decide_verdict(ev)
    if fit_matches_trend(ev) is False:
        flags.append("fit_misses_recent_trend")
    if fit is None:
        reasons = (fit_error, *reasons)
    if seed_se > 0:
        reasons = (
            *reasons,
            f"spread across seeds adds {seed_se:.3g} (standard error) per doubling",
        )
    if base["run_status"] == "RUNNING":
        flags.append("run_in_progress")
        reasons = (*reasons, "the run is still RUNNING: its curve is partial and this may change")
    if collapse is not None:
        flags.append("collapse")
        collapse = Collapse(
            compute=collapse.compute,
            step=collapse.step,
            level_before=float(signed(collapse.level_before, direction)),
            level_after=float(signed(collapse.level_after, direction)),
            drop=collapse.drop,
            drop_fraction=collapse.drop_fraction,
        )
    return CurveAnalysis(
        verdict=verdict,
        reasons=reasons,
        gain_per_doubling=gain if gain is not None else nan_est,
        asymptote=asym,
        headroom=head,
        roi=roi,
        roi_stage=roi_stage(roi),
        knee=knee,
        stop_point=stop,
        forecast=forecast,
        laws=laws,
        trend=trend,
        collapse=collapse,
        flags=tuple(dict.fromkeys(flags)),
        fit=fit,
        **base,
    )


def _fit(c: np.ndarray, y: np.ndarray, direction: Direction, settings: AnalysisSettings) -> Any:
    from saturate.fit import fit_curve

    return fit_curve(c, y, direction=direction, settings=settings.fit_settings())


def analyze_table(
    df: pd.DataFrame,
    settings: AnalysisSettings,
    progress: Callable[[int, int], None] | None = None,
) -> list[CurveAnalysis]:
    """Analyse every curve of a tidy table (pooling seeds first when ``settings.group_by``)."""
    table = df
    if settings.group_by:
        from saturate.analysis.seeds import pool_seeds

        table = pool_seeds(df, settings.group_by)
    curves = list(iter_curves(table))
    out = []
    for i, (_, pts) in enumerate(curves):
        pts = pts.copy()
        pts.attrs = dict(table.attrs)
        out.append(analyze_curve(pts, settings))
        if progress is not None:
            progress(i + 1, len(curves))
    return out

