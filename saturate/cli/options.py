"""The options commands share, declared once, and :func:`settings_options`, which adds them to a
command and hands it one validated :class:`~saturate.settings.Settings`.

Typer reads a command's parameters from its signature, so the decorator writes the shared options
into the signature; the command itself declares only its own options and a ``settings``
parameter. Every shared option is read as text and checked by :mod:`saturate.validation` (through
:meth:`Settings.build`), so a bad value is one line naming the flag, and the settings file and the
command line go through the same checks.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from saturate.cli.app import late_help
from saturate.errors import SettingsError
from saturate.report import FORMATS
from saturate.settings import Settings, cli_name

__all__ = [
    "Shared",
    "SELECTION",
    "ANALYSIS",
    "DIAGNOSTICS",
    "REPORT_FORMAT",
    "FAIL_ON",
    "COMPARE_AT",
    "SUITE",
    "ENGINE",
    "settings_options",
]

F = TypeVar("F", bound=Callable[..., Any])
_DEFAULTS = Settings()


@dataclass(frozen=True)
class Shared:
    """One shared option: the :class:`Settings` field it sets, its parameter, flags and help.

    ``switch``: a flag without a value that, when given, sets ``field`` to this value.
    """

    field: str
    flags: tuple[str, ...]
    help: str | Callable[[], str]  # a function: made when a help page shows it (heavy imports)
    metavar: str
    many: bool = False
    flag: bool = False
    switch: str | None = None

    @property
    def param(self) -> str:
        """The command's parameter: the field, or for a switch its flag's name."""
        return self.field if self.switch is None else self.flags[0].lstrip("-").replace("-", "_")

    @property
    def annotation(self) -> Any:
        text = self.help if isinstance(self.help, str) else late_help(self.help)
        if self.switch is not None:
            return Annotated[bool, typer.Option(*self.flags, help=text, show_default=False)]
        if self.flag:  # --name/--no-name; None when neither is given (the settings file decides)
            flags = [f"{self.flags[0]}/--no-{self.flags[0].removeprefix('--')}", *self.flags[1:]]
            return Annotated[bool | None, typer.Option(*flags, help=text, show_default=False)]
        kind = list[str] | None if self.many else str | None
        option = typer.Option(*self.flags, help=text, metavar=self.metavar, show_default=False)
        return Annotated[kind, option]


def _many(field: str, flags: tuple[str, ...], help: str | Callable[[], str], metavar: str
          ) -> Shared:
    if callable(help):
        return Shared(field, flags, lambda: f"{help()} (repeatable).", metavar, many=True)
    return Shared(field, flags, f"{help} (repeatable).", metavar, many=True)


def _law_help() -> str:
    from saturate.fit.laws import LAWS  # numpy and scipy: only when the help is shown

    return f"Law to fit: {', '.join(LAWS)}. Default: all"


def _fail_on_help() -> str:
    from saturate.gate import fail_on_help  # every diagnostic: only when the help is shown

    return fail_on_help().removesuffix(".")


SELECTION: tuple[Shared, ...] = (
    _many("experiment", ("--experiment", "-e"), "Experiment name or id", "NAME"),
    Shared("filter", ("--filter",), "MLflow search filter, e.g. \"params.recipe = 'cispo'\".",
           "FILTER"),
    _many("metric", ("--metric", "-m"), "Metric glob to keep, e.g. 'eval/*'", "GLOB"),
    _many("run", ("--run", "-r"), "Run name or id glob to keep", "GLOB"),
    Shared("compute", ("--compute",), "The x axis: a column, or a metric such as "
           "compute/gpu_hours joined on step. Default: a 'compute' column, else a logged measure "
           "of compute (compute/*, gpu_hours, flops, tokens, samples, env_steps, wall_time), "
           "else the step (with a warning).", "NAME"),
    Shared("gpus", ("--gpus",), "GPUs per run, or the run parameter holding the count: the x "
           "axis becomes GPU-hours = (timestamp - first timestamp) / 3600 x N.", "N"),
    Shared("timeout", ("--timeout",), "Seconds an MLflow server may take to answer one request, "
           "retries and waits included (default 120, or $SATURATE_TIMEOUT).", "SECONDS"),
)
"""What to read."""

ANALYSIS: tuple[Shared, ...] = (
    _many("objective", ("--objective",), "Metric glob judged as an objective (gets a verdict) "
          "whatever its name says", "GLOB"),
    _many("diagnostic", ("--diagnostic",), "Metric glob given no verdict (a diagnostic: KL, "
          "entropy, lengths, losses of the optimiser, timing...) whatever its name says", "GLOB"),
    Shared("group_by", ("--group-by",), "Run parameter whose runs are pooled as seeds of one "
           "recipe (with --suite: the agent or recipe each suite verdict is about; runs are then "
           "not pooled).", "PARAM"),
    _many("lower_is_better", ("--lower-is-better",), "Metric glob that is lower-is-better", "GLOB"),
    _many("higher_is_better", ("--higher-is-better",), "Metric glob that is higher-is-better",
          "GLOB"),
    _many("domains", ("--domain",), "GLOB=LO,HI: the range matching metrics' values live in, "
          "e.g. 'eval/*=0,1' ('GLOB=none': no domain). Default: [0, 1] for rates, accuracies, "
          "pass@k, success and win rates, [0, 100] for their percentages", "GLOB=LO,HI"),
    Shared("min_gain", ("--min-gain",), "Least gain per doubling of compute that still pays: "
           "metric units (0.01) or N% of the curve's observed range (3%). "
           f"Default {_DEFAULTS.min_gain}.", "GAIN"),
    Shared("band", ("--band",), "LOW,HIGH: P(the next doubling pays) below LOW does not pay, "
           "from HIGH pays, between is inconclusive. Default: the band chosen on held-out public "
           f"curves ({_DEFAULTS.analysis().decision.stop_below:.2f},"
           f"{_DEFAULTS.analysis().decision.go_above:.2f}); 0.5,0.5 never abstains.",
           "LOW,HIGH"),
    _many("forecast_at", ("--forecast-at",), "Forecast at Nx the last compute or at a compute "
          f"value > 0; default {','.join(map(str, _DEFAULTS.forecast_at))}. Comma lists too",
          "AT"),
    Shared("confidence", ("--confidence",), "Confidence level of every interval, in [0.5, 1) "
           f"(default {_DEFAULTS.confidence:g}).", "LEVEL"),
    Shared("n_boot", ("--n-boot",), "Bootstrap resamples for the intervals, >= 0 "
           f"(default {_DEFAULTS.n_boot}).", "N"),
    Shared("seed", ("--seed",), f"Random seed of the bootstrap (default {_DEFAULTS.seed}).", "N"),
    _many("laws", ("--law",), _law_help, "LAW"),
)
"""How each curve is judged."""

DIAGNOSTICS: tuple[Shared, ...] = (
    _many("targets", ("--target",), "GLOB=VALUE: the compute at which matching metrics reach "
          "VALUE, e.g. 'eval/math*=0.6'", "GLOB=VALUE"),
    _many("pairs", ("--pair",), "REWARD=BENCHMARK metric globs checked for divergence, e.g. "
          "'train/reward=eval/*'. Default: the naming conventions", "REWARD=BENCH"),
    Shared("gpu_hour_cost", ("--gpu-hour-cost",), "Price of one GPU-hour: adds the cost per point "
           "of metric of the next doubling.", "PRICE"),
    Shared("pretrain_compute", ("--pretrain-compute",), "Pre-training compute, in the unit of the "
           "x axis: reports RL compute as a share of it.", "COMPUTE"),
    Shared("gpu_hours", ("--gpu-hours",), "Metric or column holding cumulative GPU-hours per run, "
           "when the compute axis is not GPU-hours (e.g. compute/gpu_hours).", "NAME"),
    Shared("budget", ("--budget",), "GPU-hours to spend: ranks the runs worth extending "
           "(see 'saturate allocate').", "HOURS"),
)
"""The diagnostics across metrics and runs."""

SUITE: tuple[Shared, ...] = (
    Shared("suite", ("--suite",), "Column, run parameter or tag naming the task of a benchmark "
           "suite (game, env, task; 'metric' when the tasks are metrics): one verdict per "
           "--group-by group on its aggregate over the tasks (IQM over tasks and seeds), with "
           "the per-task verdicts, before the curves.", "KEY"),
    Shared("normalize", ("--normalize",), "Per-task normalisation of the suite's scores: a "
           "task,random,human CSV or JSON file, random=R,human=H (every task), min-max (default: "
           "each task's worst and best score over all groups) or none.", "SPEC"),
    Shared("suite_statistic", ("--suite-statistic",), "The suite aggregate judged: iqm "
           "(interquartile mean, default) or mean (of task means).", "STAT"),
    Shared("suite_boot", ("--suite-boot",), "Stratified bootstrap replicates of the suite "
           f"aggregate, >= 100 (default {_DEFAULTS.suite_boot}).", "N"),
    Shared("task_bootstrap", ("--task-bootstrap",), "Resample the suite's tasks as well as their "
           "seeds: the intervals then also say how much the verdict depends on which tasks are in "
           "the suite (default: seeds within tasks).", "", flag=True),
    Shared("min_coverage", ("--min-coverage",), "Share of a group's tasks a compute needs to "
           "enter its aggregate, in (0, 1] (default 1: every task, so the mix never changes).",
           "SHARE"),
)
"""A benchmark suite: one verdict per agent or recipe over its tasks (:mod:`saturate.suites`)."""

ENGINE: tuple[Shared, ...] = (
    Shared("workers", ("--workers",), "Processes that analyse curves (default: one per core; 1: "
           "this process only; with --dask, the local cluster's workers).", "N"),
    Shared("scheduler", ("--scheduler",), "Analyse on a running Dask scheduler, e.g. "
           "tcp://10.0.0.5:8786 (default $SATURATE_SCHEDULER; needs saturate[dask]).", "ADDRESS"),
    Shared("scheduler", ("--dask",), "Analyse on a Dask cluster of --workers processes started "
           "on this machine (needs saturate[dask]).", "", switch="local"),
)
"""Where curves are analysed: this process, a local pool, or Dask."""

_CONFIG = Shared("config", ("--config",), "Settings file (pyproject.toml with [tool.saturate], or "
                 "saturate.toml). Default: the nearest one from the current folder upward.",
                 "PATH")


REPORT_FORMAT: tuple[Shared, ...] = (
    Shared("format", ("--format", "-f"), f"Report format: {' | '.join(FORMATS)} "
           f"(default {_DEFAULTS.format}).", "FORMAT"),
)
"""The report format of ``analyze`` (also ``format`` in the settings file)."""

FAIL_ON: tuple[Shared, ...] = (
    _many("fail_on", ("--fail-on",), _fail_on_help, "KIND"),
)
"""The gate's extra failing kinds."""

