"""What every command shares: the selection and analysis options, :func:`run_analysis`, error
handling and warning display.

The library never prints; here a :class:`~saturate.errors.SaturateError` becomes one line on stderr
and exit code 2, and a warning becomes one ``warning:`` line. ``--debug`` shows the traceback.
Settings come from ``[tool.saturate]`` / ``saturate.toml`` (or ``--config``); the command line wins.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from saturate.errors import InputError, SaturateError, SettingsError

if TYPE_CHECKING:
    from saturate.api import Analysis
    from saturate.config import Config

F = TypeVar("F", bound=Callable[..., Any])

STATE: dict[str, bool] = {"debug": False}

Sources = Annotated[
    list[str] | None,
    typer.Argument(
        help="Files, folders, or MLflow URIs/stores (http://host:port, sqlite:///mlflow.db, mlruns/). "
        "Default: $MLFLOW_TRACKING_URI.",
        show_default=False,
    ),
]
Experiment = Annotated[
    list[str] | None,
    typer.Option("--experiment", "-e", help="Experiment name or id (repeatable).", show_default=False),
]
Filter = Annotated[
    str | None,
    typer.Option("--filter", help="MLflow search filter, e.g. \"params.recipe = 'cispo'\".", show_default=False),
]
Metric = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", help="Metric glob to keep, e.g. 'eval/*' (repeatable).", show_default=False),
]
Run = Annotated[
    list[str] | None,
    typer.Option("--run", "-r", help="Run name or id glob to keep (repeatable).", show_default=False),
]
Compute = Annotated[
    str | None,
    typer.Option(
        "--compute",
        help="The x axis: a column, or a metric such as compute/gpu_hours joined on step. "
        "Default: a 'compute' column if present, else step.",
        show_default=False,
    ),
]
Fast = Annotated[
    bool,
    typer.Option(
        "--fast/--no-fast",
        help="Read MLflow databases through the read-only fast path (--no-fast: MLflow's client).",
    ),
]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Write the report to this file instead of stdout.", show_default=False),
]
GroupBy = Annotated[
    str | None,
    typer.Option("--group-by", help="Run parameter whose runs are pooled as seeds of one recipe.",
                 show_default=False),
]
LowerIsBetter = Annotated[
    list[str] | None,
    typer.Option("--lower-is-better", help="Metric glob that is lower-is-better (repeatable).",
                 show_default=False),
]
HigherIsBetter = Annotated[
    list[str] | None,
    typer.Option("--higher-is-better", help="Metric glob that is higher-is-better (repeatable).",
                 show_default=False),
]
MinGain = Annotated[
    str | None,
    typer.Option("--min-gain", help="Least gain per doubling of compute that still pays: metric "
                 "units (0.01) or N% of the curve's observed range (3%). Default 3%.",
                 show_default=False),
]
ForecastAt = Annotated[
    list[str] | None,
    typer.Option("--forecast-at", help="Forecast at Nx the last compute or at a compute value "
                 "(repeatable; default 2x and 4x).", show_default=False),
]
Confidence = Annotated[
    str | None,
    typer.Option("--confidence", help="Confidence level of every interval (default 0.9).",
                 show_default=False),
]
ConfigPath = Annotated[
    Path | None,
    typer.Option("--config", help="Settings file (pyproject.toml with \\[tool.saturate], or "
                 "saturate.toml). Default: the nearest one from the current folder upward.",
                 show_default=False),
]
NBoot = Annotated[
    int | None,
    typer.Option("--n-boot", help="Bootstrap resamples for the intervals (default 200).",
                 show_default=False, min=0),
]
Seed = Annotated[
    int | None,
    typer.Option("--seed", help="Random seed of the bootstrap (default 0).", show_default=False),
]
Target = Annotated[
    list[str] | None,
    typer.Option("--target", help="GLOB=VALUE: the compute at which matching metrics reach VALUE "
                 "(repeatable), e.g. 'eval/math*=0.6'.", show_default=False),
]
Pair = Annotated[
    list[str] | None,
    typer.Option("--pair", help="REWARD=BENCHMARK metric globs checked for divergence "
                 "(repeatable), e.g. 'train/reward=eval/*'. Default: naming conventions.",
                 show_default=False),
]
GpuHourCost = Annotated[
    str | None,
    typer.Option("--gpu-hour-cost", help="Price of one GPU-hour: adds the cost per point of "
                 "metric of the next doubling.", show_default=False),
]
PretrainCompute = Annotated[
    str | None,
    typer.Option("--pretrain-compute", help="Pre-training compute, in the unit of the x axis: "
                 "reports RL compute as a share of it.", show_default=False),
]
GpuHours = Annotated[
    str | None,
    typer.Option("--gpu-hours", help="Metric or column holding cumulative GPU-hours per run, when "
                 "the compute axis is not GPU-hours (e.g. compute/gpu_hours).", show_default=False),
]
Budget = Annotated[
    str | None,
    typer.Option("--budget", help="GPU-hours to spend: adds which runs to extend (see "
                 "'saturate allocate').", show_default=False),
]


def split_values(values: list[str] | None) -> list[str]:
    """Repeatable options also take comma lists: ``--forecast-at 2x,4x``."""
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def _progress_callback(console: Any) -> tuple[Any, Any]:
    """A rich progress bar on stderr (only on a terminal) and the ``progress(done, total)`` hook."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    if not console.is_terminal:
        return None, None
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console, transient=True)
    task = bar.add_task("loading runs", total=None)

    def hook(done: int, total: int) -> None:
        bar.update(task, description="fitting curves", completed=done, total=total)

    return hook, bar


