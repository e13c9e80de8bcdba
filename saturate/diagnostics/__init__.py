"""Diagnostics across the metrics of a run and across runs (issue 8).

:func:`run_diagnostics` reads the per-curve analyses (and the tidy table) and returns every
finding as a :class:`Diagnostic` with a ``kind`` that ``gate --fail-on`` can name:

=================== ===========================================================================
``divergence``        a benchmark stopped following the training reward (:mod:`.divergence`)
``sharpening``        pass@1 rises while pass@k at large k does not (:mod:`.passk`)
``slice_saturated``   some slices saturated while others scale (``slices``: all scale)
``entropy_collapse``  ``kl_blowup``, ``length_runaway``, ``gradient_conflict`` (:mod:`.instability`)
``recipe``            recipes compared: A, B, P(beats), crossing (:mod:`.recipes`)
``target``            compute to reach a target (``target_unreachable``) (:mod:`.target`)
``allocation``        where to spend the next GPU-hours (:mod:`.allocate`)
``cost``              cost per point, RL share of pre-training compute (:mod:`.cost`)
=================== ===========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from saturate.diagnostics.allocate import Allocation, allocate, allocation_diagnostic
from saturate.diagnostics.base import (
    KINDS,
    CurveRef,
    Diagnostic,
    DiagnosticSettings,
    collect_curves,
    parse_pairs,
)
from saturate.diagnostics.cost import cost_diagnostics, hours_per_compute
from saturate.diagnostics.divergence import divergence_diagnostics
from saturate.diagnostics.instability import instability_diagnostics
from saturate.diagnostics.passk import passk_diagnostics
from saturate.diagnostics.per_metric import allocate_by_metric, compare_by_metric, curves_by_metric
from saturate.diagnostics.recipes import RecipeComparison, compare_recipes, recipe_diagnostics
from saturate.diagnostics.slices import slice_diagnostics
from saturate.diagnostics.target import TargetResult, compute_to_target, target_diagnostics
from saturate.results import CurveAnalysis

__all__ = [
    "KINDS",
    "Diagnostic",
    "DiagnosticSettings",
    "CurveRef",
    "Allocation",
    "RecipeComparison",
    "TargetResult",
    "run_diagnostics",
    "collect_curves",
    "allocate",
    "compare_recipes",
    "compute_to_target",
    "parse_pairs",
    "curves_by_metric",
    "compare_by_metric",
    "allocate_by_metric",
]

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def run_diagnostics(
    analysis_or_curves: Any,
    data: pd.DataFrame | None = None,
    settings: DiagnosticSettings | None = None,
    **options: Any,
) -> tuple[Diagnostic, ...]:
    """Every diagnostic of an analysis: ``run_diagnostics(analysis)`` or
    ``run_diagnostics(curves, data, settings)``.

    ``analysis_or_curves``: a :class:`saturate.api.Analysis` (its curves and data are used), or a
    sequence of :class:`~saturate.results.CurveAnalysis`. ``options`` are
    :class:`DiagnosticSettings` fields, used when ``settings`` is not given. Errors first, then
    warnings, then information.
    """
    if settings is None:
        settings = DiagnosticSettings(**options)
    if hasattr(analysis_or_curves, "curves"):
        curves: Sequence[CurveAnalysis] = tuple(analysis_or_curves.curves)
        if data is None:
            data = getattr(analysis_or_curves, "data", None)
    else:
        curves = tuple(analysis_or_curves or ())
    # The GPU-hours metric is a second x axis, not a curve to judge.
    refs = [r for r in collect_curves(curves, data, settings) if r.metric != settings.gpu_hours]
    rates = hours_per_compute(data, settings.gpu_hours)
    found: list[Diagnostic] = []
    found += divergence_diagnostics(refs, settings)
    found += passk_diagnostics(refs, settings)
    found += slice_diagnostics(refs, settings)
    found += instability_diagnostics(refs, settings)
    found += recipe_diagnostics(refs, settings)
    found += target_diagnostics(refs, settings)
    found += cost_diagnostics(refs, settings, rates)
    if settings.budget is not None:
        for members in curves_by_metric(refs, fitted=True).values():
            if len(members) >= 2:
                found.append(allocation_diagnostic(allocate(
                    members, settings.budget, confidence=settings.confidence,
                    hours_per_compute=rates, gpu_hour_cost=settings.gpu_hour_cost,
                )))
    order = {k: i for i, k in enumerate(KINDS)}
    found.sort(key=lambda d: (_SEVERITY_ORDER[d.severity], order.get(d.kind, 99), d.run))
    return tuple(found)
