"""The Python API, ``saturate.analyze`` and its :class:`Analysis`; the CLI is a thin layer over it."""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from saturate.analysis.settings import AnalysisSettings, settings_used
from saturate.diagnostics.cost import check_rates
from saturate.errors import SettingsError, miss_text, shorten
from saturate.ingest import Source, Tables
from saturate.ingest.stream import ReadProgress, read_tables
from saturate.report.notebook import notebook_html  # also registers the results' HTML views
from saturate.results import CurveAnalysis, verdict_counts
from saturate.results.codec import Written, derived, jsonable, meta
from saturate.settings import Settings
from saturate.settings.fields import ANALYSIS_GROUPS, OPTIONS_BY_NAME, USED_BY, option_doc
from saturate.table.axis import AxisWarning, ComputeAxis, describe_axis, named_axis
from saturate.table.table import Table, concat_tables

if TYPE_CHECKING:
    from saturate.analysis.diagnostic_metrics import DiagnosticMetric
    from saturate.diagnostics.base import Diagnostic
    from saturate.suites import SuiteAnalysis

__all__ = ["Analysis", "analyze", "analyze_read", "settings_from", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

# Columns of Analysis.to_frame(), in the order of the JSON entries.
_FRAME_FIELDS = (
    "run", "run_id", "metric", "verdict", "p_pays", "reasons", "n_points", "compute_first", "compute_last",
    "value_last", "direction", "threshold",
)


@dataclass(frozen=True)
class Analysis(Written):
    """The result of :func:`analyze`: one :class:`~saturate.results.CurveAnalysis` per objective
    curve, the diagnostics across metrics and runs, the metrics without a verdict
    (``diagnostic_metrics``), the x ``axis`` and, with a ``suite`` key, the
    :class:`~saturate.suites.SuiteAnalysis`.

    ``to_dict()`` is the JSON report, ``to_frame()`` one row per curve with its fields.
    ``table`` is the Table read when it was kept whole (seeds pooled); otherwise :attr:`data`
    rebuilds it from the curves, ``extra`` (points read for the diagnostics only) and ``runs``.
    """

    _json_order: ClassVar[tuple[str, ...]] = (
        "schema_version", "settings", "summary", "axis", "curves")

    curves: tuple[CurveAnalysis, ...]
    settings: dict[str, Any]
    diagnostics: tuple[Diagnostic, ...] = ()
    table: Table | None = field(default=None, repr=False, compare=False)
    diagnostic_metrics: tuple[DiagnosticMetric, ...] = ()
    axis: ComputeAxis | None = None
    suite: SuiteAnalysis | None = field(default=None, metadata=meta(omit_none=True))
    extra: tuple[Table, ...] = field(default=(), repr=False, compare=False)
    runs: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @cached_property
    def data(self) -> Table | None:
        """The :class:`~saturate.table.table.Table` read (diagnostic-only metrics included).
        Rebuilt from the curves, it lacks the points' ``timestamp`` (which :func:`saturate.load`
        keeps)."""
        if self.table is not None:
            return self.table
        if not self.curves and not self.extra:
            return None
        from saturate.analysis.analyse_table import table_of

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
            of_run = [c for c in self.curves if run in (c.run, c.run_id)]
            for c in of_run:
                if c.metric == metric:
                    return c
            head = f"no curve for run {shorten(repr(run))} and metric {shorten(repr(metric))}"
            raise KeyError(miss_text(head, [metric], [c.metric for c in of_run], "its metrics")
                           if of_run else miss_text(head, [run], [c.run for c in self.curves],
                                                    "runs"))
        return self.curves[key]

    def select(self, run: str | None = None, metric: str | None = None) -> tuple[CurveAnalysis, ...]:
        """The curves whose run (name or id) and metric match the glob patterns."""
        def ok(value: str, pattern: str | None) -> bool:
            return pattern is None or fnmatch.fnmatchcase(value, pattern)

        return tuple(
            c for c in self.curves
            if (ok(c.run, run) or ok(c.run_id, run)) and ok(c.metric, metric)
        )

    @derived(key="schema_version")
    def _schema_version(self) -> int:
        return SCHEMA_VERSION

    @derived(key="summary")
    def _verdict_counts(self) -> str:
        return verdict_counts(self.curves)

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
        """A plain-text report: verdict counts, suite, each curve, diagnostics, unjudged metrics."""
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

    def plot(self, run: str | None = None, metric: str | None = None, *,
             per_figure: int = 12):  # noqa: ANN201
        """One matplotlib Figure per metric of the selected curves (globs; all when none is
        given), as a :class:`~saturate.report.plots.Figures`: a dict by metric name (a metric of
        more than ``per_figure`` curves gets a figure per page, ``"metric (2/3)"``). A metric's
        only curve is drawn beside its gain per doubling, several curves in a grid.

        Made through pyplot (for Jupyter's inline display) and closed at once, so a notebook
        shows each figure once, as the cell's value; ``figs["train/reward"].savefig(...)``
        writes one.
        """
        from saturate.report.plots import plot_analysis

        return plot_analysis(self, run=run, metric=metric, pyplot=True, per_figure=per_figure)

    def overlay(self, run: str | None = None, metric: str | None = None):  # noqa: ANN201
        """The runs of each metric on one chart (globs select); ``.figures()`` gives matplotlib
        figures."""
        from saturate.report.notebook import overlay_view

        return overlay_view(self, run=run, metric=metric)

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
    source: Source | Sequence[Source] | Table | pd.DataFrame | None = None,
    settings: Settings | None = None,
    *,
    config: str | os.PathLike | bool | None = None,
    diagnostics: bool = True,
    fast: bool = True,
    client: Any = None,
    progress: Callable[[int, int], None] | None = None,
    on_read: Callable[[ReadProgress], None] | None = None,
    **overrides: Any,
) -> Analysis:
    """Read the runs and analyse every (run, metric) curve: fits, gain per doubling, knee, verdict.

    Args:
        source: anything :func:`saturate.load` reads (a path, a URI, a DataFrame, a list of these),
            or the :class:`~saturate.table.table.Table` it returned (or a tidy DataFrame built by hand).
        settings: a :class:`~saturate.settings.Settings` built beforehand (instead of ``config``);
            the ``overrides`` are laid over it.
        config: a ``pyproject.toml``/``saturate.toml`` path to read ``[tool.saturate]`` settings from,
            ``True`` to look for one from the current folder upward, ``None``/``False`` for none.
            The ``overrides`` win over the file.
        diagnostics: ``False`` skips the diagnostics across metrics and runs.
        fast: read MLflow databases through the read-only fast path (``False``: MLflow's client).
        client: a ``distributed.Client`` to analyse on (left open); wins over ``scheduler``.
        progress: called as ``progress(done, total)`` as curves are analysed (on any engine);
            while runs are still being read, ``total`` counts the curves read so far.
        on_read: called with a :class:`~saturate.ingest.stream.ReadProgress` (files, runs and
            points read so far) as the sources are read.
        overrides: any option by name (``min_gain="2%"``, ``metric="eval/*"``; listed below), as
            in the settings file; ``targets`` and ``domains`` merge over the file's (a glob given
            here wins).

    Raises:
        SettingsError: an option is invalid or unknown; the message names it and shows the value
            (for an unknown one, the nearest option there is).

    Example:
        >>> a = saturate.analyze("sample_runs/", metric="eval/*")  # doctest: +SKIP
        >>> a.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP
    """
    from saturate.analysis.work import engine_for

    _analysis_options_only(overrides)
    settings = settings_from(settings, config, overrides)
    engine = engine_for(settings, client)
    if engine.uses_dask:
        from saturate.analysis.dask_engine import require_distributed

        require_distributed("client" if client is not None else settings.option("scheduler"))
    tables = read_tables(source, settings, fast=fast, on_read=on_read)
    analysis = analyze_read(tables, settings, diagnostics=diagnostics, engine=engine,
                            progress=progress, apart=tables.apart)
    _warn_unmatched_globs(analysis, settings)
    said = None if analysis.axis is None else analysis.axis.warning()
    if said is not None:
        warnings.warn(said, AxisWarning, stacklevel=2)
    return analysis


