"""Polling W&B run folders: the transaction logs (``run-<id>.wandb``) whose size or modification
time changed are read again, as ``saturate analyze`` reads them (:mod:`saturate.ingest.wandb_files`).

A live run's log usually ends inside a record the wandb package is still writing: that is its
normal state, not damage, so it is read up to there without a warning and the rest is read on a
later pass (the file's stamp changes as it grows). Other damage (a bad checksum) is warned about
as ``analyze`` does. The :class:`~saturate.tracker.poll_files.FilesPoller` of a folder calls
:func:`read_changed_runs` for the W&B runs it finds and keeps the points after each curve's cursor.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.ingest.wandb_files import WandbRun, group_by_run_id, parse_run, run_table
from saturate.ingest.wandb_log import ENDS_INSIDE
from saturate.table.curves import DataWarning

__all__ = ["ChangedRuns", "read_changed_runs"]


@dataclass(frozen=True)
class ChangedRuns:
    """The runs whose logs changed: their points (run facts on every row), the stamps of the
    files read, and the points read (what the poll cost)."""

    parts: tuple[pd.DataFrame, ...]
    stamps: Mapping[str, tuple[int, int]]
    fetched: int


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return int(st.st_mtime_ns), int(st.st_size)


def _read(path: Path, into: WandbRun | None) -> WandbRun:
    try:
        data = path.read_bytes()
        run = parse_run(data, into)
    except OSError:
        return into or WandbRun()  # gone between the walk and the read: next pass
    except InputError as exc:
        if len(data) < 8:  # created, header not written yet
            return into or WandbRun()
        raise InputError(f"{shorten(path, PATH_LIMIT)}: {exc}") from None
    if run.problem is not None and run.problem != ENDS_INSIDE:
        warnings.warn(f"{shorten(path, PATH_LIMIT)}: {run.problem}; kept the {run.records} "
                      "record(s) before it", DataWarning, stacklevel=3)
    if not run.run_id:
        run.run_id = path.stem.removeprefix("run-")
    return run


def read_changed_runs(files: Iterable[Path], label: str,
                      file_stamps: Mapping[str, tuple[int, int]]) -> ChangedRuns:  # fmt: skip
    """Read the runs of ``files`` any of whose logs changed since ``file_stamps`` (every log of
    such a run: a resumed run's earlier folders too), as points from ``label``."""
    parts: list[pd.DataFrame] = []
    stamps: dict[str, tuple[int, int]] = {}
    fetched = 0
    for run_files in group_by_run_id(files).values():
        now = {str(f.resolve()): _stamp(f) for f in run_files}
        if all(s is None or file_stamps.get(k) == s for k, s in now.items()):
            continue
        run: WandbRun | None = None
        for f in run_files:
            run = _read(f, run)
        stamps.update({k: s for k, s in now.items() if s is not None})
        if run is None or not run.rows:
            continue
        fetched += len(run.rows)
        parts.append(run_table(run, label).to_frame())
    return ChangedRuns(tuple(parts), stamps, fetched)
