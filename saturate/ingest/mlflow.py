"""Read full metric histories of MLflow runs into the tidy curve table.

A tracking server (``mlflow_client``, REST), a backend database or ``mlflow.db`` (``mlflow_db``,
read-only SQL), or a legacy ``mlruns/`` (``mlflow_filestore``): this module picks the reader and
joins the points it returns with the run facts. Nothing here ever writes to the user's store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from saturate.errors import InputError, SettingsError, SourceError, no_match
from saturate.ingest.mlflow_common import (
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    check_filter,
    first_line,
    kept_tags,
    resolve_source,
    resolve_timeout,
)
from saturate.ingest.mlflow_filestore import read_filestore
from saturate.ingest.redaction import ui_link
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, tidy
from saturate.table.run_table import RUN_URL, merge_facts
from saturate.table.selection import Offered
from saturate.table.table import Table, concat_tables


def _tidy_order(run_code: np.ndarray, pts: pd.DataFrame) -> np.ndarray | None:
    """The order (run, metric, step, timestamp, value) of the points, None if already in it:
    sorted points make tidy()'s sorts cheap, and the tie-breaks make duplicates resolve the same
    whatever order a store returned them in."""
    metric_code = pd.factorize(pts["metric"].to_numpy(), sort=True)[0]
    group = run_code.astype(np.int64) * (int(metric_code.max(initial=0)) + 1) + metric_code
    step, ts = pts["step"].to_numpy(), pts["timestamp"].to_numpy()
    value = pts["value"].to_numpy()
    dg, ds, dt, dv = np.diff(group), np.diff(step), np.diff(ts), np.diff(value)
    in_order = (dg > 0) | ((dg == 0) & ((ds > 0) | ((ds == 0) & ((dt > 0) | ((dt == 0) & (dv >= 0))))))
    if in_order.all():
        return None
    return np.lexsort((value, ts, step, group))


def _check_found(label: str, experiments: Sequence[Experiment], runs: Sequence[RunMeta],
                 selection: Selection, n_points: int | None, caller_judges: bool = False) -> None:
    """An :class:`InputError` when no run was selected, or (``n_points`` 0) none logged points
    (a metric selection that matched nothing: not when the caller judges it over its read)."""
    scope = ", ".join(repr(e.name) for e in experiments) or "no experiment"
    if not runs:
        detail = f" matching --filter {selection.filter!r}" if selection.filter else ""
        raise InputError(f"{label}: no active runs{detail} in {scope}")
    if n_points == 0:
        n = len({r.run_id for r in runs})
        if selection.metric and caller_judges:
            return  # the caller judges the miss over its whole read
        if selection.metric:
            offered = selection.offered.metrics if selection.offered is not None else ()
            raise no_match("--metric", selection.metric, offered, "metric",
                           where=f"{label} ({n} run(s) of {scope})")
        raise InputError(f"{label}: the {n} selected run(s) of {scope} logged no metrics")


def run_page(ui: str, run: RunMeta) -> str:
    """The run's page in the MLflow UI served at ``ui`` (credentials left out): the route the
    MLflow UI gives a run, ``<ui>/#/experiments/<experiment id>/runs/<run id>``, as MLflow's own
    client prints it when a run starts."""
    exp, run_id = (urllib.parse.quote(x, safe="") for x in (run.experiment_id, run.run_id))
    return ui_link(ui, fragment=f"/experiments/{exp}/runs/{run_id}")


def run_facts_frame(label: str, experiments: Sequence[Experiment], runs: Sequence[RunMeta],
                    ui: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(names, facts)`` sorted by run_id: each run's experiment and display name (which go on
    its points), and its status, page in the UI at ``ui`` (``run_url``; none without a UI),
    params and tags (the side table, :mod:`saturate.table.run_table`)."""
    runs = list({r.run_id: r for r in runs}.values())  # a run met twice (paging) counts once
    exp_names = {e.id: e.name for e in experiments}
    names = pd.DataFrame({
        "run_id": np.asarray([r.run_id for r in runs], dtype=object),
        "experiment": np.asarray([exp_names.get(r.experiment_id, r.experiment_id) for r in runs],
                                 dtype=object),
        "run": np.asarray([r.display_name for r in runs], dtype=object),
    })  # fmt: skip
    extra: dict[str, dict[int, str]] = {}
    for i, r in enumerate(runs):
        for k, v in r.params.items():
            extra.setdefault(PARAM_PREFIX + k, {})[i] = v
        for k, v in kept_tags(r.tags).items():
            extra.setdefault(TAG_PREFIX + k, {})[i] = v
    facts = pd.DataFrame({"source": label, "run_id": names["run_id"],
                          "run_status": np.asarray([r.status for r in runs], dtype=object)})
    if ui:
        facts[RUN_URL] = np.asarray([run_page(ui, r) for r in runs], dtype=object)
    for col in sorted(extra):
        values = extra[col]
        facts[col] = pd.Series([values.get(i) for i in range(len(runs))], dtype=object)
    order = np.argsort(names["run_id"].to_numpy(dtype=str), kind="stable")
    names = names.take(order).reset_index(drop=True)
    facts = facts.take(order).reset_index(drop=True)
    facts["source"] = facts["source"].astype(object)
    return names, facts


