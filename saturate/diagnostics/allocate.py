"""Where to spend the next GPU-hours on one objective: only runs whose next GPU-hours pay, ranked
by an upper confidence bound (UCB) on their forecast gain per GPU-hour, as in bandits.

``h`` more GPU-hours buy run ``i`` the fitted ``f_i(c_i + h / r_i) - f_i(c_i)`` (``r_i``: GPU-hours
per unit of compute). A run whose gain per doubling is below its threshold is not funded; a chunk
that multiplies compute by ``m`` pays when its gain reaches ``threshold * log2(m)``. The budget is
given in ``chunks`` to the paying chunk with the best UCB; what no run's next chunk pays for stays
unspent. Ranking: the upper quantile of the whole budget's gain draws per GPU-hour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings, curves_by_metric
from saturate.diagnostics.cost import SameRate, cost_per_point, point_size
from saturate.diagnostics.registry import EST, NUM, STR, array, fields, kind, nullable, register
from saturate.errors import InputError, SettingsError
from saturate.results import Estimate, format_estimate
from saturate.results.codec import Coded, derived
from saturate.vocabulary.names import GPU_HOURS, axis_unit, signed
from saturate.vocabulary.roles import is_benchmark


@dataclass(frozen=True)
class AllocationChoice(Coded):
    """One run that pays: its gain if given the whole budget, its UCB score, and its plan share."""

    _json_order: ClassVar[tuple[str, ...]] = ("run", "run_id", "metric", "p_pays")

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
    p_pays: float | None = None
    """P(pays) of the run's curve: the probability that its next doubling gains the threshold."""


@dataclass(frozen=True)
class Allocation(Coded):
    """The plan for ``budget`` GPU-hours on one objective ``metric``: the runs that pay, ranked by
    UCB gain per GPU-hour, with their share; the runs left out and why (``skipped``); the hours
    no paying run could use (``unspent``); and why this metric (``chosen``)."""

    _json_order: ClassVar[tuple[str, ...]] = ("budget", "unit", "metric", "chosen", "confidence",
                                              "unspent", "headline")

    budget: float
    metric: str
    confidence: float
    choices: tuple[AllocationChoice, ...]
    skipped: tuple[str, ...] = ()
    unspent: float = 0.0
    chosen: str = ""
    unit: str = GPU_HOURS

    @property
    def funded(self) -> tuple[AllocationChoice, ...]:
        """The runs the plan gives GPU-hours to."""
        return tuple(c for c in self.choices if c.planned_hours > 0)

    @property
    def per_unit(self) -> str:
        """The unit in the singular, for rates: ``GPU-hour``."""
        return self.unit[:-1] if self.unit.endswith("s") else self.unit

    @derived(doc="One line: what the plan does.")
    def headline(self) -> str:
        """One line: what the plan does, or that nothing is worth funding."""
        head = f"{self.budget:g} {self.unit} on {self.metric}"
        if not self.funded:
            return (f"{head}: nothing is worth funding: no run's next {self.unit} gain its "
                    "threshold per doubling")
        spent = self.budget - self.unspent
        runs = ", ".join(f"{c.run} {c.planned_hours:g} h" for c in self.funded)
        tail = (f"; {self.unspent:g} {self.unit} left unspent (no run's next chunk pays)"
                if self.unspent > 0 else "")
        return f"{head}: spend {spent:g} {self.unit} on {runs}{tail}"

    def summary(self) -> str:
        lines = [self.headline]
        if self.chosen:
            lines.append(f"  objective: {self.metric} ({self.chosen})")
        for i, c in enumerate(self.choices, 1):
            cost = (f"; {format_estimate(c.cost_per_point)} per point"
                    if c.cost_per_point is not None else "")
            lines.append(
                f"  {i}. {c.run}{'' if c.p_pays is None else f' (P(pays) {c.p_pays:.2f})'}"
                f": the whole budget gains {format_estimate(c.gain)} "
                f"(UCB {c.ucb_per_gpu_hour:.3g} per {self.per_unit}); plan {c.planned_hours:g} "
                f"{self.unit} -> {format_estimate(c.planned_gain)}{cost}"
            )
        lines += [f"  not funded: {s}" for s in self.skipped]
        return "\n".join(lines)


