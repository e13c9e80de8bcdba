"""Where to spend the next GPU-hours: rank runs to extend by an upper confidence bound on the
forecast gain per GPU-hour (the optimism-under-uncertainty rule of bandits).

For run ``i`` at compute ``c_i`` with ``r_i`` GPU-hours per unit of compute, ``h`` more GPU-hours
buy ``f_i(c_i + h / r_i) - f_i(c_i)`` (larger-is-better scale), with bootstrap draws from the fit.

* ranking: each run extended by the whole budget alone; score = upper quantile of the gain draws
  (at the chosen confidence) per GPU-hour. A run whose forecast is uncertain ranks high only if its
  optimistic gain is high: that is the exploration bonus.
* plan: the budget split in ``chunks`` equal parts, each given to the run with the best UCB of the
  marginal gain per GPU-hour given what it already received (a greedy bandit allocation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from saturate.analysis.direction import signed
from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings, curves_by_metric
from saturate.diagnostics.cost import cost_per_point, point_size
from saturate.diagnostics.registry import (
    EST,
    NUM,
    STR,
    array,
    fields,
    kind,
    nullable,
    register,
)
from saturate.errors import InputError
from saturate.results import Estimate, format_estimate, jsonable

__all__ = [
    "AllocationChoice",
    "Allocation",
    "gain_draws",
    "allocate",
    "allocation_diagnostic",
    "allocation_diagnostics",
]


@dataclass(frozen=True)
class AllocationChoice:
    """One candidate run: its gain if given the whole budget, its UCB score, and its plan share."""

    run: str
    run_id: str
    metric: str
    compute_last: float
    hours_per_compute: float
    gain: Estimate
    ucb_per_gpu_hour: float
    planned_hours: float
    planned_gain: Estimate
    cost_per_point: Estimate | None = None

    def to_dict(self) -> dict[str, Any]:
        return jsonable({
            "run": self.run, "run_id": self.run_id, "metric": self.metric,
            "compute_last": self.compute_last, "hours_per_compute": self.hours_per_compute,
            "gain": self.gain.to_dict(), "ucb_per_gpu_hour": self.ucb_per_gpu_hour,
            "planned_hours": self.planned_hours, "planned_gain": self.planned_gain.to_dict(),
            "cost_per_point": None if self.cost_per_point is None else self.cost_per_point.to_dict(),
        })


@dataclass(frozen=True)
class Allocation:
    """Runs ranked by UCB gain per GPU-hour for a budget, and the greedy split of the budget."""

    budget: float
    metric: str
    confidence: float
    choices: tuple[AllocationChoice, ...]
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"budget": self.budget, "metric": self.metric,
                         "confidence": self.confidence,
                         "choices": [c.to_dict() for c in self.choices],
                         "skipped": list(self.skipped)})

    def summary(self) -> str:
        lines = [f"{self.budget:g} GPU-hours on {self.metric}: runs ranked by UCB gain per GPU-hour"]
        for i, c in enumerate(self.choices, 1):
            cost = (f"; {format_estimate(c.cost_per_point)} per point"
                    if c.cost_per_point is not None else "")
            lines.append(
                f"  {i}. {c.run}: whole budget gains {format_estimate(c.gain)} "
                f"(UCB {c.ucb_per_gpu_hour:.3g}/GPU-hour); plan {c.planned_hours:g} h -> "
                f"{format_estimate(c.planned_gain)}{cost}"
            )
        lines += [f"  skipped {s}" for s in self.skipped]
        return "\n".join(lines)


def gain_draws(ref: CurveRef, extra_compute: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Point gains (n,) and bootstrap gains (n_boot, n) from the last compute to
    ``last + extra_compute`` (larger-is-better scale); metrics observed within [0, 1] are
    forecast within it."""
    fit = ref.analysis.fit
    last = float(ref.analysis.compute_last)
    x = np.concatenate([[last], last + np.asarray(extra_compute, dtype=float)])
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.asarray(fit.predict(x), float)
        s = np.asarray(fit.predict_samples(x), float)
        if ref.value.size and ref.value.min() >= 0.0 and ref.value.max() <= 1.0:
            # A rate or accuracy cannot leave [0, 1], whatever a law extrapolates.
            p, s = np.clip(p, 0.0, 1.0), np.clip(s, 0.0, 1.0)
        p = np.asarray(signed(p, ref.direction), float)
        s = np.asarray(signed(s, ref.direction), float)
        return p[1:] - p[0], s[:, 1:] - s[:, :1]


def _estimate(point: float, draws: np.ndarray, confidence: float) -> Estimate:
    d = draws[np.isfinite(draws)]
    if d.size < 2:
        return Estimate(point, identified=False)
    q = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(d, [q, 1.0 - q])
    return Estimate(point, float(min(lo, point)), float(max(hi, point)))