def points_table(label: str, names: pd.DataFrame, facts: pd.DataFrame, points: pd.DataFrame
                 ) -> Table:
    """The :class:`~saturate.table.table.Table` of ``points`` (of the runs in ``names``) and
    their run facts."""
    where = pd.Index(names["run_id"]).get_indexer(points["run_id"])
    pts = points.loc[where >= 0].reset_index(drop=True)
    run_code = where[where >= 0]
    order = _tidy_order(run_code, pts)
    if order is not None:
        pts = pts.iloc[order].reset_index(drop=True)
        run_code = run_code[order]
    ids = names.drop(columns="run_id").take(run_code).reset_index(drop=True)
    df = pd.concat([pts, ids], axis=1)
    df["timestamp"] = df["timestamp"].to_numpy(dtype=float) / 1000.0
    df["compute"] = df["step"].to_numpy(dtype=float)
    df["source"] = label
    out = tidy(df, origin=label, compute_name="step")
    return Table(out, merge_facts([facts.take(np.unique(run_code)).reset_index(drop=True)]))


def assemble(label: str, experiments: Sequence[Experiment], runs: Sequence[RunMeta],
             points: pd.DataFrame, selection: Selection, ui: str | None = None,
             caller_judges: bool = False) -> Table:
    """The tidy table of the points, their run facts kept one row per run (``ui``: where the
    store's web UI is served, for each run's page)."""
    _check_found(label, experiments, runs, selection, len(points), caller_judges)
    names, facts = run_facts_frame(label, experiments, runs, ui)
    return points_table(label, names, facts, points)


def load_mlflow(
    source: str | os.PathLike | None,
    *,
    experiment: Sequence[str] | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | None = None,
    fast: bool = True,
    max_workers: int = 8,
    timeout: float | None = None,
) -> Table:
    """Full metric histories of the selected MLflow runs as a :class:`~saturate.table.table.Table`.

    ``experiment``: names or ids (default: every active one); ``filter``: an MLflow search filter;
    ``metric``: globs on metric keys; ``fast``: read databases with read-only SQL (False: through
    MlflowClient); ``max_workers``: concurrent server requests; ``timeout``: seconds per server
    request, retries included (default ``$SATURATE_TIMEOUT``, else 120). Deleted runs are
    skipped, RUNNING ones kept. ``source=None`` uses ``MLFLOW_TRACKING_URI``.
    """
    return concat_tables(iter_mlflow(source, experiment=experiment, filter=filter, metric=metric,
                                     fast=fast, max_workers=max_workers, stream=False,
                                     timeout=timeout))


