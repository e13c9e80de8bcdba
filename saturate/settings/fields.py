"""Every option of saturate, declared once: a field of :class:`SettingsFields`.

Each field, with the :class:`Option` its :func:`option` declares, is a field of
:class:`~saturate.settings.Settings`, a settings-file key, a keyword of :func:`saturate.analyze`
and a command-line option (:data:`OPTIONS` lists them). Names that a later part holds
(the laws, the ``--fail-on`` kinds) are a :class:`Ref`, imported only when needed, so these
declarations import no later part of the flow.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

from saturate.errors import SettingsError
from saturate.settings import checks as c

__all__ = ["Option", "Ref", "Switch", "SettingsFields", "option", "OPTIONS", "GROUPS",
           "REPORT_FORMATS", "cli_name", "closest", "option_doc"]

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
    """One setting: its field (name, type, default), check, help and command-line form, as
    :func:`option` declares it on :class:`SettingsFields`.

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

    @classmethod
    def of(cls, declared: Field[Any]) -> Option:
        """The option a field of :class:`SettingsFields` declares."""
        default = {} if declared.default_factory is dict else declared.default
        return cls(declared.name, str(declared.type), default, **declared.metadata[_OPTION])

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


_DEFAULT: dict[str, Any] = {"min_gain": "3%", "confidence": 0.9, "forecast_at": ("2x", "4x"), "n_boot": 200,
        "seed": 0, "compare_at": ("1x", "4x")}

GROUPS: tuple[str, ...] = (
    "selection", "analysis", "suite", "diagnostics", "format", "fail_on", "compare", "engine",
)
"""The option groups a command takes its options by (:func:`saturate.cli.options.settings_options`)."""

_OPTION = "saturate.option"
"""The key of a field's :class:`Option` in its metadata."""


def option(default: Any, check: Callable[[Any, str], Any], help: str | Ref, group: str,
           metavar: str = "", flags: tuple[str, ...] = (), *, many: bool = False,
           flag: bool = False, merge: bool = False, cli: bool = True,
           switch: Switch | None = None) -> Any:
    """A field of :class:`SettingsFields` and its option: the default, the check
    (``check(value, name)`` validates and converts), the help and the command-line form
    (:class:`Option`)."""
    spec = {"check": check, "help": help, "group": group, "metavar": metavar, "flags": flags,
            "many": many, "flag": flag, "merge": merge, "cli": cli, "switch": switch}
    if group not in GROUPS:
        raise ValueError(f"option group {group!r} is none of {GROUPS}")
    if isinstance(default, dict):
        return field(default_factory=dict, metadata={_OPTION: spec})
    return field(default=default, metadata={_OPTION: spec})


