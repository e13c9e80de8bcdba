"""Incremental fetching: only the points logged after the last seen step of each curve.

Three pollers, one result (:class:`~saturate.tracker.poll_base.PollResult`):

* :class:`ClientPoller`, MLflow tracking servers (and other URIs MlflowClient opens):
  ``search_runs`` returns each run's latest metrics with their step, so only the curves whose
  latest step passed the stored cursor get their history fetched. New runs are simply new keys.
* :class:`SqlitePoller`, MLflow sqlite stores: the same idea through the ingest fast path's
  read-only SQL (``latest_metrics`` to find changed curves, then ``metrics WHERE step > ?``).
* :class:`FilesPoller`, files and folders: only files whose size or modification time changed
  are re-read, and only their rows after the cursor are kept.

This module picks the poller for a source (:func:`make_poller`) and polls several as one
(:class:`MultiPoller`). A source that cannot be reached raises
:class:`~saturate.errors.SourceError`; the watch loop retries it with backoff. Nothing here writes
to a source or to the history store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from saturate.curves import concat
from saturate.errors import InputError, SettingsError
from saturate.ingest.mlflow_sources import is_mlflow_source, resolve_source
from saturate.tracker.poll_base import CurveKey, Poller, PollResult
from saturate.tracker.poll_files import FilesPoller
from saturate.tracker.poll_mlflow_client import ClientPoller
from saturate.tracker.poll_mlflow_sqlite import SqlitePoller

__all__ = [
    "PollResult",
    "Poller",
    "ClientPoller",
    "SqlitePoller",
    "FilesPoller",
    "MultiPoller",
    "make_poller",
]


class MultiPoller:
    """Several sources polled one after the other as one."""

    def __init__(self, pollers: Sequence[Poller]) -> None:
        self.pollers = list(pollers)
        self.label = ", ".join(p.label for p in self.pollers)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        results = [p.poll(cursors, file_stamps or {}) for p in self.pollers]
        return PollResult(
            concat([r.points for r in results]),
            tuple(run for r in results for run in r.runs),
            sum(r.fetched for r in results),
            sum(r.curves_checked for r in results),
            {k: v for r in results for k, v in r.file_stamps.items()},
            {k: v for r in results for k, v in r.seen.items()},
        )


def make_poller(
    source: str | os.PathLike | Sequence[str | os.PathLike] | None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
) -> Poller:
    """The poller for a source (None: ``MLFLOW_TRACKING_URI``) or a list of sources.

    ``compute`` names a metric used as the x axis, so it is fetched with the selected metrics.
    """
    if source is None:
        source = os.environ.get("MLFLOW_TRACKING_URI")
        if not source:
            raise InputError("no source given and MLFLOW_TRACKING_URI is not set")
    if isinstance(source, (list, tuple)):
        if not source:
            raise InputError("no source given")
        pollers = [make_poller(s, experiment=experiment, filter=filter, metric=metric, run=run,
                               compute=compute) for s in source]  # fmt: skip
        return pollers[0] if len(pollers) == 1 else MultiPoller(pollers)
    text = os.fspath(source)
    opts = {"experiment": experiment, "metric": metric, "run": run, "compute": compute}
    if is_mlflow_source(text):
        src = resolve_source(text)
        if src.kind == "db" and src.sqlite_path is not None:
            return SqlitePoller(src.sqlite_path, label=src.label, filter=filter, **opts)
        return ClientPoller(src.target, label=src.label, filter=filter, **opts)
    if filter:
        raise SettingsError(f"--filter is an MLflow search filter; {text} is not an MLflow source")
    if not Path(text).expanduser().exists():
        raise InputError(f"{text}: no such file or directory")
    return FilesPoller(text, **opts)
