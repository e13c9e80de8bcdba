"""Polling an MLflow tracking server over its REST API, with the ingest's REST reader.

``runs/search`` returns each run's latest metrics with their step, so only the curves whose latest
step passed the stored cursor get their history fetched (the bulk history call where the server
has it, checked for completeness as in :mod:`saturate.ingest.mlflow_client`). The same deadline,
retries, causes, answer checks and credential redaction apply as when ``analyze`` reads a
server; nothing is ever written to it.
"""

from __future__ import annotations

from collections.abc import Mapping

from saturate.ingest.mlflow_client import (
    Histories,
    RestReader,
    gather,
    search_experiments,
    search_runs,
)
from saturate.ingest.mlflow_common import MlflowSource, RunMeta, check_filter
from saturate.tracker.poll_base import CurveKey, PollResult, PollSelection, mlflow_result

__all__ = ["RestPoller"]


class RestPoller:
    """Polls a tracking server (``http(s)://``); ``timeout`` bounds each request (default
    ``$SATURATE_TIMEOUT``, else 120 s)."""

    def __init__(self, source: MlflowSource, *, experiment=None, filter=None, metric=None,
                 run=None, compute: str | None = None, timeout: float | None = None,
                 max_workers: int = 4) -> None:  # fmt: skip
        self.label = source.label
        check_filter(filter)
        self.selection = PollSelection.of(experiment, filter, metric, run, compute)
        self.rest = RestReader(source, timeout)
        self.max_workers = max_workers

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        sel = self.selection
        self.rest.server.reset()
        exps = search_experiments(self.rest, sel.mlflow_runs())
        runs: list[RunMeta] = []
        wanted: dict[str, dict[str, tuple[int, int]]] = {}
        checked = 0
        for meta, latest in search_runs(self.rest, exps, sel.filter):
            if not sel.wants_run(meta.display_name, meta.run_id):
                continue
            runs.append(meta)
            for key, last in latest.items():
                if not sel.wants_metric(key):
                    continue
                checked += 1
                cursor = cursors.get((self.label, meta.run_id, key))
                if cursor is None or last[0] > cursor:
                    wanted.setdefault(key, {})[meta.run_id] = last
        jobs = Histories(self.rest, bulk=True).jobs(wanted)
        points = gather(jobs, self.max_workers, self.rest.server.stop)
        return mlflow_result(self.label, exps, runs, points, checked, cursors)
