"""Turn any source the user names into the tidy curve table (see :mod:`saturate.curves`).

A source is a file, a folder (walked recursively), an MLflow tracking URI or store, a DataFrame,
or a list of these. Each source kind has its own module; this one only dispatches and selects.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from saturate import axis_join, curves
from saturate.curves import AXIS_METRICS
from saturate.errors import PATH_LIMIT, InputError, SettingsError, names_text, shorten
from saturate.ingest.files import is_table_file, read_table_file
from saturate.ingest.mlflow_sources import is_legacy_store, is_mlflow_sqlite, redact
from saturate.ingest.tensorboard import is_event_file, read_event_files

__all__ = ["load", "walk", "Source"]

Source = str | os.PathLike | pd.DataFrame
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".venv", "venv", ".saturate", ".ipynb_checkpoints"}
_URI_SCHEMES = ("http://", "https://", "sqlite://", "postgresql://", "postgresql+", "postgres://",
                "postgres+", "mysql://",
                "mysql+", "mssql", "file:", "databricks")


def _as_list(x: Sequence[str] | str | None) -> list[str] | None:
    if x is None:
        return None
    return [x] if isinstance(x, str) else list(x)


def _load_mlflow(source: str | Path, **selection: Any) -> pd.DataFrame:
    # Imported on first use: the MLflow readers load SQLAlchemy, which reading files does not need
    # (about 0.17 s, nearly half of ``import saturate``).
    from saturate.ingest.mlflow import load_mlflow

    return load_mlflow(source, **selection)


def walk(root: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """Find table files, TensorBoard event files and MLflow stores below ``root``."""
    tables: list[Path] = []
    events: list[Path] = []
    stores: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        if is_legacy_store(here):
            stores.append(here)
            dirnames.clear()
            continue
        if "mlflow.db" in filenames and is_mlflow_sqlite(here / "mlflow.db"):
            stores.append(here / "mlflow.db")
            filenames = [f for f in filenames if f != "mlflow.db"]
            # MLflow 3's default local layout keeps artifacts (not curves) in mlruns/ beside the db.
            if "mlruns" in dirnames and not is_legacy_store(here / "mlruns"):
                dirnames.remove("mlruns")
        for name in sorted(filenames):
            p = here / name
            if is_event_file(p):
                events.append(p)
            elif is_table_file(p):
                tables.append(p)
    return tables, events, stores


def _load_one(
    source: Source,
    *,
    experiment: list[str] | None,
    filter: str | None,
    metric: list[str] | None,
    fast: bool,
    timeout: float | None = None,
) -> tuple[pd.DataFrame, bool]:
    """Read one source; the flag says whether MLflow was involved (for --filter)."""
    if isinstance(source, pd.DataFrame):
        return curves.tidy(source, origin="DataFrame"), False
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"cannot read a source of type {type(source).__name__}")
    text = os.fspath(source)
    if text.startswith(_URI_SCHEMES):
        return _load_mlflow(text, experiment=experiment, filter=filter, metric=metric, fast=fast,
                            timeout=timeout), True
    path = Path(text).expanduser()
    if not path.exists():
        if "://" in text:
            raise InputError(f"{shorten(redact(text), PATH_LIMIT)}: not a source saturate knows (no such file, and not "
                             "an http(s)://, sqlite://, postgresql:// or mysql:// URI)")
        raise InputError(f"{shorten(text, PATH_LIMIT)}: no such file or directory")
    if is_legacy_store(path) if path.is_dir() else is_mlflow_sqlite(path):
        return _load_mlflow(path, experiment=experiment, filter=filter, metric=metric, fast=fast,
                            timeout=timeout), True
    if path.is_file():
        if is_event_file(path):
            return read_event_files([path], path.parent, source=text), False
        return read_table_file(path, source=text), False
    tables, events, stores = walk(path)
    if not (tables or events or stores):
        raise InputError(f"{shorten(text, PATH_LIMIT)}: holds no files saturate can read (CSV, TSV, JSONL, Parquet, "
                         "TensorBoard event files or an MLflow store)")
    parts = [read_table_file(t, source=str(t)) for t in tables]
    if events:
        by_root = path
        parts.append(read_event_files(events, by_root, source=text))
    used_mlflow = False
    for store in stores:
        parts.append(_load_mlflow(store, experiment=experiment, filter=filter, metric=metric, fast=fast,
                                  timeout=timeout))
        used_mlflow = True
    return curves.concat(parts), used_mlflow


def load(
    source: Source | Sequence[Source] | None = None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
    fast: bool = True,
    timeout: float | None = None,
    **unknown: Any,
) -> pd.DataFrame:
    """Read curves from files, folders, TensorBoard logs or MLflow into the tidy table.

    Args:
        source: a path (file or folder, walked recursively), an MLflow tracking URI
            (``http://host:port``, ``sqlite:///mlflow.db``, ...), an ``mlflow.db`` or ``mlruns/``
            path, a DataFrame, or a list of these. ``None`` uses ``MLFLOW_TRACKING_URI``.
        experiment: experiment names or ids (MLflow) / globs on the experiment column (files).
        filter: an MLflow search filter such as ``"params.recipe = 'cispo'"`` (MLflow sources only).
        metric: glob patterns of the metrics to keep, e.g. ``"eval/*"``.
        run: glob patterns on run names or ids.
        compute: the x axis: a column, or a metric such as ``"compute/gpu_hours"`` joined on step.
            Default: a ``compute`` column when there is one, else ``step``.
        fast: use MLflow's read-only database fast path where possible.
        timeout: seconds one request to an MLflow tracking server may take, retries included
            (default ``$SATURATE_TIMEOUT``, else 120).

    Returns:
        The tidy long table: one row per point (see :mod:`saturate.curves`).

    Example:
        >>> df = saturate.load("sample_runs/", metric="eval/*")  # doctest: +SKIP
        >>> df.groupby(["run", "metric"]).size()  # doctest: +SKIP
    """
    if unknown:
        raise SettingsError(f"load() got unknown option(s): {names_text(sorted(unknown))}")
    if source is None:
        source = os.environ.get("MLFLOW_TRACKING_URI")
        if not source:
            raise InputError("no source given and MLFLOW_TRACKING_URI is not set")
    sources = list(source) if isinstance(source, (list, tuple)) else [source]
    if not sources:
        raise InputError("no source given")
    experiments, metrics = _as_list(experiment), _as_list(metric)
    # The compute axis may be a metric: fetch it along with the selected metrics.
    fetch = None if metrics is None else [*metrics, *([compute] if compute else []), *AXIS_METRICS]
    parts, any_mlflow = [], False
    for s in sources:
        df, used = _load_one(s, experiment=experiments, filter=filter, metric=fetch, fast=fast,
                             timeout=timeout)
        parts.append(df)
        any_mlflow |= used
    if filter and not any_mlflow:
        raise SettingsError("--filter is an MLflow search filter; none of the sources is MLflow")
    df = curves.concat(parts)
    if experiments and not any_mlflow:
        df = curves.select(df, experiment=experiments)
    df = axis_join.set_compute(df, compute) if compute else axis_join.auto_compute(df)
    df = curves.select(df, metric=metrics, run=_as_list(run))
    if df.empty:
        what = []
        if metrics:
            what.append(f"metric {names_text(metrics, most=5)}")
        if run:
            what.append(f"run {names_text(_as_list(run) or [], most=5)}")
        if experiments:
            what.append(f"experiment {names_text(experiments, most=5)}")
        detail = f" matching {'; '.join(what)}" if what else ""
        names = names_text(map(str, sources), most=3, limit=PATH_LIMIT)
        raise InputError(f"{names}: no curves{detail}")
    return df
