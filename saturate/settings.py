"""One :class:`Settings` object for every entry point: built once, validated once, then read.

Precedence: the defaults, then the settings file (``[tool.saturate]`` in ``pyproject.toml`` or a
``saturate.toml``, see :mod:`saturate.config`), then the options given (command line or keyword
arguments). Every value passes through the ``check_*`` function :data:`CHECKS` names for it
(:mod:`saturate.validation`), so an error names the option as it was spelled: ``--confidence`` on
the command line, ``confidence`` in Python, ``saturate.toml: confidence`` in a file.

Each stage gets its own small view: :meth:`Settings.analysis` (the per-curve
:class:`~saturate.analysis.AnalysisSettings`), :meth:`Settings.fit`, :meth:`Settings.diagnostics`,
:meth:`Settings.selection` (what to read), and :meth:`Settings.report` (the report's settings).

>>> s = Settings.build(min_gain="2%", forecast_at=["2x", 1e6])
>>> s.analysis().forecast_at
('2x', 1000000.0)
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from saturate.analysis.call_settings import DecisionSettings
from saturate.analysis.constants import SUITE_N_BOOT as DEFAULT_N_BOOT
from saturate.analysis.constants import SUITE_STATISTICS as STATISTICS
from saturate.analysis.settings import AnalysisSettings
from saturate.config import load_config
from saturate.errors import SettingsError
from saturate.validation import (
    check_band,
    check_bool,
    check_choice,
    check_choices,
    check_confidence,
    check_domains,
    check_forecast_points,
    check_gain,
    check_gpus,
    check_int,
    check_normalize,
    check_number,
    check_pairs,
    check_positive,
    check_strings,
    check_targets,
    check_text,
    check_thresholds,
)

if TYPE_CHECKING:
    from saturate.analysis.work import Engine
    from saturate.diagnostics import DiagnosticSettings
    from saturate.fit import FitSettings

__all__ = ["Settings", "CHECKS", "cli_name", "SCHEDULER_ENV"]

#: Environment variable naming the Dask scheduler to analyse on (below the options given).
SCHEDULER_ENV = "SATURATE_SCHEDULER"

ConfigArg = str | os.PathLike | bool | None


def _check_laws(value: Any, name: str) -> tuple[str, ...]:
    from saturate.fit.laws import LAWS

    return check_choices(value, name, tuple(LAWS), at_least_one=True)


def _check_format(value: Any, name: str) -> str:
    from saturate.report import FORMATS

    return check_choice(value, name, FORMATS)


def _check_fail_on(value: Any, name: str) -> tuple[str, ...]:
    if value == ():  # the default: nothing to check, and no diagnostics to import for it
        return ()
    from saturate.gate import fail_kinds

    return check_choices(value, name, fail_kinds())


def _count(value: Any, name: str) -> int:
    return check_int(value, name, 0)


def _check_statistic(value: Any, name: str) -> str:
    return check_choice(value, name, STATISTICS)


def _check_suite_boot(value: Any, name: str) -> int:
    return check_int(value, name, 100)


def _check_coverage(value: Any, name: str) -> float:
    return check_number(value, name, 0.0, 1.0, closed="right")


def _check_workers(value: Any, name: str) -> int:
    """A count of processes, written as digits (``1e3`` is refused: a slip, not a count)."""
    if isinstance(value, str) and not value.strip().isdigit():
        raise SettingsError(f"{name} must be a whole number of processes such as 4, got "
                            f"{value!r}")
    return check_int(value, name, 1)


def local_workers(workers: int | None, name: str = "--workers") -> int | None:
    """``workers`` capped at this machine's cores, with a warning: more processes than cores
    here only add memory (each holds the fit) and time."""
    cores = os.cpu_count() or 1
    if workers is not None and workers > cores:
        warnings.warn(f"{name} {workers}: this machine has {cores} core(s); using {cores} "
                      "worker(s)", stacklevel=2)
        return cores
    return workers


def _check_scheduler(value: Any, name: str) -> str:
    """``"local"`` (a Dask cluster on this machine) or a scheduler address such as
    ``tcp://10.0.0.5:8786`` or ``10.0.0.5:8786``."""
    text = check_text(value, name)
    if text.lower() == "local":
        return "local"
    _, sep, rest = text.partition("://")
    if any(ch.isspace() for ch in text) or (sep and not rest.strip("/")) or text.startswith(":"):
        raise SettingsError(f"{name} must be 'local' or the address of a Dask scheduler such as "
                            f"tcp://10.0.0.5:8786, got {value!r}")
    return text


