"""Diagnostics across the metrics of a run and across runs (issue 8).

:func:`run_diagnostics` reads the per-curve analyses (and the tidy table) and returns every
finding as a :class:`Diagnostic` with a ``kind`` that ``gate --fail-on`` can name. Each diagnostic
module declares its kinds in :mod:`.registry`; :data:`KINDS` and the table below are read from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from saturate.diagnostics import registry
from saturate.diagnostics.allocate import Allocation, allocate, choose_objective
from saturate.diagnostics.base import (
    CurveRef,
    Diagnostic,
    DiagnosticSettings,
    collect_curves,
    curves_by_metric,
    parse_pairs,
)
from saturate.diagnostics.cost import gpu_hour_rates
from saturate.diagnostics.recipes import RecipeComparison, compare_recipes
from saturate.diagnostics.target import TargetResult, compute_to_target
from saturate.errors import SettingsError, step
from saturate.results import CurveAnalysis
from saturate.table.table import Table, as_table


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


__all__ = [
    "KINDS", "Diagnostic", "DiagnosticSettings", "CurveRef", "Allocation", "RecipeComparison",
    "TargetResult", "run_diagnostics", "kinds_table", "collect_curves", "allocate",
    "compare_recipes", "compute_to_target", "parse_pairs", "curves_by_metric", "compare_by_metric",
    "plan_allocation",
]

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def run_diagnostics(
    analysis_or_curves: Any,
    data: Table | pd.DataFrame | None = None,
    settings: DiagnosticSettings | None = None,
    **options: Any,
) -> tuple[Diagnostic, ...]:
    """Every diagnostic of ``run_diagnostics(analysis)`` or ``run_diagnostics(curves, data)``.

    ``analysis``: a :class:`saturate.api.Analysis`; ``curves``: :class:`CurveAnalysis` objects with
    ``data`` the Table read. ``options`` are :class:`DiagnosticSettings` fields, used when
    ``settings`` is not given. Errors first, then warnings, then information.
    """
    if settings is None:
        settings = DiagnosticSettings.checked(**options)
    if hasattr(analysis_or_curves, "curves"):
        curves: Sequence[CurveAnalysis] = tuple(analysis_or_curves.curves)
        if data is None:
            data = getattr(analysis_or_curves, "data", None)
    else:
        curves = tuple(analysis_or_curves or ())
    data = None if data is None else as_table(data)  # a tidy frame given by hand: on its step
    # The GPU-hours metric is a second x axis, not a curve to judge.
    refs = [r for r in collect_curves(curves, data, settings) if r.metric != settings.gpu_hours]
    rates: Mapping[tuple[str, str], float] = {}
    if settings.budget is not None or settings.gpu_hour_cost is not None:
        need = "--budget" if settings.budget is not None else "--gpu-hour-cost"
        rates = gpu_hour_rates(data, settings.gpu_hours, need=need, curves=curves)
    given = registry.DiagnosticInput(tuple(refs), settings, rates)
    found = []
    for p in registry.producers():
        with step(f"running the {p.name} diagnostic"):
            found += [registry.check_finding(p, d) for d in p.find(given)]
    order = {k: i for i, k in enumerate(registry.kinds())}
    found.sort(key=lambda d: (_SEVERITY_ORDER[d.severity], order[d.kind], d.run))
    return tuple(found)


def kinds_table() -> str:
    """The registered kinds as a reStructuredText table: kind, severities, help (module)."""
    rows = [(f"``{k.name}``", ", ".join(k.severities),
             f"{k.help} (:mod:`.{p.module.rsplit('.', 1)[-1]}`)")
            for p in registry.producers() for k in p.kinds]
    head = ("kind", "severity", "what it finds")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(2)]
    rule = " ".join(["=" * w for w in widths] + ["=" * 40])

    def line(r: tuple[str, str, str]) -> str:
        return f"{r[0]:<{widths[0]}} {r[1]:<{widths[1]}} {r[2]}".rstrip()

    return "\n".join([rule, line(head), rule, *map(line, rows), rule])


def __getattr__(name: str) -> Any:
    # KINDS is read from the registry each time, so that a diagnostic registered later is in it.
    if name == "KINDS":
        return registry.kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __doc__ is not None:
    __doc__ += "\n" + kinds_table() + "\n"
