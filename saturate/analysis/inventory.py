"""What an analysis would read, before any fit (``saturate ls``, ``analyze --dry-run``): the runs,
each metric with its role, direction and domain, the x axis, the points per curve, the run
parameters and what is left out and why. Sources are read as :func:`saturate.analyze` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from saturate.analysis.parts import PreparedParts
from saturate.analysis.settings import AnalysisSettings
from saturate.ingest import Tables
from saturate.ingest.folder import ordered
from saturate.results.codec import Coded, meta
from saturate.settings import Settings
from saturate.table.curves import OPTIONAL_COLUMNS, PARAM_PREFIX, REQUIRED_COLUMNS, TAG_PREFIX
from saturate.table.table import concat_tables
from saturate.vocabulary.domains import metric_domain
from saturate.vocabulary.names import metric_direction

_POINT_COLUMNS = {*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS, "source", "experiment", "run_status",
                  "run_url"}
#: Skipped files the text lists (the likeliest surprises first); JSON lists them all.
_SHOWN = 20


_PER_CURVE = ("min", "median", "max")


def _pairs(first: str, key: str | None = None) -> dict[str, Any]:
    """A field of ``(first, reason)`` pairs, written as objects with these keys."""
    return meta(key=key, encode=lambda rows: [{first: a, "reason": b} for a, b in rows],
                decode=lambda rows: tuple((r[first], r["reason"]) for r in rows))


@dataclass(frozen=True)
class MetricLine(Coded):
    """One metric of the read: its role (``objective`` gets a verdict), the rule that gave it, its
    direction and domain, and its curves' counts of points."""

    metric: str
    role: str
    rule: str
    direction: str
    domain: str
    curves: int
    points: tuple[int, int, int] = field(metadata=meta(  # fewest, median, most per curve
        key="points_per_curve", encode=lambda p: dict(zip(_PER_CURVE, p, strict=True)),
        decode=lambda d: tuple(d[k] for k in _PER_CURVE)))


