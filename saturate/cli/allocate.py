"""``saturate allocate``: which runs to extend with the next GPU-hours (UCB on forecast gain)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from saturate.cli import app
from saturate.cli.common import (
    Budget,
    Compute,
    Confidence,
    ConfigPath,
    Experiment,
    Filter,
    GpuHourCost,
    GpuHours,
    GroupBy,
    HigherIsBetter,
    LowerIsBetter,
    Metric,
    NBoot,
    Out,
    Run,
    Seed,
    Sources,
    handle_errors,
    run_analysis,
    write_text,
)
from saturate.errors import SettingsError
from saturate.results import format_estimate

AllocFormat = Annotated[str, typer.Option("--format", "-f", help="table | json.")]


@app.command()
@handle_errors
def allocate(
    sources: Sources = None,
    budget: Budget = None,
    experiment: Experiment = None,
    filter: Filter = None,
    metric: Metric = None,
    run: Run = None,
    compute: Compute = None,
    group_by: GroupBy = None,
    gpu_hours: GpuHours = None,
    gpu_hour_cost: GpuHourCost = None,
    lower_is_better: LowerIsBetter = None,
    higher_is_better: HigherIsBetter = None,
    confidence: Confidence = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    config: ConfigPath = None,
    fmt: AllocFormat = "table",
    out: Out = None,
) -> None:
    """Rank runs to extend with --budget GPU-hours by an upper confidence bound on the gain.

    --budget, --gpu-hours and --gpu-hour-cost fall back to ``budget``, ``gpu_hours`` and
    ``gpu_hour_cost`` in \\[tool.saturate].
    """
    from saturate.config import load_config, parse_positive
    from saturate.diagnostics import DiagnosticSettings, collect_curves
    from saturate.diagnostics import allocate as allocate_runs
    from saturate.diagnostics.cost import hours_per_compute
    from saturate.diagnostics.naming import is_instability

    cfg = load_config(config)
    budget_h = parse_positive(budget, "--budget") if budget is not None else cfg.budget
    if budget_h is None:
        raise SettingsError("--budget is required (GPU-hours to spend, e.g. --budget 5000), "
                            "or set budget in [tool.saturate]")
    cost = parse_positive(gpu_hour_cost, "--gpu-hour-cost") if gpu_hour_cost is not None \
        else cfg.gpu_hour_cost
    gpu_hours = gpu_hours or cfg.gpu_hours
    fmt = fmt.lower()
    if fmt not in ("table", "json"):
        raise SettingsError(f"--format: expected table or json, got {fmt!r}")
    settings = DiagnosticSettings(budget=budget_h, gpu_hours=gpu_hours, gpu_hour_cost=cost)
    analysis, _ = run_analysis(
        sources, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        group_by=group_by, lower_is_better=lower_is_better, higher_is_better=higher_is_better,
        confidence=confidence, n_boot=n_boot, seed=seed, config=config, gpu_hours=gpu_hours,
        diagnostics=False,
    )
    conf = float(analysis.settings.get("confidence", 0.9))
    rates = hours_per_compute(analysis.data, gpu_hours)
    budget, gpu_hour_cost = budget_h, cost
    per_metric: dict[str, list] = {}
    for ref in collect_curves(analysis.curves, None, settings):
        if not is_instability(ref.metric) and ref.metric != gpu_hours:
            per_metric.setdefault(ref.metric, []).append(ref)
    results = [
        allocate_runs(refs, budget, confidence=conf, hours_per_compute=rates,
                      gpu_hour_cost=gpu_hour_cost)
        for refs in per_metric.values()
    ]
    if fmt == "json":
        doc = {"budget": budget, "allocations": [a.to_dict() for a in results]}
        write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", out)
        return
    if out is not None:
        write_text("\n\n".join(a.summary() for a in results) + "\n", out)
        return
    console = Console(file=sys.stdout, soft_wrap=False)
    if not console.is_terminal:
        console = Console(file=sys.stdout, soft_wrap=False, width=200)
    for a in results:
        table = Table(title=f"{budget:g} GPU-hours on {a.metric}: ranked by UCB gain per GPU-hour")
        cols = ["rank", "run", "gain if given all", "UCB / GPU-hour", "plan (GPU-h)",
                "planned gain"]
        if gpu_hour_cost is not None:
            cols.append("cost per point")
        for col in cols:
            table.add_column(col, justify="left" if col == "run" else "right")
        for i, c in enumerate(a.choices, 1):
            row = [str(i), c.run, format_estimate(c.gain), f"{c.ucb_per_gpu_hour:.3g}",
                   f"{c.planned_hours:g}", format_estimate(c.planned_gain)]
            if gpu_hour_cost is not None:
                row.append(format_estimate(c.cost_per_point))
            table.add_row(*row)
        console.print(table)
        for s in a.skipped:
            console.print(f"  skipped {s}")
