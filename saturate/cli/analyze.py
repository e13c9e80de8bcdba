"""``saturate analyze``: read runs, analyse every (run, metric) curve and the diagnostics across
metrics and runs, print or write the report.

The options and :func:`~saturate.cli.common.run_analysis` are shared with ``gate``, ``plot``,
``compare`` and ``allocate`` (:mod:`saturate.cli.common`).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

from saturate.cli import app
from saturate.cli.common import (
    Budget,
    Compute,
    Confidence,
    ConfigPath,
    Experiment,
    Fast,
    Filter,
    ForecastAt,
    GpuHourCost,
    GpuHours,
    GroupBy,
    HigherIsBetter,
    LowerIsBetter,
    Metric,
    MinGain,
    NBoot,
    Out,
    Pair,
    PretrainCompute,
    Run,
    Seed,
    Sources,
    Target,
    handle_errors,
    run_analysis,
    write_text,
)
from saturate.config import load_config
from saturate.errors import SettingsError
from saturate.report import FORMATS

__all__ = ["analyze", "run_analysis", "write_text"]

Format = Annotated[
    str | None,
    typer.Option("--format", "-f", help=f"Report format: {' | '.join(FORMATS)} (default table).",
                 show_default=False),
]


@app.command()
@handle_errors
def analyze(
    sources: Sources = None,
    experiment: Experiment = None,
    filter: Filter = None,
    metric: Metric = None,
    run: Run = None,
    compute: Compute = None,
    group_by: GroupBy = None,
    lower_is_better: LowerIsBetter = None,
    higher_is_better: HigherIsBetter = None,
    min_gain: MinGain = None,
    forecast_at: ForecastAt = None,
    confidence: Confidence = None,
    target: Target = None,
    pair: Pair = None,
    gpu_hour_cost: GpuHourCost = None,
    pretrain_compute: PretrainCompute = None,
    gpu_hours: GpuHours = None,
    budget: Budget = None,
    fmt: Format = None,
    out: Out = None,
    config: ConfigPath = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    fast: Fast = True,
    log_back: Annotated[
        bool,
        typer.Option(
            "--log-back",
            help="Write verdict tags (saturate.<metric>.*), the HTML report and figures to the "
            "analysed MLflow runs. Without it nothing is ever written to the tracking store.",
        ),
    ] = False,
) -> None:
    """Analyse every (run, metric) curve: is it still scaling, slowing, saturated or regressing?

    Then the diagnostics across metrics and runs: reward/benchmark divergence, pass@k sharpening,
    slices, instabilities, recipes, compute to --target, cost.
    """
    cfg_format = load_config(config).format
    fmt = (fmt or cfg_format or "table").lower()
    if fmt not in FORMATS:
        raise SettingsError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    analysis, _ = run_analysis(
        sources, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        group_by=group_by, lower_is_better=lower_is_better, higher_is_better=higher_is_better,
        min_gain=min_gain, forecast_at=forecast_at, confidence=confidence, n_boot=n_boot,
        seed=seed, config=config, target=target, pair=pair, gpu_hour_cost=gpu_hour_cost,
        pretrain_compute=pretrain_compute, gpu_hours=gpu_hours, budget=budget, fast=fast,
    )
    if log_back:
        from saturate.tracker.writeback import log_back as write_back

        print(write_back(analysis).summary(), file=sys.stderr)
    if fmt == "table" and out is None:
        from saturate.report.table import render_table

        console = Console(file=sys.stdout, soft_wrap=False)
        if not console.is_terminal:
            # Piped or captured output has no width to fit; keep every row on one line.
            console = Console(file=sys.stdout, soft_wrap=False, width=240)
        render_table(analysis, console)
        return
    from saturate.report import render

    write_text(render(analysis, fmt), out)
