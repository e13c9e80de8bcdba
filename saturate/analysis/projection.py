"""Forecasts beyond the last compute from the call's gain distribution, so the forecasts, the gain
per doubling and the verdict tell one story.

The forecast at ``k C`` (``h = log2 k`` doublings ahead) is the current level plus the gain the
call expects: ``level + E[G] * r(h)``, where ``G`` is the next doubling's gain behind the call
(:func:`saturate.analysis.decision.decide`: the curve's own estimate, pooled with its siblings,
bounded by the metric's domain) and ``r(h)`` how the gain accumulates over ``h`` doublings:
the fitted laws' own shape ``(f(kC) - f(C)) / (f(2C) - f(C))`` when it is defined, held to
``[1, h]`` (a curve whose gain per doubling shrinks, as every saturating law's does, gains at
least the next doubling's and at most ``h`` times it); ``h`` without a fit (the recent pace
repeats). At ``k = 2`` the forecast is exactly ``level + E[G]``: the reported gain per doubling
is the difference of the forecasts at ``C`` and ``2C``. The interval is the gain's interval
scaled the same way. Forecasts stay inside the metric's domain.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from saturate.analysis.decision import Decision
from saturate.analysis.outlook import Outlook
from saturate.results import ForecastPoint

Shape = Callable[[float], float]
"""``h -> f(2^h C) - f(C)`` on the larger-is-better scale (the fit), or None."""


def accumulation(h: float, first: float, ahead: float) -> float:
    """``r(h)``: the gain over ``h`` doublings over the next doubling's, from the fit's gain
    over the next doubling (``first``) and over the ``h`` ahead (``ahead``); ``h`` when the
    fit's shape is undefined (no fit, or a fit that does not rise over the next doubling)."""
    if h <= 1.0:
        return max(h, 0.0)
    if not (math.isfinite(first) and math.isfinite(ahead) and first > 0):
        return h
    return min(max(ahead / first, 1.0), h)


def project(
    outlook: Outlook,
    decision: Decision,
    points: tuple[ForecastPoint, ...],
    compute_last: float,
    shape: Shape | None = None,
) -> tuple[ForecastPoint, ...]:
    """The forecasts at the computes of ``points`` beyond ``compute_last`` (others unchanged)."""
    g = decision.gain
    if not math.isfinite(g.value):
        return points
    sign = 1.0 if outlook.direction == "higher" else -1.0
    first = shape(1.0) if shape is not None else math.nan
    out = []
    for fp in points:
        if not fp.compute > compute_last:
            out.append(fp)
            continue
        h = math.log2(fp.compute / compute_last)
        r = accumulation(h, first, shape(h) if shape is not None else math.nan)
        gains = [min(max(v * r, outlook.lower), outlook.upper) for v in (g.value, g.lo, g.hi)]
        values = [outlook.level + sign * v for v in gains]
        lo, hi = (min(values[1:]), max(values[1:])) if all(map(math.isfinite, gains[1:])) else (
            math.nan, math.nan)
        out.append(ForecastPoint(fp.at, fp.compute, values[0], min(lo, values[0]),
                                 max(hi, values[0]), fp.identified and decision.gain.identified))
    return tuple(out)
