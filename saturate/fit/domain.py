"""Keeping a fit inside the metric's domain (``FitSettings.domain``, e.g. ``(0, 1)`` for a rate),
without clipping any value after the fact: level parameters are bounded to the domain in the
solver (:meth:`DomainBounds.laws`); a law whose curve still leaves it before the farthest point the
analysis looks at gets no weight (:meth:`DomainBounds.outside`); a bootstrap refit that leaves it
is replaced by one that stays in (:meth:`DomainBounds.keep_inside`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from saturate.fit.laws import LEVEL_BOUND, Law
from saturate.fit.prep import Normalisation
from saturate.fit.result import parse_at
from saturate.fit.weights import PointFit

FORECAST_HORIZON = 64.0
"""How far ahead, as a multiple of the last compute, the stop point and the recipes' forecast
crossing are searched: six doublings, beyond which an extrapolated RL curve says little."""

Array = NDArray[np.float64]


@dataclass(frozen=True)
class DomainBounds:
    """The domain in fitting coordinates (``lo`` < ``hi``), the normalised computes ``grid`` where
    a law must stay inside it, and the domain as the user wrote it."""

    lo: float
    hi: float
    grid: Array
    text: str

    def laws(self, laws: list[Law]) -> list[Law]:
        """The laws with their level parameters bounded to the domain."""
        out = []
        for law in laws:
            params = tuple(
                replace(p, lower=max(p.lower, self.lo), upper=min(p.upper, self.hi))
                if p.kind == "level" else p
                for p in law.params
            )
            out.append(replace(law, params=params))
        return out

    def outside(self, law: Law, theta: Array) -> NDArray[np.bool_]:
        """Per row of ``theta`` (b, k) or for one (k,), whether the law leaves the domain on the
        grid (non-finite parameters count as outside)."""
        th = np.atleast_2d(np.asarray(theta, dtype=float))
        tol = 1e-12 * (self.hi - self.lo) if math.isfinite(self.hi - self.lo) else 1e-12
        with np.errstate(all="ignore"):
            f = law(self.grid, th)
        bad = ~np.all(np.isfinite(f) & (f >= self.lo - tol) & (f <= self.hi + tol), axis=-1)
        bad |= ~np.all(np.isfinite(th), axis=-1)
        return bad if np.ndim(theta) > 1 else bad[:1]

    def keep_inside(self, law: Law, theta_boot: Array, point: Array) -> Array:
        """The bootstrap refits with those that leave the domain replaced, in turn, by those that
        stay in it (by the point estimate when none does)."""
        bad = self.outside(law, theta_boot)
        if not bad.any():
            return theta_boot
        out = np.array(theta_boot, copy=True)
        good = np.flatnonzero(~bad)
        if good.size == 0:
            out[bad] = point
        else:
            out[bad] = theta_boot[np.resize(good, int(bad.sum()))]
        return out


def domain_bounds(
    domain: tuple[float, float] | None, norm: Normalisation, compute: Array,
    forecast_at: tuple[str | float, ...] = (),
) -> DomainBounds | None:
    """The domain in fitting coordinates, checked from the first compute to the farthest
    forecast point (at least twice :data:`FORECAST_HORIZON`); None without a domain."""
    if domain is None:
        return None
    ends = np.sort(norm.y(np.array(domain, dtype=float)))
    lo, hi = _inner(float(ends[0]), norm, domain, 1.0), _inner(float(ends[1]), norm, domain, -1.0)
    lo, hi = max(lo, -LEVEL_BOUND), min(hi, LEVEL_BOUND)
    c_last = float(compute[-1])
    reach = [c_last] + [parse_at(a, c_last) for a in forecast_at]
    x = norm.x(np.array([compute[0], *reach], dtype=float))
    top = max(float(np.max(x[1:])), 2.0 * FORECAST_HORIZON)
    grid = np.geomspace(max(float(x[0]), 1e-12), top, 96)
    return DomainBounds(lo=lo, hi=hi, grid=grid, text=f"[{domain[0]:g}, {domain[1]:g}]")


def _inner(end: float, norm: Normalisation, domain: tuple[float, float], inward: float) -> float:
    """A finite end in fitting coordinates moved inward by a hair, so that a value on it maps
    back into the domain (the normalisation's round trip is not exact to the last bit)."""
    if not math.isfinite(end):
        return end
    step = 1e-9 * max(1.0, abs(end))
    for _ in range(8):
        y = end + inward * step
        v = float(norm.value(y))
        if domain[0] <= v <= domain[1]:
            return y
        step *= 16.0
    return end + inward * step


def drop_outside(
    points: dict[str, PointFit], laws: list[Law], bounds: DomainBounds
) -> tuple[dict[str, PointFit], tuple[str, ...]]:
    """The point fits with those that leave the domain made unfitted, and their laws' names."""
    by_name = {law.name: law for law in laws}
    out, dropped = dict(points), []
    for name, p in points.items():
        if np.all(np.isfinite(p.theta)) and bounds.outside(by_name[name], p.theta).any():
            out[name] = replace(p, theta=np.full_like(p.theta, np.nan), converged=False)
            dropped.append(name)
    return out, tuple(dropped)