def _analysis_options_only(overrides: Mapping[str, Any]) -> None:
    """An option that does not change the analysis (``format``, ``fail_on``, ``compare_at``) given
    to :func:`analyze` is an error naming where it belongs: taken silently, it would read as done."""
    for name in overrides:
        option = OPTIONS_BY_NAME.get(name)
        if option is not None and option.group not in ANALYSIS_GROUPS:
            raise SettingsError(f"analyze() takes analysis options only; {name} is "
                                f"{USED_BY[option.group]}")


def _warn_unmatched_globs(analysis: Analysis, settings: Settings) -> None:
    """Warn of each metric glob of an option (``--objective``, ``--domain``, ``--pair``...)
    that matches none of the metrics read: a slip there changes nothing, silently."""
    from saturate.table.selection import METRIC_GLOB_OPTIONS, unmatched_globs

    globs = {}
    for name in METRIC_GLOB_OPTIONS:
        value = getattr(settings, name)
        if value:
            pairs = name == "pairs"
            globs[settings.option(name)] = [g for p in value for g in p] if pairs else list(value)
    if not globs:
        return
    metrics = {c.metric for c in analysis.curves} | {d.metric for d in analysis.diagnostic_metrics}
    metrics |= {str(m) for t in analysis.extra for m in t.points["metric"].unique()}
    for line in unmatched_globs(globs, metrics):
        warnings.warn(line, stacklevel=3)


