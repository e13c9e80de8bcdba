"""Compute to target: where a curve reaches a value, with an interval, or "not reachable below
the asymptote". The fit and each bootstrap draw are searched on a log grid from the last compute
up to ``horizon`` times it; a target the smoothed data already reached is reported where it did.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import pandas as pd

from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings
from saturate.diagnostics.registry import EST, NUM, fields, kind, nullable, register
from saturate.measure.constants import TARGET_HORIZON
from saturate.results import Direction, Estimate
from saturate.results.codec import Coded
from saturate.vocabulary.names import signed

Status = Literal["reached", "forecast", "unreachable", "beyond_horizon"]
Predict = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class TargetResult(Coded):
    """When a curve reaches ``target`` (metric units). ``compute`` is None when it does not."""

    target: float
    status: Status
    compute: Estimate | None
    share_reaching: float
    asymptote: Estimate
    horizon: float

    def summary(self) -> str:
        c = self.compute  # known when the target is reached or forecast
        if self.status == "reached":
            assert c is not None
            return f"target {self.target:.4g} already reached at compute {c.value:.4g}"
        if self.status == "forecast":
            assert c is not None
            lo = f"{c.lo:.3g}" if math.isfinite(c.lo) else "?"
            hi = f"{c.hi:.3g}" if math.isfinite(c.hi) else "beyond the horizon"
            return (f"target {self.target:.4g} forecast at compute {c.value:.4g} [{lo}, {hi}]; "
                    f"{self.share_reaching:.0%} of bootstrap draws reach it within "
                    f"{self.horizon:.4g}")
        if self.status == "unreachable":
            return (f"target {self.target:.4g} not reachable: below the asymptote "
                    f"{self.asymptote}")
        return (f"target {self.target:.4g} not reached by compute {self.horizon:.4g} "
                f"({self.share_reaching:.0%} of bootstrap draws reach it)")


def _first_at_or_above(values: np.ndarray, grid: np.ndarray, target: float) -> np.ndarray:
    hit = values >= target
    return np.where(hit.any(axis=-1), grid[np.argmax(hit, axis=-1)], np.inf)


def compute_to_target(
    target: float,
    compute: np.ndarray,
    value: np.ndarray,
    predict: Predict | None,
    samples: Predict | None,
    asymptote: Estimate,
    *,
    direction: Direction = "higher",
    confidence: float = 0.9,
    horizon_factor: float = TARGET_HORIZON,
) -> TargetResult:
    """Where a curve (observed ``compute``/``value``, fitted ``predict``/``samples`` in metric
    units) reaches ``target``; ``asymptote`` in metric units decides "not reachable"."""
    c = np.asarray(compute, dtype=float)
    y = np.asarray(signed(np.asarray(value, dtype=float), direction), dtype=float)
    t = float(signed(target, direction))
    horizon = float(c.max()) * horizon_factor
    smooth = pd.Series(y).rolling(min(y.size, 5), center=True, min_periods=1).median().to_numpy()
    reached = np.nonzero(smooth >= t)[0]
    if reached.size:
        return TargetResult(target, "reached", Estimate(float(c[reached[0]])), 1.0, asymptote,
                            horizon)
    a = asymptote
    a_s = signed(np.array([a.value, a.lo, a.hi], dtype=float), direction)
    a_hi = float(np.nanmax(a_s[1:])) if np.isfinite(a_s[1:]).any() else math.nan
    if predict is None:
        return TargetResult(target, "beyond_horizon", None, 0.0, a, horizon)
    grid = np.geomspace(float(c.max()), horizon, 400)
    p = np.asarray(signed(np.asarray(predict(grid), dtype=float), direction), dtype=float)
    point = float(_first_at_or_above(p, grid, t))
    share, lo, hi = 0.0, math.nan, math.nan
    if samples is not None:
        s = np.asarray(signed(np.asarray(samples(grid), dtype=float), direction), dtype=float)
        if s.ndim == 2 and s.shape[0] >= 2:
            cross = _first_at_or_above(s, grid, t)
            share = float(np.mean(np.isfinite(cross)))
            q = (1.0 - confidence) / 2.0
            lo, hi = (float(v) for v in np.quantile(cross, [q, 1.0 - q]))
            lo = lo if math.isfinite(lo) else math.nan
            hi = hi if math.isfinite(hi) else math.nan
    if math.isfinite(point):
        est = Estimate(point, lo, hi, identified=math.isfinite(lo) and math.isfinite(hi))
        return TargetResult(target, "forecast", est, share, a, horizon)
    if a.identified and math.isfinite(a_hi) and a_hi < t:
        return TargetResult(target, "unreachable", None, share, a, horizon)
    return TargetResult(target, "beyond_horizon", None, share, a, horizon)


def target_for_curve(ref: CurveRef, target: float, confidence: float = 0.9) -> TargetResult:
    """:func:`compute_to_target` on an analysed curve (its fit, its asymptote)."""
    ca = ref.analysis
    fit = None if ca is None else ca.fit
    asym = ca.asymptote if ca is not None else Estimate(math.nan, identified=False)
    return compute_to_target(
        target, ref.compute, ref.value,
        None if fit is None else fit.predict,
        None if fit is None else fit.predict_samples,
        asym, direction=ref.direction, confidence=confidence,
    )


def target_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None,
    targets: Mapping[str, float] | None = None,
) -> list[Diagnostic]:
    """One diagnostic per curve whose metric matches a glob of ``targets``."""
    settings = settings or DiagnosticSettings()
    targets = dict(settings.targets if targets is None else targets)
    out = []
    for ref in refs:
        goal = next((v for g, v in targets.items() if fnmatch.fnmatchcase(ref.metric, g)), None)
        if goal is None:
            continue
        res = target_for_curve(ref, float(goal), settings.confidence)
        bad = res.status in ("unreachable", "beyond_horizon")
        out.append(Diagnostic(
            kind="target_unreachable" if bad else "target", severity="warning" if bad else "info",
            run=ref.run, run_id=ref.run_id, source=ref.source, metrics=(ref.metric,),
            message=f"{ref.metric}: {res.summary()}",
            compute=None if res.compute is None else res.compute.value, details=res.to_dict(),
        ))
    return out


_DETAILS = fields(target=NUM, status={"enum": list(get_args(Status))}, compute=nullable(EST),
                  share_reaching=NUM, asymptote=EST, horizon=NUM)
register(
    lambda given: target_diagnostics(given.refs, given.settings),
    kind("target", "info", "the compute at which a curve reaches its --target, with an interval",
         _DETAILS),
    kind("target_unreachable", "warning",
         "a --target out of reach: above the asymptote or beyond the horizon", _DETAILS),
    order=60,
)
