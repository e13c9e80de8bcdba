"""Incremental fetching: only the points logged after the last seen step of each curve.

Four pollers, one result (:class:`~saturate.tracker.poll_base.PollResult`), each reading a source
the way ``analyze`` reads it:

* :class:`RestPoller`, MLflow tracking servers: ``runs/search`` returns each run's latest metrics
  with their step, so only the curves whose latest step passed the stored cursor get their
  history fetched (with the ingest's deadline, retries and answer checks). New runs are new keys.
* :class:`DbPoller`, MLflow backend databases (an ``mlflow.db``, PostgreSQL, MySQL): the same idea
  through the ingest fast path's read-only SQL (``latest_metrics``, then ``metrics WHERE step > ?``).
* :class:`FileStorePoller`, legacy ``mlruns/`` stores, read directly: only the metric files whose
  size or modification time changed are re-read.
* :class:`FilesPoller`, files and folders: only files whose size or modification time changed
  are re-read, and only their rows after the cursor are kept; every MLflow store inside a folder
  is polled by its own poller, as ``analyze`` reads it.

This module picks the poller for a source (:func:`make_poller`) and polls several as one
(:class:`MultiPoller`). A source that cannot be reached raises
:class:`~saturate.errors.SourceError`; the watch loop retries it with backoff. Nothing here writes
to a source or to the history store.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from saturate.errors import InputError, SettingsError
from saturate.ingest import walk
from saturate.ingest.mlflow_http import resolve_timeout
from saturate.ingest.mlflow_sources import is_mlflow_source, resolve_source
from saturate.tracker.poll_base import CurveKey, Poller, PollResult, merge_results
from saturate.tracker.poll_files import FilesPoller
from saturate.tracker.poll_mlflow_files import FileStorePoller
from saturate.tracker.poll_mlflow_rest import RestPoller
from saturate.tracker.poll_mlflow_sqlite import DbPoller, SqlitePoller

__all__ = [
    "PollResult",
    "Poller",
    "RestPoller",
    "DbPoller",
    "SqlitePoller",
    "FileStorePoller",
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
        return merge_results([p.poll(cursors, file_stamps or {}) for p in self.pollers])


def make_poller(
    source: str | os.PathLike | Sequence[str | os.PathLike] | None,
    *,
    experiment: Sequence[str] | str | None = None,
    filter: str | None = None,  # noqa: A002 - the CLI's option name
    metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None,
    compute: str | None = None,
    timeout: float | None = None,
) -> Poller:
    """The poller for a source (None: ``MLFLOW_TRACKING_URI``) or a list of sources.

    ``compute`` names a metric used as the x axis, so it is fetched with the selected metrics;
    ``timeout`` bounds each request to a tracking server (default ``$SATURATE_TIMEOUT``, 120 s).
    """
    if source is None:
        source = os.environ.get("MLFLOW_TRACKING_URI")
        if not source:
            raise InputError("no source given and MLFLOW_TRACKING_URI is not set")
    opts = {"experiment": experiment, "metric": metric, "run": run, "compute": compute}
    if isinstance(source, (list, tuple)):
        if not source:
            raise InputError("no source given")
        pollers = [make_poller(s, filter=filter, timeout=timeout, **opts) for s in source]
        return pollers[0] if len(pollers) == 1 else MultiPoller(pollers)
    text = os.fspath(source)
    if text.startswith("wandb://"):
        raise SettingsError("watch follows W&B run folders (wandb/, run-*/); a wandb:// project "
                            "is read by analyze, not followed by watch")
    if is_mlflow_source(text):
        return _store_poller(text, filter=filter, timeout=timeout, **opts)
    path = Path(text).expanduser()
    if not path.exists():
        raise InputError(f"{text}: no such file or directory")
    if filter and not (path.is_dir() and walk(path)[2]):
        raise SettingsError(f"--filter is an MLflow search filter; {text} is not an MLflow source")
    return FilesPoller(text, stores=lambda p: _store_poller(str(p), filter=filter, timeout=timeout,
                                                           **opts), **opts)  # fmt: skip


def _store_poller(text: str, *, filter: str | None, timeout: float | None,  # noqa: A002
                  **opts: object) -> Poller:  # fmt: skip
    """The poller of one MLflow store, read the way ``analyze`` reads it: a database locked by
    another writer is waited on for ``timeout`` seconds, as a server's answer is."""
    src = resolve_source(text)
    if src.kind == "db":
        return DbPoller(dataclasses.replace(src, timeout=resolve_timeout(timeout)), filter=filter,
                        **opts)
    if src.kind == "files":
        return FileStorePoller(Path(src.target), label=src.label, filter=filter, **opts)
    return RestPoller(src, filter=filter, timeout=timeout, **opts)
