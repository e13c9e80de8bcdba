"""``saturate gate``: exit 0 when every selected curve still scales, 1 when any curve or named
diagnostic fails, 2 on errors.

``--fail-on`` names verdicts (saturated and regressing always fail), ``collapse``, and diagnostic
kinds (``divergence``, ``sharpening``, ``entropy_collapse``, ...). Under GitHub Actions
(``GITHUB_ACTIONS=true``) it also writes ``::error``/``::warning`` annotations and appends the
gate's decision and the Markdown report to ``$GITHUB_STEP_SUMMARY``; ``--junit PATH`` writes JUnit
XML.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

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
    Pair,
    PretrainCompute,
    Run,
    Seed,
    Sources,
    Target,
    handle_errors,
    run_analysis,
)
from saturate.gate import fail_on_help

FailOn = Annotated[
    list[str] | None,
    typer.Option("--fail-on", help=fail_on_help(), show_default=False),
]
Junit = Annotated[
    Path | None,
    typer.Option("--junit", help="Write JUnit XML (one test case per curve and per failing "
                 "diagnostic) to this path.", show_default=False),
]


@app.command()
@handle_errors
def gate(
    sources: Sources = None,
    min_gain: MinGain = None,
    fail_on: FailOn = None,
    junit: Junit = None,
    experiment: Experiment = None,
    filter: Filter = None,
    metric: Metric = None,
    run: Run = None,
    compute: Compute = None,
    group_by: GroupBy = None,
    lower_is_better: LowerIsBetter = None,
    higher_is_better: HigherIsBetter = None,
    forecast_at: ForecastAt = None,
    confidence: Confidence = None,
    target: Target = None,
    pair: Pair = None,
    gpu_hour_cost: GpuHourCost = None,
    pretrain_compute: PretrainCompute = None,
    gpu_hours: GpuHours = None,
    budget: Budget = None,
    config: ConfigPath = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    fast: Fast = True,
) -> None:
    """CI gate: fail (exit 1) when a curve has saturated or regresses, or a diagnostic named in
    --fail-on is found; 0 when all pass."""
    from saturate.config import load_config
    from saturate.gate import (
        append_step_summary,
        decide,
        gate_markdown,
        github_annotations,
        parse_fail_on,
        write_junit,
    )
    from saturate.report.markdown import render_markdown

    # Checked before the analysis, so that a misspelt kind fails fast.
    kinds = parse_fail_on(list(fail_on or ()) or list(load_config(config).fail_on))
    analysis, _ = run_analysis(
        sources, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        group_by=group_by, lower_is_better=lower_is_better, higher_is_better=higher_is_better,
        min_gain=min_gain, forecast_at=forecast_at, confidence=confidence, n_boot=n_boot,
        seed=seed, config=config, target=target, pair=pair, gpu_hour_cost=gpu_hour_cost,
        pretrain_compute=pretrain_compute, gpu_hours=gpu_hours, budget=budget, fast=fast,
        require_min_gain=True,
    )
    result = decide(analysis.curves, fail_on=kinds, diagnostics=analysis.diagnostics)
    if junit is not None:
        write_junit(result, junit)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations(result):
            print(line)
        verdict = "passed" if result.passed else "failed"
        report = render_markdown(analysis, title=f"saturate gate {verdict}")
        head, _, rest = report.partition("\n\n")
        append_step_summary(f"{head}\n\n{gate_markdown(result)}{rest}")
    print(result.summary())
    sys.stdout.flush()
    if result.exit_code:
        raise typer.Exit(result.exit_code)
