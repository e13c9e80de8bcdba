"""``saturate compare``: recipes side by side in the ScaleRL manner (seeds pooled per group)."""

from __future__ import annotations

import sys

from saturate.cli.common import (
    Fast,
    Out,
    Sources,
    format_option,
    run_analysis,
    terminal,
    write_text,
)
from saturate.cli.options import settings_command
from saturate.settings import Settings
from saturate.settings.checks import check_choice

FORMATS = ("table", "json", "markdown")

CompareFormat = format_option(FORMATS)


@settings_command("selection", "analysis", "compare", "engine")
def compare(
    settings: Settings,
    sources: Sources = None,
    fmt: CompareFormat = FORMATS[0],
    out: Out = None,
    fast: Fast = True,
) -> None:
    """Compare recipes: asymptote A and efficiency B per group, P(beats) and forecast crossing.
    Needs --group-by (or group_by in the settings file)."""
    from saturate.diagnostics import DiagnosticSettings, compare_by_metric
    from saturate.report.recipes import comparisons_json, comparisons_markdown, render_comparisons

    fmt = check_choice(fmt, "--format", FORMATS)
    settings.require("group_by", example="--group-by recipe, the run parameter naming the recipe")
    analysis = run_analysis(sources, settings, diagnostics=False, fast=fast,
                            outputs={"--out": out})
    comparisons = compare_by_metric(analysis.curves, DiagnosticSettings.from_settings(settings), settings.group_by)
    if fmt == "json":
        write_text(comparisons_json(comparisons, settings.group_by), out)
    elif fmt == "markdown":
        write_text(comparisons_markdown(comparisons), out)
    elif out is None:
        render_comparisons(comparisons, terminal(sys.stdout, width=200))
    else:  # the tables as text, written where asked (they went to stdout whatever --out said)
        import io

        text = io.StringIO()
        render_comparisons(comparisons, terminal(text, width=200))
        write_text(text.getvalue(), out)
