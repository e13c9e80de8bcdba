"""One curve's evidence about the gain ``G`` of its next doubling of compute, before any call:
:class:`Evidence`, measured by :func:`measure_evidence`.

Three kinds of uncertainty are kept apart, each measured on the curve itself:

* what the data leave unknown: the fitted laws' extrapolation (``fit_se``: bootstrap, rolling
  origin, seed spread, how far the fit misses the recent trend) and the recent trend's slope
  (``trend_se``: autocorrelation-robust, plus how much the slope changed from the doubling
  before);
* the noise of the next window: the next doubling is judged by the mean of its points
  (``window_sd``, from today's noise, not the learning phase's);
* what a doubling does beyond any estimate (plateaus, take-offs): in units of today's noise, the
  multiple measured by a backtest of the curve on its own past (``history_excess`` over
  earlier doublings worth ``history_n``, each predicted from the ones before, the recent
  weighing most;
  :mod:`saturate.decide.decision` weighs it against the multiple curves show in general).

Values are on the larger-is-better scale except ``level`` (the metric's own units).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
from scipy.special import ndtri

from saturate.fit.prep import pow2_scale
from saturate.measure.constants import KNEE_ROI
from saturate.measure.trend import _ar1, noise_sd, recent_window, trend_test
from saturate.results import Collapse, Direction, Estimate, Trend
from saturate.results.codec import Coded

Basis = Literal["units", "range", "level", "domain"]
"""What the threshold is a share of: given in metric units, the observed range, or (on a curve
that has not moved beyond its noise) the metric's level or its domain."""

HISTORY_ORIGINS = 6
"""Earlier doublings a curve is backtested on (each predicted from the doubling before it)."""

RECENCY = 0.5
"""Each earlier origin of the backtest weighs this much of the one after it: today's regime is
best told by the doublings just before it."""

EXCESS_LIMITS = (0.01, 1e4)
"""The excess variance of one backtested doubling, in units of the noise variance there, is held
to these limits (a clean doubling does not make the future infinitely precise)."""


@dataclass(frozen=True)
class Evidence(Coded):
    """What one curve says about the gain ``G`` of its next doubling (module docstring).

    ``threshold``: the gain per doubling worth paying for (metric units), ``share`` of the
    ``reference`` on its ``basis`` (NaN share: given in units; on the level or domain basis,
    the reference is the ``anchor``, level or domain width, weighed by how little the curve
    moved); ``scale``: the smoothed observed
    range; ``moved``: the range is beyond what the curve's noise alone shows; ``lower`` /
    ``upper``: the gains the metric's domain allows; ``fit_*`` / ``trend_*``: the two estimates
    of ``G`` and their standard errors (NaN when missing); ``noise``: today's point-to-point
    noise; ``trend``: the recent trend the estimate persists (since the drop, after a
    collapse); ``last_gain``: what the last doubling gained; ``fit_knee``: where the fit's gain per
    doubling fell below ``KNEE_ROI`` of the doubling before's for good; ``falling``: the recent
    trend is below zero with confidence and falls by more than the threshold; ``notes``: what
    the reader should know about the data whatever the call; ``why``: why the curve cannot be
    judged at all (empty when it can).
    """

    _json_def: ClassVar[str] = "evidence"

    threshold: float
    share: float
    reference: float
    basis: Basis
    anchor: float
    scale: float
    level: float
    direction: Direction = "higher"
    moved: bool = True
    lower: float = -math.inf
    upper: float = math.inf
    fit_gain: float = math.nan
    fit_se: float = math.nan
    trend_gain: float = math.nan
    trend_se: float = math.nan
    noise: float = math.nan
    window_sd: float = 0.0
    history_n: float = 0.0
    history_excess: float = math.nan
    last_gain: float = math.nan
    fit_knee: float = math.nan
    compute_last: float = math.nan
    stop_point: Estimate | None = None
    trend: Trend | None = None
    collapse: Collapse | None = None
    falling: bool = False
    notes: tuple[str, ...] = field(default=())
    why: str = ""

    @property
    def own(self) -> tuple[float, float]:
        """The curve's own estimate of ``G`` and its standard error: the fit's and the trend's
        weighed by their precision (``(nan, nan)`` when neither is usable)."""
        scale = self.scale if self.scale > 0 else self.reference
        return combine(((self.fit_gain, self.fit_se), (self.trend_gain, self.trend_se)), scale)


def precision_share(se_a: float, se_b: float) -> float:
    """The first of two estimates' share of their combined precision, ``se_b^2 / (se_a^2 +
    se_b^2)`` from standard errors (or any widths proportional to them, such as intervals at one
    level), from their ratio so that no square overflows at 1e300. An estimate with no error
    takes it all, one with an infinite or unknown error none; two alike share it equally."""
    a_ok, b_ok = math.isfinite(se_a) and se_a >= 0, math.isfinite(se_b) and se_b >= 0
    if not (a_ok and b_ok):
        return 0.5 if a_ok == b_ok else float(a_ok)
    if se_a == 0 or se_b == 0:
        return 0.5 if se_a == se_b else float(se_a == 0)
    r = se_a / se_b
    return 1.0 / (1.0 + r * r) if r < 1e150 else 0.0


