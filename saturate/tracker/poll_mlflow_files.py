"""Polling a legacy MLflow file store (``mlruns/``) by reading its files directly, as ``analyze``
does (:mod:`saturate.ingest.mlflow_filestore`).

MLflow 3 refuses to open such a store without ``MLFLOW_ALLOW_FILE_STORE=true`` and, opened, may
create ``.trash/`` in it; reading the files needs neither and never writes. Each pass reads the
experiment and run ``meta.yaml`` files (names, statuses, params, tags) and only the metric files
whose size or modification time changed, keeping their points after each curve's cursor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from saturate.errors import SourceError
from saturate.ingest.mlflow_common import (
    RunMeta,
    check_filter,
    empty_points,
    filter_runs,
    filter_uses_metrics,
    pick_experiments,
    points_frame,
)
from saturate.ingest.mlflow_filestore import (
    experiments_in,
    latest_values,
    metric_files,
    read_metric_file,
    runs_in,
)
from saturate.table.curves import empty_table
from saturate.tracker.poll_base import CurveKey, PollResult, PollSelection, mlflow_result

__all__ = ["FileStorePoller"]


def _points(run_id: str, key: str, path: Path) -> pd.DataFrame:
    steps, values, stamps, _malformed = read_metric_file(path)  # a half-written line: next time
    n = len(steps)
    return points_frame([run_id] * n, [key] * n, steps, values, stamps)


class FileStorePoller:
    """Polls an ``mlruns/`` folder; re-reads only the metric files that changed."""

    def __init__(self, root: str | Path, *, label: str, experiment=None, filter=None,
                 metric=None, run=None, compute: str | None = None) -> None:  # fmt: skip
        self.root = Path(root)
        self.label = label
        check_filter(filter)
        self.selection = PollSelection.of(experiment, filter, metric, run, compute)

    def _runs(self) -> tuple[list, list[tuple[RunMeta, Path]]]:
        """The selected experiments and their selected runs (with folders)."""
        sel = self.selection
        found = experiments_in(self.root)
        if not found:
            return [], []
        exps = pick_experiments([e for e, _ in found], sel.experiment, self.label)
        folders = {e.id: f for e, f in found if e.active}
        runs = [pair for e in exps for pair in runs_in(e, folders[e.id])]
        runs = [(r, f) for r, f in runs if sel.wants_run(r.display_name, r.run_id)]
        if sel.filter:
            latest = None
            if filter_uses_metrics(sel.filter):
                parts = [_points(r.run_id, k, p)
                         for r, f in runs for k, p in metric_files(f).items()]  # fmt: skip
                latest = latest_values(pd.concat(parts, ignore_index=True) if parts else
                                       empty_points())  # fmt: skip
            kept = {r.run_id for r in filter_runs([r for r, _ in runs], sel.filter, latest)}
            runs = [(r, f) for r, f in runs if r.run_id in kept]
        return exps, runs

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        file_stamps = file_stamps or {}
        if not self.root.is_dir():
            raise SourceError(f"{self.label}: the MLflow file store is not there (any more)")
        exps, runs = self._runs()
        if not exps:
            return PollResult(empty_table())
        parts: list[pd.DataFrame] = []
        stamps: dict[str, tuple[int, int]] = {}
        checked = 0
        for meta, folder in runs:
            for key, path in sorted(metric_files(folder).items()):
                if not self.selection.wants_metric(key):
                    continue
                checked += 1
                try:
                    st = path.stat()
                except OSError:
                    continue
                stamp, where = (int(st.st_mtime_ns), int(st.st_size)), str(path.resolve())
                if file_stamps.get(where) == stamp:
                    continue
                parts.append(_points(meta.run_id, key, path))
                stamps[where] = stamp
        points = pd.concat(parts, ignore_index=True) if parts else empty_points()
        result = mlflow_result(self.label, exps, [r for r, _ in runs], points, checked, cursors)
        return dataclasses.replace(result, file_stamps=stamps)
