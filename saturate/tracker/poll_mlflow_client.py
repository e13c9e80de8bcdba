"""Polling MLflow through ``MlflowClient``: tracking servers, and other URIs MLflow opens.

``search_runs`` returns each run's latest metrics with their step, so only the curves whose latest
step passed the stored cursor get their history fetched. New runs are simply new keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from saturate.curves import empty_table
from saturate.errors import InputError, SaturateError, SourceError
from saturate.ingest.mlflow_common import Experiment, check_filter, pick_experiments
from saturate.ingest.mlflow_sources import redact
from saturate.tracker.poll_base import (
    CurveKey,
    PollResult,
    PollSelection,
    new_rows,
    rows_table,
    run_record,
)
from saturate.tracker.records import RunRecord

__all__ = ["ClientPoller"]

_PAGE = 1000


def _source_error(label: str, exc: BaseException) -> SaturateError:
    """A client failure as the right domain error: bad request -> InputError, else SourceError."""
    from mlflow.exceptions import MlflowException  # mlflow is loaded by then (see ClientPoller)

    if isinstance(exc, MlflowException) and exc.error_code in (
        "INVALID_PARAMETER_VALUE", "RESOURCE_DOES_NOT_EXIST", "BAD_REQUEST",
    ):  # fmt: skip
        return InputError(f"{label}: {exc.message}")
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return SourceError(f"{label}: cannot read from the tracking source ({text[:300]})")


class ClientPoller:
    """Polls through ``MlflowClient`` (a tracking server over REST, or any URI MLflow opens).

    The client's own HTTP retries are governed by ``MLFLOW_HTTP_REQUEST_MAX_RETRIES`` /
    ``MLFLOW_HTTP_REQUEST_TIMEOUT``; ``saturate watch`` lowers them so its own backoff decides.
    """

    def __init__(self, uri: str, *, label: str | None = None, experiment=None, filter=None,
                 metric=None, run=None, compute: str | None = None) -> None:  # fmt: skip
        # mlflow takes seconds to import: only a watcher of an MLflow source pays for it.
        from mlflow import MlflowClient

        self.uri = uri
        self.label = label or redact(uri)
        check_filter(filter)
        self.selection = PollSelection.of(experiment, filter, metric, run, compute)
        self.client = MlflowClient(tracking_uri=uri)

    def _experiments(self) -> dict[str, str]:
        from mlflow.entities import ViewType

        found, token = [], None
        while True:
            page = self.client.search_experiments(view_type=ViewType.ALL, max_results=_PAGE,
                                                  page_token=token)  # fmt: skip
            found += [Experiment(e.experiment_id, e.name, e.lifecycle_stage == "active")
                      for e in page]  # fmt: skip
            token = page.token
            if not token:
                break
        picked = pick_experiments(found, self.selection.experiment, self.label)
        return {e.id: e.name for e in picked}

    def _search(self, experiment_ids: list[str]) -> Iterator[Any]:
        """The active runs of the experiments that pass the filter, page after page."""
        from mlflow.entities import ViewType

        token = None
        while True:
            page = self.client.search_runs(
                experiment_ids, filter_string=self.selection.filter or "",
                run_view_type=ViewType.ACTIVE_ONLY, max_results=_PAGE, page_token=token,
            )  # fmt: skip
            yield from page
            token = page.token
            if not token:
                return

    def poll(self, cursors: Mapping[CurveKey, int],
             file_stamps: Mapping[str, tuple[int, int]] | None = None) -> PollResult:  # fmt: skip
        try:
            return self._poll(cursors)
        except SaturateError:
            raise
        except Exception as exc:  # noqa: BLE001 - any client/transport failure is a source error
            raise _source_error(self.label, exc) from exc

    def _poll(self, cursors: Mapping[CurveKey, int]) -> PollResult:
        sel = self.selection
        experiments = self._experiments()
        if not experiments:
            return PollResult(empty_table())
        rows = new_rows()
        runs: list[RunRecord] = []
        fetched = checked = 0
        seen: dict[CurveKey, int] = {}
        for run in self._search(list(experiments)):
            info = run.info
            tags = dict(run.data.tags)
            name = tags.get("mlflow.runName") or info.run_name or info.run_id
            if not sel.wants_run(name, info.run_id):
                continue
            exp = experiments.get(info.experiment_id, info.experiment_id)
            runs.append(run_record(self.label, info.run_id, name, exp, info.status,
                                   dict(run.data.params), tags))  # fmt: skip
            for latest in run.data.to_proto().metrics:
                if not sel.wants_metric(latest.key):
                    continue
                checked += 1
                key = (self.label, info.run_id, latest.key)
                last = cursors.get(key)
                if last is not None and latest.step <= last:
                    continue
                history = self.client.get_metric_history(info.run_id, latest.key)
                fetched += len(history)
                if history:
                    seen[key] = max(m.step for m in history)
                facts = {"source": self.label, "experiment": exp, "run_id": info.run_id,
                         "run": name, "run_status": info.status}  # fmt: skip
                _append(rows, [m for m in history if last is None or m.step > last], facts)
        return PollResult(rows_table(rows), tuple(runs), fetched, checked, seen=seen)


def _append(rows: dict[str, list], history: list[Any], facts: Mapping[str, Any]) -> None:
    """Add the points of one metric history (MLflow Metric entities) with their run's facts."""
    for m in history:
        for col, v in facts.items():
            rows[col].append(v)
        rows["metric"].append(m.key)
        rows["step"].append(m.step)
        rows["value"].append(m.value)
        rows["timestamp"].append(m.timestamp / 1000.0)
