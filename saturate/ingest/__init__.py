"""Turn any source the user names into the tidy curve table (see :mod:`saturate.curves`).

A source is a file, a folder (walked recursively), an MLflow tracking URI or store, a W&B run
folder or project (``wandb://ENTITY/PROJECT``), a DataFrame, or a list of these. Each source kind has its own module; :mod:`.stream` plans the reads and
selects part by part; :func:`load` gathers the parts into one table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from saturate.errors import SettingsError, names_text
from saturate.ingest.stream import Source, Tables, walk
from saturate.run_table import concat_tables, with_run_facts

__all__ = ["load", "walk", "Source", "Tables"]


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
    with_runs: bool = False,
    **unknown: Any,
) -> pd.DataFrame:
    """Read curves from files, folders, TensorBoard logs or MLflow into the tidy table.

    Args:
        source: a path (file or folder, walked recursively; W&B run folders read from their
            ``run-<id>.wandb`` logs), an MLflow tracking URI (``http://host:port``,
            ``sqlite:///mlflow.db``, ...), an ``mlflow.db`` or ``mlruns/`` path, a W&B project
            (``wandb://ENTITY/PROJECT``, the ``wandb`` extra), a DataFrame, or a list of these.
            ``None`` uses ``MLFLOW_TRACKING_URI``.
        experiment: experiment names or ids (MLflow) / globs on the experiment column (files).
        filter: an MLflow search filter such as ``"params.recipe = 'cispo'"`` (MLflow sources), or
            W&B's JSON run filter such as ``'{"config.lr": 1e-6}'`` (``wandb://`` sources).
        metric: glob patterns of the metrics to keep, e.g. ``"eval/*"``.
        run: glob patterns on run names or ids.
        compute: the x axis: a column, or a metric such as ``"compute/gpu_hours"`` joined on step.
            Default: a ``compute`` column when there is one, else ``step``.
        fast: use MLflow's read-only database fast path where possible.
        timeout: seconds one request to an MLflow tracking server may take, retries included
            (default ``$SATURATE_TIMEOUT``, else 120).
        with_runs: put each run's status, parameters and tags (``run_status``, ``params.*``,
            ``tags.*``) on every one of its points, as columns.

    Returns:
        The tidy long table: one row per point (see :mod:`saturate.curves`). Run-level facts
        are kept once per run beside it (``saturate.run_facts(df)``), unless ``with_runs``.

    Example:
        >>> df = saturate.load("sample_runs/", metric="eval/*")  # doctest: +SKIP
        >>> df.groupby(["run", "metric"]).size()  # doctest: +SKIP
    """
    if unknown:
        raise SettingsError(f"load() got unknown option(s): {names_text(sorted(unknown))}")
    tables = Tables(source, experiment=experiment, filter=filter, metric=metric, run=run,
                    compute=compute, fast=fast, stream=False,
                    timeout=timeout)
    df = concat_tables(tables)
    df.attrs["compute_name"] = tables.compute_name
    return with_run_facts(df) if with_runs else df
