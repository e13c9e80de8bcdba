"""``saturate analyze``: read runs, analyse every (run, metric) curve, print the report."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

import saturate
from saturate import curves
from saturate.cli import app
from saturate.cli.common import Compute, Experiment, Filter, Metric, Run, Sources, handle_errors


@app.command()
@handle_errors
def analyze(
    sources: Sources = None,
    experiment: Experiment = None,
    filter: Filter = None,
    metric: Metric = None,
    run: Run = None,
    compute: Compute = None,
) -> None:
    """Analyse every (run, metric) curve of the sources and print one row per curve."""
    df = saturate.load(
        sources or None, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute
    )
    summary = curves.curve_table(df)
    console = Console(file=sys.stdout, soft_wrap=True)
    table = Table(title=f"{len(summary)} curves ({df.attrs.get('compute_name', 'step')} axis)")
    for col in ("run", "metric", "points", "compute range", "last value"):
        table.add_column(col, justify="right" if col != "run" and col != "metric" else "left")
    for r in summary.itertuples():
        table.add_row(
            r.run, r.metric, str(r.n_points), f"{r.compute_first:.4g} .. {r.compute_last:.4g}",
            f"{r.value_last:.4g}",
        )
    console.print(table)
