"""Diagnostics that compare runs on one metric at a time: the curves grouped per task metric, and
the recipe comparison and GPU-hour allocation done for each group.

:func:`~saturate.diagnostics.base.curves_by_metric` is the one grouping rule the allocation diagnostic, ``saturate compare``
and ``saturate allocate`` share: health signals (entropy, KL, length) are not task scores to
compare or buy, and the GPU-hours metric is a second x axis, not a curve.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from saturate.diagnostics.allocate import Allocation, allocate
from saturate.diagnostics.base import DiagnosticSettings, collect_curves, curves_by_metric
from saturate.diagnostics.cost import hours_per_compute
from saturate.diagnostics.recipes import RecipeComparison, compare_recipes
from saturate.errors import SettingsError
from saturate.results import CurveAnalysis

__all__ = ["curves_by_metric", "compare_by_metric", "allocate_by_metric"]


def compare_by_metric(
    curves: Sequence[CurveAnalysis], settings: DiagnosticSettings, group_by: str
) -> list[RecipeComparison]:
    """The recipes (groups of ``group_by``) compared on every metric at least two of them share.

    A :class:`SettingsError` when no metric has two groups: there is nothing to compare.
    """
    refs = collect_curves(curves, None, settings)
    found = [compare_recipes(members, settings, group_by)
             for members in curves_by_metric(refs).values() if len(members) >= 2]
    if not found:
        raise SettingsError(f"group_by {group_by}: fewer than two groups share a metric; "
                            "nothing to compare")
    return found


def allocate_by_metric(
    curves: Sequence[CurveAnalysis], data: pd.DataFrame | None, settings: DiagnosticSettings
) -> list[Allocation]:
    """For every metric, the runs to extend with ``settings.budget`` GPU-hours (see
    :func:`saturate.diagnostics.allocate`); ``data`` gives the GPU-hours per unit of compute."""
    if settings.budget is None:
        raise SettingsError("budget is required (GPU-hours to spend), got None")
    rates = hours_per_compute(data, settings.gpu_hours)
    refs = collect_curves(curves, None, settings)
    return [
        allocate(members, settings.budget, confidence=settings.confidence,
                 hours_per_compute=rates, gpu_hour_cost=settings.gpu_hour_cost)
        for members in curves_by_metric(refs, skip={settings.gpu_hours}).values()
    ]
