"""Every option of saturate, declared once: :data:`OPTIONS`.

Each :class:`Option` makes a field of :class:`~saturate.settings.Settings`, a settings-file key,
a keyword of :func:`saturate.analyze` and a command-line option. Names that a later part holds
(the laws, the ``--fail-on`` kinds) are a :class:`Ref`, imported only when needed, so these
declarations import no later part of the flow.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from saturate.errors import SettingsError
from saturate.settings import checks as c

__all__ = ["Option", "Ref", "Switch", "OPTIONS", "GROUPS", "REPORT_FORMATS", "cli_name",
           "closest", "option_doc", "declare", "on_declare"]

REPORT_FORMATS: tuple[str, ...] = ("table", "json", "markdown", "html")
"""The report formats of ``analyze`` (``--format``; :func:`saturate.report.render`)."""


DEFAULT_STATE = Path(".saturate") / "history.db"
"""The watch history file (``--state``), relative to the folder saturate runs in."""

SUITE_STATISTICS: tuple[str, ...] = ("iqm", "mean")
"""The suite aggregates: the interquartile mean over tasks and seeds (rliable's) or the mean of
task means."""

SUITE_N_BOOT = 2000
"""Bootstrap replicates of a suite aggregate, as rliable's (Monte Carlo error ~1% of the width)."""


@dataclass(frozen=True)
class Ref:
    """``module:attribute`` of a later part, looked up when needed (called if callable)."""

    module: str
    attribute: str

    def __call__(self) -> Any:
        value = getattr(importlib.import_module(self.module), self.attribute)
        return value() if callable(value) else value


@dataclass(frozen=True)
class Switch:
    """A command-line flag without a value that, when given, sets the option to ``value``."""

    flag: str
    help: str
    value: Any


@dataclass(frozen=True)
class Option:
    """One setting: its field, check, help and command-line form.

    ``check(value, name)`` validates and converts. ``flags``: the spelling when not
    ``--name-with-dashes``; ``many``: repeatable; ``flag``: ``--name/--no-name``; ``merge``: a
    glob table merged over the one below; ``cli``: shown on the command line.
    """

    name: str
    type: str
    default: Any
    check: Callable[[Any, str], Any]
    help: str | Ref
    group: str
    metavar: str = ""
    flags: tuple[str, ...] = ()
    many: bool = False
    flag: bool = False
    merge: bool = False
    cli: bool = True
    switch: Switch | None = None

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"option {self.name}: group {self.group!r} is none of {GROUPS}")

    @property
    def flag_names(self) -> tuple[str, ...]:
        """The command-line flags: ``--min-gain``, or the declared ``flags``."""
        return self.flags or ("--" + self.name.replace("_", "-"),)

    def checked(self, value: Any, name: str) -> Any:
        """``value`` validated and converted, with ``name`` in any error."""
        return self.check(value, name)


def _among(names: Ref, *, at_least_one: bool = False) -> Callable[[Any, str], Any]:
    """The check of names from a list a later part holds (``names()``, looked up when a value is
    checked; an empty list imports nothing)."""

    def check(value: Any, name: str) -> tuple[str, ...]:
        if not at_least_one and isinstance(value, (list, tuple)) and not value:
            return ()
        return c.check_choices(value, name, tuple(names()), at_least_one=at_least_one)

    return check


_LAWS = Ref("saturate.fit.laws", "LAWS")


def _check_laws(value: Any, name: str) -> tuple[Any, ...]:
    """Built-in law names and users' :class:`saturate.Model` laws (checked where they live,
    :func:`saturate.fit.model.check_laws`, a later part: imported when a value is checked)."""
    return importlib.import_module("saturate.fit.model").check_laws(value, name)


def _law_help() -> str:
    return f"Law to fit: {', '.join(_LAWS())}. Default: all"


_DEFAULT = {"min_gain": "3%", "confidence": 0.9, "forecast_at": ("2x", "4x"), "n_boot": 200,
        "seed": 0, "compare_at": ("1x", "4x")}

GROUPS: tuple[str, ...] = (
    "selection", "analysis", "suite", "diagnostics", "format", "fail_on", "compare", "engine",
)
"""The option groups a command takes its options by (:func:`saturate.cli.options.settings_options`)."""

