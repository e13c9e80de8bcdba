"""Forecasts beyond the last compute from the call's gain distribution, so the forecasts, the gain
per doubling and the verdict tell one story.

The forecast ``h`` doublings ahead is ``level + E[G] * r(h)``: ``G`` the call's next-doubling gain
(:func:`saturate.analysis.decision.decide`), ``r(h)`` the fit's shape ``(f(kC) - f(C)) / (f(2C) -
f(C))`` held to ``[1, h]`` (``h`` without a fit). At ``k = 2`` it is exactly ``level + E[G]``.
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
    """``r(h)``: the fit's gain over ``h`` doublings (``ahead``) over its gain over the next one
    (``first``), held to ``[1, h]``; ``h`` when that shape is undefined (no fit, or no rise)."""
    if h <= 1.0:
        return max(h, 0.0)
    if not (math.isfinite(first) and math.isfinite(ahead) and first > 0):
        return h
    return min(max(ahead / first, 1.0), h)


def project(outlook: Outlook, decision: Decision, points: tuple[ForecastPoint, ...],
            compute_last: float, shape: Shape | None = None) -> tuple[ForecastPoint, ...]:
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