def iter_mlflow(
    source: str | os.PathLike | None,
    *,
    experiment: Sequence[str] | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | None = None,
    fast: bool = True,
    max_workers: int = 8,
    stream: bool = True,
    timeout: float | None = None,
    tracker_url: str | None = None,
    offered: Offered | None = None,
) -> Iterator[Table]:
    """:func:`load_mlflow` in parts, each the :class:`~saturate.table.table.Table` of whole runs
    (``stream``: databases a few runs at a time; other sources come as one part); each run's
    page in the MLflow UI at ``tracker_url``, else at a tracking server's own address.

    ``offered``: hears of every metric key of the selected runs; a caller that passes it judges a
    ``metric`` selection that matched nothing over its whole read (no error here, no part)."""
    judges = offered is not None
    selection = _selection(experiment, filter, metric, max_workers, offered or Offered())
    timeout = resolve_timeout(timeout)
    src = dataclasses.replace(resolve_source(source), timeout=timeout)
    if src.kind == "files":
        exps, runs, points = read_filestore(Path(src.target), selection, label=src.label,
                                            max_workers=max_workers)
    elif src.kind == "rest":
        from saturate.ingest.mlflow_client import read_rest  # SQLAlchemy: only for its readers

        exps, runs, points = read_rest(src, selection, max_workers=max_workers, fast=fast,
                                       timeout=timeout)
    elif not stream:
        from saturate.ingest.mlflow_db import read_database

        with store_faults(src.label):
            exps, runs, points = read_database(src, selection, fast=fast, max_workers=max_workers)
    else:
        yield from _iter_database(src, selection, fast, max_workers, tracker_url, judges)
        return
    if runs and points.empty and selection.metric and judges:
        return
    # A tracking server serves its UI at its own address; a database or file store has none.
    yield assemble(src.label, exps, runs, points, selection,
                   ui=tracker_url or (src.target if src.kind == "rest" else None))


def _selection(experiment: Sequence[str] | str | None, filter: str | None,  # noqa: A002
               metric: Sequence[str] | str | None, max_workers: int,
               offered: Offered) -> Selection:
    if isinstance(experiment, str):
        experiment = [experiment]
    if isinstance(metric, str):
        metric = [metric]
    if max_workers < 1:
        raise SettingsError(f"max_workers must be >= 1, got {max_workers}")
    selection = Selection(
        experiment=tuple(map(str, experiment)) if experiment else None,
        filter=filter.strip() if filter and filter.strip() else None,
        metric=tuple(metric) if metric else None,
        offered=offered,
    )
    check_filter(selection.filter)
    return selection


def _iter_database(src: MlflowSource, selection: Selection, fast: bool, max_workers: int,
                   ui: str | None = None, caller_judges: bool = False) -> Iterator[Table]:
    """The parts of a database: run facts once (each run's page in the UI at ``ui``), then the
    points of a few runs at a time."""
    from saturate.ingest.mlflow_db import iter_database

    names = facts = None
    n_points = 0
    parts = iter_database(src, selection, fast=fast, max_workers=max_workers)
    while True:
        with store_faults(src.label):
            part = next(parts, None)
        if part is None:
            break
        exps, runs, points = part
        if names is None:
            _check_found(src.label, exps, runs, selection, None)
            names, facts = run_facts_frame(src.label, exps, runs, ui)
        if points.empty:
            continue
        n_points += len(points)
        yield points_table(src.label, names, facts, points)
    if names is not None:
        _check_found(src.label, exps, runs, selection, n_points, caller_judges)


@contextlib.contextmanager
def store_faults(label: str) -> Iterator[None]:
    """What a broken database makes its readers raise, as one :class:`SourceError` line naming
    the store."""
    import sqlalchemy as sa  # only where a database is read: not at the command line's start

    try:
        yield
    except (ValueError, TypeError, OverflowError, sqlite3.Error, sa.exc.SQLAlchemyError) as err:
        why = first_line(getattr(err, "orig", None) or err, type(err).__name__)
        raise SourceError(f"{label}: the store holds data saturate cannot read ({why})") from None
