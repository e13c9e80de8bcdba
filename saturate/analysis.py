"""Per-curve saturation analysis: gain per doubling, ROI stage, knee, stop point, headroom, verdict.

Everything here works on the "larger is better" scale (see :mod:`saturate.direction`), so a gain is
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
(:mod:`saturate.evidence`); :func:`decide_verdict` holds the rules and writes the reasons.
Forecasts beyond the data carry the same extrapolation error and are shrunk toward the current
level when they cannot be told from "no change" (:func:`honest_forecast`).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from saturate.curves import iter_curves
from saturate.direction import metric_direction, signed
from saturate.errors import SaturateError, SettingsError
from saturate.evidence import detect_collapse, noise_sd, trend_test
from saturate.results import (
    Collapse,
    CurveAnalysis,
    Direction,
    Estimate,
    ForecastPoint,
    LawSummary,
    Stage,
    Trend,
    Verdict,
)

__all__ = [
    "AnalysisSettings",
    "analyze_curve",
    "analyze_table",
    "decide_verdict",
    "fit_matches_trend",
    "recent_slope",
    "Evidence",
    "parse_min_gain",
    "smoothed_range",
    "noise_range",
    "threshold_for",
    "gain_per_doubling",
    "share_above",
    "elasticity",
    "roi_stage",
    "find_knee",
    "find_stop_point",
    "headroom",
    "honest_forecast",
    "KNEE_ROI",
]

KNEE_ROI = 0.8
COIN_FLIP = 0.1
"""A straddling gain whose chance of clearing the threshold is within 0.5 +- this is a coin flip."""
_PCT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*%\s*$")


@dataclass(frozen=True)
class AnalysisSettings:
    """How curves are judged.

    ``min_gain`` is the smallest gain per doubling of compute worth paying for: metric units, or
    ``"N%"`` of the curve's observed (smoothed) range. The default ``"3%"``: a doubling of compute
    that moves the metric by less than 3% of the ground it has covered is, for RL runs, within the
    run-to-run noise of most benchmarks and rarely worth twice the spend. ``thresholds`` maps
    metric globs to their own ``min_gain``.
    """

    min_gain: float | str = "3%"
    confidence: float = 0.9
    forecast_at: tuple[str | float, ...] = ("2x", "4x")
    lower_is_better: tuple[str, ...] = ()
    higher_is_better: tuple[str, ...] = ()
    thresholds: dict[str, float | str] = field(default_factory=dict)
    group_by: str | None = None
    n_boot: int = 200
    seed: int = 0
    laws: tuple[str, ...] | None = None
    min_points: int = 6

    def __post_init__(self) -> None:
        if not 0.5 <= self.confidence < 1.0:
            raise SettingsError(f"confidence must be in [0.5, 1), got {self.confidence!r}")
        parse_min_gain(self.min_gain, "min_gain")
        for pattern, spec in self.thresholds.items():
            parse_min_gain(spec, f"thresholds[{pattern!r}]")
        if int(self.n_boot) < 0:
            raise SettingsError(f"n_boot must be >= 0, got {self.n_boot!r}")
        if int(self.min_points) < 3:
            raise SettingsError(f"min_points must be >= 3, got {self.min_points!r}")


# ---------------------------------------------------------------------------------------------
# Threshold


def parse_min_gain(spec: float | str, name: str = "min_gain") -> tuple[float, bool]:
    """``(value, is_percent)`` from ``0.01``, ``"0.01"`` or ``"3%"``; a SettingsError otherwise."""
    if isinstance(spec, bool):
        raise SettingsError(f"{name} must be a number or 'N%', got {spec!r}")
    if isinstance(spec, (int, float)):
        value, pct = float(spec), False
    else:
        text = str(spec)
        m = _PCT.match(text)
        if m:
            value, pct = float(m.group(1)), True
        else:
            try:
                value, pct = float(text), False
            except ValueError:
                raise SettingsError(
                    f"{name} must be a number (metric units per doubling) or 'N%' "
                    f"(of the curve's range), got {spec!r}"
                ) from None
    if not math.isfinite(value) or value < 0:
        raise SettingsError(f"{name} must be a finite number >= 0, got {spec!r}")
    return value, pct


def smoothed_range(values: np.ndarray) -> float:
    """Range of the curve after a light centred rolling mean (window ``max(3, n // 10)``).

    Smoothing keeps one noisy evaluation from setting the scale the threshold is a share of.
    """
    y = np.asarray(values, dtype=float)
    if y.size == 0:
        return math.nan
    window = min(y.size, max(3, y.size // 10))
    sm = pd.Series(y).rolling(window, center=True, min_periods=window // 2 + 1).mean()
    return float(np.nanmax(sm) - np.nanmin(sm))


def noise_range(n: int, sigma: float, seed: int = 0, draws: int = 100) -> float:
    """The median :func:`smoothed_range` of ``n`` points of pure Gaussian noise with standard
    deviation ``sigma``: the range a curve that never moved typically shows. Simulated (the
    smoothing's overlapping windows and partial edges have no simple closed form) with its own
    seeded generator, so it is deterministic; the range is proportional to ``sigma``."""
    if n < 2 or not math.isfinite(sigma) or sigma <= 0:
        return math.nan
    rng = np.random.default_rng(seed)
    w = min(n, max(3, n // 10))
    noise = pd.DataFrame(rng.standard_normal((n, draws)))
    sm = noise.rolling(w, center=True, min_periods=w // 2 + 1).mean().to_numpy()
    return float(np.median(np.nanmax(sm, axis=0) - np.nanmin(sm, axis=0)) * sigma)


def threshold_for(metric: str, values: np.ndarray, settings: AnalysisSettings) -> tuple[float, str]:
    """The threshold for one curve in metric units per doubling, and how it was set (in words)."""
    spec: float | str = settings.min_gain
    for pattern, s in settings.thresholds.items():
        if fnmatch.fnmatchcase(metric, pattern):
            spec = s
            break
    value, pct = parse_min_gain(spec)
    if not pct:
        return value, f"{value:.3g} per doubling"
    span = smoothed_range(values)
    thr = value / 100.0 * span if math.isfinite(span) else math.nan
    return thr, f"{thr:.3g} ({value:g}% of the observed range {span:.3g})"


# ---------------------------------------------------------------------------------------------
# Quantities from a prediction function (larger-is-better scale)

Predict = Callable[[np.ndarray], np.ndarray]


def _quantiles(x: np.ndarray, confidence: float) -> tuple[float, float]:
    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(x, [a, 1.0 - a])
    return float(lo), float(hi)


def gain_per_doubling(
    predict: Predict,
    samples: Predict | None,
    compute: float,
    confidence: float = 0.9,
    extra_se: float = 0.0,
) -> Estimate:
    """``f(2C) - f(C)`` with an interval from the bootstrap draws.

    ``extra_se`` (the spread of the last-doubling gain across seeds) widens the interval in
    quadrature, as a normal term with the same confidence.
    """
    at = np.array([compute, 2.0 * compute])
    p = np.asarray(predict(at), dtype=float)
    g = float(p[1] - p[0])
    lo = hi = math.nan
    if samples is not None:
        s = np.asarray(samples(at), dtype=float)
        if s.ndim == 2 and s.shape[0] >= 2:
            d = s[:, 1] - s[:, 0]
            d = d[np.isfinite(d)]
            if d.size >= 2:
                lo, hi = _quantiles(d, confidence)
                lo, hi = min(lo, g), max(hi, g)
    if extra_se > 0 and math.isfinite(lo):
        z = float(norm.ppf(0.5 + confidence / 2.0))
        lo = g - math.hypot(g - lo, z * extra_se)
        hi = g + math.hypot(hi - g, z * extra_se)
    return Estimate(g, lo, hi, identified=math.isfinite(lo))


def share_above(
    samples: Predict | None, compute: float, threshold: float, extra_se: float = 0.0
) -> float | None:
    """Share of the bootstrap draws whose gain per doubling ``f(2C) - f(C)`` exceeds the threshold.

    With ``extra_se`` (seed spread) each draw counts by its normal probability of clearing it.
    ``None`` without at least two finite draws.
    """
    if samples is None or not math.isfinite(threshold):
        return None
    s = np.asarray(samples(np.array([compute, 2.0 * compute])), dtype=float)
    if s.ndim != 2 or s.shape[0] < 2:
        return None
    d = s[:, 1] - s[:, 0]
    d = d[np.isfinite(d)]
    if d.size < 2:
        return None
    if extra_se > 0:
        return float(np.mean(norm.cdf((d - threshold) / extra_se)))
    return float(np.mean(d > threshold))


def elasticity(predict: Predict, compute: float | np.ndarray, r0: float) -> np.ndarray:
    """ROI ``d ln(f(C) - R0) / d ln C`` by a central difference on log compute.

    NaN where the curve is not above its starting level (the logarithm is undefined there); a
    falling curve above R0 gives a negative value.
    """
    c = np.atleast_1d(np.asarray(compute, dtype=float))
    h = 0.05
    slope = (
        np.asarray(predict(c * math.exp(h)), dtype=float)
        - np.asarray(predict(c * math.exp(-h)), dtype=float)
    ) / (2.0 * h)
    mid = np.asarray(predict(c), dtype=float) - r0
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(mid > 0, slope / mid, np.nan)
        # At or below the start level the logarithm is undefined; a falling curve there is still
        # negative returns.
        out = np.where((mid <= 0) & (slope < 0), slope / np.maximum(np.abs(mid), 1e-12), out)
    return out


def recent_slope(predict: Predict, lo: float, hi: float, compute: np.ndarray) -> float:
    """The fitted curve's slope per doubling over the observed points in ``[lo, hi]`` (OLS on
    log2 compute, the same estimator as the trend test, so the two are comparable)."""
    c = np.asarray(compute, dtype=float)
    c = c[(c >= lo) & (c <= hi)]
    if c.size < 2 or np.ptp(c) == 0:
        return math.nan
    return float(np.polyfit(np.log2(c), np.asarray(predict(c), dtype=float), 1)[0])


def roi_stage(roi: float) -> Stage:
    """The practitioners' stage for an ROI value."""
    if roi is None or not math.isfinite(roi):
        return "unknown"
    if roi < 0:
        return "negative"
    if roi < 0.3:
        return "saturation"
    if roi < KNEE_ROI:
        return "knee"
    if roi <= 1.5:
        return "transition"
    return "initial"


def _grid(first: float, last: float, n: int = 200) -> np.ndarray:
    return np.geomspace(first, last, n)


def find_knee(predict: Predict, r0: float, first: float, last: float) -> float | None:
    """First compute in ``[first, last]`` where ROI falls below 0.8 after being at or above it."""
    if not (first > 0 and last > first):
        return None
    grid = _grid(first, last)
    roi = elasticity(predict, grid, r0)
    above = np.isfinite(roi) & (roi >= KNEE_ROI)
    if not above.any():
        return None
    start = int(np.argmax(above))
    below = np.isfinite(roi[start:]) & (roi[start:] < KNEE_ROI)
    if not below.any():
        return None
    return float(grid[start + int(np.argmax(below))])


def _first_crossing(gains: np.ndarray, grid: np.ndarray, threshold: float) -> np.ndarray:
    """Per row, the first compute where the gain falls below threshold (inf if never), refined by
    linear interpolation on log compute between the two grid points around the crossing."""
    g2 = np.atleast_2d(gains)
    # Only a fall counts: points before the gain first reaches the threshold are skipped.
    below = (g2 < threshold) & (np.cumsum(g2 >= threshold, axis=-1) > 0)
    idx = np.argmax(below, axis=-1)
    hit = below.any(axis=-1)
    rows = np.arange(g2.shape[0])
    prev = np.maximum(idx - 1, 0)
    g_hi, g_lo = g2[rows, prev], g2[rows, idx]
    lx = np.log(grid)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.clip((g_hi - threshold) / (g_hi - g_lo), 0.0, 1.0)
    frac = np.where(np.isfinite(frac) & (idx > 0), frac, 1.0)
    cross = np.exp(lx[prev] + frac * (lx[idx] - lx[prev]))
    out = np.where(hit, cross, np.inf)
    return out if np.ndim(gains) > 1 else out[0]


def find_stop_point(
    predict: Predict,
    samples: Predict | None,
    first: float,
    horizon: float,
    threshold: float,
    confidence: float = 0.9,
) -> Estimate | None:
    """Compute where ``f(2c) - f(c)`` first falls below the threshold after having reached it,
    searched up to ``horizon``.

    The interval comes from the same search on each bootstrap draw; a bound beyond the horizon is
    NaN and marks the estimate as not identified. ``None`` when the fit never falls below the
    threshold within the horizon, or never reached it.
    """
    if not (first > 0 and horizon > first and math.isfinite(threshold)):
        return None
    grid = _grid(first, horizon)
    both = np.concatenate([grid, 2.0 * grid])
    p = np.asarray(predict(both), dtype=float)
    point = float(_first_crossing(p[grid.size :] - p[: grid.size], grid, threshold))
    if not math.isfinite(point):
        return None
    lo = hi = math.nan
    if samples is not None:
        s = np.asarray(samples(both), dtype=float)
        if s.ndim == 2 and s.shape[0] >= 2:
            cross = _first_crossing(s[:, grid.size :] - s[:, : grid.size], grid, threshold)
            # Draws that never cross count as beyond the horizon (a finite stand-in for inf).
            lo, hi = _quantiles(np.where(np.isfinite(cross), cross, 2.0 * horizon), confidence)
            lo = lo if lo <= horizon else math.nan
            hi = hi if hi <= horizon else math.nan
    return Estimate(point, lo, hi, identified=math.isfinite(lo) and math.isfinite(hi))


def honest_forecast(
    points: tuple[ForecastPoint, ...],
    compute_last: float,
    level: float,
    extra_se: float,
    confidence: float = 0.9,
) -> tuple[ForecastPoint, ...]:
    """Forecasts that carry the extrapolation error and do not outrun their own evidence.

    Beyond the data the interval is widened, in quadrature, by ``extra_se`` (the fit's measured
    error per doubling, see :meth:`saturate.fit_result.CurveFit.extrapolation_se`, and the seed
    spread) times the number of doublings ahead. The forecast increment ``d = f(kC) - f(C)`` is
    then shrunk toward the current level by ``d^2 / (d^2 + se^2)`` (``se`` the increment's
    standard error): the posterior mean under a normal prior on the increment with variance
    ``d^2``, so an extrapolation that cannot be told from "no change" (a wild law, a noisy curve)
    forecasts close to the last level, and a well-determined one is barely moved. The interval
    always holds the point forecast.
    """
    if not (math.isfinite(level) and compute_last > 0):
        return points
    z = float(norm.ppf(0.5 + confidence / 2.0))
    out = []
    for fp in points:
        ahead = math.log2(fp.compute / compute_last) if fp.compute > compute_last else 0.0
        if ahead <= 0 or not math.isfinite(fp.value):
            out.append(fp)
            continue
        d = fp.value - level
        se_boot = (fp.hi - fp.lo) / (2.0 * z) if math.isfinite(fp.hi - fp.lo) else 0.0
        se_extra = max(extra_se, 0.0) * ahead if math.isfinite(extra_se) else 0.0
        se = math.hypot(se_boot, se_extra)
        value = level + d * (d * d / (d * d + se * se)) if se > 0 else fp.value
        lo0 = min(value, fp.lo) if math.isfinite(fp.lo) else value
        hi0 = max(value, fp.hi) if math.isfinite(fp.hi) else value
        lo = value - math.hypot(value - lo0, z * se_extra)
        hi = value + math.hypot(hi0 - value, z * se_extra)
        out.append(ForecastPoint(fp.at, fp.compute, float(value), float(lo), float(hi),
                                 fp.identified))
    return tuple(out)


def headroom(asymptote: Estimate, current: float, direction: Direction) -> Estimate:
    """Distance from the current level to the asymptote, on the larger-is-better scale."""
    if asymptote is None or not math.isfinite(asymptote.value):
        return Estimate(math.nan, identified=False)
    a = signed(np.array([asymptote.value, asymptote.lo, asymptote.hi]), direction) - signed(
        current, direction
    )
    lo, hi = (min(a[1], a[2]), max(a[1], a[2])) if np.isfinite(a[1:]).all() else (math.nan,) * 2
    return Estimate(float(a[0]), float(lo), float(hi), identified=bool(asymptote.identified))


# ---------------------------------------------------------------------------------------------
# Verdict


@dataclass(frozen=True)
class Evidence:
    """What the verdict rests on (larger-is-better scale, metric units per doubling).

    ``fit_recent`` is the fitted curve's own slope per doubling over the trend test's window: when
    it falls outside the trend's interval the fit does not describe the recent data and its
    extrapolation is not trusted. ``scale`` is the observed (smoothed) range of the curve.
    ``p_above`` is the share of the fit's bootstrap draws whose gain exceeds the threshold.
    ``noise`` is the point-to-point noise of the curve (:func:`saturate.evidence.noise_sd`) and
    ``level_above_start`` the fitted level at the last compute minus the starting level ``R0``
    (for the ROI implied by the trend when the trend decides). ``noise_range`` is the range a
    curve of pure noise would show (:func:`noise_range`): a curve whose ``scale`` is below it has
    not moved beyond its noise.
    """

    threshold: float
    threshold_text: str
    gain: Estimate | None
    trend: Trend | None
    collapse: Collapse | None
    roi: float
    scale: float
    fit_recent: float | None = None
    confidence: float = 0.9
    p_above: float | None = None
    noise: float = math.nan
    level_above_start: float = math.nan
    noise_range: float = math.nan


def _fmt(e: Estimate) -> str:
    if math.isfinite(e.lo) and math.isfinite(e.hi):
        return f"{e.value:.3g} [{e.lo:.3g}, {e.hi:.3g}]"
    return f"{e.value:.3g}"


def fit_matches_trend(ev: Evidence) -> bool | None:
    """Whether the fit's recent slope lies inside the trend's interval (None: nothing to compare)."""
    if ev.fit_recent is None or ev.trend is None or not math.isfinite(ev.fit_recent):
        return None
    s = ev.trend.slope_per_doubling
    return bool(s.lo <= ev.fit_recent <= s.hi)


def decide_verdict(ev: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    """The verdict and its reasons from the evidence.

    1. ``regressing``: a collapse that neither the fit nor the recent trend has made up for, or a
       recent trend below zero at the chosen confidence by more than the threshold.
    2. The fit's gain per doubling (its interval carries the bootstrap AND the fit's own
       rolling-origin extrapolation error, see :func:`analyze_curve`) decides when its interval
       clears the threshold on either side; the recent trend stands in when no law gave an
       interval.
    3. When it straddles the threshold, the fit and the recent trend are two noisy estimates of
       the next doubling's gain. The one holding :data:`SOLE_SHARE` of their combined precision
       decides alone (the trend's implied ROI then sets the stage); otherwise the next doubling
       pays only when both say so (the trend ignores the slowdown ahead, the fit can bend into
       a plateau too early, so agreement is required before calling it worth paying for).
    4. ``inconclusive`` when there is nothing to go on, when both estimates straddle and the
       curve has not moved beyond what its noise alone shows (:func:`noise_range`), or, without a
       trend, when the fit's interval is wider than the curve's range and a coin flip.
    Passing curves are ``scaling`` before the knee (ROI >= 0.8), else ``slowing``.
    """
    t = ev.threshold
    pct = f"{int(round(ev.confidence * 100))}%"
    g, tr, col = ev.gain, ev.trend, ev.collapse
    s = tr.slope_per_doubling if tr is not None else None
    trend_txt = (
        f"recent trend per doubling {_fmt(s)} (p={tr.p_value:.2g}, {tr.n_points} points)"
        if s is not None
        else "no trend test (too few recent points)"
    )
    gain_txt = f"fitted gain per doubling {_fmt(g)}" if g is not None else "no fitted gain"
    thr = f"the threshold {ev.threshold_text}"

    if col is not None:
        col_txt = (
            f"collapse at compute {col.compute:.4g}: fell by {col.drop:.3g} "
            f"({col.drop_fraction:.0%} of the range) and has not recovered"
        )
        if (g is None or g.value < t) and (s is None or s.value < t):
            return "regressing", (col_txt, gain_txt, trend_txt)
    if s is not None and s.hi < 0 and s.value < -t and (g is None or g.value < t):
        return "regressing", (
            f"{trend_txt} is below zero at {pct} confidence and falls by more than {thr}",
            gain_txt,
        )

    reasons: list[str] = []
    if col is not None:
        reasons.append(col_txt + ", but the curve has gained since")
    if g is not None and g.identified:
        est, name = g, "fitted gain per doubling"
        reasons.insert(0, trend_txt)
        if fit_matches_trend(ev) is False:
            reasons.append(
                f"caution: the fit's own slope over the recent stretch, {ev.fit_recent:.3g} per "
                "doubling, is outside the trend's interval"
            )
    elif s is not None:
        est, name = s, "recent trend per doubling"
        reasons.insert(0, f"{gain_txt} has no interval; the recent trend decides")
    elif g is not None:
        est, name = g, "fitted gain per doubling"
    else:
        return "inconclusive", ("no law could be fitted and too few recent points for a trend",)

    prob = ev.p_above if est is g and ev.p_above is not None else None
    straddles = not (est.lo > t or est.hi < t)
    if est.lo > t:
        return _passes(ev, f"{name} {_fmt(est)} is above {thr} at {pct} confidence", reasons)
    if est.hi < t:
        return "saturated", (f"{name} {_fmt(est)} is below {thr} at {pct} confidence", *reasons)

    # The estimate straddles the threshold.
    width = est.hi - est.lo
    trend_straddles = s is None or not (s.lo > t or s.hi < t)
    if (
        s is None
        and prob is not None
        and abs(prob - 0.5) <= COIN_FLIP
        and math.isfinite(width)
        and width > ev.scale
    ):
        return "inconclusive", (
            f"{name} {_fmt(est)} is too uncertain to say: its {pct} interval straddles {thr}, "
            f"is wider than the curve's whole observed range {ev.scale:.3g}, and "
            f"{prob:.0%} of the bootstrap draws clear the threshold",
            *reasons,
        )
    if straddles and trend_straddles and ev.scale < ev.noise_range:
        return "inconclusive", (
            f"too noisy to say: the curve's observed range {ev.scale:.3g} is within what its "
            f"point-to-point noise {ev.noise:.3g} alone would show ({ev.noise_range:.3g}), and "
            f"both the {name} {_fmt(est)} and the recent trend straddle {thr}",
            *reasons,
        )
    fit_above = est.value > t if prob is None else prob > 0.5
    chance = "" if prob is None else f" ({prob:.0%} of the bootstrap draws clear it)"
    if est is not g or s is None:
        side = "above" if fit_above else "below"
        head = f"{name} {_fmt(est)} is more likely {side} {thr} than not{chance}"
        return _passes(ev, head, reasons) if fit_above else ("saturated", (head, *reasons))

    # Two noisy estimates of the next doubling's gain: the fit's extrapolation and the recent
    # trend (persistence). The more precise decides alone when the other is uninformative;
    # otherwise the next doubling pays only when both say it does (each errs on the generous
    # side in its own way: the trend ignores the slowdown ahead, the fit can miss a plateau).
    share = _precision_share(est, s)
    trend_above = s.value > t
    gain_head = f"{name} {_fmt(est)} straddles {thr}{chance}"
    if share >= SOLE_SHARE:
        side = "above" if fit_above else "below"
        head = (
            f"{gain_head}; the recent trend is far less precise ({1 - share:.0%} of the combined "
            f"precision), so the fit decides: more likely {side} than not"
        )
        return _passes(ev, head, reasons) if fit_above else ("saturated", (head, *reasons))
    if share <= 1.0 - SOLE_SHARE:
        side = "above" if trend_above else "below"
        head = (
            f"{gain_head}, but the fit's extrapolation is far less precise than the recent trend "
            f"(which holds {1 - share:.0%} of the combined precision) and the trend decides: it "
            f"is {side} the threshold"
        )
        if not trend_above:
            return "saturated", (head, *reasons)
        return _passes(ev, head, reasons, roi=_trend_roi(ev))
    if fit_above and trend_above:
        head = f"{gain_head}, and the recent trend agrees: both are above the threshold"
        return _passes(ev, head, reasons)
    if not fit_above and not trend_above:
        head = f"{gain_head}, and the recent trend agrees: both are below the threshold"
    else:
        which = "the fit" if trend_above else "the recent trend"
        other = "the recent trend" if trend_above else "the fit"
        head = (
            f"{gain_head}; {other} is above the threshold but {which} is not, and neither is "
            "precise enough to overrule the other: the next doubling is not shown to pay"
        )
    return "saturated", (head, *reasons)


SOLE_SHARE = 0.9
"""An estimate holding this share of the combined precision (inverse variance) of the fit and the
trend, i.e. a standard error three times smaller than the other's, decides alone."""


def _precision_share(fit: Estimate, trend: Estimate) -> float:
    """The fit's share of the combined precision, from the widths of the two intervals."""
    wf, wt = fit.hi - fit.lo, trend.hi - trend.lo
    if not (math.isfinite(wf) and math.isfinite(wt)):
        return 1.0 if math.isfinite(wf) else 0.0
    if wf <= 0 or wt <= 0:
        return 1.0 if wf <= 0 < wt else (0.0 if wt <= 0 < wf else 0.5)
    pf, pt = 1.0 / wf**2, 1.0 / wt**2
    return pf / (pf + pt)


def _trend_roi(ev: Evidence) -> float:
    """ROI implied by the recent trend: ``(slope per doubling / ln 2) / (f(C) - R0)``."""
    if ev.trend is None or not (ev.level_above_start > 0):
        return math.nan
    return ev.trend.slope_per_doubling.value / math.log(2.0) / ev.level_above_start


def _passes(
    ev: Evidence, head: str, reasons: list[str], roi: float | None = None
) -> tuple[Verdict, tuple[str, ...]]:
    """``scaling`` before the knee (ROI >= 0.8), else ``slowing``."""
    source = "implied by the recent trend" if roi is not None and math.isfinite(roi) else ""
    r = roi if roi is not None and math.isfinite(roi) else ev.roi
    stage = roi_stage(r)
    label = f"ROI {r:.2f}{' ' + source if source else ''} ({stage})"
    if math.isfinite(r) and r >= KNEE_ROI:
        return "scaling", (head, f"{label}: before the knee", *reasons)
    roi_txt = label if math.isfinite(r) else "ROI unknown"
    return "slowing", (head, f"{roi_txt}: past the knee (ROI < {KNEE_ROI})", *reasons)


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
    from saturate.fit import FitSettings, fit_curve

    kwargs: dict[str, Any] = {
        "n_boot": int(settings.n_boot),
        "confidence": settings.confidence,
        "seed": int(settings.seed),
    }
    if settings.laws is not None:
        kwargs["laws"] = tuple(settings.laws)
    return fit_curve(c, y, direction=direction, settings=FitSettings(**kwargs))


def analyze_table(
    df: pd.DataFrame,
    settings: AnalysisSettings,
    progress: Callable[[int, int], None] | None = None,
) -> list[CurveAnalysis]:
    """Analyse every curve of a tidy table (pooling seeds first when ``settings.group_by``)."""
    table = df
    if settings.group_by:
        from saturate.seeds import pool_seeds

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