@dataclass(frozen=True)
class SettingsFields:
    """Every option of saturate, declared once: a typed field whose :func:`option` says its
    check, help and command-line form, in help order. :class:`~saturate.settings.Settings` is
    these fields and the methods that build and read them."""

    # ---- selection: what to read
    experiment: tuple[str, ...] = option((), c.check_strings, "Experiment name or id",
        "selection", "NAME", ("--experiment", "-e"), many=True)
    filter: str | None = option(None, c.check_text,
        "MLflow search filter, e.g. \"params.recipe = 'cispo'\".", "selection", "FILTER")
    metric: tuple[str, ...] = option((), c.check_strings, "Metric glob to keep, e.g. 'eval/*'",
        "selection", "GLOB", ("--metric", "-m"), many=True)
    run: tuple[str, ...] = option((), c.check_strings, "Run name or id glob to keep",
        "selection", "GLOB", ("--run", "-r"), many=True)
    compute: str | None = option(None, c.check_text, "The x axis: a column, or a metric such "
        "as compute/gpu_hours joined on step. Default: a 'compute' column, else a logged "
        "measure of compute (compute/*, gpu_hours, flops, tokens, samples, env_steps, "
        "wall_time), else the step (with a warning).", "selection", "NAME")
    gpus: float | str | None = option(None, c.check_gpus, "GPUs per run, or the run parameter "
        "holding the count: the x axis becomes GPU-hours = (timestamp - first timestamp) / "
        "3600 x N.", "selection", "N")
    tracker_url: str | None = option(None, c.check_url, "Where the tracker's web UI is "
        "served, so each run links to its page there: for an MLflow database or mlruns/ "
        "folder (no UI of its own), or W&B run folders of a W&B server of your own. Default: "
        "a tracking server's own address; W&B's app as the wandb package finds it.",
        "selection", "URL")
    timeout: float | None = option(None, c.check_seconds, "Seconds an MLflow server may take "
        "to answer one request, retries and waits included (default 120, or "
        "$SATURATE_TIMEOUT).", "selection", "SECONDS")
    # ---- analysis: how each curve is judged
    objective: tuple[str, ...] = option((), c.check_strings, "Metric glob judged as an "
        "objective (gets a verdict) whatever its name says", "analysis", "GLOB", many=True)
    diagnostic: tuple[str, ...] = option((), c.check_strings, "Metric glob given no verdict "
        "(a diagnostic: KL, entropy, lengths, losses of the optimiser, timing...) whatever "
        "its name says", "analysis", "GLOB", many=True)
    group_by: str | None = option(None, c.check_text, "Run parameter whose runs are averaged "
        "into one curve per value, as seeds of one recipe (with --suite: the agent or recipe "
        "each suite verdict is about; runs are then not pooled); 'none': no pooling at all "
        "(by default the seeds of one configuration lend each other a prior).", "analysis",
        "PARAM")
    lower_is_better: tuple[str, ...] = option((), c.check_strings,
        "Metric glob that is lower-is-better", "analysis", "GLOB", many=True)
    higher_is_better: tuple[str, ...] = option((), c.check_strings,
        "Metric glob that is higher-is-better", "analysis", "GLOB", many=True)
    domains: Mapping[str, tuple[float, float] | None] = option({}, c.check_domains,
        "GLOB=LO,HI: the range matching metrics' values live in, e.g. 'eval/*=0,1' "
        "('GLOB=none': no domain). Default: [0, 1] for rates, accuracies, pass@k, success and "
        "win rates, [0, 100] for their percentages", "analysis", "GLOB=LO,HI", ("--domain",),
        many=True, merge=True)
    min_gain: float | str = option(_DEFAULT["min_gain"], c.check_gain, "Least gain per "
        "doubling of compute that still pays: metric units (0.01) or N% of the curve's "
        f"observed range (3%). Default {_DEFAULT['min_gain']}.", "analysis", "GAIN")
    band: tuple[float, float] | None = option(None, c.check_band, "LOW,HIGH: P(the next "
        "doubling pays) below LOW does not pay, from HIGH pays, between is inconclusive. "
        "Default: the band chosen on held-out public curves (0.45,0.55); 0.5,0.5 never "
        "abstains.", "analysis", "LOW,HIGH")
    forecast_at: tuple[str | float, ...] = option(_DEFAULT["forecast_at"],
        c.check_forecast_points, "Forecast at Nx the last compute or at a compute value > 0; default "
        f"{','.join(map(str, _DEFAULT['forecast_at']))}. Comma lists too", "analysis", "AT",
        many=True)
    confidence: float = option(_DEFAULT["confidence"], c.check_confidence, "Confidence level "
        f"of every interval, in [0.5, 1) (default {_DEFAULT['confidence']:g}).", "analysis",
        "LEVEL")
    n_boot: int = option(_DEFAULT["n_boot"], c.check_int, "Bootstrap resamples for the "
        f"intervals, >= 0 (default {_DEFAULT['n_boot']}).", "analysis", "N")
    seed: int = option(_DEFAULT["seed"], c.check_int,
        f"Random seed of the bootstrap (default {_DEFAULT['seed']}).", "analysis", "N")
    laws: tuple[Any, ...] | None = option(None, _check_laws,
        Ref(__name__, "_law_help"), "analysis", "LAW", ("--law",), many=True)
    thresholds: Mapping[str, float | str] = option({}, c.check_thresholds,
        "Per metric glob, its own least gain", "analysis", cli=False)
    # ---- suite: one verdict per agent or recipe over a benchmark suite's tasks
    suite: str | None = option(None, c.check_text, "Column, run parameter or tag naming the "
        "task of a benchmark suite (game, env, task; 'metric' when the tasks are metrics): "
        "one verdict per --group-by group on its aggregate over the tasks (IQM over tasks and "
        "seeds), with the per-task verdicts, before the curves.", "suite", "KEY")
    normalize: str | Mapping[str, Any] | None = option(None, c.check_normalize, "Per-task "
        "normalisation of the suite's scores: a task,random,human CSV or JSON file, "
        "random=R,human=H (every task), min-max (default: each task's worst and best score "
        "over all groups) or none.", "suite", "SPEC")
    suite_statistic: str = option("iqm", partial(c.check_choice, choices=SUITE_STATISTICS),
        "The suite aggregate judged: iqm (interquartile mean, default) or mean (of task "
        "means).", "suite", "STAT")
    suite_boot: int = option(SUITE_N_BOOT, partial(c.check_int, minimum=100), "Stratified "
        f"bootstrap replicates of the suite aggregate, >= 100 (default {SUITE_N_BOOT}).",
        "suite", "N")
    task_bootstrap: bool = option(False, c.check_bool, "Resample the suite's tasks as well as "
        "their seeds: the intervals then also say how much the verdict depends on which tasks "
        "are in the suite (default: seeds within tasks).", "suite", flag=True)
    min_coverage: float = option(1.0, partial(c.check_number, low=0.0, high=1.0, closed="right"),
        "Share of a group's tasks a compute needs to enter its aggregate, in (0, 1] (default "
        "1: every task, so the mix never changes).", "suite", "SHARE")
    # ---- diagnostics across metrics and runs
    targets: Mapping[str, float] = option({}, c.check_targets, "GLOB=VALUE: the compute at "
        "which matching metrics reach VALUE, e.g. 'eval/math*=0.6'", "diagnostics",
        "GLOB=VALUE", ("--target",), many=True, merge=True)
    pairs: tuple[tuple[str, str], ...] = option((), c.check_pairs, "REWARD=BENCHMARK metric "
        "globs checked for divergence, e.g. 'train/reward=eval/*'. Default: the naming "
        "conventions", "diagnostics", "REWARD=BENCH", ("--pair",), many=True)
    gpu_hour_cost: float | None = option(None, c.check_positive, "Price of one GPU-hour: adds "
        "the cost per point of metric of the next doubling.", "diagnostics", "PRICE")
    pretrain_compute: float | None = option(None, c.check_positive, "Pre-training compute, in "
        "the unit of the x axis: reports RL compute as a share of it.", "diagnostics",
        "COMPUTE")
    gpu_hours: str | None = option(None, c.check_text, "Metric or column holding cumulative "
        "GPU-hours per run, when the compute axis is not GPU-hours (e.g. compute/gpu_hours).",
        "diagnostics", "NAME")
    budget: float | None = option(None, c.check_positive, "GPU-hours to spend: ranks the runs "
        "worth extending (see 'saturate allocate').", "diagnostics", "HOURS")
    # ---- what a command writes
    format: str = option(REPORT_FORMATS[0], partial(c.check_choice, choices=REPORT_FORMATS),
        f"Report format: {' | '.join(REPORT_FORMATS)} (default {REPORT_FORMATS[0]}).",
        "format", "FORMAT", ("--format", "-f"))
    fail_on: tuple[str, ...] = option((), _among(Ref("saturate.gate.decide", "fail_kinds")),
        Ref("saturate.gate.decide", "fail_on_help"), "fail_on", "KIND", many=True)
    compare_at: tuple[str | float, ...] = option(_DEFAULT["compare_at"], c.check_forecast_points,
        "Compute at which to give P(one recipe beats another): Nx the largest observed "
        f"compute or a value; default {','.join(map(str, _DEFAULT['compare_at']))}. Comma lists "
        "too", "compare", "AT", ("--at",), many=True)
    # ---- where curves are analysed
    workers: int | None = option(None, c.check_workers, "Processes that analyse curves "
        "(default: one per core; 1: this process only; with --dask, the local cluster's "
        "workers).", "engine", "N")
    scheduler: str | None = option(None, c.check_scheduler, "Analyse on a running Dask "
        "scheduler, e.g. tcp://10.0.0.5:8786 (default $SATURATE_SCHEDULER; needs "
        "saturate[dask]).", "engine", "ADDRESS",
        switch=Switch("--dask", "Analyse on a Dask cluster of --workers processes started on "
        "this machine (needs saturate[dask]).", "local"))


