"""MLflow through its own APIs: a tracking server over REST, or a local store via MlflowClient.

For a server, the public API costs one ``metrics/get-history`` request per (run, metric); the
server's bulk history call (the one its UI uses) serves up to 100 runs of one metric but stops
at 25,000 points, so its answers are checked for completeness and split or completed with the
public call (see :class:`_Histories`). Requests run in a bounded thread pool and go through
MLflow's ``http_request`` with host credentials from MLflow's environment variables
(``MLFLOW_TRACKING_USERNAME``/``PASSWORD``/``TOKEN``, TLS settings), but with this module's own
bounded retries: MLflow's defaults back off for minutes on a dead server. JSON is parsed
directly rather than into protobuf entities. mlflow (seconds to import) and its HTTP stack are
imported inside the functions that call them, so loading this module stays cheap.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np
import pandas as pd
from sqlalchemy.exc import SQLAlchemyError

from saturate.errors import InputError, SourceError
from saturate.ingest.mlflow_common import (
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    empty_points,
    pick_experiments,
    points_frame,
    restore_values,
)
from saturate.ingest.mlflow_http import MAX_RETRY_AFTER, PROBE, READ, Answer, RetryPolicy, Server
from saturate.ingest.mlflow_shapes import (
    Curve,
    Shape,
    bulk_history,
    experiments,
    history,
    page,
    run_meta,
)
from saturate.ingest.redaction import redact

_PAGE = 1000
_EXP_CHUNK = 100
_BULK_ENDPOINT = "/ajax-api/2.0/mlflow/metrics/get-history-bulk"
_BULK_CAP = 25_000  # the server's fixed limit of points per bulk answer
_BULK_RUNS = 100  # the server's limit of runs per bulk request
_BULK_TARGET = 20_000  # points aimed for per request, estimated from each run's latest step


def _json_problem(answer: Answer) -> str | None:
    """Why a 200 answer's body is not JSON (None when it is): HTML, cut off, invalid, empty."""
    body = answer.body
    if not body.strip():
        return "an empty answer"
    if "html" in answer.content_type.lower() or body.lstrip()[:1] == b"<":
        return ("an HTML page instead of JSON (a login page or a proxy in front of it? is there an "
                "MLflow tracking server at this URL?)")
    try:
        json.loads(body)
    except UnicodeDecodeError:
        return "a body that is not UTF-8 text"
    except json.JSONDecodeError as err:
        if err.pos >= len(err.doc.rstrip()) - 1:
            return f"JSON cut off after {len(body)} bytes (the answer ended mid-document)"
        return f"invalid JSON ({err.msg} at byte {err.pos} of {len(body)})"
    return None


class RestReader:
    """JSON calls to one tracking server: deadline, retries and causes from
    :class:`~saturate.ingest.mlflow_http.Server`, answers checked by status and shape."""

    def __init__(self, src: MlflowSource, timeout: float | None = None) -> None:
        self.server = Server(src, timeout)
        self.label = src.label

    def call(
        self,
        method: str,
        endpoint: str,
        payload: dict,
        policy: RetryPolicy = READ,
        *,
        missing_ok: bool = False,
    ) -> dict | None:
        """One request; ``missing_ok``: None when the server lacks the endpoint (404/405/501)."""
        answer = self.server.request(method, endpoint, payload, policy)
        if missing_ok and answer.status in (404, 405, 501):
            return None
        return self._check(answer, endpoint, payload)

    def _check(self, answer: Answer, endpoint: str, payload: dict) -> dict:
        status = answer.status
        problem = _json_problem(answer)
        data = None if problem else answer.json()
        if status == 200:
            if problem:
                raise SourceError(f"{self.label} answered {endpoint} with {problem}")
            return data
        code = data.get("error_code", "") if isinstance(data, dict) else ""
        message = data.get("message", "") if isinstance(data, dict) else ""
        message = str(message)[:300]
        if status in (401, 403):
            raise SourceError(
                f"{self.label}: not authorised (HTTP {status}); set MLFLOW_TRACKING_USERNAME/"
                "MLFLOW_TRACKING_PASSWORD or MLFLOW_TRACKING_TOKEN"
            )
        if code == "INVALID_PARAMETER_VALUE" and "filter" in payload:
            raise InputError(f"--filter {payload['filter']!r}: {message}")
        if status == 404 and not code:
            raise SourceError(f"{self.label} has no {endpoint} (not an MLflow tracking server?)")
        detail = f"{code}: {message}" if code else message or answer.reason
        if answer.attempts > 1:
            detail += f"; {answer.attempts} attempts"
        if answer.retry_after is not None and answer.retry_after > MAX_RETRY_AFTER:
            detail += (f"; it asked to retry after {answer.retry_after:g} s, more than saturate "
                       f"waits ({MAX_RETRY_AFTER:g} s)")
        raise SourceError(f"{self.label} answered HTTP {status} to {endpoint} ({redact(detail)})")

    def pages(
        self, method: str, endpoint: str, payload: dict, field: str, policy: RetryPolicy = READ
    ) -> list:
        """Every item of ``field`` over all pages, each page checked for its shape."""
        out: list = []
        token = None
        shape = Shape(self.label, endpoint)
        while True:
            body = dict(payload, page_token=token) if token else payload
            items, token = page(self.call(method, endpoint, body, policy), field, shape)
            out.extend(items)
            if not token:
                return out
            policy = READ