COMPARE_AT: tuple[Shared, ...] = (
    _many("compare_at", ("--at",), "Compute at which to give P(one recipe beats another): Nx the "
          "largest observed compute or a value; default "
          f"{','.join(map(str, _DEFAULTS.compare_at))}. Comma lists too", "AT"),
)
"""Where recipes are compared."""


def _given(shared: Sequence[Shared], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The shared options' values by field (popped from ``kwargs``); a switch sets its field
    unless an option did (both given: a :class:`SettingsError`)."""
    given: dict[str, Any] = {}
    for o in sorted(shared, key=lambda o: o.switch is not None):
        value = kwargs.pop(o.param, None)
        if o.switch is None:
            given[o.field] = value
        elif value:
            if given.get(o.field) is not None:
                raise SettingsError(f"{o.flags[0]} and {cli_name(o.field)} both say where to "
                                    "run: give one")
            given[o.field] = o.switch
    return given


def settings_options(
    *groups: Sequence[Shared], exclude: Collection[str] = ()
) -> Callable[[F], F]:
    """Add the options of ``groups`` (and ``--config``) to a command, less ``exclude``.

    The command declares a ``settings`` parameter; it receives the :class:`Settings` built from
    the defaults, the settings file and these options, in that order of precedence. Put the
    decorator under :func:`~saturate.cli.common.handle_errors`, so that a bad value is one line.
    """
    shared = [o for group in (*groups, (_CONFIG,)) for o in group if o.field not in exclude]

    def decorate(func: F) -> F:
        hints = typing.get_type_hints(func, include_extras=True)
        own = [p.replace(annotation=hints.get(p.name, p.annotation))
               for p in inspect.signature(func).parameters.values() if p.name != "settings"]
        added = [inspect.Parameter(o.param, inspect.Parameter.KEYWORD_ONLY,
                                   default=None if o.switch is None else False,
                                   annotation=o.annotation) for o in shared]

        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            given = _given(shared, kwargs)
            config = given.pop("config")
            settings = Settings.build(True if config is None else Path(config), cli=True,
                                      **given)
            return func(*args, settings=settings, **kwargs)

        params = [*own, *added]
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command  # type: ignore[return-value]

    return decorate
