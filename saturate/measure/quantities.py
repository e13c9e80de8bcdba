"""Quantities of one fitted curve on the larger-is-better scale: threshold, gain per doubling, ROI
(``d ln(f(C) - R0) / d ln C``) and its stage, knee, stop point, forecasts and headroom. Pure
functions of a prediction function (and its bootstrap draws)."""

from __future__ import annotations

import fnmatch
import functools
import math
from collections.abc import Callable, Mapping
from typing import Literal, NamedTuple, Protocol

import numpy as np
import pandas as pd
from scipy.special import expit, ndtr, ndtri

from saturate.fit.prep import pow2_scale
from saturate.measure.constants import (
    KNEE_ROI,
    NOISE_RANGE_SIM_POINTS,
    ROI_INITIAL,
    ROI_SATURATION,
)
from saturate.measure.trend import noise_sd
from saturate.results import Direction, Estimate, ForecastPoint, Stage
from saturate.vocabulary.domains import metric_domain
from saturate.vocabulary.names import signed


def smoothing_window(n: int) -> int:
    """Points in the centred rolling mean a curve of ``n`` points is read through: ``n // 10``,
    at least 3, at most ``n``."""
    return min(n, max(3, n // 10))


def smoothed_range(values: np.ndarray) -> float:
    """Range of the curve after a centred rolling mean (:func:`smoothing_window`), so one noisy
    evaluation does not set the scale the threshold is a share of."""
    y = np.asarray(values, dtype=float)
    if y.size == 0:
        return math.nan
    s = pow2_scale(y)
    window = smoothing_window(y.size)
    sm = pd.Series(y / s).rolling(window, center=True, min_periods=window // 2 + 1).mean()
    return float(np.nanmax(sm) - np.nanmin(sm)) * s


def noise_range(n: int, sigma: float, seed: int = 0, draws: int = 100, q: float = 0.5
                ) -> float:
    """The ``q`` quantile (default the median) of the :func:`smoothed_range` of ``n`` points of
    Gaussian noise with sd ``sigma``: the range a curve that never moved shows. Simulated (no
    closed form) with a seeded generator; beyond ``NOISE_RANGE_SIM_POINTS`` scaled by the
    windows' ``sqrt`` ratio."""
    if n < 2 or not math.isfinite(sigma) or sigma <= 0:
        return math.nan
    if n > NOISE_RANGE_SIM_POINTS:
        m = NOISE_RANGE_SIM_POINTS
        ratio = smoothing_window(m) / smoothing_window(n)
        return noise_range(m, sigma, seed, draws, q) * math.sqrt(ratio)
    return float(_unit_noise_range(n, seed, draws, q) * sigma)


@functools.lru_cache(maxsize=256)
def _unit_noise_range(n: int, seed: int, draws: int, q: float = 0.5) -> np.float64:
    """:func:`noise_range` for ``sigma = 1``: cached, curves of one length share a simulation."""
    rng = np.random.default_rng(seed)
    w = smoothing_window(n)
    noise = pd.DataFrame(rng.standard_normal((n, draws)))
    sm = noise.rolling(w, center=True, min_periods=w // 2 + 1).mean().to_numpy()
    return np.quantile(np.nanmax(sm, axis=0) - np.nanmin(sm, axis=0), q)


class GainSettings(Protocol):
    """What the threshold of a curve is read from (:class:`~saturate.analysis.AnalysisSettings`
    has these): the ``min_gain``, the ``thresholds`` of metric globs and the ``domains``."""

    @property
    def min_gain(self) -> float | str: ...
    @property
    def thresholds(self) -> Mapping[str, float | str]: ...
    @property
    def domains(self) -> Mapping[str, tuple[float, float] | None]: ...


def gain_of(spec: float | str) -> tuple[float, bool]:
    """``(value, is_percent)`` of a gain already checked: ``"3%"`` -> ``(3.0, True)``."""
    if isinstance(spec, str) and spec.endswith("%"):
        return float(spec[:-1]), True
    return float(spec), False


def threshold_spec(metric: str, settings: GainSettings) -> tuple[float | str, str | None]:
    """The ``min_gain`` that applies to ``metric``, and the ``thresholds`` glob that set it."""
    for pattern, s in settings.thresholds.items():
        if fnmatch.fnmatchcase(metric, pattern):
            return s, pattern
    return settings.min_gain, None


def check_gain_units(metric: str, values: np.ndarray, settings: GainSettings) -> None:
    """A :class:`~saturate.errors.SettingsError` when the threshold for ``metric`` is in metric
    units and wider than its domain (or its values from zero): ``3`` was surely meant as ``3%``."""
    spec, pattern = threshold_spec(metric, settings)
    value, pct = gain_of(spec)
    if pct or not value > 0:
        return
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return
    domain, _ = metric_domain(metric, v, settings.domains)
    if domain is not None and math.isfinite(domain.hi - domain.lo):
        span, where = domain.hi - domain.lo, f"the whole domain {domain.text} of {metric!r}"
    else:
        span = max(float(v.max()), 0.0) - min(float(v.min()), 0.0)
        where = (f"every value of {metric!r} from zero (it runs from {float(v.min()):.3g} to "
                 f"{float(v.max()):.3g})")
    if value > span:
        from saturate.errors import SettingsError

        which = "min_gain" if pattern is None else f"the threshold for {pattern!r}"
        raise SettingsError(
            f"{which} {value:g} is in metric units per doubling, more than {where}: no "
            f"curve could ever pay; did you mean {value:g}% (a share of each curve's observed "
            "range)?")


UNMOVED_QUANTILE = 0.95
"""A curve whose smoothed range is below this quantile of pure noise's has not moved."""


#: What a threshold's share is of: none (given in units), the curve's range, its level, its domain.
Basis = Literal["units", "range", "level", "domain"]


class Threshold(NamedTuple):
    """A curve's threshold: ``value`` in metric units per doubling, the ``share`` of the
    ``reference`` it is (NaN when given in units), and what that reference is (``basis``)."""

    value: float
    share: float
    reference: float
    basis: Basis
    anchor: float = math.nan
    """On the ``level`` or ``domain`` basis, the level or domain width the reference weighs."""


def threshold_for(metric: str, values: np.ndarray, settings: GainSettings, seed: int = 0
                  ) -> Threshold:
    """The threshold for one curve. A share (``"3%"``) is of the curve's smoothed observed
    range; on a curve that has not moved beyond what its noise alone shows, that range is noise,
    so the share is of a reference that keeps its meaning: the width of the metric's domain
    when it has two ends, else the level's distance from its one end, else the level itself.
    "Within its noise" is below the range pure noise of the curve's length shows 19 times in
    20 (:data:`UNMOVED_QUANTILE`); the weight of the reference falls from 1 to 0 as the range
    grows from one to two such ranges, so the threshold never jumps."""
    spec, _ = threshold_spec(metric, settings)
    value, pct = gain_of(spec)
    if not pct:
        return Threshold(value, math.nan, math.nan, "units")
    anchor = math.nan
    y = np.asarray(values, dtype=float)
    span = smoothed_range(y)
    ref = span
    basis: Basis = "range"
    if y.size >= 3 and math.isfinite(span):
        floor, kind = _level_reference(metric, y, settings)
        unmoved = noise_range(y.size, noise_sd(y), seed=seed, q=UNMOVED_QUANTILE)
        weight = math.nan
        if math.isfinite(unmoved) and unmoved > 0:
            weight = min(max(2.0 - span / unmoved, 0.0), 1.0)
        elif span == 0:  # it never moved at all
            weight = 1.0
        if weight * floor > span:
            ref, basis, anchor = weight * floor, kind, floor
    share = value / 100.0
    return Threshold(share * ref if math.isfinite(ref) else math.nan, share, ref, basis, anchor)


def _level_reference(metric: str, y: np.ndarray, settings: GainSettings
                     ) -> tuple[float, Literal["level", "domain"]]:
    """What a share of the threshold is of on a curve that has not moved (threshold_for)."""
    level = float(np.mean(y[-max(1, y.size // 10):]))
    domain, _ = metric_domain(metric, y, settings.domains)
    if domain is not None:
        lo, hi = domain.lo, domain.hi
        if math.isfinite(lo) and math.isfinite(hi):
            return hi - lo, "domain"
        end = lo if math.isfinite(lo) else hi
        if math.isfinite(end):
            return abs(level - end), "level"
    return abs(level), "level"


# ---------------------------------------------------------------------------------------------
# Quantities from a prediction function (larger-is-better scale)

Predict = Callable[[np.ndarray], np.ndarray]


def _quantiles(x: np.ndarray, confidence: float) -> tuple[float, float]:
    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(x, [a, 1.0 - a])
    return float(lo), float(hi)


def gain_per_doubling(predict: Predict, samples: Predict | None, compute: float,
                      confidence: float = 0.9, extra_se: float = 0.0) -> Estimate:
    """``f(2C) - f(C)`` with an interval from the bootstrap draws, widened in quadrature by the
    normal term ``extra_se``."""
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
        z = float(ndtri(0.5 + confidence / 2.0))
        lo = g - math.hypot(g - lo, z * extra_se)
        hi = g + math.hypot(hi - g, z * extra_se)
    return Estimate(g, lo, hi, identified=math.isfinite(lo))


def share_above(
    samples: Predict | None, compute: float, threshold: float, extra_se: float = 0.0
) -> float | None:
    """Share of the bootstrap draws whose ``f(2C) - f(C)`` exceeds the threshold (each by its
    normal probability with ``extra_se``); None without two finite draws."""
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
        return float(np.mean(ndtr((d - threshold) / extra_se)))
    return float(np.mean(d > threshold))


def recent_slope(predict: Predict, lo: float, hi: float, compute: np.ndarray) -> float:
    """The fitted curve's slope per doubling over the observed points in ``[lo, hi]`` (OLS on
    log2 compute, the same estimator as the trend test, so the two are comparable)."""
    c = np.asarray(compute, dtype=float)
    c = c[(c >= lo) & (c <= hi)]
    if c.size < 2 or np.ptp(c) == 0:
        return math.nan
    p = np.asarray(predict(c), dtype=float)
    if not np.all(np.isfinite(p)):
        return math.nan
    s = pow2_scale(p)
    return float(np.polyfit(np.log2(c), p / s, 1)[0]) * s


def roi_stage(roi: float) -> Stage:
    """The practitioners' stage for an ROI value (limits in :mod:`saturate.measure.constants`);
    names never reuse a verdict's words."""
    if roi is None or not math.isfinite(roi):
        return "unknown"
    if roi < 0:
        return "negative"
    if roi < ROI_SATURATION:
        return "plateau"
    if roi < KNEE_ROI:
        return "knee"
    if roi <= ROI_INITIAL:
        return "transition"
    return "initial"


def _grid(first: float, last: float, n: int = 200) -> np.ndarray:
    return np.geomspace(first, last, n)


def _first_crossing(gains: np.ndarray, grid: np.ndarray, threshold: float) -> np.ndarray:
    """Per row, the first compute where the gain falls below threshold (inf if never),
    interpolated on log compute."""
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


def find_stop_point(predict: Predict, samples: Predict | None, first: float, horizon: float,
                    threshold: float, confidence: float = 0.9) -> Estimate | None:
    """Compute where ``f(2c) - f(c)`` first falls below the threshold after reaching it, up to
    ``horizon`` (None if never); interval from the draws, a bound beyond the horizon NaN."""
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
            lo = min(lo, point) if lo <= horizon else math.nan
            hi = max(hi, point) if hi <= horizon else math.nan
    return Estimate(point, lo, hi, identified=math.isfinite(lo) and math.isfinite(hi))


def honest_forecast(
    points: tuple[ForecastPoint, ...], compute_last: float, level: float, extra_se: float,
    confidence: float = 0.9, domain: tuple[float, float] | None = None,
) -> tuple[ForecastPoint, ...]:
    """Forecasts that carry the extrapolation error and do not outrun their own evidence.

    The interval is widened in quadrature by ``extra_se`` per doubling ahead, and the increment
    ``d = f(kC) - f(C)`` shrunk toward the level by ``d^2 / (d^2 + se^2)`` (the posterior mean
    under a ``N(0, d^2)`` prior), so an extrapolation indistinguishable from "no change" stays
    near the last level. With a ``domain`` the band stays inside it (:func:`widen_within`).
    """
    if not (math.isfinite(level) and compute_last > 0):
        return points
    z = float(ndtri(0.5 + confidence / 2.0))
    out = []
    for fp in points:
        ahead = math.log2(fp.compute / compute_last) if fp.compute > compute_last else 0.0
        if ahead <= 0 or not math.isfinite(fp.value):
            out.append(fp)
            continue
        d = fp.value - level
        if not math.isfinite(d):  # a forecast more than the largest float away from the level
            out.append(fp)
            continue
        se_boot = (fp.hi - fp.lo) / (2.0 * z) if math.isfinite(fp.hi - fp.lo) else 0.0
        se_extra = max(extra_se, 0.0) * ahead if math.isfinite(extra_se) else 0.0
        se = math.hypot(se_boot, se_extra)
        value = level + d * _shrinkage(d, se) if se > 0 else fp.value
        lo0 = min(value, fp.lo) if math.isfinite(fp.lo) else value
        hi0 = max(value, fp.hi) if math.isfinite(fp.hi) else value
        lo, hi = widen_within(value, lo0, hi0, z * se_extra, domain)
        out.append(ForecastPoint(fp.at, fp.compute, float(value), float(lo), float(hi),
                                 fp.identified))
    return tuple(out)


def _shrinkage(d: float, se: float) -> float:
    """``d^2 / (d^2 + se^2)`` without overflow or underflow (``se`` > 0)."""
    s = pow2_scale(d, se)
    d, se = d / s, se / s
    return d * d / (d * d + se * se)


def headroom(asymptote: Estimate, current: float, direction: Direction) -> Estimate:
    """Distance from the current level to the asymptote, on the larger-is-better scale."""
    if asymptote is None or not math.isfinite(asymptote.value):
        return Estimate(math.nan, identified=False)
    a = (signed(np.array([asymptote.value, asymptote.lo, asymptote.hi]), direction)
         - signed(current, direction))
    lo, hi = (min(a[1], a[2]), max(a[1], a[2])) if np.isfinite(a[1:]).all() else (math.nan,) * 2
    return Estimate(float(a[0]), float(lo), float(hi), identified=bool(asymptote.identified))


def widen_within(
    value: float, lo: float, hi: float, extra: float, domain: tuple[float, float] | None = None
) -> tuple[float, float]:
    """``[lo, hi]`` around ``value`` widened in quadrature by ``extra``, on the scale where the
    domain is the whole line (logit, or log of the distance to one bound; delta method), so a
    band near a bound approaches it but never crosses it."""
    if domain is None or not (extra > 0) or not math.isfinite(value):
        return value - math.hypot(value - lo, extra), value + math.hypot(hi - value, extra)
    to, back, slope = _unbounded_scale(domain)
    t, e = to(value), extra * slope(value)
    lo_t = t - math.hypot(t - to(lo), e)
    hi_t = t + math.hypot(to(hi) - t, e)
    return min(back(lo_t), value), max(back(hi_t), value)


def _unbounded_scale(
    domain: tuple[float, float],
) -> tuple[Callable[[float], float], Callable[[float], float], Callable[[float], float]]:
    """The map from the domain to the whole line, its inverse and its derivative (points at a
    bound taken 1e-12 inside it)."""
    a, b = float(domain[0]), float(domain[1])
    if math.isfinite(a) and math.isfinite(b):
        w = b - a

        def p(v: float) -> float:
            return min(max((v - a) / w, 1e-12), 1.0 - 1e-12)

        return (lambda v: math.log(p(v) / (1.0 - p(v))),
                lambda t: a + w * float(expit(t)),
                lambda v: 1.0 / (w * p(v) * (1.0 - p(v))))
    if math.isfinite(a) or math.isfinite(b):
        s, edge = (1.0, a) if math.isfinite(a) else (-1.0, b)

        def d(v: float) -> float:
            return max(s * (v - edge), 1e-12 * max(abs(v), abs(edge), 1e-300))

        return (lambda v: math.log(d(v)),
                lambda t: edge + s * math.exp(min(t, 709.0)),
                lambda v: 1.0 / d(v))
    return (lambda v: v), (lambda t: t), (lambda v: 1.0)


def accumulation(h: float, first: float, ahead: float) -> float:
    """``r(h)``: the fit's gain over ``h`` doublings (``ahead``) over its gain over the next one
    (``first``), held to ``[1, h]``; ``h`` when that shape is undefined (no fit, or no rise)."""
    if h <= 1.0:
        return max(h, 0.0)
    if not (math.isfinite(first) and math.isfinite(ahead) and first > 0):
        return h
    return min(max(ahead / first, 1.0), h)


Shape = Callable[[float], float]
"""``h -> f(2^h C) - f(C)`` on the larger-is-better scale (the fit)."""


def project(level: float, direction: Direction, gain: Estimate, bounds: tuple[float, float],
            points: tuple[ForecastPoint, ...], compute_last: float, shape: Shape | None = None
            ) -> tuple[ForecastPoint, ...]:
    """Forecasts from the call's gain, so forecasts, gain and verdict tell one story: ``h``
    doublings ahead, ``level + G * r(h)`` (:func:`accumulation`; at ``2C`` exactly ``level +
    G``), each end of ``G``'s interval likewise, held to the gains the domain allows
    (``bounds``). Points at or before ``compute_last`` are returned unchanged."""
    if not math.isfinite(gain.value):
        return points
    sign = 1.0 if direction == "higher" else -1.0
    first = shape(1.0) if shape is not None else math.nan
    out = []
    for fp in points:
        if not fp.compute > compute_last:
            out.append(fp)
            continue
        h = math.log2(fp.compute / compute_last)
        r = accumulation(h, first, shape(h) if shape is not None else math.nan)
        gains = [min(max(v * r, bounds[0]), bounds[1]) for v in (gain.value, gain.lo, gain.hi)]
        values = [level + sign * v for v in gains]
        lo, hi = (min(values[1:]), max(values[1:])) if all(map(math.isfinite, gains[1:])) else (
            math.nan, math.nan)
        out.append(ForecastPoint(fp.at, fp.compute, values[0], min(lo, values[0]),
                                 max(hi, values[0]), fp.identified and gain.identified))
    return tuple(out)
