"""Read full metric histories of MLflow runs into the tidy curve table.

Four kinds of source, one result::

    http(s)://host:port                      tracking server (REST, bounded pool + retries)
    sqlite:///x.db, postgresql://, mysql://  backend database (read-only SQL fast path)
    path/to/mlflow.db, a folder holding it   MLflow 3's default local store (same fast path)
    mlruns/ (legacy file store)              metric text files read directly

Nothing here ever writes to the user's store: databases are opened read-only, and the slower
MlflowClient route (``fast=False`` or an unexpected schema) works on a private sqlite snapshot.
This module picks the reader (``mlflow_sql``, ``mlflow_filestore`` or ``mlflow_client``) for a
source classified by :mod:`~saturate.ingest.mlflow_sources`, then joins the points it returns
with the run facts; the types the readers share are in :mod:`~saturate.ingest.mlflow_common`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from saturate.curves import PARAM_PREFIX, TAG_PREFIX, tidy
from saturate.errors import InputError, SettingsError
from saturate.ingest.mlflow_client import read_rest
from saturate.ingest.mlflow_common import (
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    check_filter,
    kept_tags,
)
from saturate.ingest.mlflow_filestore import read_filestore
from saturate.ingest.mlflow_http import resolve_timeout
from saturate.ingest.mlflow_sources import (
    is_legacy_store,
    is_mlflow_source,
    is_mlflow_sqlite,
    resolve_source,
)
from saturate.ingest.mlflow_sql import read_database

__all__ = [
    "is_mlflow_source", "load_mlflow", "resolve_source", "is_mlflow_sqlite", "is_legacy_store",
    "MlflowSource", "Selection", "assemble",
]


def _tidy_order(run_code: np.ndarray, pts: pd.DataFrame) -> np.ndarray | None:
    """The order (run, metric, step, timestamp, value) of the points, None if already in it.

    tidy() ends sorted by run, metric and step, so handing it sorted points makes its sorts
    cheap; timestamp then value break ties, so duplicates logged at the same step and
    millisecond resolve the same way whatever order a store returned them in.
    """
    metric_code = pd.factorize(pts["metric"].to_numpy(), sort=True)[0]
    group = run_code.astype(np.int64) * (int(metric_code.max(initial=0)) + 1) + metric_code
    step, ts = pts["step"].to_numpy(), pts["timestamp"].to_numpy()
    value = pts["value"].to_numpy()
    dg, ds, dt, dv = np.diff(group), np.diff(step), np.diff(ts), np.diff(value)
    in_order = (dg > 0) | ((dg == 0) & ((ds > 0) | ((ds == 0) & ((dt > 0) | ((dt == 0) & (dv >= 0))))))
    if in_order.all():
        return None
    return np.lexsort((value, ts, step, group))


def assemble(
    label: str,
    experiments: Sequence[Experiment],
    runs: Sequence[RunMeta],
    points: pd.DataFrame,
    selection: Selection,
) -> pd.DataFrame:
    """Join points with run facts and hand the long table to :func:`saturate.curves.tidy`."""
    scope = ", ".join(repr(e.name) for e in experiments) or "no experiment"
    runs = list({r.run_id: r for r in runs}.values())  # a run met twice (paging) counts once
    if not runs:
        detail = f" matching --filter {selection.filter!r}" if selection.filter else ""
        raise InputError(f"{label}: no active runs{detail} in {scope}")
    if points.empty:
        if selection.metric:
            raise InputError(
                f"{label}: no metric matches --metric {', '.join(selection.metric)} "
                f"in {len(runs)} run(s) of {scope}"
            )
        raise InputError(f"{label}: the {len(runs)} selected run(s) of {scope} logged no metrics")
    names = {e.id: e.name for e in experiments}
    table: dict[str, list] = {"run_id": [], "experiment": [], "run": [], "run_status": []}
    extra: dict[str, dict[str, str]] = {}
    for i, r in enumerate(runs):
        table["run_id"].append(r.run_id)
        table["experiment"].append(names.get(r.experiment_id, r.experiment_id))
        table["run"].append(r.display_name)
        table["run_status"].append(r.status)
        for k, v in r.params.items():
            extra.setdefault(PARAM_PREFIX + k, {})[i] = v
        for k, v in kept_tags(r.tags).items():
            extra.setdefault(TAG_PREFIX + k, {})[i] = v
    run_table = pd.DataFrame({k: np.asarray(v, dtype=object) for k, v in table.items()})
    for col in sorted(extra):
        values = extra[col]
        run_table[col] = pd.Series([values.get(i) for i in range(len(runs))], dtype=object)
    run_table = run_table.sort_values("run_id", kind="stable").reset_index(drop=True)
    where = pd.Index(run_table["run_id"]).get_indexer(points["run_id"])
    pts = points.loc[where >= 0].reset_index(drop=True)
    run_code = where[where >= 0]
    order = _tidy_order(run_code, pts)
    if order is not None:
        pts = pts.iloc[order].reset_index(drop=True)
        run_code = run_code[order]
    facts = run_table.drop(columns="run_id").take(run_code).reset_index(drop=True)
    df = pd.concat([pts, facts], axis=1)
    df["timestamp"] = df["timestamp"].to_numpy(dtype=float) / 1000.0
    df["compute"] = df["step"].to_numpy(dtype=float)
    df["source"] = label
    return tidy(df, origin=label, compute_name="step")


# ----------------------------------------------------------------------------- entry point


def load_mlflow(
    source: str | os.PathLike | None,
    *,
    experiment: Sequence[str] | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | None = None,
    fast: bool = True,
    max_workers: int = 8,
    timeout: float | None = None,
) -> pd.DataFrame:
    """Full metric histories of the selected MLflow runs as the tidy curve table.

    ``experiment``: names or ids (default: every active experiment); ``filter``: an MLflow search
    filter such as ``params.recipe = 'cispo'``; ``metric``: glob patterns on metric keys;
    ``fast``: read database backends with read-only SQL (False: through MlflowClient, on a
    private snapshot for sqlite); ``max_workers``: concurrent requests to a tracking server;
    ``timeout``: seconds one request to a tracking server may take, retries included (default
    ``$SATURATE_TIMEOUT``, else 120); a server that stops answering is given up on within it.
    Deleted runs are skipped; RUNNING runs are kept (``run_status`` says their curves are
    partial). ``source=None`` uses ``MLFLOW_TRACKING_URI``.
    """
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
    )
    check_filter(selection.filter)
    timeout = resolve_timeout(timeout)
    src = resolve_source(source)
    if src.kind == "files":
        exps, runs, points = read_filestore(
            Path(src.target), selection, label=src.label, max_workers=max_workers
        )
    elif src.kind == "rest":
        exps, runs, points = read_rest(src, selection, max_workers=max_workers, fast=fast,
                                       timeout=timeout)
    else:
        exps, runs, points = read_database(src, selection, fast=fast, max_workers=max_workers)
    return assemble(src.label, exps, runs, points, selection)