def gather(
    jobs: Sequence[Callable[[], list[Curve]]],
    max_workers: int,
    on_error: Callable[[BaseException], None] | None = None,
) -> pd.DataFrame:
    """Run the fetch jobs over a bounded pool and stack the curves they return. The first job to
    fail (in time) gives the error; ``on_error`` hears it at once (to stop the other jobs) and
    the jobs not started yet are dropped."""
    if max_workers == 1 or len(jobs) <= 1:
        results = [job() for job in jobs]
    else:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(jobs))) as pool:
            futures = [pool.submit(job) for job in jobs]
            wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in futures if f.done() and not f.cancelled() and f.exception()]
            if failed:
                error = failed[0].exception()
                if on_error is not None:
                    on_error(error)
                for f in futures:
                    f.cancel()
                raise error
            results = [f.result() for f in futures]
    curves = [c for res in results for c in res]
    if not curves:
        return empty_points()
    sizes = np.array([len(c[2]) for c in curves], dtype=np.int64)
    run_ids = np.repeat(np.array([c[0] for c in curves], dtype=object), sizes)
    keys = np.repeat(np.array([c[1] for c in curves], dtype=object), sizes)
    steps = np.concatenate([np.asarray(c[2], dtype=np.int64) for c in curves])
    values = np.concatenate([np.asarray(c[3], dtype=float) for c in curves])
    stamps = np.concatenate([np.asarray(c[4], dtype=np.int64) for c in curves])
    return points_frame(run_ids, keys, steps, restore_values(values), stamps)


