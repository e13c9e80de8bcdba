"""The one retry rule of saturate's HTTP calls (saturate/ingest/http_retry.py): what is tried again,
after how long, within one deadline; and the check that nothing listens at a server's address.
The servers' side is tested where it is used (test_mlflow_faults.py, test_notify_webhook.py,
test_wandb_api.py); here the rule itself, attempt by attempt."""

from __future__ import annotations

import socket
import time
from email.utils import formatdate

import pytest
from mlflow_server import free_port

from saturate.errors import SourceError
from saturate.ingest.http_retry import (
    MAX_RETRY_AFTER,
    Failed,
    RetryPolicy,
    cause_of,
    check_listening,
    refused,
    retry_after,
    with_retries,
)

POLICY = RetryPolicy(max_retries=3, backoff=0.5)


def _script(*outcomes):
    """An attempt that gives (or raises) ``outcomes`` in turn; ``calls`` counts them."""
    todo = list(outcomes)
    calls = []

    def attempt():
        calls.append(1)
        out = todo.pop(0)
        if isinstance(out, BaseException):
            raise out
        return out

    return attempt, calls


def _run(attempt, deadline_in=100.0, policy=POLICY):
    waits: list[float] = []
    result = with_retries(attempt, policy, time.monotonic() + deadline_in,
                          status=lambda a: a, sleep=waits.append)
    return result, waits


def test_passing_failures_and_statuses_are_retried_with_doubling_waits():
    attempt, _ = _script(Failed("connection reset by the server", True), (503, None), (500, None),
                         (200, None))
    (answer, attempts), waits = _run(attempt)
    assert answer == (200, None) and attempts == 4 and waits == [0.5, 1.0, 2.0]


def test_the_last_answer_is_returned_when_the_retries_are_spent():
    attempt, calls = _script(*[(502, None)] * 10)
    (answer, attempts), waits = _run(attempt)
    assert answer == (502, None) and attempts == 4 == len(calls) and len(waits) == 3


@pytest.mark.parametrize("cause", ["connection refused", "host not found", "TLS handshake failed"])
def test_a_failure_that_cannot_pass_is_raised_at_once(cause):
    attempt, calls = _script(Failed(cause, False), (200, None))
    with pytest.raises(Failed) as info:
        _run(attempt)
    assert (info.value.cause, info.value.attempts, len(calls)) == (cause, 1, 1)


@pytest.mark.parametrize("status", [400, 401, 404, 409, 501])
def test_a_status_that_cannot_change_is_returned_at_once(status):
    attempt, calls = _script((status, None), (200, None))
    (answer, attempts), waits = _run(attempt)
    assert answer == (status, None) and attempts == 1 and waits == []


def test_retry_after_replaces_the_backoff_and_makes_a_429_retryable():
    attempt, _ = _script((429, 3.0), (503, 0.0), (200, None))
    (answer, attempts), waits = _run(attempt)
    assert answer == (200, None) and waits == [3.0, 0.0]
    attempt, _ = _script((429, None), (200, None))  # rate-limited, no word on when: reported
    assert _run(attempt)[0] == ((429, None), 1)


def test_no_wait_reaches_past_the_deadline_or_the_cap():
    attempt, _ = _script((503, 5.0), (200, None))
    assert _run(attempt, deadline_in=4.0)[0] == ((503, 5.0), 1)  # Retry-After beyond the deadline
    attempt, _ = _script((503, MAX_RETRY_AFTER + 1), (200, None))
    assert _run(attempt, deadline_in=1e6)[0][1] == 1  # beyond what saturate waits
    attempt, _ = _script(Failed("timed out", True), (200, None))
    with pytest.raises(Failed, match="timed out"):
        _run(attempt, deadline_in=0.4)  # the 0.5 s back-off would end after the deadline


def test_other_exceptions_go_through_untouched():
    attempt, calls = _script(SourceError("stopped"), (200, None))
    with pytest.raises(SourceError, match="stopped"):
        _run(attempt)
    assert len(calls) == 1


@pytest.mark.parametrize(("header", "seconds"), [
    ("7", 7.0), ("2.5", 2.5), ("-3", 0.0), ("", None), (None, None), ("soon", None),
    ("nan", None),
])  # fmt: skip
def test_retry_after_headers_are_read(header, seconds):
    assert retry_after(header) == seconds


def test_retry_after_as_a_date():
    assert 25 < retry_after(formatdate(time.time() + 30, usegmt=True)) <= 30
    assert retry_after(formatdate(time.time() - 30, usegmt=True)) == 0.0


def test_causes_say_what_may_pass():
    assert cause_of(ConnectionRefusedError(111, "Connection refused")) == ("connection refused",
                                                                           False)
    assert cause_of(socket.gaierror(-2, "Name or service not known")) == ("host not found", False)
    assert cause_of(ConnectionResetError(104, "reset")) == ("connection reset by the server", True)
    assert cause_of(TimeoutError("timed out")) == ("timed out", True)


def test_refused_tells_nothing_listening_from_anything_else(monkeypatch):
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    port = free_port()
    assert refused(f"http://127.0.0.1:{port}/api")
    assert refused(f"http://localhost:{port}")  # every address of the name refuses
    with socket.create_server(("127.0.0.1", 0)) as server:
        assert not refused(f"http://127.0.0.1:{server.getsockname()[1]}")
    for unsure in ("http://127.0.0.1:99999", "http://", "not a url", "http://[::1"):
        assert not refused(unsure)  # the read itself says what is wrong
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
    assert not refused(f"http://127.0.0.1:{port}")  # a proxy in between: its call
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert refused(f"http://127.0.0.1:{port}")


def test_check_listening_names_the_server_and_leaves_other_sources_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("HTTP_PROXY", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    port = free_port()
    check_listening([str(tmp_path), "sqlite:///mlflow.db", "wandb://team/rl", ""])
    with pytest.raises(SourceError) as info:
        check_listening([str(tmp_path), f"http://alice:s3cret-pw@127.0.0.1:{port}/"])
    assert str(info.value) == (f"cannot reach the MLflow server http://***@127.0.0.1:{port}: "
                               f"connection refused (nothing listens on 127.0.0.1 port {port})")
