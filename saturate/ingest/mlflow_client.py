"""MLflow through its own APIs: a tracking server over REST, or a local store via MlflowClient.

Server requests go through MLflow's ``http_request`` (its credentials and TLS settings) in a
bounded pool, each with one deadline and the bounded retries of :mod:`saturate.ingest.http_retry`
(MLflow's back off for minutes on a dead server; a refused connection is not retried); a failure
names its true cause. Answers are read through declared models (pydantic), so another shape is a
:class:`~saturate.errors.SourceError` naming the wrong field; histories use the bulk call where
complete (:class:`Histories`). mlflow is imported inside the functions that need it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import pandas as pd
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError
from sqlalchemy.exc import SQLAlchemyError

from saturate.errors import InputError, SourceError
from saturate.ingest.http_retry import (
    MAX_RETRY_AFTER,
    Failed,
    RetryPolicy,
    cause_of,
    retry_after,
    with_retries,
)
from saturate.ingest.mlflow_common import (
    TIMEOUT_ENV,
    Experiment,
    MlflowSource,
    RunMeta,
    Selection,
    first_line,
    pick_experiments,
    resolve_timeout,
    stack_curves,
)
from saturate.ingest.redaction import redact, remember_uri

if TYPE_CHECKING:
    from mlflow import MlflowClient

_CHUNK = 1 << 16

# The first request of a source fails fast on a dead server; later ones retry a little longer.
PROBE = RetryPolicy(max_retries=2, backoff=0.5, connect_timeout=4.0)
READ = RetryPolicy(max_retries=4, backoff=0.5, connect_timeout=10.0)


@dataclass(frozen=True)
class Answer:
    """One HTTP answer read to its end: status, reason, content type, body and Retry-After."""

    status: int
    reason: str
    content_type: str
    body: bytes
    retry_after: float | None = None
    attempts: int = 1

    def json(self) -> Any:
        return json.loads(self.body)


class Server:
    """The requests of one tracking server: credentials, the timeout, and a shared stop flag."""

    def __init__(self, src: MlflowSource, timeout: float | None = None) -> None:
        from mlflow.utils.credentials import get_default_host_creds

        remember_uri(src.target)
        self.creds = get_default_host_creds(src.target)
        self.label = src.label
        self.timeout = resolve_timeout(timeout)
        self.stopped = threading.Event()
        self.failure: str | None = None

    def reset(self) -> None:
        """Forget an earlier failure (a watcher polls the same server again later)."""
        self.failure = None
        self.stopped.clear()

    def stop(self, error: BaseException) -> None:
        """Make every pending and later request of this server fail with ``error``'s message."""
        if self.failure is None:
            self.failure = str(error)
        self.stopped.set()

    def request(self, method: str, endpoint: str, payload: dict, policy: RetryPolicy) -> Answer:
        """One request, retried as :func:`~saturate.ingest.http_retry.with_retries` says, within
        one deadline; the answer of the last attempt (any status), or SourceError naming the
        cause."""
        end = time.monotonic() + self.timeout

        def attempt() -> Answer:
            self._check_stopped()
            return self._attempt(method, endpoint, payload, policy, end)

        try:
            answer, attempts = with_retries(attempt, policy, end,
                                            status=lambda a: (a.status, a.retry_after))
        except Failed as why:
            raise self._fail(endpoint, why.cause, why.attempts) from None
        return dataclasses.replace(answer, attempts=attempts)

    def _check_stopped(self) -> None:
        if self.stopped.is_set():
            raise SourceError(self.failure or f"{self.label}: reading stopped")

    def _fail(self, endpoint: str, cause: str, attempts: int) -> SourceError:
        if self.stopped.is_set():
            return SourceError(self.failure or f"{self.label}: reading stopped")
        tries = f", after {attempts} attempts" if attempts > 1 else ""
        if cause == "timed out":
            error = SourceError(f"the MLflow server {self.label} timed out: no complete answer to "
                                f"{endpoint} within {self.timeout:g} s{tries[1:]} (--timeout, "
                                f"${TIMEOUT_ENV})")
        elif cause.startswith("the answer"):
            error = SourceError(f"the MLflow server {self.label} broke off its answer to "
                                f"{endpoint}: {cause}{tries}")
        else:
            error = SourceError(f"cannot reach the MLflow server {self.label}: {cause} ({endpoint}"
                                f"{tries})")  # fmt: skip
        self.stop(error)
        return error

    def _attempt(
        self, method: str, endpoint: str, payload: dict, policy: RetryPolicy, end: float
    ) -> Answer:
        left = end - time.monotonic()
        if left <= 0:
            raise Failed("timed out", False)
        resp = self._send(method, endpoint, payload, min(policy.connect_timeout, left), end)
        try:
            body = _read_body(resp, end, self.stopped)
        finally:
            resp.close()
        return Answer(resp.status_code, str(resp.reason or ""),
                      str(resp.headers.get("Content-Type", "")), body,
                      retry_after(resp.headers.get("Retry-After")))  # fmt: skip

    def _send(self, method: str, endpoint: str, payload: dict, connect: float, end: float) -> Any:
        """Send and wait for the status and headers in a helper thread, at most until ``end``:
        socket timeouts bound each read, not a server that sends its headers byte by byte."""
        from mlflow.utils.rest_utils import http_request

        body = {"params": payload} if method == "GET" else {"json": payload}
        box: dict[str, Any] = {}
        lock = threading.Lock()
        done = threading.Event()

        def send() -> None:
            try:
                resp = http_request(
                    self.creds, endpoint, method, max_retries=0, backoff_factor=0,
                    backoff_jitter=0, timeout=(connect, max(end - time.monotonic(), 0.01)),
                    raise_on_status=False, respect_retry_after_header=False, stream=True, **body,
                )  # fmt: skip
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = exc
            else:
                with lock:
                    if box.get("abandoned"):
                        resp.close()
                    else:
                        box["resp"] = resp
            finally:
                done.set()

        threading.Thread(target=send, name="saturate-http", daemon=True).start()
        if not done.wait(max(end - time.monotonic(), 0.0)):
            with lock:
                box["abandoned"] = True
                late = box.pop("resp", None)
            if late is not None:
                late.close()
            raise Failed("timed out", False)
        if "error" in box:
            raise Failed(*cause_of(box["error"])) from None
        return box["resp"]