OPTIONS: list[Option] = [
    # ---- selection: what to read
    Option("experiment", "tuple[str, ...]", (), c.check_strings, "Experiment name or id",
           "selection", "NAME", ("--experiment", "-e"), many=True),
    Option("filter", "str | None", None, c.check_text,
           "MLflow search filter, e.g. \"params.recipe = 'cispo'\".", "selection", "FILTER"),
    Option("metric", "tuple[str, ...]", (), c.check_strings, "Metric glob to keep, e.g. 'eval/*'",
           "selection", "GLOB", ("--metric", "-m"), many=True),
    Option("run", "tuple[str, ...]", (), c.check_strings, "Run name or id glob to keep",
           "selection", "GLOB", ("--run", "-r"), many=True),
    Option("compute", "str | None", None, c.check_text, "The x axis: a column, or a metric such "
           "as compute/gpu_hours joined on step. Default: a 'compute' column, else a logged "
           "measure of compute (compute/*, gpu_hours, flops, tokens, samples, env_steps, "
           "wall_time), else the step (with a warning).", "selection", "NAME"),
    Option("gpus", "float | str | None", None, c.check_gpus, "GPUs per run, or the run parameter "
           "holding the count: the x axis becomes GPU-hours = (timestamp - first timestamp) / "
           "3600 x N.", "selection", "N"),
    Option("tracker_url", "str | None", None, c.check_url, "Where the tracker's web UI is "
           "served, so each run links to its page there: for an MLflow database or mlruns/ "
           "folder (no UI of its own), or W&B run folders of a W&B server of your own. Default: "
           "a tracking server's own address; W&B's app as the wandb package finds it.",
           "selection", "URL"),
    Option("timeout", "float | None", None, c.check_seconds, "Seconds an MLflow server may take "
           "to answer one request, retries and waits included (default 120, or "
           "$SATURATE_TIMEOUT).", "selection", "SECONDS"),
    # ---- analysis: how each curve is judged
    Option("objective", "tuple[str, ...]", (), c.check_strings, "Metric glob judged as an "
           "objective (gets a verdict) whatever its name says", "analysis", "GLOB", many=True),
    Option("diagnostic", "tuple[str, ...]", (), c.check_strings, "Metric glob given no verdict "
           "(a diagnostic: KL, entropy, lengths, losses of the optimiser, timing...) whatever "
           "its name says", "analysis", "GLOB", many=True),
    Option("group_by", "str | None", None, c.check_text, "Run parameter whose runs are averaged "
           "into one curve per value, as seeds of one recipe (with --suite: the agent or recipe "
           "each suite verdict is about; runs are then not pooled); 'none': no pooling at all "
           "(by default the seeds of one configuration lend each other a prior).", "analysis",
           "PARAM"),
    Option("lower_is_better", "tuple[str, ...]", (), c.check_strings,
           "Metric glob that is lower-is-better", "analysis", "GLOB", many=True),
    Option("higher_is_better", "tuple[str, ...]", (), c.check_strings,
           "Metric glob that is higher-is-better", "analysis", "GLOB", many=True),
    Option("domains", "Mapping[str, tuple[float, float] | None]", {}, c.check_domains,
           "GLOB=LO,HI: the range matching metrics' values live in, e.g. 'eval/*=0,1' "
           "('GLOB=none': no domain). Default: [0, 1] for rates, accuracies, pass@k, success and "
           "win rates, [0, 100] for their percentages", "analysis", "GLOB=LO,HI", ("--domain",),
           many=True, merge=True),
    Option("min_gain", "float | str", _DEFAULT["min_gain"], c.check_gain, "Least gain per "
           "doubling of compute that still pays: metric units (0.01) or N% of the curve's "
           f"observed range (3%). Default {_DEFAULT['min_gain']}.", "analysis", "GAIN"),
    Option("band", "tuple[float, float] | None", None, c.check_band, "LOW,HIGH: P(the next "
           "doubling pays) below LOW does not pay, from HIGH pays, between is inconclusive. "
           "Default: the band chosen on held-out public curves (0.45,0.55); 0.5,0.5 never "
           "abstains.", "analysis", "LOW,HIGH"),
    Option("forecast_at", "tuple[str | float, ...]", _DEFAULT["forecast_at"],
           c.check_forecast_points, "Forecast at Nx the last compute or at a compute value > 0; default "
           f"{','.join(map(str, _DEFAULT['forecast_at']))}. Comma lists too", "analysis", "AT",
           many=True),
    Option("confidence", "float", _DEFAULT["confidence"], c.check_confidence, "Confidence level "
           f"of every interval, in [0.5, 1) (default {_DEFAULT['confidence']:g}).", "analysis",
           "LEVEL"),
    Option("n_boot", "int", _DEFAULT["n_boot"], c.check_int, "Bootstrap resamples for the "
           f"intervals, >= 0 (default {_DEFAULT['n_boot']}).", "analysis", "N"),
    Option("seed", "int", _DEFAULT["seed"], c.check_int,
           f"Random seed of the bootstrap (default {_DEFAULT['seed']}).", "analysis", "N"),
    Option("laws", "tuple[Any, ...] | None", None, _check_laws,
           Ref(__name__, "_law_help"), "analysis", "LAW", ("--law",), many=True),
    Option("thresholds", "Mapping[str, float | str]", {}, c.check_thresholds,
           "Per metric glob, its own least gain", "analysis", cli=False),
    # ---- suite: one verdict per agent or recipe over a benchmark suite's tasks
    Option("suite", "str | None", None, c.check_text, "Column, run parameter or tag naming the "
           "task of a benchmark suite (game, env, task; 'metric' when the tasks are metrics): "
           "one verdict per --group-by group on its aggregate over the tasks (IQM over tasks and "
           "seeds), with the per-task verdicts, before the curves.", "suite", "KEY"),
    Option("normalize", "str | Mapping[str, Any] | None", None, c.check_normalize, "Per-task "
           "normalisation of the suite's scores: a task,random,human CSV or JSON file, "
           "random=R,human=H (every task), min-max (default: each task's worst and best score "
           "over all groups) or none.", "suite", "SPEC"),
    Option("suite_statistic", "str", "iqm", partial(c.check_choice, choices=SUITE_STATISTICS),
           "The suite aggregate judged: iqm (interquartile mean, default) or mean (of task "
           "means).", "suite", "STAT"),
    Option("suite_boot", "int", SUITE_N_BOOT, partial(c.check_int, minimum=100), "Stratified "
           f"bootstrap replicates of the suite aggregate, >= 100 (default {SUITE_N_BOOT}).",
           "suite", "N"),
    Option("task_bootstrap", "bool", False, c.check_bool, "Resample the suite's tasks as well as "
           "their seeds: the intervals then also say how much the verdict depends on which tasks "
           "are in the suite (default: seeds within tasks).", "suite", flag=True),
    Option("min_coverage", "float", 1.0, partial(c.check_number, low=0.0, high=1.0, closed="right"),
           "Share of a group's tasks a compute needs to enter its aggregate, in (0, 1] (default "
           "1: every task, so the mix never changes).", "suite", "SHARE"),
    # ---- diagnostics across metrics and runs
    Option("targets", "Mapping[str, float]", {}, c.check_targets, "GLOB=VALUE: the compute at "
           "which matching metrics reach VALUE, e.g. 'eval/math*=0.6'", "diagnostics",
           "GLOB=VALUE", ("--target",), many=True, merge=True),
    Option("pairs", "tuple[tuple[str, str], ...]", (), c.check_pairs, "REWARD=BENCHMARK metric "
           "globs checked for divergence, e.g. 'train/reward=eval/*'. Default: the naming "
           "conventions", "diagnostics", "REWARD=BENCH", ("--pair",), many=True),
    Option("gpu_hour_cost", "float | None", None, c.check_positive, "Price of one GPU-hour: adds "
           "the cost per point of metric of the next doubling.", "diagnostics", "PRICE"),
    Option("pretrain_compute", "float | None", None, c.check_positive, "Pre-training compute, in "
           "the unit of the x axis: reports RL compute as a share of it.", "diagnostics",
           "COMPUTE"),
    Option("gpu_hours", "str | None", None, c.check_text, "Metric or column holding cumulative "
           "GPU-hours per run, when the compute axis is not GPU-hours (e.g. compute/gpu_hours).",
           "diagnostics", "NAME"),
    Option("budget", "float | None", None, c.check_positive, "GPU-hours to spend: ranks the runs "
           "worth extending (see 'saturate allocate').", "diagnostics", "HOURS"),
    # ---- what a command writes
    Option("format", "str", REPORT_FORMATS[0], partial(c.check_choice, choices=REPORT_FORMATS),
           f"Report format: {' | '.join(REPORT_FORMATS)} (default {REPORT_FORMATS[0]}).",
           "format", "FORMAT", ("--format", "-f")),
    Option("fail_on", "tuple[str, ...]", (), _among(Ref("saturate.gate.decide", "fail_kinds")),
           Ref("saturate.gate.decide", "fail_on_help"), "fail_on", "KIND", many=True),
    Option("compare_at", "tuple[str | float, ...]", _DEFAULT["compare_at"], c.check_forecast_points,
           "Compute at which to give P(one recipe beats another): Nx the largest observed "
           f"compute or a value; default {','.join(map(str, _DEFAULT['compare_at']))}. Comma lists "
           "too", "compare", "AT", ("--at",), many=True),
    # ---- where curves are analysed
    Option("workers", "int | None", None, c.check_workers, "Processes that analyse curves "
           "(default: one per core; 1: this process only; with --dask, the local cluster's "
           "workers).", "engine", "N"),
    Option("scheduler", "str | None", None, c.check_scheduler, "Analyse on a running Dask "
           "scheduler, e.g. tcp://10.0.0.5:8786 (default $SATURATE_SCHEDULER; needs "
           "saturate[dask]).", "engine", "ADDRESS",
           switch=Switch("--dask", "Analyse on a Dask cluster of --workers processes started on "
                         "this machine (needs saturate[dask]).", "local")),
]
"""Every option a settings file, a keyword or a command-line flag may set, in help order."""

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}

