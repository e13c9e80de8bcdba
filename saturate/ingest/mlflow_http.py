"""HTTP to an MLflow tracking server with one deadline per request and the true cause of a failure.

MLflow's ``http_request`` sends each attempt (so its credentials, TLS settings and auth plugins
apply) with its own retries turned off; this module adds what it lacks:

* one **deadline per request**: connecting, waiting for the answer, reading it to the last byte,
  retries and ``Retry-After`` waits included, all end within ``timeout`` seconds (default 120,
  ``$SATURATE_TIMEOUT``). A server that accepts and never answers, or trickles its answer a byte
  at a time, is given up on at the deadline with "timed out";
* bounded **retries** of refused or reset connections and of HTTP 429/5xx answers, with
  exponential backoff, ``Retry-After`` honoured up to :data:`MAX_RETRY_AFTER` seconds and never
  past the deadline;
* the **cause** in words: timed out, connection refused, host not found, connection reset, TLS
  failure, an answer cut off, HTML instead of JSON, invalid JSON;
* **no credentials** in any message (:func:`saturate.ingest.redaction.redact`).

:class:`Answer` is what one request returns; :mod:`saturate.ingest.mlflow_client` checks its
status and shape. A :class:`Server` is shared by the requests of one source: once one of them
fails for good, the others stop at their next step, so a source that stops answering is given
up on within one deadline rather than one deadline per pending request.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from saturate.errors import SettingsError, SourceError
from saturate.ingest.mlflow_common import MlflowSource
from saturate.ingest.redaction import redact, remember_uri

DEFAULT_TIMEOUT = 120.0
TIMEOUT_ENV = "SATURATE_TIMEOUT"
MAX_RETRY_AFTER = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_CHUNK = 1 << 16


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of one request: waits ``backoff * (1, 2, 4, ...)`` s between attempts; a connect
    attempt is given at most ``connect_timeout`` s (the request's deadline bounds the rest)."""

    max_retries: int
    backoff: float
    connect_timeout: float


# The first request of a source fails fast on a dead server; later ones retry a little longer.
PROBE = RetryPolicy(max_retries=2, backoff=0.5, connect_timeout=4.0)
READ = RetryPolicy(max_retries=4, backoff=0.5, connect_timeout=10.0)


def resolve_timeout(timeout: float | str | None = None) -> float:
    """``timeout`` seconds, else ``$SATURATE_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`; checked."""
    name = "timeout"
    if timeout is None:
        timeout = os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT
        name = f"${TIMEOUT_ENV}" if os.environ.get(TIMEOUT_ENV) else name
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a number of seconds, got {timeout!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise SettingsError(f"{name} must be a positive number of seconds, got {timeout!r}")
    return value


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


class _Failed(Exception):
    """One attempt failed: ``cause`` in words, ``retry`` whether another attempt may help."""

    def __init__(self, cause: str, retry: bool) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry = retry


def _chain(err: BaseException) -> list[BaseException]:
    """``err`` and every exception behind it (causes, contexts, urllib3 reasons, wrapped args)."""
    seen: list[BaseException] = []
    todo: list[object] = [err]
    while todo:
        e = todo.pop(0)
        if not isinstance(e, BaseException) or any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__, getattr(e, "reason", None), *getattr(e, "args", ())]
    return seen


def cause_of(err: BaseException) -> tuple[str, bool]:
    """(the cause of a failed attempt in words, whether retrying may help), from the exception
    chain of MLflow, requests, urllib3 and the socket layer."""
    import requests
    import urllib3.exceptions as u3

    chain = _chain(err)
    names = " ".join(type(e).__name__ for e in chain) + " " + " ".join(map(repr, chain))

    def has(*types: type) -> bool:
        return any(isinstance(e, types) for e in chain)

    if has(ConnectionRefusedError) or "Connection refused" in names:
        return "connection refused", True
    if has(socket.gaierror) or "NameResolution" in names:
        return "host not found", False
    if has(requests.exceptions.SSLError, u3.SSLError):
        return "TLS handshake failed", False
    if has(ConnectionResetError, BrokenPipeError) or "RemoteDisconnected" in names:
        return "connection reset by the server", True
    if "IncompleteRead" in names:
        return "the answer was cut off", True
    # urllib3's NewConnectionError is a ConnectTimeoutError, so timeouts are checked last.
    if has(socket.timeout, TimeoutError, requests.exceptions.Timeout, u3.TimeoutError):
        return "timed out", False
    if has(requests.exceptions.InvalidURL):
        return "invalid URL", False
    if has(requests.exceptions.ConnectionError, u3.HTTPError):
        return "connection failed", True
    return redact(f"{type(err).__name__}: {err}".splitlines()[0])[:200], False


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


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
        """One request, retried as :class:`RetryPolicy` says, within one deadline; the answer of
        the last attempt (any status), or SourceError naming the cause."""
        end = time.monotonic() + self.timeout
        attempt = 0
        while True:
            self._check_stopped()
            wait = policy.backoff * 2.0**attempt
            try:
                answer = self._attempt(method, endpoint, payload, policy, end)
            except _Failed as why:
                if not why.retry or attempt >= policy.max_retries or time.monotonic() + wait >= end:
                    raise self._fail(endpoint, why.cause, attempt) from None
            else:
                answer = dataclasses.replace(answer, attempts=attempt + 1)
                if answer.status not in RETRY_STATUSES or attempt >= policy.max_retries:
                    return answer
                if answer.retry_after is not None:
                    wait = min(answer.retry_after, MAX_RETRY_AFTER)
                if time.monotonic() + wait >= end:
                    return answer
            time.sleep(wait)
            attempt += 1

    def _check_stopped(self) -> None:
        if self.stopped.is_set():
            raise SourceError(self.failure or f"{self.label}: reading stopped")

    def _fail(self, endpoint: str, cause: str, attempt: int) -> SourceError:
        if self.stopped.is_set():
            return SourceError(self.failure or f"{self.label}: reading stopped")
        tries = f", after {attempt + 1} attempts" if attempt else ""
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
            raise _Failed("timed out", False)
        resp = self._send(method, endpoint, payload, min(policy.connect_timeout, left), end)
        try:
            body = _read_body(resp, end, self.stopped)
        finally:
            resp.close()
        return Answer(resp.status_code, str(resp.reason or ""),
                      str(resp.headers.get("Content-Type", "")), body,
                      _retry_after(resp.headers.get("Retry-After")))  # fmt: skip

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
            raise _Failed("timed out", False)
        if "error" in box:
            raise _Failed(*cause_of(box["error"])) from None
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
            raise _Failed("timed out", False)
        if stopped.is_set():
            raise _Failed("stopped", False)
        if sock is not None:
            sock.settimeout(left)
        try:
            chunk = resp.raw.read1(_CHUNK)
        except Exception as exc:  # noqa: BLE001 - any read failure is mapped to its cause
            cause, retry = cause_of(exc)
            if cause in ("the answer was cut off", "connection reset by the server"):
                raise _Failed(f"the answer was cut off after {size} bytes", True) from None
            raise _Failed(cause, retry) from None
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
