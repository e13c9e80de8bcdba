"""Polling files and folders: only files whose size or modification time changed are re-read, and
only their rows after each curve's cursor are kept. Folders are walked like ``saturate analyze``
walks them, on every pass; each MLflow store found inside (an ``mlruns/`` folder, an
``mlflow.db``) is polled by its own poller, made once by the ``stores`` factory; W&B run folders
are read by :mod:`saturate.tracker.poll_wandb`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from saturate.errors import InputError, SourceError
from saturate.ingest.files import read_table_file
from saturate.ingest.stream import walk_all
from saturate.ingest.tensorboard import is_event_file, read_event_files
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, concat, empty_table
from saturate.tracker.poll_base import (
    CurveKey,
    PollResult,
    PollSelection,
    globs_match,
    merge_results,
)
from saturate.tracker.poll_wandb import read_changed_runs
from saturate.tracker.records import RunRecord

__all__ = ["FilesPoller"]


class FilesPoller:
    """Polls files and folders: re-reads only files whose (mtime, size) changed."""

    def __init__(self, source: str | os.PathLike, *, experiment=None, metric=None, run=None,
                 compute: str | None = None,
                 stores: Callable[[Path], Any] | None = None) -> None:  # fmt: skip
        self.label = os.fspath(source)
        self.root = Path(self.label).expanduser()
        self.selection = PollSelection.of(experiment, None, metric, run, compute)
        self._make_store = stores
        self._stores: dict[Path, Any] = {}

    def _files(self) -> tuple[list[Path], list[Path], list[Path], list[Path]]:
        """Table files, event files, MLflow stores and W&B run logs (see ``walk_all``)."""
        if not self.root.exists():
            raise SourceError(f"{self.label}: no such file or folder (any more)")
        if self.root.is_file():
            if self.root.suffix == ".wandb":
                return [], [], [], [self.root]
            return ([], [self.root], [], []) if is_event_file(self.root) else ([self.root], [], [], [])
        return walk_all(self.root)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        file_stamps = file_stamps or {}
        tables, events, stores, runs = self._files()
        own = self._poll_files(tables, events, cursors, file_stamps, runs)
        if not stores or self._make_store is None:
            return own
        for store in stores:
            if store not in self._stores:
                self._stores[store] = self._make_store(store)
        found = [self._stores[s].poll(cursors, file_stamps) for s in stores]
        return merge_results([own, *found])

    def _poll_files(
        self,
        tables: list[Path],
        events: list[Path],
        cursors: Mapping[CurveKey, int],
        file_stamps: Mapping[str, tuple[int, int]],
        runs: list[Path] | None = None,
    ) -> PollResult:
        changed = read_changed_runs(runs or [], self.label, file_stamps)
        stamps: dict[str, tuple[int, int]] = dict(changed.stamps)
        parts: list[pd.DataFrame] = list(changed.parts)
        fetched = changed.fetched
        for group, is_events in ((tables, False), (events, True)):
            for path in group:
                try:
                    st = path.stat()
                except OSError:
                    continue
                stamp = (int(st.st_mtime_ns), int(st.st_size))
                key = str(path.resolve())
                if file_stamps.get(key) == stamp:
                    continue
                try:
                    if is_events:
                        df = read_event_files([path], self.root if self.root.is_dir()
                                              else path.parent, source=self.label).to_frame()  # fmt: skip
                    else:
                        source = self.label if self.root.is_file() else str(path)
                        df = read_table_file(path, source=source).to_frame()
                except InputError:
                    if path.stat().st_size == 0 or _growing(path, st):
                        continue  # being written; read it next time
                    raise
                stamps[key] = stamp
                fetched += len(df)
                parts.append(df)
        if not parts:
            return PollResult(empty_table(), (), 0, 0, stamps)
        df = concat(parts)
        df = self._select(df)
        keys = list(zip(df["source"], df["run_id"], df["metric"], strict=True))
        last = np.array([cursors.get(k, np.iinfo(np.int64).min) for k in keys], dtype=np.int64)
        new = df.loc[df["step"].to_numpy() > last].reset_index(drop=True)
        runs = tuple(_file_runs(df))
        return PollResult(new, runs, fetched, len(set(keys)), stamps)

    def _select(self, df: pd.DataFrame) -> pd.DataFrame:
        sel = self.selection
        mask = np.array([sel.wants_metric(m) for m in df["metric"]], dtype=bool)
        mask &= np.array([sel.wants_run(r, i) for r, i in zip(df["run"], df["run_id"], strict=True)],
                         dtype=bool)  # fmt: skip
        if sel.experiment:
            mask &= np.array([globs_match(e, sel.experiment) for e in df["experiment"]], dtype=bool)
        return df.loc[mask].reset_index(drop=True)


def _growing(path: Path, before: os.stat_result) -> bool:
    try:
        return path.stat().st_size != before.st_size
    except OSError:
        return True


def _file_runs(df: pd.DataFrame) -> Iterable[RunRecord]:
    cols = [c for c in df.columns if c.startswith((PARAM_PREFIX, TAG_PREFIX))]
    has_status = "run_status" in df.columns
    for (source, run_id), g in df.groupby(["source", "run_id"], sort=True):
        first = g.iloc[0]
        params = {c[len(PARAM_PREFIX):]: str(first[c]) for c in cols
                  if c.startswith(PARAM_PREFIX) and pd.notna(first[c])}  # fmt: skip
        tags = {c[len(TAG_PREFIX):]: str(first[c]) for c in cols
                if c.startswith(TAG_PREFIX) and pd.notna(first[c])}  # fmt: skip
        status = str(first["run_status"]) if has_status and pd.notna(first["run_status"]) else None
        yield RunRecord(str(source), str(run_id), str(first["run"]), str(first["experiment"]),
                        status, tuple(sorted(params.items())), tuple(sorted(tags.items())))