_MADE: list[Callable[[], None]] = []


def on_declare(remake: Callable[[], None]) -> None:
    """Call ``remake`` whenever :func:`declare` changes :data:`OPTIONS` (what was made from the
    declarations at import is made again)."""
    _MADE.append(remake)


def declare(option: Option | None = None, *, withdraw: str | None = None) -> None:
    """Add ``option`` to :data:`OPTIONS` (or ``withdraw`` the one of that name) after import:
    for a plug-in, or a test of the declarations."""
    if withdraw is not None:
        OPTIONS[:] = [o for o in OPTIONS if o.name != withdraw]
        OPTIONS_BY_NAME.pop(withdraw, None)
    if option is not None:
        if option.name in OPTIONS_BY_NAME:
            raise SettingsError(f"option {option.name} is declared already")
        OPTIONS.append(option)
        OPTIONS_BY_NAME[option.name] = option
    for remake in _MADE:
        remake()


def cli_name(option: str) -> str:
    """The command-line spelling of an option: ``min_gain`` -> ``--min-gain``."""
    found = OPTIONS_BY_NAME.get(option)
    return found.flag_names[0] if found is not None else "--" + option.replace("_", "-")


def closest(unknown: Sequence[str], where: str = "") -> SettingsError:
    """The error for options nobody declared, naming the nearest declared one for each."""
    parts, guessed = [], True
    for name in unknown:
        near = difflib.get_close_matches(name, list(OPTIONS_BY_NAME), n=1, cutoff=0.6)
        parts.append(f"{name} (did you mean {near[0]}?)" if near else name)
        guessed = guessed and bool(near)
    listed = "" if guessed else f"; the settings are {', '.join(sorted(OPTIONS_BY_NAME))}"
    return SettingsError(f"{where}unknown setting(s) {', '.join(parts)}{listed}")


def option_doc() -> str:
    """Every option with its help, for the docstring of :func:`saturate.analyze`."""
    lines = []
    for o in OPTIONS:
        text = o.help if isinstance(o.help, str) else f"the {o.name.replace('_', ' ')} to use"
        lines.append(f"    {o.name}: {text} (default {o.default!r})")
    return "\n".join(lines)
