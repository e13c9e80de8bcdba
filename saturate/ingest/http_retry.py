"""One rule for retrying the HTTP calls saturate makes (an MLflow server's REST calls, W&B's API,
the webhook of ``watch --notify``): which failures may pass on another attempt, how long to wait
before it, and one deadline over all attempts.

Retried: an attempt that timed out (when time is left), a connection reset or an answer cut off,
HTTP 408, 500, 502, 503 and 504, and 429 when the server says when to come back (Retry-After).
Not retried: a refused connection (nothing listens at that address: the URL is wrong or the server
is down, and a second later that is still so), a host not found, a failed TLS handshake, and
every other status. A Retry-After is waited for when it is at most :data:`MAX_RETRY_AFTER` and
ends before the deadline; otherwise the answer is returned at once, to be reported.

:func:`check_listening` finds in milliseconds that nothing listens at a server's address, so a
command can say so before it spends seconds importing its readers. This module imports nothing
heavy (``requests`` only inside :func:`cause_of`): the CLI calls it first.
"""

from __future__ import annotations

import http.client
import socket
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from saturate.errors import SourceError
from saturate.ingest.redaction import redact, redact_uri

#: The longest Retry-After waited for, in seconds; a server asking for more is reported at once.
MAX_RETRY_AFTER = 60.0
#: Statuses another attempt may mend (429 too, when it comes with a Retry-After).
RETRY_STATUSES = frozenset({408, 500, 502, 503, 504})
#: The cause :func:`cause_of` gives a refused connection.
REFUSED = "connection refused"

T = TypeVar("T")


class Failed(Exception):
    """One attempt failed: ``cause`` in words, ``retry`` whether another attempt may pass;
    ``attempts``: how many were made, set by :func:`with_retries` when it gives up."""

    def __init__(self, cause: str, retry: bool) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry = retry
        self.attempts = 1


@dataclass(frozen=True)
class RetryPolicy:
    """Up to ``max_retries`` attempts after the first, the n-th ``backoff * 2**(n-1)`` seconds
    after the one before (or after the server's Retry-After); one attempt waits at most
    ``connect_timeout`` seconds to connect (the deadline bounds the rest)."""

    max_retries: int
    backoff: float
    connect_timeout: float = 10.0

    def pause(self, done: int, deadline: float, retry_after: float | None = None) -> float | None:
        """Seconds to wait after ``done`` attempts before the next one; None when there is no
        next one (none left, a Retry-After over :data:`MAX_RETRY_AFTER`, or the wait would reach
        the ``deadline``, a :func:`time.monotonic` time)."""
        if done > self.max_retries:
            return None
        wait = self.backoff * 2.0 ** (done - 1) if retry_after is None else retry_after
        if wait > MAX_RETRY_AFTER or time.monotonic() + wait >= deadline:
            return None
        return wait


def retryable(status: int, retry_after: float | None = None) -> bool:
    """Whether an answer with this status may be different on another attempt."""
    return status in RETRY_STATUSES or (status == 429 and retry_after is not None)


def with_retries(
    attempt: Callable[[], T], policy: RetryPolicy, deadline: float, *,
    status: Callable[[T], tuple[int, float | None]] | None = None,
    sleep: Callable[[float], object] = time.sleep,
) -> tuple[T, int]:  # fmt: skip
    """Call ``attempt()`` until its answer needs no retry or no retry is left before ``deadline``
    (a :func:`time.monotonic` time): (the last answer, the attempts made).

    An attempt fails by raising :class:`Failed`; the last failure is raised, its ``attempts``
    set; any other exception goes through at once. ``status`` gives an answer's HTTP status and
    Retry-After (seconds or None): answers of a :func:`retryable` status are tried again.
    """
    done = 0
    while True:
        done += 1
        try:
            answer = attempt()
        except Failed as failed:
            failed.attempts = done
            wait = policy.pause(done, deadline) if failed.retry else None
            if wait is None:
                raise
        else:
            code, after = status(answer) if status is not None else (200, None)
            wait = policy.pause(done, deadline, after) if retryable(code, after) else None
            if wait is None:
                return answer, done
        sleep(wait)


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks to wait (a number or an HTTP date); None when absent
    or unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError, IndexError):
            return None
    return max(0.0, seconds) if seconds == seconds else None  # NaN: unreadable


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
    """(the cause of a failed attempt in words, whether another attempt may pass), from the
    exception chain of MLflow, requests, urllib3, urllib and the socket layer."""
    import requests
    import urllib3.exceptions as u3

    chain = _chain(err)
    names = " ".join(type(e).__name__ for e in chain) + " " + " ".join(map(repr, chain))

    def has(*types: type) -> bool:
        return any(isinstance(e, types) for e in chain)

    if has(ConnectionRefusedError) or "Connection refused" in names:
        return REFUSED, False
    if has(socket.gaierror) or "NameResolution" in names:
        return "host not found", False
    if has(requests.exceptions.SSLError, u3.SSLError):
        return "TLS handshake failed", False
    if has(ConnectionResetError, BrokenPipeError) or "RemoteDisconnected" in names:
        return "connection reset by the server", True
    if "IncompleteRead" in names:
        return "the answer was cut off", True
    if has(http.client.BadStatusLine, http.client.LineTooLong):
        return "the answer is not HTTP", False
    # urllib3's NewConnectionError is a ConnectTimeoutError, so timeouts are checked after it.
    if has(socket.timeout, TimeoutError, requests.exceptions.Timeout, u3.TimeoutError):
        return "timed out", True
    if has(requests.exceptions.InvalidURL):
        return "invalid URL", False
    if has(requests.exceptions.ConnectionError, u3.HTTPError):
        return "connection failed", True
    return redact(f"{type(err).__name__}: {err}".splitlines()[0])[:200], False


def _behind_proxy(scheme: str, host: str) -> bool:
    proxies = urllib.request.getproxies_environment()
    return bool(proxies.get(scheme) or proxies.get("all")) and not (
        # typeshed leaves this stdlib function out (it is undocumented but public since 3.0)
        urllib.request.proxy_bypass_environment(host, proxies))  # type: ignore[attr-defined]


def _address(url: str) -> tuple[str, int] | None:
    """(host, port) of an ``http(s)://`` URL; None when it has none or is malformed."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        return None
    return (parts.hostname, port) if parts.hostname and port else None


def refused(url: str, timeout: float = 1.0) -> bool:
    """Whether every address of ``url``'s host refuses a TCP connection on its port: nothing
    listens there. False when anything answers, when unsure (a timeout, a name not found, a
    malformed URL: the read says what is wrong) and when a proxy stands in between."""
    address = _address(url)
    if address is None or _behind_proxy(urllib.parse.urlsplit(url).scheme.lower(), address[0]):
        return False
    try:
        found = socket.getaddrinfo(*address, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return False
    for family, kind, proto, _name, sockaddr in found:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout)
                sock.connect(sockaddr)
        except ConnectionRefusedError:
            continue
        except OSError:
            return False
        return False
    return bool(found)


def check_listening(sources: Iterable[str], what: str = "the MLflow server") -> None:
    """A :class:`~saturate.errors.SourceError` for the first ``http(s)://`` source that nothing
    listens at (:func:`refused`), said as a read would say it; other sources are left alone."""
    for source in sources:
        if not (isinstance(source, str) and source.lower().startswith(("http://", "https://"))):
            continue
        if refused(source):
            host, port = _address(source) or ("", 0)
            raise SourceError(f"cannot reach {what} {redact_uri(source).rstrip('/')}: {REFUSED} "
                              f"(nothing listens on {host} port {port})")
