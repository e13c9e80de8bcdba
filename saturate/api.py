"""The Python API, ``saturate.analyze`` and its :class:`Analysis`; the CLI is a thin layer over it."""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from saturate.errors import SettingsError
from saturate.ingest import Source, Tables
from saturate.ingest.stream import ReadProgress
from saturate.reading import check_rates, read_tables
from saturate.report.notebook import notebook_html  # also registers the results' HTML views
from saturate.results import CurveAnalysis, jsonable, verdict_counts
from saturate.settings import Settings
from saturate.table.axis import AxisWarning, ComputeAxis, describe_axis, named_axis
from saturate.table.table import Table, concat_tables

if TYPE_CHECKING:
    from saturate.analysis.diagnostic_metrics import DiagnosticMetric
    from saturate.suites import SuiteAnalysis

__all__ = ["Analysis", "analyze", "analyze_read", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

# Columns of Analysis.to_frame(), in the order of the JSON entries.
_FRAME_FIELDS = (
    "run", "run_id", "metric", "verdict", "p_pays", "reasons", "n_points", "compute_first", "compute_last",
    "value_last", "direction", "threshold",
)


@dataclass(frozen=True)
class Analysis:
    """The result of :func:`analyze`: one :class:`~saturate.results.CurveAnalysis` per objective
    curve, the :class:`~saturate.diagnostics.Diagnostic` findings across metrics and runs, the
    metrics that get no verdict (``diagnostic_metrics``: KL, entropy, lengths, losses of the
    optimiser, timing, unused compute measures; see :mod:`saturate.analysis.roles`), the x
    ``axis`` with its unit, and, when a ``suite`` key was given, the
    :class:`~saturate.suites.SuiteAnalysis` (one verdict per group on its aggregate over the
    suite's tasks, and the per-task verdicts).

    Displays as a table with small plots in Jupyter; ``to_frame()`` gives one row per curve with the
    same fields as the JSON report (``diagnostics_frame()`` one row per diagnostic);
    ``to_dict()`` is the JSON document itself.

    ``table`` is the :class:`~saturate.table.table.Table` read when it was kept whole (seeds
    pooled); otherwise the points live only in the curves, and :attr:`data` rebuilds the table
    from them on first use, with ``extra`` (points read for the diagnostics only) and ``runs``
    (the run facts).
    """

    curves: tuple[CurveAnalysis, ...]
    settings: dict[str, Any]
    diagnostics: tuple[Any, ...] = ()
    table: Table | None = field(default=None, repr=False, compare=False)
    diagnostic_metrics: tuple[DiagnosticMetric, ...] = ()
    axis: ComputeAxis | None = None
    suite: SuiteAnalysis | None = None
    extra: tuple[Table, ...] = field(default=(), repr=False, compare=False)
    runs: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @cached_property
    def data(self) -> Table | None:
        """The :class:`~saturate.table.table.Table` read: one row per point (the metrics without
        a verdict and the GPU-hours metric read for the diagnostics too), the run facts and the
        x axis. Rebuilt from the curves, it lacks the points' wall-clock ``timestamp`` (which
        :func:`saturate.load` keeps)."""
        if self.table is not None:
            return self.table
        if not self.curves and not self.extra:
            return None
        from saturate.analysis.table import table_of

        axis = self.axis or named_axis(str(self.settings.get("compute", "step")))
        return table_of(self.curves, axis, self.runs, self.extra)

    def __len__(self) -> int:
        return len(self.curves)

    def __iter__(self):
        return iter(self.curves)

    def __getitem__(self, key: int | tuple[str, str]) -> CurveAnalysis:
        """``analysis[0]`` or ``analysis["run", "metric"]``."""
        if isinstance(key, tuple):
            run, metric = key
            for c in self.curves:
                if (c.run == run or c.run_id == run) and c.metric == metric:
                    return c
            raise KeyError(f"no curve for run {run!r} and metric {metric!r}")
        return self.curves[key]

    def select(self, run: str | None = None, metric: str | None = None) -> tuple[CurveAnalysis, ...]:
        """The curves whose run (name or id) and metric match the glob patterns."""
        def ok(value: str, pattern: str | None) -> bool:
            return pattern is None or fnmatch.fnmatchcase(value, pattern)

        return tuple(
            c for c in self.curves
            if (ok(c.run, run) or ok(c.run_id, run)) and ok(c.metric, metric)
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: ``schema_version``, the settings used, the x axis, the curves (the
        objectives, each with its verdict), the diagnostics, the metrics without a verdict, and
        the ``suite`` section when there is a suite."""
        doc = {
            "schema_version": SCHEMA_VERSION,
            "settings": self.settings,
            "summary": verdict_counts(self.curves),
            "axis": None if self.axis is None else self.axis.to_dict(),
            "curves": [c.to_dict() for c in self.curves],
            "diagnostics": [d.to_dict() if hasattr(d, "to_dict") else d for d in self.diagnostics],
            "diagnostic_metrics": [m.to_dict() for m in self.diagnostic_metrics],
        }
        if self.suite is not None:
            doc["suite"] = self.suite.to_dict()
        return jsonable(doc)

    def to_frame(self) -> pd.DataFrame:
        """One row per curve with the fields of the JSON entries, nested ones flattened."""
        rows = []
        for c in self.curves:
            d = c.to_dict()
            row = {k: d[k] for k in _FRAME_FIELDS}
            row["reasons"] = "; ".join(d["reasons"])
            for name in ("gain_per_doubling", "asymptote", "headroom"):
                for part, v in d[name].items():
                    row[name if part == "value" else f"{name}_{part}"] = v
            row["roi"] = d["roi"]["value"]
            row["roi_stage"] = d["roi"]["stage"]
            row["knee"] = d["knee"]
            row["stop_point"] = None if d["stop_point"] is None else d["stop_point"]["value"]
            for f in d["forecast"]:
                row[f"forecast_{f['at']}"] = f["value"]
                row[f"forecast_{f['at']}_lo"] = f["lo"]
                row[f"forecast_{f['at']}_hi"] = f["hi"]
            row["collapse"] = None if d["collapse"] is None else d["collapse"]["compute"]
            row["flags"] = ", ".join(d["flags"])
            rows.append(row)
        return pd.DataFrame(rows)

    def diagnostics_frame(self) -> pd.DataFrame:
        """One row per diagnostic: kind, severity, run, metrics (joined), compute, message."""
        cols = ["kind", "severity", "source", "run", "run_id", "metrics", "compute", "message"]
        rows = []
        for d in self.diagnostics:
            row = {k: getattr(d, k) for k in cols}
            row["metrics"] = ", ".join(d.metrics)
            rows.append(row)
        return pd.DataFrame(rows, columns=cols)

    def summary(self) -> str:
        """A plain-text report: the verdict counts, the suite (when there is one), each curve's
        summary, the diagnostics, then the metrics without a verdict."""
        parts = [verdict_counts(self.curves)]
        if self.axis is not None:
            parts[0] += f"; x axis {self.axis.heading}"
        if self.suite is not None:
            parts.append(self.suite.summary())
        parts += [c.summary() for c in self.curves]
        if self.diagnostics:
            parts.append("Diagnostics:\n" + "\n".join(f"  {d.summary()}" for d in self.diagnostics))
        if self.diagnostic_metrics:
            parts.append("Diagnostic metrics (no verdict):\n"
                         + "\n".join(f"  {m.summary()}" for m in self.diagnostic_metrics))
        return "\n\n".join(parts)

    def plot(self, run: str | None = None, metric: str | None = None):  # noqa: ANN201
        """A matplotlib Figure of the selected curves (all when no run/metric is given).

        In Jupyter it shows once, inline, as the cell's value: it is made through pyplot (which
        sets up the notebook's display of figures) and closed there at once, so pyplot does not
        show it a second time at the end of the cell.
        """
        from saturate.report.plots import plot_analysis

        return plot_analysis(self, run=run, metric=metric, pyplot=True)

    def _repr_html_(self) -> str:
        """Jupyter: the headline, a row per curve with a small chart, the diagnostics."""
        return notebook_html(self)

    def __repr__(self) -> str:
        n = len(self.diagnostics)
        suite = "" if self.suite is None else "; suite {}: {}".format(
            self.suite.suite, ", ".join(f"{g.group} {g.verdict}" for g in self.suite.groups))
        return (f"<Analysis {verdict_counts(self.curves)}; {n} diagnostic{'' if n == 1 else 's'}"
                f"{suite}>")


def analyze(
    source: Source | Sequence[Source] | None = None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
    gpus: float | str | None = None,
    objective: Sequence[str] | str | None = None,
    diagnostic: Sequence[str] | str | None = None,
    min_gain: float | str | None = None,
    band: Sequence[float] | str | None = None,
    confidence: float | str | None = None,
    forecast_at: Sequence[str | float] | str | float | None = None,
    lower_is_better: Sequence[str] | str | None = None,
    higher_is_better: Sequence[str] | str | None = None,
    thresholds: Mapping[str, float | str] | None = None,
    domains: Mapping[str, Any] | Sequence[str] | None = None,
    group_by: str | None = None,
    n_boot: int | None = None,
    seed: int | None = None,
    laws: Sequence[str] | str | None = None,
    pairs: Mapping[str, Sequence[str] | str] | Sequence[Sequence[str] | str] | None = None,
    targets: Mapping[str, float] | Sequence[str] | None = None,
    gpu_hour_cost: float | None = None,
    pretrain_compute: float | None = None,
    budget: float | None = None,
    gpu_hours: str | None = None,
    suite: str | None = None,
    normalize: str | os.PathLike | Mapping[str, Any] | None = None,
    suite_statistic: str | None = None,
    suite_boot: int | None = None,
    task_bootstrap: bool | None = None,
    min_coverage: float | None = None,
    diagnostics: bool = True,
    fast: bool = True,
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    config: str | os.PathLike | bool | None = None,
    settings: Settings | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_read: Callable[[ReadProgress], None] | None = None,
) -> Analysis:
    """Read the runs and analyse every (run, metric) curve: fits, gain per doubling, knee, verdict.

    Args:
        source: anything :func:`saturate.load` reads (a path, a URI, a DataFrame, a list of these),
            or the :class:`~saturate.table.table.Table` it returned.
        experiment, filter, metric, run, compute: selection, as in :func:`saturate.load`.
        gpus: the number of GPUs of every run (or the run parameter holding it): the x axis
            becomes GPU-hours from the logged timestamps (see :mod:`saturate.table.axis`), as
            :func:`saturate.load` makes it.
        objective / diagnostic: metric globs overriding the role rules
            (:mod:`saturate.analysis.roles`): objectives get a verdict, diagnostics do not.
        min_gain: the least gain per doubling of compute that still "pays": metric units
            (``0.01``) or a share of the curve's observed range (``"3%"``).
        band: ``(low, high)`` or ``"low,high"``: P(the next doubling pays) below ``low`` does
            not pay, from ``high`` pays, between is inconclusive (default: the band chosen on
            held-out public curves; ``(0.5, 0.5)`` never abstains).
        confidence: level of every interval, in [0.5, 1) (default 0.9).
        forecast_at: compute values to forecast at: multiples of the last one (``"2x"``) or
            absolute values > 0.
        lower_is_better / higher_is_better: metric globs overriding the direction rules.
        thresholds: per metric glob, its own ``min_gain``.
        domains: per metric glob, the ``(lo, hi)`` its values live in (``None``: no domain),
            ``{"eval/*": (0, 1)}`` or ``["eval/*=0,1"]``; rates and accuracies get ``[0, 1]``
            from their name (:mod:`saturate.analysis.domains`).
        group_by: a run parameter (``"recipe"`` or ``"params.recipe"``) whose runs are pooled as seeds.
        n_boot, seed, laws: bootstrap resamples, random seed, and the laws to fit.
        pairs: reward/benchmark metric globs checked for divergence, ``{"train/reward":
            ["eval/*"]}`` or ``[("train/reward", "eval/*")]``; default: the naming conventions.
        targets: metric glob -> value to reach; the diagnostics give the compute it takes.
            Merged over the file's targets (a glob given here wins).
        gpu_hour_cost: price of a GPU-hour: the cost per point of metric of the next doubling.
        pretrain_compute: pre-training compute in the x axis's unit: RL share of it.
        budget: GPU-hours to spend: ranks the runs worth extending (the allocation diagnostic).
        gpu_hours: metric or column of cumulative GPU-hours when the x axis is not GPU-hours.
        suite: the column, run parameter or tag naming the task of a benchmark suite (``"game"``,
            ``"env"``, ``"task"``; ``"metric"`` when the tasks are metrics): the result's
            ``suite`` then holds one verdict per ``group_by`` group on its aggregate over the
            tasks (see :func:`saturate.suites.analyze_suite`). ``group_by`` then names the groups
            and the curves are not pooled (pooling seeds would average across tasks).
        normalize: per-task normalisation of the suite's scores: ``"min-max"`` (default, over
            all groups), ``"none"``, ``"random=R,human=H"``, a ``task,random,human`` CSV/JSON
            file, or a mapping.
        suite_statistic: the suite aggregate judged, ``"iqm"`` (default) or ``"mean"``.
        suite_boot: stratified bootstrap replicates of the suite aggregate (>= 100, default 2000).
        task_bootstrap: resample tasks as well as seeds (intervals also over the choice of tasks).
        min_coverage: share of a group's tasks a compute needs to enter its aggregate (default 1).
        diagnostics: ``False`` skips the diagnostics across metrics and runs.
        fast: read MLflow databases through the read-only fast path (``False``: MLflow's client).
        workers: processes that analyse curves (default: one per core; 1: this process only).
        scheduler: a running Dask scheduler's address (``"tcp://10.0.0.5:8786"``), or ``"local"``
            for a Dask cluster of ``workers`` processes here (default ``$SATURATE_SCHEDULER``).
            Needs ``pip install "saturate[dask]"``.
        client: a ``distributed.Client`` to analyse on (left open); wins over ``scheduler``.
        config: a ``pyproject.toml``/``saturate.toml`` path to read ``[tool.saturate]`` settings from,
            ``True`` to look for one from the current folder upward, ``None``/``False`` for none.
            Arguments given here win over the file.
        settings: a :class:`~saturate.settings.Settings` built beforehand (instead of ``config``);
            options given here are laid over it.
        progress: called as ``progress(done, total)`` as curves are analysed (on any engine);
            while runs are still being read, ``total`` counts the curves read so far.
        on_read: called with a :class:`~saturate.ingest.stream.ReadProgress` (files, runs and
            points read so far) as the sources are read.

    Raises:
        SettingsError: an option is invalid; the message names it and shows the value.

    Example:
        >>> a = saturate.analyze("sample_runs/", metric="eval/*")  # doctest: +SKIP
        >>> a.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP
    """
    given = {
        "experiment": experiment, "filter": filter, "metric": metric, "run": run,
        "compute": compute, "gpus": gpus, "objective": objective, "diagnostic": diagnostic,
        "min_gain": min_gain, "band": band, "confidence": confidence,
        "forecast_at": forecast_at, "lower_is_better": lower_is_better,
        "higher_is_better": higher_is_better, "thresholds": thresholds, "domains": domains,
        "group_by": group_by,
        "n_boot": n_boot, "seed": seed, "laws": laws, "pairs": pairs, "targets": targets,
        "gpu_hour_cost": gpu_hour_cost, "pretrain_compute": pretrain_compute, "budget": budget,
        "gpu_hours": gpu_hours, "suite": suite, "normalize": normalize,
        "suite_statistic": suite_statistic, "suite_boot": suite_boot,
        "task_bootstrap": task_bootstrap, "min_coverage": min_coverage,
        "workers": workers, "scheduler": scheduler,
    }
    if settings is None:
        settings = Settings.build(config, **given)
    elif config:
        raise SettingsError("config: give either a settings file or settings=, not both")
    else:
        settings = settings.updated(**given)
    engine = settings.engine(client)
    if engine.uses_dask:
        from saturate.analysis.dask_engine import require_distributed

        require_distributed("client" if client is not None else settings.option("scheduler"))
    tables = read_tables(source, settings, fast=fast, on_read=on_read)
    analysis = analyze_read(tables, settings, diagnostics=diagnostics, engine=engine,
                            progress=progress, apart=tables.apart)
    if analysis.axis is not None and analysis.axis.warning() is not None:
        warnings.warn(analysis.axis.warning(), AxisWarning, stacklevel=2)
    return analysis


def analyze_read(
    parts: Table | Tables,
    settings: Settings,
    *,
    diagnostics: bool = True,
    engine: Any = None,
    progress: Callable[[int, int], None] | None = None,
    apart: Sequence[Table] = (),
) -> Analysis:
    """The one verdict path: the curves of a read turned into an :class:`Analysis` with
    ``settings``: the metric roles, seeds pooled (``group_by``) or sibling runs pooled, the
    suite, every objective analysed on ``engine`` (default ``settings.engine()``), the metrics
    without a verdict and, with ``diagnostics``, the diagnostics across metrics and runs.

    ``parts`` is a read already selected and on its x axis, as ingest decided it (GPU-hours
    from wall time with ``gpus`` included): a :class:`saturate.ingest.Tables` (its parts, and
    its :attr:`~saturate.ingest.Tables.axis` once read) or one :class:`Table`; ``apart`` holds
    the points read for the diagnostics only (read once the parts are). :func:`analyze` and every command
    (``analyze``, ``gate``, ``compare``, ``allocate``, ``watch``, ``timeline``) go through it,
    so one curve gets the same verdict, gain and P(pays) whichever command asks.
    """
    engine = settings.engine() if engine is None else engine
    analysis = _analyze_tables(parts, apart, settings, engine, progress)
    if diagnostics:
        from saturate.diagnostics import run_diagnostics

        found = run_diagnostics(analysis.curves, _beside_the_curves(analysis), settings.diagnostics())
        analysis = dataclasses.replace(analysis, diagnostics=found)
    return analysis


def _beside_the_curves(a: Analysis) -> Table | None:
    """The points the diagnostics need besides the curves' own (not :attr:`Analysis.data`: the
    whole sweep again)."""
    return a.table if a.table is not None else concat_tables(list(a.extra)) if a.extra else None


def _stages(
    progress: Callable[[int, int], None] | None,
) -> Callable[[], Callable[[int, int], None] | None]:
    """A maker of ``progress(done, total)`` hooks for stages that each count from zero: a new
    stage's counts are shown after the totals of the stages before it, on one bar."""
    seen: list[int] = []

    def stage() -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        seen.append(0)
        before = sum(seen[:-1])

        def hook(done: int, total: int) -> None:
            seen[-1] = total
            progress(before + done, before + total)

        return hook

    return stage


def _analyze_tables(
    tables: Table | Tables, apart: Sequence[Table], settings: Settings,
    engine: Any, progress: Callable[[int, int], None] | None
) -> Analysis:
    """Every objective curve of ``tables`` analysed on ``engine``: as the parts arrive, or once
    all are read when seeds are pooled (every run of a recipe together), a suite is analysed
    (its aggregate needs every task), or a GPU-hours option (``--budget``, ``--gpu-hour-cost``)
    must be checked against the x axis before any fit."""
    from saturate.analysis.diagnostic_metrics import summarize_metrics
    from saturate.analysis.parts import PreparedParts
    from saturate.analysis.table import analyze_parts, analyze_table, on_axis
    from saturate.suites.from_settings import suite_from_settings

    how = settings.analysis()
    parts = PreparedParts(*_with_axis(tables, settings.compute is not None),
                          objective=settings.objective, diagnostic=settings.diagnostic)
    whole = settings.group_by or settings.budget is not None or settings.gpu_hour_cost is not None
    table, suite, stage = None, None, _stages(progress)
    if whole or settings.suite is not None:
        df = concat_tables(list(parts))
        df = df.with_points(df.points, parts.axis())
        table = concat_tables([df, *apart, *parts.others])
        table = table.with_points(table.points, parts.axis())
        check_rates(table, settings)
        if settings.suite is not None:  # first: a bad key or baselines file fails before any fit
            how = dataclasses.replace(how, group_by=None)  # group_by names the suite's groups
            suite = suite_from_settings(df, settings, stage())
        results = analyze_table(df, how, progress=stage(), engine=engine)
    else:
        results = analyze_parts(parts, how, progress=progress, engine=engine)
    axis = parts.axis()
    results = on_axis(results, axis)  # the x axis of the whole read, as ingest decided it
    others = parts.other_points()
    unjudged = () if others is None else summarize_metrics(others.points, parts.roles(),
                                                           confidence=settings.confidence)
    return Analysis(curves=tuple(results), settings=jsonable(settings.report(axis.name)),
                    table=table, diagnostic_metrics=unjudged, axis=axis,
                    extra=(*apart, *parts.others), runs=parts.runs(), suite=suite)


def _with_axis(
    parts: Table | Tables, explicit: bool
) -> tuple[Iterable[Table], Callable[[], ComputeAxis]]:
    """The parts of a read, and how to know its x axis once they are read: what
    :class:`~saturate.ingest.Tables` decided, or the axis of one Table with the runs left on their
    step (``explicit``: the user named the axis)."""
    if isinstance(parts, Table):
        return [parts], lambda: describe_axis(parts.points, parts.axis, explicit=explicit)
    return parts, lambda: parts.axis