CHECKS: dict[str, Callable[[Any, str], Any]] = {
    # what to read
    "experiment": check_strings,
    "filter": check_text,
    "metric": check_strings,
    "run": check_strings,
    "compute": check_text,
    "gpus": check_gpus,
    "timeout": check_positive,
    # which metrics are judged
    "objective": check_strings,
    "diagnostic": check_strings,
    # how curves are judged
    "min_gain": check_gain,
    "band": check_band,
    "thresholds": check_thresholds,
    "domains": check_domains,
    "confidence": check_confidence,
    "forecast_at": check_forecast_points,
    "lower_is_better": check_strings,
    "higher_is_better": check_strings,
    "group_by": check_text,
    "n_boot": _count,
    "seed": _count,
    "laws": _check_laws,
    # diagnostics
    "pairs": check_pairs,
    "targets": check_targets,
    "gpu_hour_cost": check_positive,
    "pretrain_compute": check_positive,
    "gpu_hours": check_text,
    "budget": check_positive,
    "compare_at": check_forecast_points,
    # suites: one verdict per group over a suite of tasks (saturate.suites)
    "suite": check_text,
    "normalize": check_normalize,
    "suite_statistic": _check_statistic,
    "suite_boot": _check_suite_boot,
    "task_bootstrap": check_bool,
    "min_coverage": _check_coverage,
    # where curves are analysed
    "workers": _check_workers,
    "scheduler": _check_scheduler,
    # report and gate
    "format": _check_format,
    "fail_on": _check_fail_on,
}
"""Each option a settings file or a caller may set, and the check that validates it."""

_FLAGS = {"domains": "--domain", "targets": "--target", "pairs": "--pair", "compare_at": "--at", "laws": "--law"}


def cli_name(option: str) -> str:
    """The command-line spelling of an option: ``min_gain`` -> ``--min-gain``."""
    return _FLAGS.get(option, "--" + option.replace("_", "-"))


def _unset(value: Any) -> bool:
    """``None`` and empty lists leave the value below in place (an unused CLI option is ``None``)."""
    return value is None or (isinstance(value, (list, tuple)) and len(value) == 0)


