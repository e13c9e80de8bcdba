"""``saturate compare``: recipes side by side in the ScaleRL manner (seeds pooled per group)."""

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

FORMATS = ("table", "json", "markdown")



@settings_command("selection", "analysis", "compare", "engine",
                  params=[sources_argument(), format_option(FORMATS), out_option(), fast_option()])
def compare(
    settings: Settings,
    sources: list[str] | None,
    fmt: str,
    out: Path | None,
    fast: bool,
) -> None:
    """Compare recipes: asymptote A and efficiency B per group, P(beats) and forecast crossing.
    Needs --group-by (or group_by in the settings file)."""
    from saturate.diagnostics import DiagnosticSettings, compare_by_metric
    from saturate.report.recipes import comparisons_json, comparisons_markdown, render_comparisons

    fmt = check_choice(fmt, "--format", FORMATS)
    settings.require("group_by", example="--group-by recipe, the run parameter naming the recipe")
    analysis = run_analysis(sources, settings, diagnostics=False, fast=fast,
                            outputs={"--out": out})
    group_by = settings.group_by
    assert group_by is not None  # required above
    comparisons = compare_by_metric(analysis.curves, DiagnosticSettings.from_settings(settings),
                                    group_by)
    if fmt == "json":
        write_text(comparisons_json(comparisons, group_by), out)
    elif fmt == "markdown":
        write_text(comparisons_markdown(comparisons), out)
    elif out is None:
        render_comparisons(comparisons, terminal(sys.stdout, width=200))
    else:  # the tables as text, written where asked (they went to stdout whatever --out said)
        import io

        text = io.StringIO()
        render_comparisons(comparisons, terminal(text, width=200))
        write_text(text.getvalue(), out)
