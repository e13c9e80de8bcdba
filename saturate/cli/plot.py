"""``saturate plot``: write one figure per analysed curve (curve + gain per doubling) to a folder,
and one per diagnostic a picture explains (divergence, sharpening, recipe comparison)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from saturate.cli import app
from saturate.cli.common import (
    Compute,
    Confidence,
    ConfigPath,
    Experiment,
    Filter,
    ForecastAt,
    GroupBy,
    HigherIsBetter,
    LowerIsBetter,
    Metric,
    MinGain,
    NBoot,
    Pair,
    Run,
    Seed,
    Sources,
    handle_errors,
    run_analysis,
    split_values,
)

OutDir = Annotated[
    Path,
    typer.Option("--out", "-o", help="Folder to write the figures to (created if missing)."),
]
ImageFormat = Annotated[
    list[str] | None,
    typer.Option("--format", "-f", help="png, svg or pdf (repeatable or comma list; default png).",
                 show_default=False),
]


@app.command()
@handle_errors
def plot(
    sources: Sources = None,
    out: OutDir = Path("saturate-plots"),
    fmt: ImageFormat = None,
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
    config: ConfigPath = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    pair: Pair = None,
) -> None:
    """Write each curve's figure: points, fit, forecast band, asymptote, knee, stop point, gain;
    then the diagnostics' figures (reward vs benchmark, pass@k change vs k, recipe forecasts)."""
    from saturate.errors import SettingsError
    from saturate.report.plots import save_curve_figures, save_diagnostic_figures

    formats = [f.lower() for f in split_values(fmt)] or ["png"]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad:
        raise SettingsError(f"--format: expected png, svg or pdf, got {', '.join(bad)}")
    analysis, _ = run_analysis(
        sources, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        group_by=group_by, lower_is_better=lower_is_better, higher_is_better=higher_is_better,
        min_gain=min_gain, forecast_at=forecast_at, confidence=confidence, n_boot=n_boot,
        seed=seed, config=config, pair=pair,
    )
    for path in save_curve_figures(analysis, out, formats):
        print(path)
    for path in save_diagnostic_figures(analysis, out, formats):
        print(path)
