"""The Python API: ``saturate.analyze`` and the :class:`Analysis` it returns.

The command line is a thin layer over this module; options have the same names (underscored).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from saturate.errors import SettingsError
from saturate.ingest import Source, load
from saturate.results import CurveAnalysis, jsonable, verdict_counts

__all__ = ["Analysis", "analyze", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

# Columns of Analysis.to_frame(), in the order of the JSON entries.
_FRAME_FIELDS = (
    "run", "run_id", "metric", "verdict", "reasons", "n_points", "compute_first", "compute_last",
    "value_last", "direction", "threshold",
)


@dataclass(frozen=True)
class Analysis:
    """The result of :func:`analyze`: one :class:`~saturate.results.CurveAnalysis` per curve and
    the :class:`~saturate.diagnostics.Diagnostic` findings across metrics and runs.

    Displays as a table with small plots in Jupyter; ``to_frame()`` gives one row per curve with the
    same fields as the JSON report (``diagnostics_frame()`` one row per diagnostic);
    ``to_dict()`` is the JSON document itself.
    """

    curves: tuple[CurveAnalysis, ...]
    settings: dict[str, Any]
    diagnostics: tuple[Any, ...] = ()
    data: pd.DataFrame | None = field(default=None, repr=False, compare=False)

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
        import fnmatch

        def ok(value: str, pattern: str | None) -> bool:
            return pattern is None or fnmatch.fnmatchcase(value, pattern)

        return tuple(
            c for c in self.curves
            if (ok(c.run, run) or ok(c.run_id, run)) and ok(c.metric, metric)
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON report: ``schema_version``, the settings used, the curves and diagnostics."""
        return jsonable(
            {
                "schema_version": SCHEMA_VERSION,
                "settings": self.settings,
                "summary": verdict_counts(self.curves),
                "curves": [c.to_dict() for c in self.curves],
                "diagnostics": [d.to_dict() if hasattr(d, "to_dict") else d for d in self.diagnostics],
            }
        )

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
        """A plain-text report: the verdict counts, each curve's summary, then the diagnostics."""
        parts = [verdict_counts(self.curves)]
        parts += [c.summary() for c in self.curves]
        if self.diagnostics:
            parts.append("Diagnostics:\n" + "\n".join(f"  {d.summary()}" for d in self.diagnostics))
        return "\n\n".join(parts)

    def plot(self, run: str | None = None, metric: str | None = None):  # noqa: ANN201
        """A matplotlib Figure of the selected curves (all when no run/metric is given)."""
        from saturate.report.plots import plot_analysis

        return plot_analysis(self, run=run, metric=metric)

    def _repr_html_(self) -> str:
        from saturate.report.html import notebook_html

        return notebook_html(self)

    def __repr__(self) -> str:
        n = len(self.diagnostics)
        return f"<Analysis {verdict_counts(self.curves)}; {n} diagnostic{'' if n == 1 else 's'}>"


