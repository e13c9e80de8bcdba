"""``saturate compare``: recipes side by side in the ScaleRL manner (seeds pooled per group)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from saturate.cli import app
from saturate.cli.common import (
    Compute,
    Confidence,
    ConfigPath,
    Experiment,
    Filter,
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
    split_values,
    write_text,
)
from saturate.errors import SettingsError
from saturate.results import format_estimate

At = Annotated[
    list[str] | None,
    typer.Option("--at", help="Compute at which to give P(one recipe beats another): Nx the "
                 "largest observed compute or a value (repeatable; default 1x and 4x).",
                 show_default=False),
]
CompareFormat = Annotated[
    str, typer.Option("--format", "-f", help="table | json | markdown.")
]


@app.command()
@handle_errors
def compare(
    sources: Sources = None,
    group_by: GroupBy = None,
    experiment: Experiment = None,
    filter: Filter = None,
    metric: Metric = None,
    run: Run = None,
    compute: Compute = None,
    at: At = None,
    lower_is_better: LowerIsBetter = None,
    higher_is_better: HigherIsBetter = None,
    confidence: Confidence = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    config: ConfigPath = None,
    fmt: CompareFormat = "table",
    out: Out = None,
) -> None:
    """Compare recipes: asymptote A and efficiency B per group, P(beats) and forecast crossing."""
    from saturate.diagnostics import DiagnosticSettings, collect_curves, compare_recipes
    from saturate.diagnostics.naming import is_instability

    fmt = fmt.lower()
    if fmt not in ("table", "json", "markdown"):
        raise SettingsError(f"--format: expected table, json or markdown, got {fmt!r}")
    analysis, cfg = run_analysis(
        sources, experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        group_by=group_by, lower_is_better=lower_is_better, higher_is_better=higher_is_better,
        confidence=confidence, n_boot=n_boot, seed=seed, config=config, diagnostics=False,
    )
    by = analysis.settings.get("group_by")
    if not by:
        raise SettingsError("--group-by is required (the run parameter that names the recipe, "
                            "e.g. --group-by recipe), or set group_by in [tool.saturate]")
    settings = DiagnosticSettings(
        confidence=float(analysis.settings.get("confidence", 0.9)),
        compare_at=tuple(split_values(at)) or ("1x", "4x"),
        seed=int(analysis.settings.get("seed", 0)),
        lower_is_better=tuple(analysis.settings.get("lower_is_better") or ()),
        higher_is_better=tuple(analysis.settings.get("higher_is_better") or ()),
    )
    per_metric: dict[str, list] = {}
    for ref in collect_curves(analysis.curves, None, settings):
        if not is_instability(ref.metric):
            per_metric.setdefault(ref.metric, []).append(ref)
    comparisons = [compare_recipes(refs, settings, by) for refs in per_metric.values()
                   if len(refs) >= 2]
    if not comparisons:
        raise SettingsError(f"--group-by {by}: fewer than two groups share a metric; "
                            "nothing to compare")
    if fmt == "json":
        doc = {"group_by": by, "comparisons": [c.to_dict() for c in comparisons]}
        write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", out)
        return
    if fmt == "markdown":
        write_text(_markdown(comparisons), out)
        return
    console = Console(file=sys.stdout, soft_wrap=False)
    if not console.is_terminal:
        console = Console(file=sys.stdout, soft_wrap=False, width=200)
    for comp in comparisons:
        table = Table(title=f"{comp.metric}: recipes by {by}")
        for col in ("recipe", "seeds", "A (asymptote)", "B (efficiency)", "last value",
                    "verdict"):
            table.add_column(col, justify="left" if col in ("recipe", "verdict") else "right")
        for r in comp.recipes:
            table.add_row(r.label, str(r.n_seeds), format_estimate(r.A), format_estimate(r.B),
                          f"{r.value_last:.4g} at {r.compute_last:.4g}", r.verdict)
        console.print(table)
        for p in comp.pairs:
            console.print(f"  {p.first} vs {p.second}: {p.summary()}")


def _markdown(comparisons: list) -> str:
    lines = []
    for comp in comparisons:
        lines += [f"## {comp.metric}: recipes by {comp.group_by}", "",
                  "| recipe | seeds | A (asymptote) | B (efficiency) | last value | verdict |",
                  "|---|---:|---:|---:|---:|---|"]
        lines += [f"| {r.label} | {r.n_seeds} | {format_estimate(r.A)} | {format_estimate(r.B)} "
                  f"| {r.value_last:.4g} at {r.compute_last:.4g} | {r.verdict} |"
                  for r in comp.recipes]
        lines.append("")
        lines += [f"- {p.first} vs {p.second}: {p.summary()}" for p in comp.pairs]
        lines.append("")
    return "\n".join(lines)
