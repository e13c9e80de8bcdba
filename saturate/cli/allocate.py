"""``saturate allocate``: one plan for the next GPU-hours on one objective (UCB on forecast gain,
only runs that pay)."""

from __future__ import annotations

import sys
from pathlib import Path

from saturate.cli.common import (
    fast_option,
    format_option,
    out_option,
    run_analysis,
    sources_argument,
    terminal,
    write_text,
)
from saturate.cli.options import settings_command
from saturate.settings import Settings
from saturate.settings.checks import check_choice

FORMATS = ("table", "json")



@settings_command("selection", "analysis", "diagnostics", "engine",
                  params=[sources_argument(), format_option(FORMATS), out_option(), fast_option()])
def allocate(
    settings: Settings,
    sources: list[str] | None,
    fmt: str,
    out: Path | None,
    fast: bool,
) -> None:
    """Plan --budget GPU-hours on one objective: fund only the runs whose next GPU-hours gain
    their threshold per doubling, ranked by an upper confidence bound on the gain.

    The objective is the metric selected by --metric, else the objective with the most runs (the
    plan says which). The x axis must be GPU-hours, or --gpu-hours / --gpus must say how many a
    point cost. --budget, --gpu-hours and --gpu-hour-cost fall back to budget, gpu_hours and
    gpu_hour_cost in the settings file.
    """
    from saturate.diagnostics import DiagnosticSettings, plan_allocation
    from saturate.report.allocation import allocation_json, allocation_text, render_allocation

    fmt = check_choice(fmt, "--format", FORMATS)
    settings.require("budget", example="--budget 5000, the GPU-hours to spend")
    analysis = run_analysis(sources, settings, diagnostics=False, fast=fast,
                            outputs={"--out": out})
    plan = plan_allocation(analysis.curves, analysis.data, DiagnosticSettings.from_settings(settings),
                           named=settings.metric)
    if fmt == "json":
        write_text(allocation_json(plan), out)
    elif out is not None:
        write_text(allocation_text(plan), out)
    else:
        render_allocation(plan, terminal(sys.stdout, width=200),
                          gpu_hour_cost=settings.gpu_hour_cost)