def _socket_of(resp: Any) -> socket.socket | None:
    conn = getattr(getattr(resp, "raw", None), "connection", None)
    sock = getattr(conn, "sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _read_body(resp: Any, end: float, stopped: threading.Event) -> bytes:
    """The whole body, each read bounded by the time left, so a trickle ends at the deadline."""
    sock = _socket_of(resp)
    parts: list[bytes] = []
    size = 0
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise Failed("timed out", False)
        if stopped.is_set():
            raise Failed("stopped", False)
        if sock is not None:
            sock.settimeout(left)
        try:
            chunk = resp.raw.read1(_CHUNK)
        except Exception as exc:  # noqa: BLE001 - any read failure is mapped to its cause
            cause, retry = cause_of(exc)
            if cause in ("the answer was cut off", "connection reset by the server"):
                raise Failed(f"the answer was cut off after {size} bytes", True) from None
            raise Failed(cause, retry) from None
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)


# A fetched curve: (run_id, metric key, steps, values, timestamps).
Curve = tuple[str, str, list, list, list]


# ---- the answers, declared (pydantic): a wrong field is named by its path -----------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    names = {bool: "a boolean", int: "an integer", float: "a number", list: "a list",
             dict: "an object"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def _id(v: Any) -> str:
    """An id: a non-empty string, or an integer (older servers' experiment ids)."""
    if type(v) is str and v:
        return v
    if type(v) is int:
        return str(v)
    raise PydanticCustomError("shape", "expected {expected}",
                              {"expected": "an id (a non-empty string)"})


def _text(v: Any) -> Any:
    return "" if v is None else v


# proto3's JSON as MLflow writes it: a field at its default is left out (0, "", NaN); int64s may
# be decimal strings and doubles "NaN" or "Infinity" (pydantic's lax mode reads both). A required
# key is checked as null when missing, so that its error says what it should have been.
Int = Annotated[int, Field(default=0)]
Num = Annotated[float, Field(default=math.nan)]
Str = Annotated[str, Field(default=None, validate_default=True)]
Text = Annotated[str, BeforeValidator(_text), Field(default="")]
Id = Annotated[str, PlainValidator(_id), Field(default=None, validate_default=True)]
Token = Annotated[str | None, AfterValidator(lambda v: v or None), Field(default=None)]
_T = TypeVar("_T")
Items = Annotated[list[_T], BeforeValidator(lambda v: [] if v is None else v),
                  Field(default_factory=list)]