@dataclass(frozen=True)
class Inventory(Coded):
    """What :func:`inventory` found: runs, metrics, the x axis, run parameters, left-out columns."""

    _json_order: ClassVar[tuple[str, ...]] = ("runs", "axis", "axis_note")

    runs: tuple[str, ...]
    metrics: tuple[MetricLine, ...]
    axis: str
    axis_note: str | None
    parameters: tuple[str, ...] = field(metadata=meta(key="run_parameters"))
    left_out: tuple[tuple[str, str], ...] = field(default=(), metadata=_pairs("column"))
    skipped: tuple[tuple[str, str], ...] = field(  # (file, why): held no curves
        default=(), metadata=_pairs("path", key="skipped_files"))

    @property
    def points(self) -> int:
        return sum(round(m.curves * m.points[1]) for m in self.metrics)

    def text(self, width: int = 100) -> str:
        """The inventory as plain text lines (names cut at ``width``)."""
        judged = [m for m in self.metrics if m.role == "objective"]
        curves = sum(m.curves for m in self.metrics)
        out = [f"{len(self.runs)} run(s), {len(self.metrics)} metric(s), {curves} curve(s); "
               f"{sum(m.curves for m in judged)} curve(s) of {len(judged)} objective(s) get a "
               "verdict", f"x axis: {self.axis}"]
        if self.axis_note:
            out.append(f"  {self.axis_note}")
        out += ["", "metrics (role, direction, domain, curves, points per curve min/median/max, "
                "why this role):"]
        name_w = min(max((len(m.metric) for m in self.metrics), default=6), width // 2)
        for m in self.metrics:
            lo, mid, hi = m.points
            out.append(f"  {_cut(m.metric, name_w):<{name_w}}  {m.role:<10} {m.direction:<7} "
                       f"{m.domain:<9} {m.curves:>4}  {lo}/{mid}/{hi}  {m.rule}")
        shown = ", ".join(self.runs[:20]) + (f", ... ({len(self.runs) - 20} more)"
                                             if len(self.runs) > 20 else "")
        out += ["", f"runs: {shown}"]
        out.append("run parameters: " + (", ".join(self.parameters) or "none"))
        if self.left_out:
            out += ["", "left out:"]
            out += [f"  {name}: {why}" for name, why in self.left_out]
        if self.skipped:
            out += ["", f"files skipped, holding no curves ({len(self.skipped)}):"]
            out += [f"  {_cut(path, width // 2)}: {why}" for path, why in self.skipped[:_SHOWN]]
            if len(self.skipped) > _SHOWN:
                out.append(f"  ... and {len(self.skipped) - _SHOWN} more (--format json lists "
                           "them all)")
        return "\n".join(out) + "\n"


def _per_metric(table: pd.DataFrame) -> tuple[dict[Any, np.ndarray], dict[Any, np.ndarray]]:
    """Each metric's points per curve and its values, from one pass over the table: looking each
    metric up in the whole table costs a pass per metric (5,000 metrics: a minute)."""
    if not len(table):
        return {}, {}
    sizes = table.groupby(["source", "run_id", "metric"], observed=True, sort=False).size()
    counts = {m: s.to_numpy() for m, s in sizes.groupby(level="metric", observed=True, sort=False)}
    values = table["value"].to_numpy(dtype=float)
    rows = table.groupby("metric", observed=True, sort=False).indices
    return counts, {m: values[i] for m, i in rows.items()}


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def inventory(source: Any, settings: Settings, *, fast: bool = True,
              on_read: Callable[[Any], None] | None = None) -> Inventory:
    """Read ``source`` as :func:`saturate.analyze` would with ``settings`` and say what it holds."""
    tables = Tables(source, **settings.selection(), gpus=settings.gpus, fast=fast, as_given=True,
                    on_part=on_read)
    parts = PreparedParts(tables, tables.read_axis, objective=settings.objective,
                          diagnostic=settings.diagnostic)
    frames = [*parts]
    frames += parts.others
    table = concat_tables(frames).points if frames else pd.DataFrame(columns=list(REQUIRED_COLUMNS))
    roles = parts.roles()
    how = AnalysisSettings.from_settings(settings)
    metrics = []
    counts_of, values_of = _per_metric(table)
    empty = np.empty(0)
    for metric, group in roles.groupby("metric", sort=True, observed=True):
        counts = counts_of.get(metric, empty)
        values = values_of.get(metric, empty)
        domain, _ = metric_domain(str(metric), values, how.domains)
        metrics.append(MetricLine(
            metric=str(metric), role=str(group["role"].iloc[0]), rule=str(group["rule"].iloc[0]),
            direction=metric_direction(str(metric), how.lower_is_better, how.higher_is_better)
            if group["role"].iloc[0] == "objective" else "-",
            domain="-" if domain is None else domain.text, curves=len(group),
            points=(int(counts.min()), int(np.median(counts)), int(counts.max()))
            if len(counts) else (0, 0, 0)))
    runs = parts.runs()
    params = tuple(c for c in runs.columns if str(c).startswith((PARAM_PREFIX, TAG_PREFIX)))
    names = sorted({str(r) for r in table["run"].unique()}) if len(table) else []
    axis = parts.axis()
    extra = sorted(c for c in table.columns if c not in _POINT_COLUMNS
                   and not str(c).startswith((PARAM_PREFIX, TAG_PREFIX)))
    left = [(c, "a per-point column that is not the x axis (--compute " + c + " makes it one)")
            for c in extra]
    left += [(m.metric, f"metric without a verdict ({m.role}: {m.rule}); "
              f"--objective '{m.metric}' judges it") for m in metrics if m.role != "objective"]
    return Inventory(runs=tuple(names), metrics=tuple(metrics), axis=axis.heading,
                     axis_note=axis.warning(), parameters=params, left_out=tuple(left),
                     skipped=tuple((str(f.path), f.why) for f in ordered(tables.skipped)))
