"""Metrics without a verdict (diagnostics and axes, see :mod:`saturate.analysis.roles`),
summarised for the reports: where they are now and which way they moved lately.

A KL or an entropy has no "better" direction to judge, so it gets no verdict, no gain per doubling
and no place in the gate; the diagnostics across metrics (entropy collapse, KL blow-up, length
runaway) read its points. Its summary here is descriptive: first and last value and the slope per
doubling of compute over the recent stretch with its interval (the trend test of the verdicts,
:func:`~saturate.analysis.evidence.trend_test`, on the values as logged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from saturate.analysis.evidence import trend_test
from saturate.analysis.roles import Role
from saturate.results import Trend, format_estimate, jsonable
from saturate.table.curves import iter_curves

__all__ = ["DiagnosticMetric", "summarize_metrics"]


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


@dataclass(frozen=True)
class DiagnosticMetric:
    """One (run, metric) curve that gets no verdict: its ``role`` (``diagnostic`` or ``axis``), the
    ``rule`` that gave it, its extent, first and last value, and its recent ``trend`` (slope per
    doubling of compute in the metric's units, as logged: positive means it rises)."""

    source: str
    experiment: str
    run_id: str
    run: str
    metric: str
    role: Role
    rule: str
    n_points: int
    compute_first: float
    compute_last: float
    value_first: float
    value_last: float
    trend: Trend | None = None

    @property
    def movement(self) -> str:
        """``rising``, ``falling`` or ``flat`` over the recent stretch (at the trend's confidence),
        ``unknown`` without a trend."""
        if self.trend is None:
            return "unknown"
        s = self.trend.slope_per_doubling
        if math.isfinite(s.lo) and s.lo > 0:
            return "rising"
        if math.isfinite(s.hi) and s.hi < 0:
            return "falling"
        return "flat"

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry of ``diagnostic_metrics`` (see ``saturate/report/schema.json``)."""
        return jsonable({
            "source": self.source, "experiment": self.experiment, "run": self.run,
            "run_id": self.run_id, "metric": self.metric, "role": self.role, "rule": self.rule,
            "n_points": self.n_points, "compute_first": self.compute_first,
            "compute_last": self.compute_last, "value_first": self.value_first,
            "value_last": self.value_last, "movement": self.movement,
            "trend": None if self.trend is None else self.trend.to_dict(),
        })

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DiagnosticMetric:
        """The summary of a :meth:`to_dict` entry."""
        trend = d.get("trend")
        return cls(
            source=str(d.get("source", "")), experiment=str(d.get("experiment", "")),
            run_id=str(d["run_id"]), run=str(d["run"]), metric=str(d["metric"]),
            role=d.get("role", "diagnostic"), rule=str(d.get("rule", "")),
            n_points=int(d.get("n_points", 0)), compute_first=_num(d.get("compute_first")),
            compute_last=_num(d.get("compute_last")), value_first=_num(d.get("value_first")),
            value_last=_num(d.get("value_last")),
            trend=Trend.from_dict(trend) if trend else None,
        )

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
    """One :class:`DiagnosticMetric` per curve of the tidy table ``df`` (points of metrics without
    a verdict), with the role and rule of each from ``roles`` (:func:`~saturate.analysis.roles.
    curve_roles`)."""
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
