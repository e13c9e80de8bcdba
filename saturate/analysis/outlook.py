"""What one curve's own data say about the gain ``G = f(2C) - f(C)`` of its next doubling.

Two estimates: the fitted laws' extrapolation (its interval holds the bootstrap, the fit's
rolling-origin error, the seed spread and how far the fit's recent slope misses the trend) and
the recent trend's slope per doubling (after a collapse, since the drop; its error also carries
how much the slope changed from the doubling before). They err in different ways and are combined
by precision (:func:`combine`). ``lower`` / ``upper`` bound the gain by the metric's domain.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import MISSING, dataclass, fields
from typing import Any

import numpy as np
from scipy.special import ndtri

from saturate.fit.scaling import pow2_scale
from saturate.results import CurveAnalysis, Direction, Estimate, Trend
from saturate.results.codec import jsonable


@dataclass(frozen=True)
class Outlook:
    """One curve's evidence about the gain of its next doubling (larger-is-better scale, metric
    units per doubling).

    ``scale``: the smoothed observed range (the unit siblings pool in); ``level``: the current
    level in the metric's own units (the fit at the last compute, else the mean of the last
    tenth); ``fit_se`` / ``trend_se``: ``inf`` when missing; ``lower`` / ``upper``: the gain the
    domain allows; ``noise_range``: the smoothed range pure noise typically shows; ``doublings``:
    ``log2`` of last over first positive compute; ``fit_roi`` / ``fit_knee``: the fit's own.
    """

    threshold: float
    scale: float
    level: float
    direction: Direction = "higher"
    fit_gain: float = math.nan
    fit_se: float = math.inf
    trend_gain: float = math.nan
    trend_se: float = math.inf
    lower: float = -math.inf
    upper: float = math.inf
    noise: float = math.nan
    noise_range: float = math.nan
    doublings: float = math.nan
    fit_roi: float = math.nan
    fit_knee: float = math.nan
    recent_gain: float = math.nan
    recent_change: float = math.nan
    drawdown: float = math.nan

    @property
    def pace(self) -> float:
        """The observed range over the doublings of compute it spans (NaN without doublings)."""
        if not (math.isfinite(self.doublings) and self.doublings > 0):
            return math.nan
        return self.scale / self.doublings

    @property
    def moved(self) -> bool:
        """False when the observed range is within what its noise alone would show: the
        threshold, a share of that range, then measures noise."""
        return not (math.isfinite(self.noise_range) and self.scale < self.noise_range)

    @property
    def gain(self) -> float:
        """The curve's own estimate of the next doubling's gain (precision-weighted)."""
        return combine(self)[0]

    @property
    def se(self) -> float:
        """Standard error of :attr:`gain`."""
        return combine(self)[1]

    @property
    def informative(self) -> bool:
        """True when at least one estimate has a finite standard error."""
        return math.isfinite(self.se)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields (infinities and NaN as None) plus the combined ``gain`` and ``se``."""
        return jsonable({**self.__dict__, "gain": self.gain, "se": self.se})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Outlook:
        """Back from :meth:`to_dict` (a None field takes its default, NaN where it has none)."""
        kw: dict[str, Any] = {}
        for f in fields(cls):
            v = d.get(f.name)
            if v is None:
                v = f.default if f.default is not MISSING else math.nan
            kw[f.name] = v
        return cls(**kw)


def combine(o: Outlook) -> tuple[float, float]:
    """Precision-weighted mean of the fit's and the trend's gain, and its standard error
    (``(nan, inf)`` when neither is usable). Standard errors are floored at ``1e-9`` of the scale;
    worked out over :func:`~saturate.fit.scaling.pow2_scale` (squares of 1e300 overflow)."""
    u = pow2_scale(o.scale) if math.isfinite(o.scale) and o.scale > 0 else 1.0
    floor = 1e-9 * o.scale / u if math.isfinite(o.scale) and o.scale > 0 else 1e-300
    parts = [(g / u, max(s / u, floor)) for g, s in ((o.fit_gain, o.fit_se),
                                                      (o.trend_gain, o.trend_se))
             if math.isfinite(g) and math.isfinite(s)]
    if not parts:
        return math.nan, math.inf
    w = [1.0 / (s * s) for _, s in parts]
    total = math.fsum(w)
    mean = math.fsum(wi * g for wi, (g, _) in zip(w, parts, strict=True)) / total
    return mean * u, u / math.sqrt(total)


def _se(e: Estimate | None, confidence: float) -> float:
    """Standard error from an estimate's interval (inf when there is none)."""
    if e is None or not (math.isfinite(e.lo) and math.isfinite(e.hi) and math.isfinite(e.value)):
        return math.inf
    z = float(ndtri(0.5 + confidence / 2.0))
    return max(e.hi - e.lo, 0.0) / (2.0 * z)


def check_domain(domain: tuple[float, float] | None) -> tuple[float, float] | None:
    """``domain`` validated: None, or ``(low, high)`` with ``low < high`` (either may be inf)."""
    if domain is None:
        return None
    from saturate.errors import SettingsError

    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise SettingsError(f"domain: expected (low, high), got {domain!r}") from None
    if math.isnan(lo) or math.isnan(hi) or not lo < hi:
        raise SettingsError(f"domain: expected low < high, got {domain!r}")
    return lo, hi


def bounded_by(o: Outlook, domain: tuple[float, float] | None) -> Outlook:
    """``o`` with the gain bounded by the metric's ``domain`` (the level held inside it)."""
    dom = check_domain(domain)
    if dom is None:
        return o
    level = min(max(o.level, dom[0]), dom[1])
    if o.direction == "higher":
        lower, upper = dom[0] - level, dom[1] - level
    else:
        lower, upper = level - dom[1], level - dom[0]
    return dataclasses.replace(o, level=float(level), lower=float(lower), upper=float(upper))


