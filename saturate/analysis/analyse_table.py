"""Every curve of a :class:`~saturate.table.table.Table` (or of a stream of its parts) analysed
on an engine, and the table rebuilt from the results.

Each curve is analysed alone; its sibling key (:func:`~saturate.decide.siblings.sibling_key`) is
noted as it is handed out, and once every curve is back each call is made again with its
siblings' leave-one-out prior (:func:`pool_analyses`, from the stored evidence: no refit), so a
read in parts pools as in one piece. Curves already averaged over seeds (``group_by``) are not
pooled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable, Iterator, Sequence

import pandas as pd

from saturate.analysis.curve import with_decision
from saturate.analysis.engine import Engine, run_curves
from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.work import Progress
from saturate.decide.decision import decide
from saturate.decide.siblings import leave_one_out_priors, sibling_key
from saturate.results import CurveAnalysis
from saturate.table.axis import ComputeAxis
from saturate.table.curves import KEY_COLUMNS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, iter_curves
from saturate.table.run_table import RUN_KEY, RUN_URL, empty_facts, facts_of, run_facts, status_of
from saturate.table.table import Table, as_table

__all__ = ["analyze_table", "analyze_parts", "on_axis", "table_curves", "table_of", "sibling_runs"]


def table_curves(table: Table | pd.DataFrame) -> Iterator[pd.DataFrame]:
    """Each curve of ``table`` as :func:`~saturate.analysis.curve.analyze_curve` takes it: sorted
    by compute, with its run's status and page (``run_url``) as columns."""
    if isinstance(table, Table):
        points = table.points
        facts = {"run_status": status_of(table.runs), RUN_URL: facts_of(table.runs, RUN_URL)}
    else:
        points, facts = table, {}
    for key, pts in iter_curves(points):  # each a new frame: adding a column leaves df alone
        for col, known in facts.items():
            if known and col not in pts.columns and key[:2] in known:
                pts[col] = known[key[:2]]
        yield pts


def analyze_table(data: Table | pd.DataFrame, settings: AnalysisSettings,
                  progress: Progress | None = None, engine: Engine | None = None
                  ) -> list[CurveAnalysis]:
    """Analyse every curve of a Table (or tidy frame) on ``engine`` (default: a local pool),
    pooling seeds first when ``settings.group_by``; each result names the table's x axis."""
    table = as_table(data)
    if settings.group_by:
        from saturate.analysis.seed_mean import pool_seeds

        pooled = pool_seeds(table.to_frame(), settings.group_by)
        results = run_curves(_checked(table_curves(pooled), settings), settings, engine, progress)
    else:
        keys: list[Hashable] = []
        results = run_curves(_checked(_keyed(table, keys), settings), settings, engine, progress)
        results = _pooled(results, keys, settings)
    return on_axis(results, table.axis)


def on_axis(results: list[CurveAnalysis], axis: ComputeAxis) -> list[CurveAnalysis]:
    """``results`` naming the x axis ``axis`` (a curve is analysed without knowing its name)."""
    return [r if r.compute_name == axis.name else dataclasses.replace(r, compute_name=axis.name)
            for r in results]


def analyze_parts(parts: Iterable[Table | pd.DataFrame], settings: AnalysisSettings,
                  progress: Progress | None = None, engine: Engine | None = None
                  ) -> list[CurveAnalysis]:
    """Analyse the curves of each part (whole runs) as it arrives; no seed pooling (it needs every
    part). The caller names the x axis of the whole read (:func:`on_axis`)."""
    keys: list[Hashable] = []
    curves = (pts for part in parts for pts in _keyed(as_table(part), keys))
    results = _pooled(run_curves(_checked(curves, settings), settings, engine, progress), keys,
                      settings)
    return sorted(results, key=lambda r: (r.source, r.run_id, r.metric))