def run_analysis(
    sources: list[str] | None,
    *,
    experiment: list[str] | None = None,
    filter: str | None = None,
    metric: list[str] | None = None,
    run: list[str] | None = None,
    compute: str | None = None,
    group_by: str | None = None,
    lower_is_better: list[str] | None = None,
    higher_is_better: list[str] | None = None,
    min_gain: str | None = None,
    forecast_at: list[str] | None = None,
    confidence: str | None = None,
    n_boot: int | None = None,
    seed: int | None = None,
    config: Path | None = None,
    target: list[str] | None = None,
    pair: list[str] | None = None,
    gpu_hour_cost: str | float | None = None,
    pretrain_compute: str | float | None = None,
    gpu_hours: str | None = None,
    budget: str | float | None = None,
    diagnostics: bool = True,
    require_min_gain: bool = False,
    fast: bool = True,
) -> tuple[Analysis, Config]:
    """Merge the settings file with the options, analyse, and return (Analysis, Config).

    ``--pair`` values replace the file's ``pairs``; ``--target`` globs are laid over the file's
    ``targets``. The Analysis's ``settings`` also name the settings file used, so every report
    states it.
    """
    from rich.console import Console

    from saturate.api import analyze
    from saturate.config import (
        load_config,
        parse_confidence,
        parse_forecast_at,
        parse_gain,
        parse_pair,
        parse_positive,
        parse_target,
    )

    def positive(value: str | float | None, name: str) -> float | None:
        return None if value is None else parse_positive(value, name)

    cfg = load_config(config)
    merged = cfg.merged(
        experiment=experiment, filter=filter, metric=metric, run=run, compute=compute,
        group_by=group_by, lower_is_better=lower_is_better, higher_is_better=higher_is_better,
        min_gain=None if min_gain is None else parse_gain(min_gain),
        forecast_at=[parse_forecast_at(v) for v in split_values(forecast_at)],
        confidence=None if confidence is None else parse_confidence(confidence),
        n_boot=n_boot, seed=seed,
        pairs=[list(parse_pair(v)) for v in pair or ()],
        gpu_hour_cost=positive(gpu_hour_cost, "--gpu-hour-cost"),
        pretrain_compute=positive(pretrain_compute, "--pretrain-compute"),
        gpu_hours=gpu_hours, budget=positive(budget, "--budget"),
    )
    if require_min_gain and "min_gain" not in merged and "thresholds" not in merged:
        raise SettingsError("--min-gain is required (e.g. --min-gain 0.01 or --min-gain 2%), "
                            "or set min_gain in [tool.saturate]")
    targets = {**cfg.targets, **dict(parse_target(v) for v in target or ())}
    keys = ("experiment", "filter", "metric", "run", "compute", "group_by", "lower_is_better",
            "higher_is_better", "min_gain", "forecast_at", "confidence", "n_boot", "seed",
            "thresholds", "laws", "pairs", "gpu_hour_cost", "pretrain_compute", "gpu_hours",
            "budget")
    kwargs = {k: merged[k] for k in keys if k in merged}
    err = Console(stderr=True)
    hook, bar = _progress_callback(err)
    try:
        if bar is not None:
            bar.start()
        analysis = analyze(sources or None, progress=hook, config=None, targets=targets or None,
                           diagnostics=diagnostics, fast=fast, **kwargs)
    finally:
        if bar is not None:
            bar.stop()
    if not analysis.curves:
        raise InputError("no curves to analyse after selection")
    if cfg.path is not None:
        analysis = dataclasses.replace(analysis, settings={**analysis.settings, "config": cfg.path})
    return analysis, cfg


def write_text(text: str, out: Path | None) -> None:
    """Write a report to ``out`` (a note on stderr) or to stdout."""
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write ({exc.strerror})") from None
    print(f"wrote {out}", file=sys.stderr)


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    from saturate.text import for_message

    text = str(message).splitlines()[0] if str(message) else category.__name__
    print(f"warning: {for_message(text)}", file=sys.stderr)


def handle_errors(func: F) -> F:
    """Run a command: domain errors -> one stderr line and exit 2; warnings -> one line each."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            for noisy in (DeprecationWarning, FutureWarning, PendingDeprecationWarning, ResourceWarning):
                warnings.simplefilter("ignore", noisy)
            warnings.showwarning = _show_warning
            try:
                return func(*args, **kwargs)
            except SaturateError as exc:
                if STATE["debug"]:
                    raise
                from saturate.text import for_message

                print(f"error: {for_message(exc)}", file=sys.stderr)
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt:
                print("interrupted", file=sys.stderr)
                raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
