"""``saturate timeline``: how one curve's estimates and verdict evolved as the run grew."""

from __future__ import annotations

import json
from pathlib import Path

import click

from saturate.cli.common import (
    fast_option,
    format_option,
    out_option,
    save_figure,
    sources_argument,
    text_width,
    write_text,
)
from saturate.cli.options import settings_command
from saturate.cli.watch import state_option
from saturate.settings import Settings
from saturate.settings.checks import check_choice, check_int, check_positive

FORMATS = ("table", "json")

_PARAMS = [
    sources_argument(),
    click.Option(["--run", "-r"], required=True, metavar="RUN", help="Run name or id."),
    click.Option(["--metric", "-m"], required=True, metavar="METRIC", help="Metric name."),
    click.Option(["--at"], metavar="COMPUTE",
                 help="Compute to forecast at (default: twice the last)."),
    click.Option(["--points"], default="8", show_default=True, metavar="N",
                 help="Re-fits at this many log-spaced points of the history, >= 2."),
    click.Option(["--from", "origin"], default="auto", show_default=True, metavar="ORIGIN",
                 help="auto (the watch history when it holds this curve, else re-fit), refit or "
                 "history."),
    state_option(),
    format_option(FORMATS),
    click.Option(["--plot"], type=click.Path(path_type=Path), metavar="PATH",
                 help="Save the plot (PNG, SVG or PDF) here."),
    out_option(),
    fast_option(),
]


@settings_command("selection", "analysis",
                  exclude=("metric", "run", "group_by", "objective", "diagnostic"),
                  params=_PARAMS)
def timeline(
    settings: Settings,
    sources: list[str] | None,
    run: str,
    metric: str,
    at: str | None,
    points: str,
    origin: str,
    state: Path,
    fmt: str,
    plot: Path | None,
    out: Path | None,
    fast: bool,
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