class Histories:
    """Full metric histories from a server: the public get-history call per (run, metric), or,
    when ``bulk``, the server's own bulk call (the one its UI charts use) for up to 100 runs of
    one metric at once. That call stops at 25,000 points, so a bulk answer is kept only when it
    is below the cap and holds each run's latest point as runs/search reported it; otherwise the
    batch is split, down to the public call for a single run.
    """

    _ONE = "/api/2.0/mlflow/metrics/get-history"

    def __init__(self, rest: RestReader, bulk: bool) -> None:
        self.rest = rest
        self.bulk = bulk

    def one(self, run_id: str, key: str) -> list[Curve]:
        points = self.rest.pages("GET", self._ONE, {"run_id": run_id, "metric_key": key}, "metrics")
        return [(run_id, key, *history(points, Shape(self.rest.label, self._ONE)))]

    def many(self, key: str, runs: list[str], latest: dict[str, tuple[int, int]]) -> list[Curve]:
        if not self.bulk or (len(runs) == 1 and latest.get(runs[0], (0, 0))[0] >= _BULK_TARGET):
            return [c for r in runs for c in self.one(r, key)]
        data = self.rest.call(
            "GET", _BULK_ENDPOINT, {"run_id": runs, "metric_key": key, "max_results": _BULK_CAP},
            missing_ok=True,
        )  # fmt: skip
        if data is None:  # no bulk endpoint on this server
            self.bulk = False
            return [c for r in runs for c in self.one(r, key)]
        shape = Shape(self.rest.label, _BULK_ENDPOINT)
        points, _token = page(data, "metrics", shape)
        by_run = bulk_history(points, runs, shape)
        curves = [(r, key, *history(by_run[r], shape, f"metrics (run {r})")) for r in runs]
        complete = len(points) < _BULK_CAP and all(
            r not in latest or latest[r] in zip(steps, stamps, strict=True)
            for r, _k, steps, _v, stamps in curves
        )
        if complete:
            return curves
        if len(runs) == 1:
            return self.one(runs[0], key)
        half = len(runs) // 2
        return self.many(key, runs[:half], latest) + self.many(key, runs[half:], latest)

    def jobs(
        self, wanted: dict[str, dict[str, tuple[int, int]]]
    ) -> list[Callable[[], list[Curve]]]:
        """Fetch jobs for {metric key: {run_id: latest (step, timestamp)}}."""
        jobs: list[Callable[[], list[Curve]]] = []
        for key, latest in sorted(wanted.items()):
            runs = sorted(latest)
            if not self.bulk:
                jobs += [lambda r=r, k=key: self.one(r, k) for r in runs]
                continue
            batch: list[str] = []
            size = 0
            for r in runs:
                est = latest[r][0] + 1
                if batch and (len(batch) == _BULK_RUNS or size + est > _BULK_TARGET):
                    jobs.append(lambda b=batch, k=key, lt=latest: self.many(k, b, lt))
                    batch, size = [], 0
                batch.append(r)
                size += est
            if batch:
                jobs.append(lambda b=batch, k=key, lt=latest: self.many(k, b, lt))
        return jobs


def search_experiments(rest: RestReader, selection: Selection) -> list[Experiment]:
    """The experiments the selection names (all active ones by default); the source's first
    request, so it fails fast on a dead server."""
    endpoint = "/api/2.0/mlflow/experiments/search"
    raw = rest.pages("POST", endpoint, {"max_results": _PAGE, "view_type": "ALL"}, "experiments",
                     PROBE)  # fmt: skip
    available = experiments(raw, Shape(rest.label, endpoint))
    return pick_experiments(available, selection.experiment, rest.label)


def search_runs(
    rest: RestReader, exps: Sequence[Experiment], filter_string: str | None
) -> list[tuple[RunMeta, dict[str, tuple[int, int]]]]:
    """The active runs of the experiments that pass the filter, with each metric's latest
    (step, timestamp)."""
    endpoint = "/api/2.0/mlflow/runs/search"
    shape = Shape(rest.label, endpoint)
    out = []
    ids = [e.id for e in exps]
    for i in range(0, len(ids), _EXP_CHUNK):
        payload: dict = {"experiment_ids": ids[i : i + _EXP_CHUNK],
                         "run_view_type": "ACTIVE_ONLY", "max_results": _PAGE}  # fmt: skip
        if filter_string:
            payload["filter"] = filter_string
        for j, run in enumerate(rest.pages("POST", endpoint, payload, "runs")):
            meta, latest, stage = run_meta(run, j, shape)
            if stage != "deleted":
                out.append((meta, latest))
    return out