def _current_level(analysis: CurveAnalysis) -> float:
    c = analysis.compute_last
    if analysis.fit is not None:
        v = float(np.asarray(analysis.fit.predict(np.array([c])), dtype=float)[0])
        if math.isfinite(v):
            return v
    pts = analysis.points
    if pts is None or pts.empty:
        return analysis.value_last
    y = pts.sort_values("compute")["value"].to_numpy(float)
    return float(np.mean(y[-max(1, y.size // 10):]))


def _persistence_trend(analysis: CurveAnalysis, pts, confidence: float) -> Trend | None:
    """The recent trend as an estimate of the next doubling; after a collapse, the trend since
    the drop (the drop itself does not repeat)."""
    if analysis.collapse is None:
        return analysis.trend
    from saturate.measure.trend import post_drop_trend
    from saturate.vocabulary.direction import signed

    c = pts["compute"].to_numpy(float)
    ys = signed(pts["value"].to_numpy(float), analysis.direction)
    return post_drop_trend(c, ys, analysis.collapse.compute, confidence=confidence)


def _curvature_sd(analysis: CurveAnalysis, pts, trend: Estimate, confidence: float) -> float:
    """How much the slope per doubling changed from the doubling before, beyond the two slopes'
    own errors (method of moments, as a standard deviation): the persistence forecast's error on
    a bending curve (0 after a collapse, or without the earlier slope)."""
    if analysis.collapse is not None:
        return 0.0
    from saturate.measure.trend import trend_test
    from saturate.vocabulary.direction import signed

    c = pts["compute"].to_numpy(float)
    keep = c <= c[-1] / 2.0
    before = trend_test(c[keep], signed(pts["value"].to_numpy(float)[keep], analysis.direction),
                        confidence=confidence) if keep.sum() >= 2 else None
    if before is None:
        return 0.0
    b = before.slope_per_doubling
    se_t, se_b = _se(trend, confidence), _se(b, confidence)
    u = pow2_scale(trend.value, b.value, se_t, se_b)
    d, st, sb = (trend.value - b.value) / u, se_t / u, se_b / u
    d2 = d * d - st * st - sb * sb
    return u * math.sqrt(d2) if math.isfinite(d2) and d2 > 0 else 0.0


def _misfit_sd(analysis: CurveAnalysis, pts, confidence: float) -> float:
    """How far the fit's own slope over the trend's window misses the trend, beyond the trend's
    error (method of moments, as a standard deviation): the monotone laws cannot see a turn, so
    the fit must not outweigh the trend there (0 after a collapse, or without fit or trend)."""
    tr, fit = analysis.trend, analysis.fit
    if tr is None or fit is None or analysis.collapse is not None:
        return 0.0
    from saturate.measure.quantities import recent_slope

    sign = 1.0 if analysis.direction == "higher" else -1.0

    def predict(x: np.ndarray) -> np.ndarray:
        return sign * np.asarray(fit.predict(x), dtype=float)

    c = pts["compute"].to_numpy(float)
    fr = recent_slope(predict, tr.compute_from, tr.compute_to, c[np.isfinite(c) & (c > 0)])
    s = tr.slope_per_doubling
    se_t = _se(s, confidence)
    if not (math.isfinite(fr) and math.isfinite(s.value) and math.isfinite(se_t)):
        return 0.0
    u = pow2_scale(fr, s.value, se_t)
    d2 = ((fr - s.value) / u) ** 2 - (se_t / u) ** 2
    return u * math.sqrt(d2) if d2 > 0 else 0.0


def outlook_of(analysis: CurveAnalysis, domain: tuple[float, float] | None = None,
               confidence: float = 0.9, seed: int = 0) -> Outlook | None:
    """The :class:`Outlook` of an analysed curve; None without a threshold or scale. ``seed``
    seeds the noise-range simulation."""
    t = analysis.threshold
    if analysis.points is None or not (math.isfinite(t) and t > 0):
        return None
    from saturate.measure.quantities import noise_range, smoothed_range
    from saturate.measure.trend import noise_sd, recent_stretch
    from saturate.vocabulary.direction import signed

    pts = analysis.points.sort_values("compute")
    y = pts["value"].to_numpy(float)
    c = pts["compute"].to_numpy(float)
    recent = recent_stretch(c, signed(y, analysis.direction))
    c = c[np.isfinite(c) & (c > 0)]
    doublings = math.log2(c[-1] / c[0]) if c.size >= 2 else math.nan
    scale = smoothed_range(y)
    noise = noise_sd(y)
    if not (math.isfinite(scale) and scale > 0):
        return None
    g = analysis.gain_per_doubling
    fit_se = (math.hypot(_se(g, confidence), _misfit_sd(analysis, pts, confidence))
              if g.identified else math.inf)
    tr = _persistence_trend(analysis, pts, confidence)
    trend = tr.slope_per_doubling if tr is not None else None
    return bounded_by(Outlook(
        threshold=float(t), scale=float(scale), level=float(_current_level(analysis)),
        direction=analysis.direction,
        fit_gain=float(g.value) if math.isfinite(fit_se) else math.nan, fit_se=fit_se,
        trend_gain=float(trend.value) if trend is not None else math.nan,
        trend_se=math.hypot(_se(trend, confidence), _curvature_sd(
            analysis, pts, trend, confidence)) if trend is not None else math.inf,
        noise=float(noise), noise_range=float(noise_range(y.size, noise, seed=seed)),
        doublings=float(doublings), fit_roi=float(analysis.roi),
        fit_knee=math.nan if analysis.knee is None else float(analysis.knee),
        recent_gain=recent.gain, recent_change=recent.change, drawdown=recent.drawdown,
    ), domain)
