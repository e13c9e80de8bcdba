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

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

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

__all__ = ["read_rest", "read_with_client", "RetryPolicy", "PROBE", "READ"]

_PAGE = 1000
_EXP_CHUNK = 100
_BULK_ENDPOINT = "/ajax-api/2.0/mlflow/metrics/get-history-bulk"
_BULK_CAP = 25_000  # the server's fixed limit of points per bulk answer
_BULK_RUNS = 100  # the server's limit of runs per bulk request
_BULK_TARGET = 20_000  # points aimed for per request, estimated from each run's latest step


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for 429/5xx/timeouts: waits backoff * (1, 2, 4, ...) s; (connect, read) timeout."""

    max_retries: int
    backoff: float
    connect_timeout: float
    read_timeout: float


# The first request fails fast on a dead server (about 15 s worst case on a black-holed host).
PROBE = RetryPolicy(max_retries=2, backoff=0.5, connect_timeout=4.0, read_timeout=30.0)
READ = RetryPolicy(max_retries=4, backoff=0.5, connect_timeout=10.0, read_timeout=120.0)


def _float(v: object) -> float:
    """Protobuf JSON spells non-finite doubles as strings ("NaN", "Infinity", "-Infinity")."""
    if v is None:
        return math.nan
    return float(v)


def _reason(err: BaseException) -> str:
    """A short cause for a failed request, without the URL (which may carry credentials)."""
    import requests

    cause = err.__cause__ or err.__context__
    while cause is not None:
        if isinstance(cause, requests.exceptions.Timeout):
            return "timed out"
        if isinstance(cause, requests.exceptions.SSLError):
            return "TLS handshake failed"
        if isinstance(cause, requests.exceptions.ConnectionError):
            return "connection refused or host unreachable"
        if isinstance(cause, requests.exceptions.RetryError):
            return "kept answering with errors after retries"
        cause = cause.__cause__ or cause.__context__
    return type(err).__name__


class _Rest:
    """JSON calls to one tracking server with MLflow's credentials and bounded retries."""

    def __init__(self, src: MlflowSource) -> None:
        from mlflow.utils.credentials import get_default_host_creds

        self.creds = get_default_host_creds(src.target)
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
        from mlflow.exceptions import MlflowException
        from mlflow.utils.rest_utils import http_request

        body = {"params": payload} if method == "GET" else {"json": payload}
        try:
            resp = http_request(
                self.creds, endpoint, method,
                max_retries=policy.max_retries, backoff_factor=policy.backoff,
                backoff_jitter=0.1, timeout=(policy.connect_timeout, policy.read_timeout),
                raise_on_status=False, respect_retry_after_header=True, **body,
            )  # fmt: skip
        except MlflowException as err:
            raise SourceError(
                f"cannot reach the MLflow server {self.label}: {_reason(err)} "
                f"(after {policy.max_retries} retries)"
            ) from None
        if missing_ok and resp.status_code in (404, 405, 501):
            return None
        return self._check(resp, endpoint, payload)

    def _check(self, resp: object, endpoint: str, payload: dict) -> dict:
        status = resp.status_code
        try:
            data = resp.json()
        except ValueError:
            data = None
        if status == 200 and isinstance(data, dict):
            return data
        if status == 200:
            raise SourceError(f"{self.label} did not answer like an MLflow tracking server")
        code = data.get("error_code", "") if isinstance(data, dict) else ""
        message = (data.get("message", "") if isinstance(data, dict) else "")[:300]
        if status in (401, 403):
            raise SourceError(
                f"{self.label}: not authorised (HTTP {status}); set MLFLOW_TRACKING_USERNAME/"
                "MLFLOW_TRACKING_PASSWORD or MLFLOW_TRACKING_TOKEN"
            )
        if code == "INVALID_PARAMETER_VALUE" and "filter" in payload:
            raise InputError(f"--filter {payload['filter']!r}: {message}")
        if status == 404 and not code:
            raise SourceError(f"{self.label} has no {endpoint} (not an MLflow tracking server?)")
        detail = f"{code}: {message}" if code else message or resp.reason
        raise SourceError(f"{self.label} answered HTTP {status} to {endpoint} ({detail})")

    def pages(
        self, method: str, endpoint: str, payload: dict, field: str, policy: RetryPolicy = READ
    ) -> list[dict]:
        out: list[dict] = []
        token = None
        while True:
            body = dict(payload, page_token=token) if token else payload
            data = self.call(method, endpoint, body, policy)
            out.extend(data.get(field, []))
            token = data.get("next_page_token")
            if not token:
                return out
            policy = READ


def _run_meta(run: dict) -> tuple[RunMeta, dict[str, tuple[int, int]]]:
    """RunMeta and {metric key: (step, timestamp) of its latest point} of a runs/search item."""
    info, data = run.get("info", {}), run.get("data", {})
    tags = {t["key"]: t.get("value", "") for t in data.get("tags", [])}
    params = {p["key"]: p.get("value", "") for p in data.get("params", [])}
    meta = RunMeta(
        run_id=info.get("run_id") or info.get("run_uuid", ""),
        experiment_id=str(info.get("experiment_id", "")),
        name=info.get("run_name", "") or "",
        status=info.get("status", "") or "",
        params=params, tags=tags,
        start_time=int(info.get("start_time") or 0),
        end_time=int(info["end_time"]) if info.get("end_time") else None,
        user_id=info.get("user_id", "") or "", artifact_uri=info.get("artifact_uri", "") or "",
    )  # fmt: skip
    latest = {
        m["key"]: (int(m.get("step", 0)), int(m.get("timestamp", 0)))
        for m in data.get("metrics", [])
    }
    return meta, latest


