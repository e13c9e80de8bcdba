"""Polling an MLflow backend database (sqlite file, PostgreSQL, MySQL) through the ingest fast
path's read-only SQL.

The runs and each curve's latest step come from :func:`~saturate.ingest.mlflow_db.select_runs`
(MLflow's ``latest_metrics`` table), the points after a curve's cursor from
:func:`~saturate.ingest.mlflow_db.points_after` (``metrics WHERE step > ?``), all in one read-only
connection (sqlite ``mode=ro``, a read-only PostgreSQL transaction): the store is never written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from saturate.errors import SourceError
from saturate.ingest.mlflow_common import MlflowSource, RunMeta, check_filter
from saturate.tracker.poll_base import CurveKey, PollResult, PollSelection, mlflow_result

__all__ = ["DbPoller", "SqlitePoller"]

# {(run_id, metric): last stored step, None for a curve not seen yet}
Since = dict[tuple[str, str], int | None]


class DbPoller:
    """Polls an MLflow backend database with read-only SQL; the store is never written.

    ``source`` is a classified database source, or the path of an MLflow sqlite file.
    """

    def __init__(self, source: MlflowSource | str | Path, *, label: str | None = None,
                 experiment=None, filter=None, metric=None, run=None,
                 compute: str | None = None) -> None:  # fmt: skip
        if not isinstance(source, MlflowSource):
            path = Path(source)
            source = MlflowSource("db", f"sqlite:///{path}", label or str(path), sqlite_path=path)
        self.source = source
        self.path = source.sqlite_path
        self.label = label or source.label
        check_filter(filter)
        self.selection = PollSelection.of(experiment, filter, metric, run, compute)

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        # The SQL readers load SQLAlchemy (about 0.2 s): imported by the first poll of a sqlite
        # store rather than with the tracker package (``saturate history`` and ``timeline``).
        from saturate.ingest.mlflow_db import (
            UnsupportedSchema,
            checked_connection,
            points_after,
            select_runs,
        )

        if self.path is not None and not Path(self.path).is_file():
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
        return mlflow_result(self.label, exps, runs, points, checked)

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


SqlitePoller = DbPoller  # the name it had when it polled sqlite files only