def read_rest(
    src: MlflowSource,
    selection: Selection,
    *,
    max_workers: int = 8,
    fast: bool = True,
    timeout: float | None = None,
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected runs and full histories from a tracking server.

    ``fast`` lets the server's bulk history call serve whole batches of runs (checked for
    completeness); without it every (run, metric) costs one public get-history request.
    ``timeout``: seconds per request, retries included (default ``$SATURATE_TIMEOUT`` or 120);
    when one request fails for good, the others stop, so a server that stops answering is
    given up on within about one timeout.
    """
    rest = RestReader(src, timeout)
    exps = search_experiments(rest, selection)
    runs: list[RunMeta] = []
    wanted: dict[str, dict[str, tuple[int, int]]] = {}
    for meta, latest in search_runs(rest, exps, selection.filter):
        runs.append(meta)
        for key, last in latest.items():
            if selection.wants_metric(key):
                wanted.setdefault(key, {})[meta.run_id] = last
    histories = Histories(rest, bulk=fast)
    return exps, runs, gather(histories.jobs(wanted), max_workers, rest.server.stop)


def read_with_client(
    tracking_uri: str,
    selection: Selection,
    *,
    label: str,
    max_workers: int = 1,
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """The same through ``MlflowClient`` on a local store (the slower, schema-agnostic route)."""
    from mlflow import MlflowClient
    from mlflow.entities import ViewType
    from mlflow.exceptions import MlflowException

    client = None
    try:
        client = MlflowClient(tracking_uri=tracking_uri)
        available, token = [], None
        while True:
            found = client.search_experiments(
                view_type=ViewType.ALL, max_results=_PAGE, page_token=token
            )
            available += [
                Experiment(e.experiment_id, e.name, e.lifecycle_stage != "deleted") for e in found
            ]
            token = found.token
            if not token:
                break
        exps = pick_experiments(available, selection.experiment, label)
        runs, tasks = _client_runs(client, [e.id for e in exps], selection)

        def fetch(run_id: str, key: str) -> list[Curve]:
            hist = client.get_metric_history(run_id, key)
            steps, values = [m.step for m in hist], [m.value for m in hist]
            stamps = [m.timestamp for m in hist]
            return [(run_id, key, steps, values, stamps)]

        jobs = [lambda r=r, k=k: fetch(r, k) for r, k in tasks]
        points = gather(jobs, max_workers)
    except MlflowException as err:
        if selection.filter and err.error_code == "INVALID_PARAMETER_VALUE":
            raise InputError(f"--filter {selection.filter!r}: {err.message}") from None
        first = redact((err.message.strip().splitlines() or ["unknown error"])[0])[:200]
        raise SourceError(f"{label}: MLflow could not read the store ({first})") from None
    except SQLAlchemyError as err:
        reason = redact(str(getattr(err, "orig", err)).strip().splitlines()[0])[:200]
        raise SourceError(f"{label}: MLflow could not read the store ({reason})") from None
    finally:
        _release(client)
    return exps, runs, points


def _release(client: object) -> None:
    """Close the pooled connections of MLflow's engine: MLflow caches one engine per database
    URI for the life of the process, which would keep idle sessions open on the user's server
    (or a handle on a deleted snapshot). The engine stays usable; it reconnects on demand."""
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    engine = getattr(store, "engine", None)
    if engine is not None and callable(getattr(engine, "dispose", None)):
        engine.dispose()


def _client_runs(
    client: object, exp_ids: list[str], selection: Selection
) -> tuple[list[RunMeta], list[tuple[str, str]]]:
    from mlflow.entities import ViewType

    runs: list[RunMeta] = []
    tasks: list[tuple[str, str]] = []
    for i in range(0, len(exp_ids), _EXP_CHUNK):
        token = None
        while True:
            page = client.search_runs(
                exp_ids[i : i + _EXP_CHUNK], filter_string=selection.filter or "",
                run_view_type=ViewType.ACTIVE_ONLY, max_results=_PAGE, page_token=token,
            )  # fmt: skip
            for run in page:
                info = run.info
                meta = RunMeta(
                    run_id=info.run_id, experiment_id=str(info.experiment_id),
                    name=info.run_name or "", status=info.status,
                    params=dict(run.data.params), tags=dict(run.data.tags),
                    start_time=int(info.start_time or 0), end_time=info.end_time,
                    user_id=info.user_id or "", artifact_uri=info.artifact_uri or "",
                )  # fmt: skip
                runs.append(meta)
                keys = sorted(run.data.metrics)
                tasks.extend((meta.run_id, k) for k in keys if selection.wants_metric(k))
            token = page.token
            if not token:
                break
    return runs, tasks
