"""Polling an MLflow sqlite store through the ingest fast path's read-only SQL.

The runs and each curve's latest step come from :func:`~saturate.ingest.mlflow_sql.select_runs`
(MLflow's ``latest_metrics`` table), the points after a curve's cursor from
:func:`~saturate.ingest.mlflow_sql.points_after` (``metrics WHERE step > ?``), all in one read-only
connection (``mode=ro``): the store is never written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from saturate.errors import SourceError
from saturate.ingest.mlflow_common import Experiment, MlflowSource, RunMeta, check_filter
from saturate.tracker.poll_base import (
    CurveKey,
    PollResult,
    PollSelection,
    rows_table,
    run_record,
)

__all__ = ["SqlitePoller"]

# {(run_id, metric): last stored step, None for a curve not seen yet}
Since = dict[tuple[str, str], int | None]


class SqlitePoller:
    """Polls an MLflow sqlite store with read-only SQL; the file is never written."""

    def __init__(self, path: str | Path, *, label: str, experiment=None, filter=None, metric=None,
                 run=None, compute: str | None = None) -> None:  # fmt: skip
        self.path = Path(path)
        self.label = label
        check_filter(filter)
        self.selection = PollSelection.of(experiment, filter, metric, run, compute)
        self.source = MlflowSource("db", f"sqlite:///{self.path}", label, sqlite_path=self.path)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        # The SQL readers load SQLAlchemy (about 0.2 s): imported by the first poll of a sqlite
        # store rather than with the tracker package (``saturate history`` and ``timeline``).
        from saturate.ingest.mlflow_db import UnsupportedSchema, checked_connection
        from saturate.ingest.mlflow_sql import points_after, select_runs

        if not self.path.is_file():
            raise SourceError(f"{self.label}: database file {self.path} is not there")
        try:
            with checked_connection(self.source) as (_engine, conn):
                exps, runs, latest = select_runs(
                    conn, self.selection.mlflow_runs(), self.label, with_latest=True
                )
                runs = [r for r in runs if self.selection.wants_run(r.display_name, r.run_id)]
                since, checked = self._changed(runs, latest, cursors)
                points = points_after(conn, since)
        except UnsupportedSchema as why:
            # Raised while MLflow is still creating its tables, too: the watcher retries.
            raise SourceError(f"{self.label}: not an MLflow store saturate can read ({why})") from None
        return self._result(exps, runs, points, checked)

    def _changed(
        self,
        runs: Sequence[RunMeta],
        latest: Mapping[str, Mapping[str, tuple[int, float]]],
        cursors: Mapping[CurveKey, int],
    ) -> tuple[Since, int]:
        """The selected curves whose latest step passed their cursor, and how many were checked."""
        since: Since = {}
        checked = 0
        for meta in runs:
            for key, (step, _value) in sorted(latest.get(meta.run_id, {}).items()):
                if not self.selection.wants_metric(key):
                    continue
                checked += 1
                last = cursors.get((self.label, meta.run_id, key))
                if last is None or step > last:
                    since[(meta.run_id, key)] = last
        return since, checked

    def _result(
        self, exps: Sequence[Experiment], runs: Sequence[RunMeta], points: pd.DataFrame, checked: int
    ) -> PollResult:
        names = {e.id: e.name for e in exps}
        last_steps = points.groupby(["run_id", "metric"], sort=False)["step"].max()
        seen = {(self.label, r, k): int(s) for (r, k), s in last_steps.items()}
        records = tuple(
            run_record(self.label, r.run_id, r.display_name, names.get(r.experiment_id,
                       r.experiment_id), r.status, r.params, r.tags)
            for r in runs
        )  # fmt: skip
        table = self._table(points, runs, names)
        return PollResult(table, records, len(points), checked, seen=seen)

    def _table(
        self, points: pd.DataFrame, runs: Sequence[RunMeta], names: Mapping[str, str]
    ) -> pd.DataFrame:
        """The points (``mlflow_common.points_frame``) with their runs' facts as tidy rows."""
        run_ids = points["run_id"]
        by_id = {r.run_id: r for r in runs}
        return rows_table({
            "source": [self.label] * len(points),
            "experiment": run_ids.map(
                {i: names.get(r.experiment_id, r.experiment_id) for i, r in by_id.items()}
            ).to_numpy(),
            "run_id": run_ids.to_numpy(),
            "run": run_ids.map({i: r.display_name for i, r in by_id.items()}).to_numpy(),
            "metric": points["metric"].to_numpy(),
            "step": points["step"].to_numpy(),
            "value": points["value"].to_numpy(),
            "timestamp": points["timestamp"].to_numpy() / 1000.0,
            "run_status": run_ids.map({i: r.status for i, r in by_id.items()}).to_numpy(),
        })  # fmt: skip
