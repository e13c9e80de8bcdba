"""``saturate ls``: what an analysis would read, before any fit (also ``analyze --dry-run``)."""

from __future__ import annotations

import json
from pathlib import Path

from saturate.cli.common import (
    check_sources_listening,
    fast_option,
    format_option,
    out_option,
    sources_argument,
    text_width,
    write_text,
)
from saturate.cli.options import settings_command
from saturate.settings import Settings
from saturate.settings.checks import check_choice

FORMATS = ("text", "json")


def show_inventory(sources: list[str] | None, settings: Settings, fmt: str, out: Path | None,
                   fast: bool) -> None:
    """Read the sources as ``analyze`` would and print (or write) what they hold."""
    check_sources_listening(sources)
    from saturate.analysis.inventory import inventory
    from saturate.report.output import check_not_inputs, settings_inputs
    from saturate.report.text import fit_lines

    check_not_inputs({"--out": out}.items(), [*(sources or ()), *settings_inputs(settings)])

    found = inventory(sources or None, settings, fast=fast)
    if not found.metrics:
        from saturate.errors import InputError

        raise InputError("no curves to analyse after selection")
    width = text_width(width=120)
    text = (json.dumps(found.to_dict(), indent=2) + "\n" if fmt == "json"
            else found.text(width=width))
    if fmt != "json" and out is None:  # a screen's lines wrap between words
        text = fit_lines(text, width)
    write_text(text, out)


@settings_command("selection", "analysis", exclude=("min_gain", "forecast_at", "confidence",
                                                   "n_boot", "seed", "laws", "group_by"),
                  params=[sources_argument(), format_option(FORMATS), out_option(), fast_option()])
def ls(
    settings: Settings,
    sources: list[str] | None,
    fmt: str,
    out: Path | None,
    fast: bool,
) -> None:
    """What 'saturate analyze' would read, before any fit: runs, metrics with their role,
    direction and domain, the x axis and its unit, points per curve, the run parameters, and
    what is left out and why."""
    show_inventory(sources, settings, check_choice(fmt, "--format", FORMATS), out, fast)
