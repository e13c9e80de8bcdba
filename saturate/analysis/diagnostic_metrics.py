"""Metrics without a verdict (diagnostics and axes, see :mod:`saturate.vocabulary.roles`),
summarised for the reports: first and last value and the recent slope per doubling (the verdicts'
:func:`~saturate.measure.trend.trend_test` on the values as logged). A KL or an entropy has no
"better" direction, so no verdict and no place in the gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
import pandas as pd

from saturate.measure.trend import trend_test
from saturate.results import Trend, format_estimate
from saturate.results.codec import Coded, derived, meta
from saturate.table.curves import iter_curves
from saturate.vocabulary.roles import Role

_NAN = math.nan


@dataclass(frozen=True, kw_only=True)
class DiagnosticMetric(Coded):
    """A (run, metric) curve that gets no verdict.

    ``trend``: the recent slope per doubling in the metric's units as logged (positive: rising).
    The fields are declared in the order of its JSON entry."""

    _json_def: ClassVar[str] = "diagnostic_metric"

    source: str = field(metadata=meta(missing=""))
    experiment: str = field(metadata=meta(missing=""))
    run: str
    run_id: str
    metric: str
    role: Role = field(metadata=meta(missing="diagnostic", required=True,
                                     schema={"enum": ["diagnostic", "axis"]}))
    rule: str = field(metadata=meta("The role rule that applied, in words.", missing="",
                                    required=True))
    n_points: int = field(metadata=meta(missing=0, required=True, schema={"minimum": 0}))
    compute_first: float = field(metadata=meta(missing=_NAN))
    compute_last: float = field(metadata=meta(missing=_NAN))
    value_first: float = field(metadata=meta(missing=_NAN))
    value_last: float = field(metadata=meta(missing=_NAN, required=True))
    trend: Trend | None = field(default=None, metadata=meta(required=True))

    @derived("value_last", "Over the recent stretch, at the report's confidence.")
    def movement(self) -> Literal["rising", "falling", "flat", "unknown"]:
        """``rising``, ``falling`` or ``flat`` at the trend's confidence, ``unknown`` without."""
        if self.trend is None:
            return "unknown"
        s = self.trend.slope_per_doubling
        if math.isfinite(s.lo) and s.lo > 0:
            return "rising"
        if math.isfinite(s.hi) and s.hi < 0:
            return "falling"
        return "flat"

    def summary(self) -> str:
        """``run / actor/kl (diagnostic: health word 'kl'): 0.012 -> 0.949, rising 0.31 [...]``."""
        slope = ("" if self.trend is None else
                 f" {format_estimate(self.trend.slope_per_doubling, missing=None, unidentified='')}"
                 " per doubling")
        return (f"{self.run} / {self.metric} ({self.role}: {self.rule}): {self.value_first:.4g} -> "
                f"{self.value_last:.4g}, {self.movement}{slope}")


def summarize_metrics(
    df: pd.DataFrame, roles: pd.DataFrame, *, confidence: float = 0.9
) -> tuple[DiagnosticMetric, ...]:
    """One :class:`DiagnosticMetric` per curve of the tidy table ``df``, with its role and rule
    from ``roles`` (:func:`~saturate.vocabulary.roles.curve_roles`)."""
    if df.empty:
        return ()
    calls = {(str(r.source), str(r.run_id), str(r.metric)): (r.role, r.rule)
             for r in roles.itertuples(index=False)}
    out = []
    for key, pts in iter_curves(df):
        c, y = pts["compute"].to_numpy(float), pts["value"].to_numpy(float)
        role, rule = calls.get(key, ("diagnostic", "default"))
        trend = None
        if np.ptp(y) > 0:
            with np.errstate(all="ignore"):
                trend = trend_test(c, y, confidence=confidence)
        first = pts.iloc[0]
        out.append(DiagnosticMetric(
            source=key[0], experiment=str(first["experiment"]), run_id=key[1],
            run=str(first["run"]), metric=key[2], role=role, rule=rule, n_points=len(pts),
            compute_first=float(c[0]), compute_last=float(c[-1]), value_first=float(y[0]),
            value_last=float(y[-1]), trend=trend,
        ))
    return tuple(out)