# A fetched curve: (run_id, metric key, steps, values, timestamps).
Curve = tuple[str, str, list, list, list]


def _gather(jobs: Sequence[Callable[[], list[Curve]]], max_workers: int) -> pd.DataFrame:
    """Run the fetch jobs over a bounded pool and stack the curves they return."""
    if max_workers == 1 or len(jobs) <= 1:
        results = [job() for job in jobs]
    else:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(jobs))) as pool:
            results = list(pool.map(lambda job: job(), jobs))
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


def _curve(run_id: str, key: str, points: list[dict]) -> Curve:
    return (
        run_id,
        key,
        [int(p.get("step", 0)) for p in points],
        [_float(p.get("value")) for p in points],
        [int(p.get("timestamp", 0)) for p in points],
    )


class _Histories:
    """Full metric histories from a server: the public get-history call per (run, metric), or,
    when ``bulk``, the server's own bulk call (the one its UI charts use) for up to 100 runs of
    one metric at once. That call stops at 25,000 points, so a bulk answer is kept only when it
    is below the cap and holds each run's latest point as runs/search reported it; otherwise the
    batch is split, down to the public call for a single run.
    """

    def __init__(self, rest: _Rest, bulk: bool) -> None:
        self.rest = rest
        self.bulk = bulk

    def one(self, run_id: str, key: str) -> list[Curve]:
        points = self.rest.pages(
            "GET", "/api/2.0/mlflow/metrics/get-history",
            {"run_id": run_id, "metric_key": key}, "metrics",
        )  # fmt: skip
        return [_curve(run_id, key, points)]

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
        points = data.get("metrics", [])
        by_run: dict[str, list[dict]] = {r: [] for r in runs}
        for p in points:
            by_run.setdefault(p.get("run_id", ""), []).append(p)
        complete = len(points) < _BULK_CAP and all(
            r not in latest
            or any(
                (int(p.get("step", 0)), int(p.get("timestamp", 0))) == latest[r] for p in by_run[r]
            )
            for r in runs
        )
        if complete:
            return [_curve(r, key, by_run[r]) for r in runs]
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


def read_rest(
    src: MlflowSource, selection: Selection, *, max_workers: int = 8, fast: bool = True
) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected runs and full histories from a tracking server.

    ``fast`` lets the server's bulk history call serve whole batches of runs (checked for
    completeness); without it every (run, metric) costs one public get-history request.
    """
    rest = _Rest(src)
    raw = rest.pages(
        "POST", "/api/2.0/mlflow/experiments/search",
        {"max_results": _PAGE, "view_type": "ALL"}, "experiments", PROBE,
    )  # fmt: skip
    available = [
        Experiment(str(e["experiment_id"]), e.get("name", ""), e.get("lifecycle_stage") != "deleted")
        for e in raw
    ]
    exps = pick_experiments(available, selection.experiment, src.label)
    runs: list[RunMeta] = []
    wanted: dict[str, dict[str, tuple[int, int]]] = {}
    ids = [e.id for e in exps]
    for i in range(0, len(ids), _EXP_CHUNK):
        payload: dict = {
            "experiment_ids": ids[i : i + _EXP_CHUNK],
            "run_view_type": "ACTIVE_ONLY",
            "max_results": _PAGE,
        }
        if selection.filter:
            payload["filter"] = selection.filter
        for run in rest.pages("POST", "/api/2.0/mlflow/runs/search", payload, "runs"):
            if run.get("info", {}).get("lifecycle_stage") == "deleted":
                continue
            meta, latest = _run_meta(run)
            runs.append(meta)
            for key, last in latest.items():
                if selection.wants_metric(key):
                    wanted.setdefault(key, {})[meta.run_id] = last
    histories = _Histories(rest, bulk=fast)
    return exps, runs, _gather(histories.jobs(wanted), max_workers)


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
            page = client.search_experiments(
                view_type=ViewType.ALL, max_results=_PAGE, page_token=token
            )
            available += [
                Experiment(e.experiment_id, e.name, e.lifecycle_stage != "deleted") for e in page
            ]
            token = page.token
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
        points = _gather(jobs, max_workers)
    except MlflowException as err:
        if selection.filter and err.error_code == "INVALID_PARAMETER_VALUE":
            raise InputError(f"--filter {selection.filter!r}: {err.message}") from None
        first = (err.message.strip().splitlines() or ["unknown error"])[0][:200]
        raise SourceError(f"{label}: MLflow could not read the store ({first})") from None
    except SQLAlchemyError as err:
        reason = str(getattr(err, "orig", err)).strip().splitlines()[0][:200]
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