def combine(parts: tuple[tuple[float, float], ...], scale: float) -> tuple[float, float]:
    """Precision-weighted mean of ``(estimate, standard error)`` pairs and its standard error;
    standard errors floored at ``1e-9`` of ``scale``, worked out over
    :func:`~saturate.fit.prep.pow2_scale` (squares of 1e300 overflow)."""
    u = pow2_scale(scale) if math.isfinite(scale) and scale > 0 else 1.0
    floor = max(1e-9 * scale / u if math.isfinite(scale) and scale > 0 else 0.0, 1e-150)
    usable = [(g / u, max(s / u, floor)) for g, s in parts
              if math.isfinite(g) and math.isfinite(s) and s >= 0]
    if not usable:
        return math.nan, math.nan
    w = [1.0 / (s * s) for _, s in usable]
    total = math.fsum(w)
    if not 0.0 < total < math.inf:  # errors past 1e154 (their squares overflow): relative weights
        smin = min(s for _, s in usable)
        w = [(smin / s) ** 2 for _, s in usable]
        total = math.fsum(w)
        mean = math.fsum(wi * g for wi, (g, _) in zip(w, usable, strict=True)) / total
        return mean * u, smin * u / math.sqrt(total)
    mean = math.fsum(wi * g for wi, (g, _) in zip(w, usable, strict=True)) / total
    return mean * u, u / math.sqrt(total)


def bounds_of(level: float, direction: Direction, domain: tuple[float, float] | None
              ) -> tuple[float, float]:
    """The gains (larger-is-better) a metric at ``level`` can still make inside its domain."""
    if domain is None:
        return -math.inf, math.inf
    lo, hi = domain
    if direction == "higher":
        return lo - level, hi - level
    return level - hi, level - lo


# ---- measured on the points ----------------------------------------------------------------------


def window_sd(compute: np.ndarray, values: np.ndarray, noise: float) -> float:
    """Standard deviation, from noise alone, of the mean of the next doubling's window
    ``[1.6 C, 2 C]`` (the next doubling is judged by its points, as the current one by
    ``[0.8 C, C]``): today's noise over the points it will hold, logged as densely as the last
    doubling was (relative to the one before), inflated for autocorrelation."""
    c, y = np.asarray(compute, dtype=float), np.asarray(values, dtype=float)
    if c.size < 3 or not (math.isfinite(noise) and noise > 0):
        return 0.0
    last = float(c[-1])
    n_now = max(1, int(np.sum(c >= 0.8 * last)))
    recent = int(np.sum(c >= last / 2.0))
    before = int(np.sum((c >= last / 4.0) & (c < last / 2.0)))
    density = min(max(recent / before, 1.0), 4.0) if before else 2.0
    mask = recent_window(c)
    phi = 0.0
    if int(mask.sum()) >= 4:
        x = np.log2(c[mask])
        yy = y[mask] / pow2_scale(y[mask])
        if np.ptp(x) > 0:
            resid = yy - np.polyval(np.polyfit(x - x.mean(), yy, 1), x - x.mean())
            phi = _ar1(resid)
    return noise * math.sqrt((1.0 + phi) / (1.0 - phi) / max(1.0, n_now * density))


