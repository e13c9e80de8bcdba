"""``saturate timeline``: how one curve's estimates and verdict evolved as the run grew."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from saturate.cli import app
from saturate.cli.common import Compute, Experiment, Filter, Out, Sources, handle_errors
from saturate.cli.watch import Confidence, Config, MinGain, NBoot, Seed, State, analysis_options
from saturate.errors import InputError, SettingsError


@app.command()
@handle_errors
def timeline(
    sources: Sources = None,
    run: Annotated[str, typer.Option("--run", "-r", help="Run name or id.")] = ...,
    metric: Annotated[str, typer.Option("--metric", "-m", help="Metric name.")] = ...,
    experiment: Experiment = None,
    filter: Filter = None,
    compute: Compute = None,
    at: Annotated[float | None, typer.Option(
        "--at", help="Compute to forecast at (default: twice the last).", show_default=False,
    )] = None,  # fmt: skip
    points: Annotated[int, typer.Option("--points", help="Re-fits at this many log-spaced "
                                        "points of the history.")] = 8,
    origin: Annotated[str, typer.Option(
        "--from", help="auto (the watch history when it holds this curve, else re-fit), "
        "refit or history.")] = "auto",  # fmt: skip
    state: State = Path(".saturate/history.db"),
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Save the plot (PNG, SVG or PDF) here.", show_default=False)] = None,
    out: Out = None,
    min_gain: MinGain = None,
    confidence: Confidence = None,
    n_boot: NBoot = None,
    seed: Seed = None,
    config: Config = None,
) -> None:
    """Re-fit one curve at log-spaced points of its history (or read the watch history).

    Answers "when did we first see saturation?" and "was the asymptote estimate stable?".
    """
    from saturate.tracker.timeline import history_timeline, plot_timeline, refit_timeline

    if fmt not in ("table", "json"):
        raise SettingsError(f"--format must be table or json, got {fmt!r}")
    if origin not in ("auto", "refit", "history"):
        raise SettingsError(f"--from must be auto, refit or history, got {origin!r}")
    tl = None
    if origin in ("auto", "history") and (origin == "history" or state.is_file()):
        from saturate.tracker.state import HistoryStore

        with HistoryStore(state, readonly=True) as store:
            try:
                found = history_timeline(store, run, metric, target=at)
            except InputError:
                if origin == "history":
                    raise
                found = None
        if found is not None and (origin == "history" or len(found.points) >= 2):
            tl = found
    if tl is None:
        import saturate
        from saturate import curves

        selection, settings = analysis_options(
            config, experiment=experiment, filter=filter, metric=[metric], run=[run],
            compute=compute, min_gain=min_gain, confidence=confidence, n_boot=n_boot, seed=seed,
        )  # fmt: skip
        df = saturate.load(sources or None, **selection)
        keys = df[["source", "run_id"]].drop_duplicates()
        if len(keys) > 1:
            names = ", ".join(sorted(set(df["run"]) | set(df["run_id"]))[:6])
            raise InputError(f"--run {run!r} matches {len(keys)} runs ({names}); name one run id")
        (_, pts), = list(curves.iter_curves(df))
        pts = pts.copy()
        pts.attrs = dict(df.attrs)
        tl = refit_timeline(pts, settings, n=points, target=at)
    text = json.dumps(tl.to_dict(), indent=2) if fmt == "json" else tl.summary()
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
    if plot is not None:
        ax = plot_timeline(tl)
        ax.figure.savefig(plot, dpi=120)
        print(f"plot written to {plot}", file=sys.stderr)