def allocate(
    refs: Sequence[CurveRef],
    budget: float,
    *,
    confidence: float = 0.9,
    hours_per_compute: Mapping[tuple[str, str], float] | None = None,
    gpu_hour_cost: float | None = None,
    chunks: int = 20,
) -> Allocation:
    """Rank the analysed curves ``refs`` (one metric) for ``budget`` GPU-hours; see module doc."""
    if not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget > 0):
        raise InputError(f"--budget must be a number of GPU-hours > 0, got {budget!r}")
    if not refs:
        raise InputError("allocate: no analysed curves to choose from")
    rates = dict(hours_per_compute or {})
    q_hi = 1.0 - (1.0 - confidence) / 2.0
    usable, skipped = [], []
    for r in refs:
        if r.analysis is None or r.analysis.fit is None:
            skipped.append(f"{r.run}: no fitted curve")
            continue
        usable.append(r)
    if not usable:
        raise InputError("allocate: no candidate run has a fitted curve (too few points?)")
    step = budget / chunks
    grid_h = step * np.arange(1, chunks + 1)
    table = {}
    for r in usable:
        rate = float(rates.get((r.source, r.run_id), 1.0))
        p, s = gain_draws(r, grid_h / rate)
        table[r.run_id] = (r, rate, p, s)
    # Greedy bandit split: marginal UCB gain of the next chunk, given what each run already has.
    given = dict.fromkeys(table, 0)
    for _ in range(chunks):
        best, best_score = None, -math.inf
        for rid, (_, _, _, s) in table.items():
            k = given[rid]
            prev = s[:, k - 1] if k else np.zeros(s.shape[0])
            marg = s[:, k] - prev
            score = float(np.quantile(marg[np.isfinite(marg)], q_hi)) if np.isfinite(marg).any() \
                else -math.inf
            if score > best_score:
                best, best_score = rid, score
        if best is None:
            break
        given[best] += 1
    choices = []
    for rid, (r, rate, p, s) in table.items():
        gain = _estimate(float(p[-1]), s[:, -1], confidence)
        ucb = (float(np.nanquantile(s[:, -1], q_hi)) if np.isfinite(s[:, -1]).any()
               else math.nan) / budget
        k = given[rid]
        planned = (_estimate(float(p[k - 1]), s[:, k - 1], confidence) if k
                   else Estimate(0.0, 0.0, 0.0))
        cpp = None
        if gpu_hour_cost is not None:
            cpp = cost_per_point(gain, budget, gpu_hour_cost, point_size(r.value))
        choices.append(AllocationChoice(
            r.run, r.run_id, r.metric, float(r.analysis.compute_last), rate, gain,
            ucb, float(k * step), planned, cpp,
        ))
    choices.sort(key=lambda c: -c.ucb_per_gpu_hour if math.isfinite(c.ucb_per_gpu_hour)
                 else math.inf)
    return Allocation(float(budget), usable[0].metric, confidence, tuple(choices), tuple(skipped))


def allocation_diagnostic(alloc: Allocation) -> Diagnostic:
    """The allocation as one ``allocation`` diagnostic (info)."""
    top = alloc.choices[0]
    plan = ", ".join(f"{c.run} {c.planned_hours:g} h" for c in alloc.choices if c.planned_hours)
    message = (
        f"next {alloc.budget:g} GPU-hours on {alloc.metric}: extend {top.run} first (UCB "
        f"{top.ucb_per_gpu_hour:.3g} per GPU-hour, expected gain {format_estimate(top.gain)}); "
        f"split: {plan}"
    )
    return Diagnostic(kind="allocation", severity="info", run=top.run, run_id=top.run_id,
                      metrics=(alloc.metric,), message=message, compute=top.compute_last,
                      details=alloc.to_dict())


def allocation_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None,
    hours_per_compute: Mapping[tuple[str, str], float] | None = None,
) -> list[Diagnostic]:
    """One ``allocation`` diagnostic per metric with two or more fitted runs, when
    ``settings.budget`` is given."""
    settings = settings or DiagnosticSettings()
    if settings.budget is None:
        return []
    return [
        allocation_diagnostic(allocate(
            members, settings.budget, confidence=settings.confidence,
            hours_per_compute=hours_per_compute, gpu_hour_cost=settings.gpu_hour_cost,
        ))
        for members in curves_by_metric(refs, fitted=True).values() if len(members) >= 2
    ]


_CHOICE = fields(run=STR, run_id=STR, metric=STR, compute_last=NUM, hours_per_compute=NUM,
                 gain=EST, ucb_per_gpu_hour=NUM, planned_hours=NUM, planned_gain=EST,
                 cost_per_point=nullable(EST))
register(
    lambda given: allocation_diagnostics(given.refs, given.settings, given.hours_per_compute),
    kind("allocation", "info",
         "where to spend the next --budget GPU-hours: runs ranked by UCB gain per GPU-hour",
         fields(budget=NUM, metric=STR, confidence=NUM, choices=array(_CHOICE),
                skipped=array(STR))),
    order=70,
)