@dataclass(frozen=True)
class Settings:
    """Every option of saturate, validated. Build it with :meth:`build`; read it through the views.

    ``config`` is the settings file read (``None`` when none was), ``explicit`` the options the
    file or the caller set (the rest are defaults), ``cli`` whether options are named as on the
    command line in messages.
    """

    experiment: tuple[str, ...] = ()
    filter: str | None = None
    metric: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    compute: str | None = None
    gpus: float | str | None = None
    timeout: float | None = None
    objective: tuple[str, ...] = ()
    diagnostic: tuple[str, ...] = ()
    min_gain: float | str = AnalysisSettings.min_gain
    band: tuple[float, float] | None = None
    thresholds: Mapping[str, float | str] = field(default_factory=dict)
    domains: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)
    confidence: float = AnalysisSettings.confidence
    forecast_at: tuple[str | float, ...] = AnalysisSettings.forecast_at
    lower_is_better: tuple[str, ...] = ()
    higher_is_better: tuple[str, ...] = ()
    group_by: str | None = None
    n_boot: int = AnalysisSettings.n_boot
    seed: int = AnalysisSettings.seed
    laws: tuple[str, ...] | None = None
    pairs: tuple[tuple[str, str], ...] = ()
    targets: Mapping[str, float] = field(default_factory=dict)
    gpu_hour_cost: float | None = None
    pretrain_compute: float | None = None
    gpu_hours: str | None = None
    budget: float | None = None
    compare_at: tuple[str | float, ...] = ("1x", "4x")
    # suites (see suite_options)
    suite: str | None = None
    normalize: str | Mapping[str, Any] | None = None
    suite_statistic: str = "iqm"
    suite_boot: int = DEFAULT_N_BOOT
    task_bootstrap: bool = False
    min_coverage: float = 1.0
    workers: int | None = None
    scheduler: str | None = None
    format: str = "table"
    fail_on: tuple[str, ...] = ()
    config: str | None = None
    explicit: frozenset[str] = field(default_factory=frozenset, repr=False)
    cli: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key, check in CHECKS.items():
            value = getattr(self, key)
            if value is not None:
                check(value, key)

    # ---- building ------------------------------------------------------------------------

    @classmethod
    def build(cls, config: ConfigArg = None, *, cli: bool = False, **given: Any) -> Settings:
        """Defaults < the settings file < ``$SATURATE_SCHEDULER`` < ``given``.

        ``config``: a file path, ``True`` to look for ``saturate.toml`` / ``pyproject.toml`` from
        the current folder upward, ``None``/``False`` for none. ``given`` are options by name
        (``min_gain="2%"``); ``None`` or an empty list leaves the value below in place. ``cli``
        names options as on the command line (``--min-gain``) in error messages.
        """
        base = cls(cli=cli)
        found = load_config(config, name=cli_name("config") if cli else "config")
        if found is not None:
            path = str(found.path)
            base = base._overlay(found.values, lambda key: f"{path}: {key}", where=f"{path}: ",
                                 config=path)
        scheduler = os.environ.get(SCHEDULER_ENV, "").strip()
        if scheduler:
            base = base._overlay({"scheduler": scheduler}, lambda key: SCHEDULER_ENV)
        return base.updated(**given)

    def updated(self, **given: Any) -> Settings:
        """These settings with ``given`` laid over them (validated, named as the caller spells them)."""
        return self._overlay(given, cli_name if self.cli else str)

    def _overlay(
        self, raw: Mapping[str, Any], name: Callable[[str], str], where: str = "", **extra: Any
    ) -> Settings:
        unknown = sorted(set(raw) - set(CHECKS))
        if unknown:
            raise SettingsError(f"{where}unknown setting(s) {', '.join(unknown)} "
                                f"(known: {', '.join(sorted(CHECKS))})")
        values = {k: CHECKS[k](v, name(k)) for k, v in raw.items() if not _unset(v)}
        for key in ("targets", "domains"):  # a glob given here replaces the same glob below
            if key in values:
                values[key] = {**getattr(self, key), **values[key]}
        return dataclasses.replace(
            self, **values, **extra, explicit=self.explicit | frozenset(values)
        )

    # ---- views -----------------------------------------------------------------------------

    def option(self, key: str) -> str:
        """How messages name the option ``key`` (``--min-gain`` or ``min_gain``)."""
        return cli_name(key) if self.cli else key

    def require(self, *keys: str, example: str) -> None:
        """A :class:`SettingsError` unless one of ``keys`` was set by the file or the caller."""
        if not self.explicit & set(keys):
            raise SettingsError(f"{self.option(keys[0])} is required (e.g. {example}), "
                                f"or set {keys[0]} in [tool.saturate]")

    def selection(self) -> dict[str, Any]:
        """What to read: keyword arguments of :func:`saturate.load` (unset ones are ``None``)."""
        return {
            "experiment": list(self.experiment) or None, "filter": self.filter,
            "metric": list(self.metric) or None, "run": list(self.run) or None,
            "compute": self.compute, "timeout": self.timeout,
        }

    def analysis(self) -> AnalysisSettings:
        """How each curve is judged: the settings of :func:`saturate.analysis.analyze_curve`."""
        return AnalysisSettings(
            min_gain=self.min_gain, confidence=self.confidence, forecast_at=self.forecast_at,
            lower_is_better=self.lower_is_better, higher_is_better=self.higher_is_better,
            thresholds=dict(self.thresholds), group_by=self.group_by, n_boot=self.n_boot,
            seed=self.seed, laws=self.laws, domains=dict(self.domains),
            decision=(DecisionSettings() if self.band is None
                      else DecisionSettings().with_band(*self.band)),
        )

    def engine(self, client: Any = None) -> Engine:
        """Where curves are analysed: ``workers`` processes here, the Dask ``scheduler``, or
        ``client`` (a ``distributed.Client``, which wins)."""
        from saturate.analysis.work import Engine

        if client is not None:
            return Engine(workers=self.workers, client=client)
        workers = self.workers
        if self.scheduler is None or self.scheduler == "local":  # processes on this machine
            workers = local_workers(workers, cli_name("workers") if self.cli else "workers")
        return Engine(workers=workers, scheduler=self.scheduler)

    def fit(self) -> FitSettings:
        """How each curve is fitted."""
        return self.analysis().fit_settings()

    def diagnostics(self) -> DiagnosticSettings:
        """The diagnostics' settings, with the analysis's confidence, seed and direction rules so
        that both judge a metric the same way."""
        from saturate.diagnostics import DiagnosticSettings

        return DiagnosticSettings(
            pairs=self.pairs, targets=dict(self.targets), confidence=self.confidence,
            seed=self.seed, compare_at=self.compare_at, budget=self.budget,
            gpu_hours=self.gpu_hours, gpu_hour_cost=self.gpu_hour_cost,
            pretrain_compute=self.pretrain_compute, lower_is_better=self.lower_is_better,
            higher_is_better=self.higher_is_better, objective=self.objective,
            diagnostic=self.diagnostic, gpus=self.gpus, analysis=self.analysis(),
        )

    def suite_options(self) -> dict[str, Any] | None:
        """Keyword arguments of :func:`saturate.suites.analyze_suite` (None without ``suite``).

        With a suite, ``group_by`` names its groups (agents or recipes): each gets one verdict on
        its aggregate over the tasks, and curves are not pooled across runs (that would average
        over tasks). One ``metric`` glob, when given, picks the suite's metric (or, with
        ``suite="metric"``, its tasks).
        """
        if self.suite is None:
            return None
        return {
            "suite": self.suite, "group_by": self.group_by,
            "metric": self.metric[0] if len(self.metric) == 1 else None,
            "normalize": self.normalize, "statistic": self.suite_statistic,
            "n_boot": self.suite_boot, "task_bootstrap": self.task_bootstrap,
            "min_coverage": self.min_coverage,
        }

    def report(self, compute_name: str) -> dict[str, Any]:
        """The ``settings`` block of a report: the x axis, the analysis settings, and the
        selection, diagnostics options and settings file when they are set."""
        used: dict[str, Any] = {"compute": compute_name, **dataclasses.asdict(self.analysis())}
        if self.metric:
            used["metric"] = list(self.metric)
        for key in ("objective", "diagnostic"):
            if getattr(self, key):
                used[key] = list(getattr(self, key))
        if self.pairs:
            used["pairs"] = [list(p) for p in self.pairs]
        if self.targets:
            used["targets"] = dict(self.targets)
        for key in ("gpu_hour_cost", "pretrain_compute", "budget", "gpu_hours", "gpus"):
            if getattr(self, key) is not None:
                used[key] = getattr(self, key)
        if self.suite is not None:
            used["group_by"] = None  # the curves are not pooled: group_by names the suite's groups
            used["suite"] = {k: v for k, v in (self.suite_options() or {}).items()
                             if k != "metric"}
        if self.config is not None:
            used["config"] = self.config
        return used

    def to_dict(self) -> dict[str, Any]:
        """Every option (tuples as lists), JSON-safe."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name in ("explicit", "cli"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = dict(value) if isinstance(value, Mapping) else value
        return out

    def summary(self) -> str:
        """``settings from <path>: key=value, ...`` for the options set, or ``defaults``."""
        items = ", ".join(f"{k}={v}" for k, v in self.to_dict().items() if k in self.explicit)
        head = f"settings from {self.config}" if self.config else "settings"
        return f"{head}: {items or 'defaults'}"