def settings_from(
    settings: Settings | None, config: str | os.PathLike | bool | None, overrides: Mapping[str, Any]
) -> Settings:
    """``settings`` (or the defaults and the ``config`` file) with ``overrides`` laid over them."""
    if settings is None:
        return Settings.build(config, **overrides)
    if config:
        raise SettingsError("config: give either a settings file or settings=, not both")
    return settings.updated(**overrides)


# The options analyze takes as keywords, listed in its docstring from their one declaration.
analyze.__doc__ = f"{analyze.__doc__}\n    Options:\n{option_doc()}\n"


def analyze_read(
    parts: Table | Tables, settings: Settings, *, diagnostics: bool = True, engine: Any = None,
    progress: Callable[[int, int], None] | None = None, apart: Sequence[Table] = (),
) -> Analysis:
    """The one verdict path: a read (``parts``, selected and on its x axis; ``apart``: points
    for the diagnostics only) turned into an :class:`Analysis` on ``engine``.

    :func:`analyze` and every command go through it, so a curve gets the same verdict, gain and
    P(pays) whichever command asks.
    """
    if engine is None:
        from saturate.analysis.work import engine_for

        engine = engine_for(settings)
    analysis = _analyze_tables(parts, apart, settings, engine, progress)
    if diagnostics:
        from saturate.diagnostics import DiagnosticSettings, run_diagnostics

        found = run_diagnostics(analysis.curves, _beside_the_curves(analysis),
                                DiagnosticSettings.from_settings(settings))
        analysis = dataclasses.replace(analysis, diagnostics=found)
    return analysis


def _beside_the_curves(a: Analysis) -> Table | None:
    """The points the diagnostics need besides the curves' own (not the whole :attr:`Analysis.data`)."""
    return a.table if a.table is not None else concat_tables(list(a.extra)) if a.extra else None


def _stages(
    progress: Callable[[int, int], None] | None,
) -> Callable[[], Callable[[int, int], None] | None]:
    """A maker of ``progress(done, total)`` hooks for stages counted on one bar, each after the
    totals of the ones before."""
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
    all are read when seeds are pooled, a suite is analysed (it needs every task), or a
    GPU-hours option must be checked against the x axis before any fit."""
    from saturate.analysis.analyse_table import analyze_parts, analyze_table, on_axis
    from saturate.analysis.diagnostic_metrics import summarize_metrics
    from saturate.analysis.parts import PreparedParts

    how = AnalysisSettings.from_settings(settings)
    parts = PreparedParts(*_with_axis(tables, settings.compute is not None),
                          objective=settings.objective, diagnostic=settings.diagnostic)
    whole = how.group_by or settings.budget is not None or settings.gpu_hour_cost is not None
    table, suite, stage = None, None, _stages(progress)
    if whole or settings.suite is not None:
        df = concat_tables(list(parts))
        df = df.with_points(df.points, parts.axis())
        table = concat_tables([df, *apart, *parts.others])
        table = table.with_points(table.points, parts.axis())
        check_rates(table, settings)
        if settings.suite is not None:  # first: a bad key or baselines file fails before any fit
            from saturate.suites.analysis import suite_from_settings

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
    return Analysis(curves=tuple(results), settings=jsonable(settings_used(settings, axis.name)),
                    table=table, diagnostic_metrics=unjudged, axis=axis,
                    extra=(*apart, *parts.others), runs=parts.runs(), suite=suite)


def _with_axis(
    parts: Table | Tables, explicit: bool
) -> tuple[Iterable[Table], Callable[[], ComputeAxis]]:
    """The parts of a read, and how to get its x axis once read (``explicit``: the user named it)."""
    if isinstance(parts, Table):
        return [parts], lambda: describe_axis(parts.points, parts.axis, explicit=explicit)
    return parts, parts.read_axis
