"""Turn any source the user names into a :class:`~saturate.table.table.Table`: the tidy points
(see :mod:`saturate.table.curves`), the run facts and the x axis, decided here.

A source is a file, a folder (walked recursively), an MLflow tracking URI or store, a W&B run
folder or project (``wandb://ENTITY/PROJECT``), a DataFrame, or a list of these. Each source kind has its own module; :mod:`.stream` plans the reads and
selects part by part; :func:`load` gathers the parts into one table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from saturate import lazy_exports
from saturate.errors import SettingsError, names_text

# The readers pull in pandas and pyarrow: loaded on first use (saturate.lazy_exports), so that a module
# that needs one light part of ingest (its redaction of secrets, say) and ``--help`` do not pay.
if TYPE_CHECKING:  # the exports, each imported on first use
    from saturate.ingest.stream import Source, Tables, walk
    from saturate.table.table import Table

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = ["load", "walk", "Source", "Tables"]


def load(
    source: Source | Sequence[Source] | None = None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
    gpus: float | str | None = None,
    fast: bool = True,
    timeout: float | None = None,
    **unknown: Any,
) -> Table:
    """Read curves from files, folders, TensorBoard logs or MLflow into a :class:`Table`.

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
            Default: a ``compute`` column when there is one, else the first logged measure of
            compute that grows (``compute/gpu_hours``, FLOPs, tokens...), else ``step``.
        gpus: the number of GPUs of every run (or the run parameter holding it): the x axis is
            then GPU-hours from the logged timestamps (see :mod:`saturate.table.axis`).
        fast: use MLflow's read-only database fast path where possible.
        timeout: seconds one request to an MLflow tracking server may take, retries included
            (default ``$SATURATE_TIMEOUT``, else 120).

    Returns:
        A :class:`Table`: ``.points`` the tidy long table, one row per point (see
        :mod:`saturate.table.curves`); ``.runs`` one row per run (``run_status``, ``params.*``,
        ``tags.*``); ``.axis`` the x axis (name, unit, notes). ``.to_frame()`` puts the run
        facts on every point.

    Example:
        >>> table = saturate.load("sample_runs/", metric="eval/*")  # doctest: +SKIP
        >>> table.points.groupby(["run", "metric"]).size()  # doctest: +SKIP
    """
    from saturate.ingest.stream import Tables
    from saturate.table.run_table import run_facts
    from saturate.table.table import Table, concat_tables

    if unknown:
        raise SettingsError(f"load() got unknown option(s): {names_text(sorted(unknown))}")
    tables = Tables(source, experiment=experiment, filter=filter, metric=metric, run=run,
                    compute=compute, gpus=gpus, fast=fast, stream=False, timeout=timeout)
    table = concat_tables(tables)
    return Table(table.points, run_facts(table.points, table.runs), tables.axis)
