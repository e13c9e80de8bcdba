"""``saturate analyze``: read runs, analyse every (run, metric) curve and the diagnostics across
metrics and runs, print or write the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from saturate.cli.common import (
    fast_option,
    flag,
    out_option,
    progress_bar,
    run_analysis,
    sources_argument,
    terminal,
    write_text,
)
from saturate.cli.options import settings_command
from saturate.errors import SettingsError, step
from saturate.settings import Settings

_PARAMS = [
    sources_argument(),
    out_option(),
    fast_option(),
    flag("--log-back", "Write verdict tags (saturate.<metric>.*), the HTML report and figures to "
         "the analysed MLflow runs. Without it nothing is ever written to the tracking store."),
    flag("--wide", "Table: every column at full width, whatever the terminal's width (piped "
         "output is $COLUMNS wide, else 120)."),
    flag("--dry-run", "Say what would be analysed (runs, metrics with their role, direction and "
         "domain, the x axis, points per curve, run parameters, what is left out) and stop "
         "before any fit, as 'saturate ls' does."),
]


@settings_command("selection", "analysis", "suite", "diagnostics", "format", "engine",
                  params=_PARAMS)
def analyze(
    settings: Settings,
    sources: list[str] | None,
    out: Path | None,
    fast: bool,
    log_back: bool,
    wide: bool,
    dry_run: bool,
) -> None:
    """Analyse every (run, metric) curve: is it still scaling, slowing, saturated or regressing?

    Then the diagnostics across metrics and runs: reward/benchmark divergence, pass@k sharpening,
    slices, instabilities, recipes, compute to --target, cost.
    """
    if dry_run:
        from saturate.cli.ls import show_inventory

        show_inventory(sources, settings, "text", out, fast)
        return
    settings = format_of_out(settings, out)
    analysis = run_analysis(sources, settings, fast=fast, outputs={"--out": out})
    if log_back:
        from saturate.tracker.writeback import log_back as write_back

        print(write_back(analysis).summary(), file=sys.stderr)
    with step(f"writing the {settings.format} report"):
        _emit(analysis, settings, out, wide=wide)


#: The report format an ``--out`` name asks for by its suffix.
SUFFIX_FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
                  ".json": "json"}


def format_of_out(settings: Settings, out: Path | None) -> Settings:
    """``--out report.html`` writes HTML (``.md`` Markdown, ``.json`` JSON) unless the format was
    given (option or settings file); a format given that the suffix contradicts is an error,
    checked before anything is read."""
    implied = None if out is None else SUFFIX_FORMATS.get(out.suffix.lower())
    if out is None or implied is None or settings.format == implied:
        return settings
    if "format" in settings.explicit:
        raise SettingsError(
            f"--out {out.name} asks for --format {implied} by its suffix, but the format given "
            f"is {settings.format}: give --format {implied} (or none), or an --out name that "
            f"does not end in {out.suffix}")
    return settings.updated(format=implied)


def _emit(analysis: Any, settings: Settings, out: Path | None, *, wide: bool) -> None:
    """Print the report, or write it to ``out``."""
    if settings.format == "table" and out is None:
        from saturate.report.terminal import render_table

        render_table(analysis, terminal(sys.stdout), wide=wide)
        return
    if settings.format == "html":
        from saturate.report.html import render_html

        with progress_bar("drawing the report") as hook:
            text = render_html(analysis, progress=hook)
        write_text(text, out)
        return
    from saturate.report import render

    write_text(render(analysis, settings.format), out)