class _Answer(BaseModel):
    """A part of an answer: unknown fields are ignored (a newer server adds some)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ExperimentItem(_Answer):
    experiment_id: Id
    name: Text
    lifecycle_stage: Text


class Pair(_Answer):
    key: Str
    value: Text


class LatestMetric(_Answer):
    key: Str
    step: Int
    timestamp: Int


class RunInfo(_Answer):
    run_id: Id
    experiment_id: Id
    run_name: Text
    status: Text
    user_id: Text
    artifact_uri: Text
    lifecycle_stage: Text
    start_time: Int
    end_time: Annotated[int | None, AfterValidator(lambda v: v or None), Field(default=None)]

    @model_validator(mode="before")
    @classmethod
    def _older_name(cls, v: Any) -> Any:
        """Older servers name the run's id ``run_uuid``."""
        if isinstance(v, dict) and not v.get("run_id") and v.get("run_uuid"):
            return {**v, "run_id": v["run_uuid"]}
        return v


def _empty(v: Any) -> Any:
    """A missing or null object is an empty one."""
    return {} if v is None else v


class RunData(_Answer):
    params: Items[Pair]
    tags: Items[Pair]
    metrics: Items[LatestMetric]


class RunItem(_Answer):
    info: Annotated[RunInfo, BeforeValidator(_empty), Field(default=None, validate_default=True)]
    data: Annotated[RunData, BeforeValidator(_empty), Field(default=None, validate_default=True)]

    def meta(self) -> RunMeta:
        info, data = self.info, self.data
        return RunMeta(
            run_id=info.run_id, experiment_id=info.experiment_id, name=info.run_name,
            status=info.status, params={p.key: p.value for p in data.params},
            tags={t.key: t.value for t in data.tags}, start_time=info.start_time,
            end_time=info.end_time, user_id=info.user_id, artifact_uri=info.artifact_uri,
        )  # fmt: skip


class Point(_Answer):
    step: Int
    value: Num
    timestamp: Int


class BulkPoint(Point):
    run_id: Str


class Page(_Answer):
    """One page of a listing: the next page's token; each listing's items are checked as a list
    here, each item once every page is read (so an item is named by its place in the listing)."""

    next_page_token: Token


class ExperimentsPage(Page):
    experiments: Items[Any]


class RunsPage(Page):
    runs: Items[Any]


class PointsPage(Page):
    metrics: Items[Any]


_PAGES: dict[str, TypeAdapter[Any]] = {
    "experiments": TypeAdapter(ExperimentsPage), "runs": TypeAdapter(RunsPage),
    "metrics": TypeAdapter(PointsPage)}
_EXPERIMENTS = TypeAdapter(list[ExperimentItem])
_RUNS = TypeAdapter(list[RunItem])
_POINTS = TypeAdapter(list[Point])
_BULK_POINTS = TypeAdapter(list[BulkPoint])


class Shape:
    """Where an answer came from, to name it when it has the wrong shape."""

    def __init__(self, label: str, endpoint: str) -> None:
        self.label = label
        self.endpoint = endpoint

    def fail(self, where: str, expected: str, got: Any) -> SourceError:
        return SourceError(
            f"{self.label}: the answer to {self.endpoint} is not what an MLflow tracking server "
            f"sends ({where}: expected {expected}, got {_kind(got)})"
        )

    def read(self, adapter: TypeAdapter[_T], data: Any, where: str = "") -> _T:
        """``data`` through ``adapter``; the first wrong field is named by its path below
        ``where`` (``runs[0].info.experiment_id``)."""
        try:
            return adapter.validate_python(data)
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            path = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                                   for p in first["loc"])
            kind = first["type"]
            expected = (first.get("ctx", {}).get("expected") or _EXPECTED.get(kind)
                        or _EXPECTED.get(kind.split("_")[0]) or first["msg"])
            raise self.fail(path.lstrip(".") or "the answer", expected,
                            first.get("input")) from None


# pydantic's error types (or their first word: int_parsing, float_type...) in these words
_EXPECTED = {"list_type": "a list", "model_type": "an object", "dict_type": "an object",
             "int": "an integer", "float": "a number", "string": "a string"}


