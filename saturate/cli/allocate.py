"""``saturate allocate``: which runs to extend with the next GPU-hours (UCB on forecast gain)."""

from __future__ import annotations

import sys

from saturate.cli.app import app
from saturate.cli.common import (
    Fast,
    Out,
    Sources,
    format_option,
    handle_errors,
    run_analysis,
    terminal,
    write_text,
)
from saturate.cli.options import ANALYSIS, DIAGNOSTICS, ENGINE, SELECTION, settings_options
from saturate.settings import Settings
from saturate.validation import check_choice

FORMATS = ("table", "json")

AllocFormat = format_option(FORMATS)


@app.command()
@handle_errors
@settings_options(SELECTION, ANALYSIS, DIAGNOSTICS, ENGINE)
def allocate(
    settings: Settings,
    sources: Sources = None,
    fmt: AllocFormat = FORMATS[0],
    out: Out = None,
    fast: Fast = True,
) -> None:
    """Rank runs to extend with --budget GPU-hours by an upper confidence bound on the gain.

    --budget, --gpu-hours and --gpu-hour-cost fall back to budget, gpu_hours and gpu_hour_cost
    in the settings file.
    """
    from saturate.diagnostics import allocate_by_metric
    from saturate.report.allocation import allocations_json, allocations_text, render_allocations

    fmt = check_choice(fmt, "--format", FORMATS)
    settings.require("budget", example="--budget 5000, the GPU-hours to spend")
    analysis = run_analysis(sources, settings, diagnostics=False, fast=fast)
    allocations = allocate_by_metric(analysis.curves, analysis.data, settings.diagnostics())
    if fmt == "json":
        write_text(allocations_json(allocations, settings.budget), out)
    elif out is not None:
        write_text(allocations_text(allocations), out)
    else:
        render_allocations(allocations, terminal(sys.stdout, width=200),
                           gpu_hour_cost=settings.gpu_hour_cost)
