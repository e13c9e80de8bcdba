"""Turn any source the user names into a :class:`~saturate.table.table.Table` (tidy points, run
facts, x axis).

Each source kind (file, folder, MLflow, W&B, DataFrame) has its own module; :mod:`.stream` plans
the reads and selects part by part; :func:`load` gathers the parts into one table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from saturate import lazy_exports
from saturate.errors import SettingsError, names_text

# The readers pull in pandas and pyarrow: loaded on first use, so light users (redaction,
# ``--help``) do not pay.
if TYPE_CHECKING:
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
    tracker_url: str | None = None,
    **unknown: Any,
) -> Table:
    """Read curves from files, folders, TensorBoard logs or MLflow into a :class:`Table`.

    Args:
        source: a file or folder (walked recursively, W&B run folders included; files there
            that hold no curves, such as configs and notes, are skipped and named in one
            warning: the rule is in :mod:`saturate.ingest.folder`), an MLflow
            tracking URI, ``mlflow.db`` or ``mlruns/``, a W&B project (``wandb://ENTITY/PROJECT``),
            a DataFrame, or a list of these. ``None`` uses ``MLFLOW_TRACKING_URI``.
        experiment: experiment names or ids (MLflow) / globs on the experiment column (files).
        filter: an MLflow search filter (``"params.recipe = 'cispo'"``) or, for ``wandb://``,
            W&B's JSON run filter (``'{"config.lr": 1e-6}'``).
        metric: glob patterns of the metrics to keep, e.g. ``"eval/*"``.
        run: glob patterns on run names or ids. A selection that keeps no curve is an error
            naming what there is (and the name meant, when one is close).
        compute: the x axis: a column, or a metric such as ``"compute/gpu_hours"`` joined on step.
            Default: a ``compute`` column, else the first growing logged measure of compute,
            else ``step``.
        gpus: the number of GPUs of every run (or the run parameter holding it): the x axis is
            then GPU-hours from the logged timestamps.
        fast: use MLflow's read-only database fast path where possible.
        timeout: seconds per MLflow server request, retries included (default
            ``$SATURATE_TIMEOUT``, else 120).
        tracker_url: where the tracker's web UI is served, for each run's page (``run_url``):
            an MLflow database or ``mlruns/`` has none of its own; W&B run folders default to
            W&B's app as the wandb package finds it.

    Returns:
        A :class:`Table`: ``.points`` the tidy long table (one row per point), ``.runs`` one row
        per run (``run_status``, ``run_url``, ``params.*``, ``tags.*``), ``.axis`` the x axis.

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
                    compute=compute, gpus=gpus, fast=fast, stream=False, timeout=timeout,
                    tracker_url=tracker_url)
    table = concat_tables(tables)
    return Table(table.points, run_facts(table.points, table.runs), tables.read_axis())