OPTIONS: list[Option] = [Option.of(f) for f in fields(SettingsFields)]
"""Every option a settings file, a keyword or a command-line flag may set, in help order."""

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}

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


ANALYSIS_GROUPS: tuple[str, ...] = ("selection", "analysis", "suite", "diagnostics", "engine")
"""The option groups :func:`saturate.analyze` takes as keywords; the others say how a command
shows or judges an analysis (``format``, ``fail_on``, ``compare_at``), not what it computes."""

USED_BY: dict[str, str] = {
    "format": "a report's format: saturate.report.render(analysis, 'json') or the CLI's --format",
    "fail_on": "the gate's: saturate.gate.decide(analysis.curves, fail_on=...) or "
               "`saturate gate --fail-on`",
    "compare": "`saturate compare --compare-at` (saturate.diagnostics.compare_by_metric)",
}
"""Where an option outside :data:`ANALYSIS_GROUPS` is given instead, by group."""


def option_doc(groups: Sequence[str] = ANALYSIS_GROUPS) -> str:
    """The options of ``groups`` with their help, for the docstring of :func:`saturate.analyze`."""
    lines = []
    for o in OPTIONS:
        if o.group not in groups:
            continue
        text = o.help if isinstance(o.help, str) else f"the {o.name.replace('_', ' ')} to use"
        lines.append(f"    {o.name}: {text} (default {o.default!r})")
    return "\n".join(lines)