def gain_draws(ref: CurveRef, extra_compute: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Point gains (n,) and bootstrap gains (n_boot, n) from the last compute to
    ``last + extra_compute`` (larger-is-better scale); metrics observed within [0, 1] are
    forecast within it."""
    fit = ref.analysed.fit
    assert fit is not None  # a funded run has a fitted curve (_pays)
    last = float(ref.analysed.compute_last)
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


def choose_objective(
    refs: Sequence[CurveRef], named: Sequence[str] | None = None
) -> tuple[str, list[CurveRef], str]:
    """``(metric, its analysed curves, why)``: the one objective of ``refs`` to plan for.

    With ``named`` (the ``--metric`` patterns) and one objective among the curves, that one;
    otherwise the objective with the most analysed runs, a held-out benchmark first on ties.
    """
    by_metric = {m: [r for r in rs if r.analysis is not None]
                 for m, rs in curves_by_metric(refs).items()}
    by_metric = {m: rs for m, rs in by_metric.items() if rs}
    if not by_metric:
        raise InputError("allocate: no analysed objective to plan for")
    if named and len(by_metric) == 1:
        metric = next(iter(by_metric))
        return metric, by_metric[metric], "named by --metric"
    metric = min(by_metric, key=lambda m: (-len(by_metric[m]), not is_benchmark(m), m))
    others = len(by_metric) - 1
    why = (f"the objective with the most analysed runs ({len(by_metric[metric])}) of the "
           f"{others + 1} objectives; name another with --metric") if others \
        else "the only objective"
    return metric, by_metric[metric], why


def _rates_for(
    refs: Sequence[CurveRef], rates: Mapping[tuple[str, str], float] | None
) -> Mapping[tuple[str, str], float]:
    """GPU-hours per unit of compute per run; without ``rates`` the x axis must be GPU-hours."""
    if rates is not None:
        return rates
    names = {r.analysis.compute_name for r in refs if r.analysis is not None}
    if names and all(axis_unit(n) == GPU_HOURS for n in names):
        return SameRate(1.0)
    raise SettingsError(f"--budget is in GPU-hours, and the x axis {', '.join(sorted(names))} is "
                        "not: give --gpu-hours NAME or --gpus N")


def _pays(ref: CurveRef) -> str | None:
    """Why a run is not worth funding (its gain per doubling does not pay), or ``None``."""
    ca = ref.analysed
    if ca.fit is None:
        return f"{ref.run}: no fitted curve"
    g, t = ca.gain_per_doubling, ca.threshold
    if not math.isfinite(g.value):
        return f"{ref.run}: gain per doubling not estimated"
    if g.value < t or (math.isfinite(g.hi) and g.hi < t):
        return (f"{ref.run}: gain per doubling {format_estimate(g, unidentified='')} is below its "
                f"threshold {t:.3g} ({ca.verdict})")
    return None


def allocate(
    refs: Sequence[CurveRef],
    budget: float,
    *,
    confidence: float = 0.9,
    hours_per_compute: Mapping[tuple[str, str], float] | None = None,
    gpu_hour_cost: float | None = None,
    chunks: int = 20,
    chosen: str = "",
) -> Allocation:
    """Plan ``budget`` GPU-hours over the analysed curves ``refs`` of ONE metric (module doc).

    ``hours_per_compute``: GPU-hours per unit of the x axis per ``(source, run_id)``
    (:func:`~saturate.diagnostics.cost.gpu_hour_rates`); ``None`` when the x axis is GPU-hours,
    otherwise a :class:`~saturate.errors.SettingsError`. A run without a rate is not funded.
    """
    if not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget > 0):
        raise InputError(f"--budget must be a number of GPU-hours > 0, got {budget!r}")
    if not refs or any(r.analysis is None for r in refs):
        raise InputError("allocate: needs the analysed curves of one metric")
    rates = _rates_for(refs, hours_per_compute)
    skipped, table = [], {}
    step = budget / chunks
    grid_h = step * np.arange(1, chunks + 1)
    for r in refs:
        why = _pays(r) or (None if (r.source, r.run_id) in rates else
                           f"{r.run}: no GPU-hours logged for this run")
        if why is not None:
            skipped.append(why)
            continue
        rate = float(rates[(r.source, r.run_id)])
        p, s = gain_draws(r, grid_h / rate)
        c0 = float(r.analysed.compute_last)
        need = r.analysed.threshold * np.log2((c0 + grid_h / rate) / (c0 + (grid_h - step) / rate))
        table[r.run_id] = (r, rate, p, s, need)
    given = _greedy(table, chunks, 1.0 - (1.0 - confidence) / 2.0)
    choices = [_choice(r, rate, p, s, given[rid], step, budget, confidence, gpu_hour_cost)
               for rid, (r, rate, p, s, _) in table.items()]
    choices.sort(key=lambda c: -c.ucb_per_gpu_hour if math.isfinite(c.ucb_per_gpu_hour)
                 else math.inf)
    unspent = budget - step * sum(given.values())
    return Allocation(float(budget), refs[0].metric, confidence, tuple(choices), tuple(skipped),
                      float(max(unspent, 0.0)), chosen)


def _greedy(table: dict, chunks: int, q_hi: float) -> dict[str, int]:
    """Chunks per run: each to the paying chunk with the best UCB marginal gain, until none pays."""
    given = dict.fromkeys(table, 0)
    for _ in range(chunks):
        best, best_score = None, -math.inf
        for rid, (_, _, p, s, need) in table.items():
            k = given[rid]
            if p[k] - (p[k - 1] if k else 0.0) < need[k]:
                continue  # the next chunk of this run does not keep the threshold's rate
            marg = s[:, k] - (s[:, k - 1] if k else 0.0)
            marg = marg[np.isfinite(marg)]
            score = float(np.quantile(marg, q_hi)) if marg.size else -math.inf
            if score > best_score:
                best, best_score = rid, score
        if best is None:
            break
        given[best] += 1
    return given


def _choice(r: CurveRef, rate: float, p: np.ndarray, s: np.ndarray, k: int, step: float,
            budget: float, confidence: float, gpu_hour_cost: float | None) -> AllocationChoice:
    gain = _estimate(float(p[-1]), s[:, -1], confidence)
    q_hi = 1.0 - (1.0 - confidence) / 2.0
    ucb = (float(np.nanquantile(s[:, -1], q_hi)) if np.isfinite(s[:, -1]).any()
           else math.nan) / budget
    planned = (_estimate(float(p[k - 1]), s[:, k - 1], confidence) if k
               else Estimate(0.0, 0.0, 0.0))
    cpp = None
    if gpu_hour_cost is not None:
        cpp = cost_per_point(gain, budget, gpu_hour_cost, point_size(r.value))
    return AllocationChoice(r.run, r.run_id, r.metric, float(r.analysed.compute_last), rate, gain,
                            ucb, float(k * step), planned, cpp, r.analysed.p_pays)


def allocation_diagnostic(alloc: Allocation) -> Diagnostic:
    """The allocation as one ``allocation`` diagnostic (info)."""
    first = alloc.funded[0] if alloc.funded else (alloc.choices[0] if alloc.choices else None)
    return Diagnostic(kind="allocation", severity="info",
                      run=first.run if first else "", run_id=first.run_id if first else "",
                      metrics=(alloc.metric,), message=f"{alloc.headline} ({alloc.chosen})",
                      compute=first.compute_last if first else None, details=alloc.to_dict())


def allocation_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None,
    hours_per_compute: Mapping[tuple[str, str], float] | None = None,
) -> list[Diagnostic]:
    """The ``allocation`` diagnostic of one objective (:func:`choose_objective`) when
    ``settings.budget`` is given."""
    settings = settings or DiagnosticSettings()
    if settings.budget is None:
        return []
    analysed = [r for r in refs if r.analysis is not None]
    if not curves_by_metric(analysed):
        return []
    metric, members, why = choose_objective(analysed)
    return [allocation_diagnostic(allocate(
        members, settings.budget, confidence=settings.confidence,
        hours_per_compute=hours_per_compute, gpu_hour_cost=settings.gpu_hour_cost, chosen=why,
    ))]


_CHOICE = fields(run=STR, run_id=STR, metric=STR, p_pays=NUM, compute_last=NUM,
                 hours_per_compute=NUM, gain=EST, ucb_per_gpu_hour=NUM, planned_hours=NUM,
                 planned_gain=EST, cost_per_point=nullable(EST))
register(
    lambda given: allocation_diagnostics(given.refs, given.settings, given.hours_per_compute),
    kind("allocation", "info",
         "where to spend the next --budget GPU-hours on one objective: the runs that pay, ranked "
         "by UCB gain per GPU-hour",
         fields(budget=NUM, unit=STR, metric=STR, chosen=STR, confidence=NUM, unspent=NUM,
                headline=STR, choices=array(_CHOICE), skipped=array(STR))),
    order=70,
)