def backtest(compute: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """The curve on its own past: at each of up to :data:`HISTORY_ORIGINS` earlier origins
    ``o = C / 2^j``, the straight line in log compute through the two doublings before ``o``
    (at least 6 points) predicts the mean of the window ``[1.6 o, 2 o]``. Returns how many
    origins were tested (each weighing :data:`RECENCY` times the one after it) and the weighted
    geometric mean of the excess of their squared errors over what the line's error and the
    window's noise explain, each in units of the noise about the line there and held to
    :data:`EXCESS_LIMITS` (a geometric mean, so one doubling of the learning phase does not
    speak for all); NaN without an origin."""
    c, y = np.asarray(compute, dtype=float), np.asarray(values, dtype=float)
    y = y / pow2_scale(y)
    logs: list[float] = []
    origin = float(c[-1]) / 2.0
    while len(logs) < HISTORY_ORIGINS and origin > 0.0:  # halving 0 would never end
        upto = c <= origin
        if int(upto.sum()) < 6:
            break
        mask = upto & (c > origin / 4.0)
        if int(mask.sum()) < 6:
            mask = upto & (c >= np.sort(c[upto])[-6])
        x, yb = np.log2(c[mask]), y[mask]
        later = (c >= 1.6 * origin) & (c <= 2.0 * origin)
        if later.any() and np.ptp(x) > 0:
            xc = x - x.mean()
            sxx = float(xc @ xc)
            slope = float(xc @ (yb - yb.mean())) / sxx
            resid = yb - yb.mean() - slope * xc
            var = float(resid @ resid) / (x.size - 2)  # the noise about the line, unbiased
            at = float(np.mean(np.log2(c[later]))) - x.mean()
            err = float(np.mean(y[later])) - (float(yb.mean()) + slope * at)
            if var > 0:
                expected = 1.0 / x.size + at * at / sxx + 1.0 / int(later.sum())
                excess = err * err / var - expected
                logs.append(math.log(min(max(excess, EXCESS_LIMITS[0]), EXCESS_LIMITS[1])))
        origin /= 2.0
    if not logs:
        return 0.0, math.nan
    weights = [RECENCY**j for j in range(len(logs))]
    total = math.fsum(weights)
    return total, math.exp(math.fsum(w * v for w, v in zip(weights, logs, strict=True)) / total)


def recent_noise(compute: np.ndarray, values: np.ndarray) -> float:
    """Today's point-to-point noise: :func:`~saturate.measure.trend.noise_sd` over the recent
    stretch (the last doubling, widened to 8 points), not the whole history's (shrinking it
    toward the whole curve's brought back the learning phase's: the 30% most confident calls on
    Dopamine's curves fell from 0.81 to 0.73 balanced accuracy, ``bench_accuracy.py``)."""
    c, y = np.asarray(compute, dtype=float), np.asarray(values, dtype=float)
    if c.size < 3:
        return math.nan
    mask = recent_window(c)
    return noise_sd(y[mask]) if int(mask.sum()) >= 3 else noise_sd(y)


def fit_knee(predict, first: float, last: float) -> float:  # noqa: ANN001 - a Predict
    """Where the fitted curve's gain per doubling fell below :data:`KNEE_ROI` of the doubling
    before's, for good (the stretch below it runs to ``last``, and the curve still rises there);
    NaN while the ratio at ``last`` is at least ``KNEE_ROI``."""
    if not (first > 0 and last > 2.0 * first):
        return math.nan
    grid = np.geomspace(2.0 * first, last, 120)
    p = np.asarray(predict(np.concatenate([grid / 2.0, grid, 2.0 * grid])), dtype=float)
    before, now, after = p[: grid.size], p[grid.size: 2 * grid.size], p[2 * grid.size:]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(now - before > 0, (after - now) / (now - before), np.nan)
    holds = np.isfinite(ratio) & (ratio >= KNEE_ROI)
    if not holds.any() or holds[-1]:
        return math.nan
    j = int(np.flatnonzero(holds)[-1]) + 1
    if j >= grid.size or not (after[j] > now[j]):
        return math.nan
    return float(grid[j])


def se_of(e: Estimate | None, confidence: float) -> float:
    """The standard error an estimate's interval implies (NaN when it has none)."""
    if e is None or not (math.isfinite(e.lo) and math.isfinite(e.hi) and math.isfinite(e.value)):
        return math.nan
    z = float(ndtri(0.5 + confidence / 2.0))
    return max(e.hi - e.lo, 0.0) / (2.0 * z)


def _beyond(d: float, *errors: float) -> float:
    """``sqrt(d^2 - sum of errors^2)`` when positive, else 0 (method of moments, over
    :func:`~saturate.fit.prep.pow2_scale` so no square overflows)."""
    u = pow2_scale(d, *errors)
    d2 = (d / u) ** 2 - sum((e / u) ** 2 for e in errors)
    return u * math.sqrt(d2) if math.isfinite(d2) and d2 > 0 else 0.0


def curvature_sd(compute: np.ndarray, values: np.ndarray, trend: Trend, confidence: float
                 ) -> float:
    """How much the slope per doubling changed from the doubling before, beyond the two slopes'
    own errors: what a persistence forecast misses on a bending curve (0 without the earlier
    slope)."""
    c, y = np.asarray(compute, dtype=float), np.asarray(values, dtype=float)
    keep = c <= c[-1] / 2.0
    before = trend_test(c[keep], y[keep], confidence=confidence) if keep.sum() >= 2 else None
    if before is None:
        return 0.0
    s, b = trend.slope_per_doubling, before.slope_per_doubling
    se_t, se_b = se_of(s, confidence), se_of(b, confidence)
    if not all(map(math.isfinite, (s.value, b.value, se_t, se_b))):
        return 0.0
    return _beyond(s.value - b.value, se_t, se_b)


def misfit_sd(predict, compute: np.ndarray, trend: Trend, confidence: float  # noqa: ANN001
              ) -> float:
    """How far the fit's own slope over the trend's window misses the trend, beyond the trend's
    error: the monotone laws cannot see a turn, so the fit must not outweigh the trend there."""
    from saturate.measure.quantities import recent_slope

    c = np.asarray(compute, dtype=float)
    fr = recent_slope(predict, trend.compute_from, trend.compute_to, c[np.isfinite(c) & (c > 0)])
    s = trend.slope_per_doubling
    se_t = se_of(s, confidence)
    if not (math.isfinite(fr) and math.isfinite(s.value) and math.isfinite(se_t)):
        return 0.0
    return _beyond(fr - s.value, se_t)
