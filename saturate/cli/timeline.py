"""``saturate timeline``: how one curve's estimates and verdict evolved as the run grew."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from saturate.cli.common import (
    Fast,
    Out,
    Sources,
    format_option,
    save_figure,
    text_width,
    write_text,
)
from saturate.cli.options import settings_command
from saturate.cli.watch import State
from saturate.settings import Settings
from saturate.settings.checks import check_choice, check_int, check_positive
from saturate.settings.fields import DEFAULT_STATE

FORMATS = ("table", "json")


@settings_command("selection", "analysis",
                  exclude=("metric", "run", "group_by", "objective", "diagnostic"))
def timeline(
    settings: Settings,
    sources: Sources = None,
    run: Annotated[str, typer.Option("--run", "-r", help="Run name or id.", metavar="RUN")] = ...,
    metric: Annotated[str, typer.Option("--metric", "-m", help="Metric name.",
                                        metavar="METRIC")] = ...,
    at: Annotated[str | None, typer.Option(
        "--at", help="Compute to forecast at (default: twice the last).", show_default=False,
        metavar="COMPUTE")] = None,  # fmt: skip
    points: Annotated[str, typer.Option(
        "--points", help="Re-fits at this many log-spaced points of the history, >= 2.",
        metavar="N")] = "8",  # fmt: skip
    origin: Annotated[str, typer.Option(
        "--from", help="auto (the watch history when it holds this curve, else re-fit), "
        "refit or history.", metavar="ORIGIN")] = "auto",  # fmt: skip
    state: State = DEFAULT_STATE,
    fmt: format_option(FORMATS) = FORMATS[0],
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Save the plot (PNG, SVG or PDF) here.", show_default=False,
        metavar="PATH")] = None,  # fmt: skip
    out: Out = None,
    fast: Fast = True,
) -> None:
    """Re-fit one curve at log-spaced points of its history (or read the watch history).

    Answers "when did we first see saturation?" and "was the asymptote estimate stable?".
    """
    from saturate.report.output import check_not_inputs, settings_inputs
    from saturate.tracker.state import state_files
    from saturate.tracker.timeline import ORIGINS, curve_timeline, plot_timeline

    fmt = check_choice(fmt, "--format", FORMATS)
    check_not_inputs({"--out": out, "--plot": plot}.items(),
                     [*(sources or ()), *settings_inputs(settings)], kept=state_files(state))
    tl = curve_timeline(
        sources or None, run, metric, settings=settings, origin=check_choice(origin, "--from",
                                                                             ORIGINS),
        state=state, points=check_int(points, "--points", 2),
        at=None if at is None else check_positive(at, "--at"), fast=fast,
    )
    text = json.dumps(tl.to_dict(), indent=2) if fmt == "json" else tl.summary()
    if fmt != "json" and out is None:  # a screen's lines wrap between words
        from saturate.report.text import fit_lines

        text = fit_lines(text, text_width())
    write_text(text + "\n", out)
    if plot is not None:
        save_figure(plot_timeline(tl).figure, plot)