def page(data: Any, field: str, shape: Shape) -> tuple[list, str | None]:
    """(the items of ``field``, the next page token) of one answer."""
    answer = shape.read(_PAGES[field], data)
    return getattr(answer, field), answer.next_page_token


def experiments(items: list, shape: Shape) -> list[Experiment]:
    return [Experiment(e.experiment_id, e.name, e.lifecycle_stage != "deleted")
            for e in shape.read(_EXPERIMENTS, items, "experiments")]


def runs_of(items: list, shape: Shape) -> list[RunItem]:
    """The items of a runs/search answer, checked."""
    return shape.read(_RUNS, items, "runs")


def latest_points(run: RunItem) -> dict[str, tuple[int, int]]:
    """{metric key: latest (step, timestamp)} of a runs/search item."""
    return {m.key: (m.step, m.timestamp) for m in run.data.metrics}


def history(points: list, shape: Shape) -> tuple[list, list, list]:
    """(steps, values, timestamps) of the points of one curve."""
    checked = shape.read(_POINTS, points, "metrics")
    return ([p.step for p in checked], [p.value for p in checked],
            [p.timestamp for p in checked])


def bulk_history(points: list, runs: list[str], shape: Shape
                 ) -> dict[str, tuple[list, list, list]]:
    """(steps, values, timestamps) of each run of a bulk answer (every asked run present, maybe
    empty)."""
    by_run: dict[str, tuple[list, list, list]] = {r: ([], [], []) for r in runs}
    for p in shape.read(_BULK_POINTS, points, "metrics"):
        steps, values, stamps = by_run.setdefault(p.run_id, ([], [], []))
        steps.append(p.step)
        values.append(p.value)
        stamps.append(p.timestamp)
    return by_run


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
    :class:`~saturate.ingest.mlflow_client.Server`, answers checked by status and shape."""

    def __init__(self, src: MlflowSource, timeout: float | None = None) -> None:
        self.server = Server(src, timeout)
        self.label = src.label

    def call(self, method: str, endpoint: str, payload: dict, policy: RetryPolicy = READ, *,
             missing_ok: bool = False) -> Any:
        """One request's JSON (read by the caller's models); ``missing_ok``: None when the server
        lacks the endpoint (404/405/501)."""
        answer = self.server.request(method, endpoint, payload, policy)
        if missing_ok and answer.status in (404, 405, 501):
            return None
        return self._check(answer, endpoint, payload)

    def _check(self, answer: Answer, endpoint: str, payload: dict) -> Any:
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

    def pages(self, method: str, endpoint: str, payload: dict, field: str,
              policy: RetryPolicy = READ) -> list:
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


def gather(jobs: Sequence[Callable[[], list[Curve]]], max_workers: int,
           on_error: Callable[[BaseException], None] | None = None) -> pd.DataFrame:
    """Run the fetch jobs over a bounded pool and stack their curves. The first job to fail gives
    the error; ``on_error`` hears it at once (to stop the others); jobs not started are dropped."""
    if max_workers == 1 or len(jobs) <= 1:
        results = [job() for job in jobs]
    else:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(jobs))) as pool:
            futures = [pool.submit(job) for job in jobs]
            wait(futures, return_when=FIRST_EXCEPTION)
            failed = [e for f in futures if f.done() and not f.cancelled() and (e := f.exception())]
            if failed:
                error = failed[0]
                if on_error is not None:
                    on_error(error)
                for f in futures:
                    f.cancel()
                raise error
            results = [f.result() for f in futures]
    return stack_curves([c for res in results for c in res], restore=True)


class Histories:
    """Full metric histories from a server: the public get-history call per (run, metric), or,
    when ``bulk``, the server's bulk call (up to 100 runs of one metric). That call stops at
    25,000 points, so its answer is kept only below the cap and holding each run's latest point;
    otherwise the batch is split, down to the public call for a single run.
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
        curves = [(r, key, *by_run[r]) for r in runs]
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

    def jobs(self, wanted: dict[str, dict[str, tuple[int, int]]]
             ) -> list[Callable[[], list[Curve]]]:
        """Fetch jobs for {metric key: {run_id: latest (step, timestamp)}}."""
        jobs: list[Callable[[], list[Curve]]] = []
        for key, latest in sorted(wanted.items()):
            runs = sorted(latest)
            if not self.bulk:
                jobs += [functools.partial(self.one, r, key) for r in runs]
                continue
            batch: list[str] = []
            size = 0
            for r in runs:
                est = latest[r][0] + 1
                if batch and (len(batch) == _BULK_RUNS or size + est > _BULK_TARGET):
                    jobs.append(functools.partial(self.many, key, batch, latest))
                    batch, size = [], 0
                batch.append(r)
                size += est
            if batch:
                jobs.append(functools.partial(self.many, key, batch, latest))
        return jobs


