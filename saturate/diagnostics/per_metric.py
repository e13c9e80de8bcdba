"""Diagnostics that compare runs on one metric at a time: the recipe comparison on every objective
the groups share, and the GPU-hour plan on one objective. Only objectives are compared or bought
(:func:`~saturate.diagnostics.base.curves_by_metric`, shared with ``compare`` and ``allocate``).
"""

from __future__ import annotations

from collections.abc import Sequence

from saturate.diagnostics.allocate import Allocation, allocate, choose_objective
from saturate.diagnostics.base import DiagnosticSettings, collect_curves, curves_by_metric
from saturate.diagnostics.cost import gpu_hour_rates
from saturate.diagnostics.recipes import RecipeComparison, compare_recipes
from saturate.errors import SettingsError
from saturate.results import CurveAnalysis
from saturate.table.table import Table


def compare_by_metric(
    curves: Sequence[CurveAnalysis], settings: DiagnosticSettings, group_by: str
) -> list[RecipeComparison]:
    """The recipes (groups of ``group_by``) compared on every metric at least two of them share;
    a :class:`SettingsError` when there is none."""
    refs = collect_curves(curves, None, settings)
    found = [compare_recipes(members, settings, group_by)
             for members in curves_by_metric(refs).values() if len(members) >= 2]
    if not found:
        raise SettingsError(f"group_by {group_by}: fewer than two groups share a metric; "
                            "nothing to compare")
    return found


def plan_allocation(
    curves: Sequence[CurveAnalysis], data: Table | None, settings: DiagnosticSettings,
    named: Sequence[str] | None = None,
) -> Allocation:
    """One plan for ``settings.budget`` GPU-hours on one objective: the one ``named`` by
    ``--metric``, else the one with the most runs (:func:`choose_objective`). ``data`` gives the
    GPU-hours per unit of compute (:func:`gpu_hour_rates`)."""
    if settings.budget is None:
        raise SettingsError("budget is required (GPU-hours to spend), got None")
    rates = None if data is None else gpu_hour_rates(data, settings.gpu_hours, need="--budget")
    refs = collect_curves(curves, data, settings)
    metric, members, why = choose_objective(
        [r for r in refs if r.metric != settings.gpu_hours], named)
    return allocate(members, settings.budget, confidence=settings.confidence,
                    hours_per_compute=rates, gpu_hour_cost=settings.gpu_hour_cost, chosen=why)
