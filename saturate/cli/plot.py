"""``saturate plot``: write one figure per analysed curve (curve + gain per doubling) to a folder,
and one per diagnostic a picture explains (divergence, sharpening, recipe comparison); with
``--overlay``, one chart per metric with every run of a source on it instead."""

from __future__ import annotations

from pathlib import Path

import click

from saturate.cli.common import fast_option, flag, run_analysis, sources_argument
from saturate.cli.options import settings_command
from saturate.settings import Settings
from saturate.settings.checks import check_choices

IMAGE_FORMATS = ("png", "svg", "pdf")

_PARAMS = [
    sources_argument(),
    click.Option(["--out", "-o"], type=click.Path(path_type=Path), default=Path("saturate-plots"),
                 show_default=True, metavar="DIR",
                 help="Folder to write the figures to (created if missing)."),
    click.Option(["--format", "-f", "fmt"], multiple=True, metavar="FORMAT",
                 help=f"{', '.join(IMAGE_FORMATS)} (repeatable or comma list; default "
                 f"{IMAGE_FORMATS[0]})."),
    fast_option(),
    flag("--overlay", "One chart per metric with every run of a source on it (seeds, recipes): "
         "their points, fits and bands, and the pooled curve."),
]


@settings_command("selection", "analysis", "diagnostics", "engine", params=_PARAMS)
def plot(
    settings: Settings,
    sources: list[str] | None,
    out: Path,
    fmt: tuple[str, ...],
    fast: bool,
    overlay: bool,
) -> None:
    """Write each curve's figure: points, fit, forecast band, asymptote, knee, stop point, gain;
    then the diagnostics' figures (reward vs benchmark, pass@k change vs k, recipe forecasts)."""
    from saturate.report.plots import save_curve_figures, save_diagnostic_figures

    formats = list(check_choices(fmt or [], "--format", IMAGE_FORMATS)) or [IMAGE_FORMATS[0]]
    analysis = run_analysis(sources, settings, fast=fast)
    if overlay:
        from saturate.report.plots.overlay import save_overlay_figures

        for path in save_overlay_figures(analysis, out, formats):
            print(path)
        return
    for path in save_curve_figures(analysis, out, formats):
        print(path)
    for path in save_diagnostic_figures(analysis, out, formats):
        print(path)