def search_experiments(rest: RestReader, selection: Selection) -> list[Experiment]:
    """The experiments the selection names (all active ones by default); the source's first
    request, so it fails fast on a dead server."""
    endpoint = "/api/2.0/mlflow/experiments/search"
    raw = rest.pages("POST", endpoint, {"max_results": _PAGE, "view_type": "ALL"}, "experiments",
                     PROBE)  # fmt: skip
    available = experiments(raw, Shape(rest.label, endpoint))
    return pick_experiments(available, selection.experiment, rest.label)


def search_runs(rest: RestReader, exps: Sequence[Experiment], filter_string: str | None
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
        for run in runs_of(rest.pages("POST", endpoint, payload, "runs"), shape):
            if run.info.lifecycle_stage != "deleted":
                out.append((run.meta(), latest_points(run)))
    return out


def read_rest(src: MlflowSource, selection: Selection, *, max_workers: int = 8, fast: bool = True,
              timeout: float | None = None) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected runs and full histories from a tracking server (``fast``: the bulk
    history call; ``timeout``: seconds per request, retries included). When one request fails
    for good the others stop, so a dead server is given up on within about one timeout."""
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


def read_with_client(tracking_uri: str, selection: Selection, *, label: str, max_workers: int = 1
                     ) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """The same through ``MlflowClient`` on a local store (the slower, schema-agnostic route)."""
    from mlflow import MlflowClient
    from mlflow.entities import ViewType
    from mlflow.exceptions import MlflowException

    client = None
    try:
        client = MlflowClient(tracking_uri=tracking_uri)
        available = [Experiment(e.experiment_id, e.name, e.lifecycle_stage != "deleted")
                     for e in _client_pages(client.search_experiments, view_type=ViewType.ALL)]
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
        raise SourceError(f"{label}: MLflow could not read the store ({first_line(err.message)})"
                          ) from None
    except SQLAlchemyError as err:
        reason = first_line(getattr(err, "orig", err))
        raise SourceError(f"{label}: MLflow could not read the store ({reason})") from None
    finally:
        _release(client)
    return exps, runs, points


def _release(client: object) -> None:
    """Close the pooled connections of the engine MLflow caches per URI for the whole process
    (idle sessions on the user's server, a handle on a deleted snapshot); it reconnects."""
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    engine = getattr(store, "engine", None)
    if engine is not None and callable(getattr(engine, "dispose", None)):
        engine.dispose()


def _client_pages(search: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
    """Every item an MlflowClient search finds, page after page."""
    token = None
    while True:
        found = search(*args, max_results=_PAGE, page_token=token, **kwargs)
        yield from found
        token = found.token
        if not token:
            return


def _client_runs(client: MlflowClient, exp_ids: list[str], selection: Selection
                 ) -> tuple[list[RunMeta], list[tuple[str, str]]]:
    from mlflow.entities import ViewType

    runs: list[RunMeta] = []
    tasks: list[tuple[str, str]] = []
    for i in range(0, len(exp_ids), _EXP_CHUNK):
        found = _client_pages(client.search_runs, exp_ids[i : i + _EXP_CHUNK],
                              filter_string=selection.filter or "",
                              run_view_type=ViewType.ACTIVE_ONLY)
        for run in found:
            info = run.info
            meta = RunMeta.of(
                info.run_id, info.experiment_id, info.run_name, info.status,
                params=run.data.params, tags=run.data.tags, start_time=info.start_time,
                end_time=info.end_time, user_id=info.user_id, artifact_uri=info.artifact_uri,
            )  # fmt: skip
            runs.append(meta)
            keys = sorted(run.data.metrics)
            tasks.extend((meta.run_id, k) for k in keys if selection.wants_metric(k))
    return runs, tasks