def analyze(
    source: Source | Sequence[Source] | pd.DataFrame | None = None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
    min_gain: float | str | None = None,
    confidence: float | None = None,
    forecast_at: Sequence[str | float] | None = None,
    lower_is_better: Sequence[str] | str | None = None,
    higher_is_better: Sequence[str] | str | None = None,
    thresholds: dict[str, float | str] | None = None,
    group_by: str | None = None,
    n_boot: int | None = None,
    seed: int | None = None,
    laws: Sequence[str] | None = None,
    pairs: Mapping[str, Sequence[str] | str] | Sequence[Sequence[str]] | None = None,
    targets: Mapping[str, float] | None = None,
    gpu_hour_cost: float | None = None,
    pretrain_compute: float | None = None,
    budget: float | None = None,
    gpu_hours: str | None = None,
    diagnostics: bool = True,
    fast: bool = True,
    config: str | os.PathLike | bool | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Analysis:
    """Read the runs and analyse every (run, metric) curve: fits, gain per doubling, knee, verdict.

    Args:
        source: anything :func:`saturate.load` reads, or a tidy DataFrame it returned.
        experiment, filter, metric, run, compute: selection, as in :func:`saturate.load`.
        min_gain: the least gain per doubling of compute that still "pays": metric units
            (``0.01``) or a share of the curve's observed range (``"3%"``).
        confidence: level of every interval (default 0.9).
        forecast_at: compute values to forecast at: multiples of the last one (``"2x"``) or
            absolute values.
        lower_is_better / higher_is_better: metric globs overriding the direction rules.
        thresholds: per metric glob, its own ``min_gain``.
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
        diagnostics: ``False`` skips the diagnostics across metrics and runs.
        fast: read MLflow databases through the read-only fast path (``False``: MLflow's client).
        config: a ``pyproject.toml``/``saturate.toml`` path to read ``[tool.saturate]`` settings from,
            ``True`` to look for one from the current folder upward, ``None``/``False`` for none.
            Arguments given here win over the file.
        progress: called as ``progress(done, total)`` while curves are analysed.

    Example:
        >>> a = saturate.analyze("sample_runs/", metric="eval/*")  # doctest: +SKIP
        >>> a.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP
    """
    from saturate.analysis import AnalysisSettings, analyze_table
    from saturate.config import parse_targets

    given = {
        "compute": compute, "min_gain": min_gain, "confidence": confidence,
        "forecast_at": forecast_at, "lower_is_better": lower_is_better,
        "higher_is_better": higher_is_better, "thresholds": thresholds, "group_by": group_by,
        "n_boot": n_boot, "seed": seed, "laws": laws, "metric": metric, "experiment": experiment,
        "filter": filter, "run": run, "pairs": pairs, "gpu_hour_cost": gpu_hour_cost,
        "pretrain_compute": pretrain_compute, "budget": budget, "gpu_hours": gpu_hours,
    }
    options: dict[str, Any] = {}
    if config:
        from saturate.config import read_config

        # read_config gives a dict keyed like these arguments (plus CLI-only keys, ignored here).
        options.update(read_config(None if config is True else config))
    file_targets = parse_targets(options.pop("targets", None), "targets")
    options.update({k: v for k, v in given.items() if v is not None})
    all_targets = {**file_targets, **parse_targets(targets, "targets")}
    if all_targets:
        options["targets"] = all_targets

    df, axis_only = _load_table(source, options, fast=fast)

    settings_kwargs: dict[str, Any] = {}
    for name in ("min_gain", "confidence", "group_by", "n_boot", "seed"):
        if name in options:
            settings_kwargs[name] = options[name]
    for name in ("forecast_at", "lower_is_better", "higher_is_better", "laws"):
        if name in options:
            value = options[name]
            settings_kwargs[name] = (value,) if isinstance(value, (str, float, int)) else tuple(value)
    if "thresholds" in options:
        settings_kwargs["thresholds"] = dict(options["thresholds"])
    try:
        settings = AnalysisSettings(**settings_kwargs)
    except (TypeError, ValueError) as exc:
        raise SettingsError(str(exc)) from None
    dsettings = _diagnostic_settings(options, settings) if diagnostics else None
    curve_df = df if axis_only is None else _drop_metric(df, axis_only)
    results = analyze_table(curve_df, settings, progress=progress)
    found: tuple[Any, ...] = ()
    if dsettings is not None:
        from saturate.diagnostics import run_diagnostics

        found = run_diagnostics(results, df, dsettings)
    used = {"compute": df.attrs.get("compute_name", "step"), **_settings_dict(settings)}
    if options.get("metric"):
        used["metric"] = options["metric"]
    if dsettings is not None:
        used.update(_diagnostic_settings_dict(dsettings))
    # ``data`` is the table read, with the GPU-hours metric even when only the diagnostics use it.
    return Analysis(curves=tuple(results), settings=jsonable(used), diagnostics=found, data=df)


def _load_table(
    source: Any, options: dict[str, Any], *, fast: bool = True
) -> tuple[pd.DataFrame, str | None]:
    """The tidy table, and the ``gpu_hours`` metric when it was read only for the diagnostics.

    A ``--metric`` selection that leaves out the GPU-hours metric would leave the cost and
    allocation diagnostics without it, so it is read too, and kept out of the analysed curves.
    """
    metric = options.get("metric")
    hours = options.get("gpu_hours")
    extra = None
    if metric and hours:
        globs = [metric] if isinstance(metric, str) else list(metric)
        import fnmatch

        if not any(fnmatch.fnmatchcase(hours, g) for g in globs):
            metric, extra = [*globs, hours], hours
    if isinstance(source, pd.DataFrame) and {"run_id", "metric", "compute"} <= set(source.columns):
        from saturate import curves

        df = curves.set_compute(source, options.get("compute"))
        df = curves.select(df, metric=metric, run=options.get("run"),
                           experiment=options.get("experiment"))
    else:
        df = load(source, experiment=options.get("experiment"), filter=options.get("filter"),
                  metric=metric, run=options.get("run"), compute=options.get("compute"),
                  fast=fast)
    if extra is not None and not (df["metric"] == extra).any():
        extra = None  # a column, or absent: the diagnostics say so
    return df, extra


def _drop_metric(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    out = df[df["metric"] != metric]
    out.attrs = dict(df.attrs)
    return out


def _diagnostic_settings(options: dict[str, Any], settings: Any) -> Any:
    """The diagnostics' settings: their own options plus the analysis's confidence, seed and
    direction rules, so both judge a metric the same way."""
    from saturate.diagnostics import DiagnosticSettings

    kw: dict[str, Any] = {
        "confidence": settings.confidence, "seed": settings.seed,
        "lower_is_better": tuple(settings.lower_is_better),
        "higher_is_better": tuple(settings.higher_is_better),
    }
    for name in ("pairs", "targets", "gpu_hour_cost", "pretrain_compute", "budget", "gpu_hours"):
        if options.get(name) is not None:
            kw[name] = options[name]
    for name in ("gpu_hour_cost", "pretrain_compute", "budget"):
        if name in kw:
            from saturate.config import parse_positive

            kw[name] = parse_positive(kw[name], f"--{name.replace('_', '-')}")
    try:
        return DiagnosticSettings(**kw)
    except (TypeError, ValueError) as exc:
        raise SettingsError(str(exc)) from None


def _diagnostic_settings_dict(ds: Any) -> dict[str, Any]:
    """The diagnostics' options that were set, for the report's settings."""
    out: dict[str, Any] = {}
    if ds.pairs:
        out["pairs"] = [list(p) for p in ds.pairs]
    if ds.targets:
        out["targets"] = dict(ds.targets)
    for name in ("gpu_hour_cost", "pretrain_compute", "budget", "gpu_hours"):
        if getattr(ds, name) is not None:
            out[name] = getattr(ds, name)
    return out


def _settings_dict(settings: Any) -> dict[str, Any]:
    from dataclasses import asdict, is_dataclass

    return asdict(settings) if is_dataclass(settings) else dict(vars(settings))