def _checked(curves: Iterable[pd.DataFrame], settings: AnalysisSettings) -> Iterator[pd.DataFrame]:
    """The curves, each first checked by :func:`~saturate.measure.quantities.check_gain_units`
    (an error before any fit)."""
    from saturate.measure.quantities import check_gain_units

    for pts in curves:
        if len(pts):
            check_gain_units(str(pts["metric"].iloc[0]), pts["value"].to_numpy(), settings)
        yield pts


def _keyed(table: Table, keys: list[Hashable]) -> Iterator[pd.DataFrame]:
    """:func:`table_curves` of ``table``, noting each curve's sibling key in ``keys`` as it is
    handed out (in the same order as the results come back)."""
    facts = run_facts(table.points, table.runs)
    params = [c for c in facts.columns if str(c).startswith("params.")]
    by_run = {
        (str(row[RUN_KEY[0]]), str(row[RUN_KEY[1]])): {c: row[c] for c in params}
        for row in facts.to_dict("records")
    } if params else {}
    for pts in table_curves(table):
        first = pts.iloc[0]
        keys.append(sibling_key(pts, by_run.get((str(first["source"]), str(first["run_id"])), {})))
        yield pts


def sibling_runs(df: Table | pd.DataFrame, runs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """``runs`` (``(source, run_id)``) and the runs of ``df`` whose curves pool with theirs, so a
    command that re-analyses a few runs (``watch``) gives the call of the whole read. ``df`` needs
    one row per curve."""
    out = set(runs)
    keys: list[Hashable] = []
    found = [(str(p["source"].iloc[0]), str(p["run_id"].iloc[0]))
             for p in _keyed(as_table(df), keys)]
    groups = {k for run, k in zip(found, keys, strict=True) if run in out and k is not None}
    return out | {run for run, k in zip(found, keys, strict=True) if k in groups}


def _pooled(results: list[CurveAnalysis], keys: list[Hashable], settings: AnalysisSettings
            ) -> list[CurveAnalysis]:
    """Each result decided again with its siblings' leave-one-out prior (unchanged without)."""
    if len(results) != len(keys):
        return results
    return pool_analyses(results, keys, settings)


def pool_analyses(analyses: Sequence[CurveAnalysis], keys: Sequence[Hashable | None],
                  settings: AnalysisSettings) -> list[CurveAnalysis]:
    """Every analysis decided with the leave-one-out prior of its group (``keys``, aligned with
    ``analyses``; None: alone). With pooling off the prior is shown, not used."""
    priors = leave_one_out_priors([a.evidence for a in analyses], keys,
                                  [a.run for a in analyses])
    return [with_decision(a, decide(a.evidence, p, settings.decision, settings.confidence), p)
            if p is not None and a.evidence is not None else a
            for a, p in zip(analyses, priors, strict=True)]


def table_of(
    curves: Sequence[CurveAnalysis], axis: ComputeAxis, runs: pd.DataFrame | None = None,
    extra: Sequence[Table] = (),
) -> Table:
    """The Table back from the results' points (and ``extra``'s), sorted by curve and step."""
    parts = [
        c.points.assign(source=c.source, experiment=c.experiment, run_id=c.run_id, run=c.run,
                        metric=c.metric)
        for c in curves if c.points is not None
    ]
    parts += [e.points for e in extra if not e.empty]
    if not parts:
        out = pd.DataFrame({c: pd.Series(dtype=object) for c in REQUIRED_COLUMNS})
    else:
        out = pd.concat(parts, ignore_index=True, sort=False)
    rest = [c for c in out.columns if c not in REQUIRED_COLUMNS]
    order = [*REQUIRED_COLUMNS, *[c for c in OPTIONAL_COLUMNS if c in rest]]
    order += sorted(c for c in rest if c not in OPTIONAL_COLUMNS)
    out = out[order].sort_values([*KEY_COLUMNS, "step"], kind="stable").reset_index(drop=True)
    return Table(out, empty_facts() if runs is None else runs, axis)
