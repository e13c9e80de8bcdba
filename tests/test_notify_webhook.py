"""``watch --notify URL`` is as careful as a file (issue 40): the URL is checked before the first
pass and never shown, names from the data cannot become mentions or links in the team's channel,
a redirect is not a delivery, credentials go as Basic auth, a Retry-After is waited for within the
pass's budget, and nothing a webhook does ends the watcher. Webhooks are local HTTP servers
(tests/webhook_server.py)."""

from __future__ import annotations

import base64
import dataclasses
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from webhook_server import WebhookServer

import saturate
from saturate.cli import app
from saturate.errors import SettingsError
from saturate.tracker.events import Event
from saturate.tracker.notify import Webhook, flavour_of, message

pytestmark = pytest.mark.server  # local webhook servers

STEPS = np.arange(1, 121) * 10
VALUES = 0.8 * (1 - np.exp(-STEPS / 150)) + np.random.default_rng(1).normal(0, 0.005, STEPS.size)
MESSAGE = [{"text": "saturate: run ppo · reward: verdict scaling → saturated · P(pays) 0.23"}]
RUN = "<!channel> [open the report](https://evil.example)"
METRIC = "reward <https://evil.example|open the report>"
EVENT = Event("verdict_changed", "src", "r1", RUN, METRIC, 100.0, "scaling", "saturated")
RUN_URL = "https://mlflow.example/#/experiments/1/runs/r1"
SECRET = WebhookServer.SECRET


def _write(path, n, run="ppo", metric="reward"):
    pd.DataFrame({"run": run, "metric": metric, "step": STEPS[:n],
                  "value": VALUES[:n]}).to_csv(path, index=False)


def _watch(tmp_path, *extra):
    args = ["watch", str(tmp_path / "run.csv"), "--once", "--state", str(tmp_path / "h.db"),
            "--n-boot", "40", *extra]
    return CliRunner().invoke(app, args)


def _two_passes(tmp_path, *extra, run="ppo", metric="reward"):
    """A baseline pass, then one where the verdict changes (events to post)."""
    _write(tmp_path / "run.csv", 8, run, metric)
    first = _watch(tmp_path, *extra)
    assert first.exit_code == 0, first.output
    _write(tmp_path / "run.csv", 120, run, metric)
    return _watch(tmp_path, *extra)


# ---- the URL, checked before the first pass ---------------------------------------------------


@pytest.mark.parametrize(("url", "said"), [
    ("http://127.0.0.1:8/services/T0SECRET B0SECRET/xyzzy", "a space"),
    ("http://127.0.0.1:8/services/T0SECRET\tB0SECRET/xyzzy", "a tab"),
    ("http://127.0.0.1:8/services/T0SECRET/B0SECRÉT/xyzzy", "a non-ASCII character (U+00C9)"),
    ("http://127.0.0.1:8/services/T0SECRET\u00a0/xyzzy", "a non-breaking space"),
    ("http://127.0.0.1:99999/services/T0SECRET/xyzzy", "port '99999' is not a port number"),
    ("http://127.0.0.1:port/services/T0SECRET/xyzzy", "port 'port' is not a port number"),
    ("http://[::1/services/T0SECRET/xyzzy", "host is malformed"),
    ("hooks.example/services/T0SECRET", "http:// or https://"),
])  # fmt: skip
def test_a_bad_url_is_one_error_line_that_never_shows_it(tmp_path, url, said):
    _write(tmp_path / "run.csv", 8)
    res = _watch(tmp_path, "--notify", url)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith("error: --notify") and said in lines[0], lines
    assert "T0SECRET" not in res.output and "Traceback" not in res.output
    assert not (tmp_path / "h.db").exists()  # checked before anything was read or written


# ---- what is posted ---------------------------------------------------------------------------


def test_names_cannot_ping_the_channel_or_post_a_disguised_link(tmp_path):
    with WebhookServer() as hook:
        res = _two_passes(tmp_path, "--notify", hook.url, run=RUN, metric=METRIC)
    assert res.exit_code == 0, res.output
    texts = [p["text"] for p in hook.posts]
    assert texts and all("&lt;!channel&gt;" in t for t in texts)
    assert all("&lt;https://evil.example|open the report&gt;" in t for t in texts)
    assert all(r"\[open the report\](https://evil.example)" in t for t in texts)
    assert not any("<!channel>" in t or "<https://" in t or "[open the report](" in t
                   for t in texts)


@pytest.mark.parametrize(("host", "flavour"), [
    ("hooks.slack.com", "slack"), ("HOOKS.SLACK.COM", "slack"),
    ("contoso.webhook.office.com", "teams"), ("outlook.office.com", "teams"),
    ("prod-12.westus.logic.azure.com", "teams"),
    ("hooks.slack.com.evil.example", "generic"), ("127.0.0.1", "generic"),
])  # fmt: skip
def test_the_markup_is_known_by_the_host(host, flavour):
    assert flavour_of(host) == flavour
    assert Webhook(f"https://{host}/services/{SECRET}").flavour == flavour


def test_each_markup_escapes_its_own_syntax():
    slack = message(EVENT, None, "slack")["text"]
    assert "run &lt;!channel&gt; [open the report](https://evil.example)" in slack
    assert "reward &lt;https://evil.example|open the report&gt;" in slack
    assert "<" not in slack and ">" not in slack
    teams = message(EVENT, None, "teams")["text"]
    assert "&lt;\\!channel&gt;" in teams and "\\[open the report\\]" in teams
    assert "](" not in teams and "<" not in teams
    generic = message(EVENT, None, "generic")["text"]
    assert "&lt;!channel&gt; \\[open the report\\](https://evil.example)" in generic
    for text in (slack, teams, generic):
        assert "verdict scaling → saturated · P(pays) n/a" in text


@pytest.fixture(scope="module")
def curve():
    """A real analysis of a curve with the hostile names."""
    frame = pd.DataFrame({"run": RUN, "metric": METRIC, "step": STEPS[:8], "value": VALUES[:8]})
    with pytest.warns(UserWarning):  # no compute axis: on the step
        return saturate.analyze(frame, n_boot=40).curves[0]


def _with_run_url(curve, url):
    """``curve`` with a link to its run's page (the field once results have it)."""
    if any(f.name == "run_url" for f in dataclasses.fields(curve)):
        return dataclasses.replace(curve, run_url=url)

    class Linked:
        def __init__(self) -> None:
            self.run_url = url

        def __getattr__(self, name):
            return getattr(curve, name)

    return Linked()


def test_the_run_page_is_linked_in_each_markup(curve):
    event = dataclasses.replace(EVENT, run_id=curve.run_id, source=curve.source)
    linked = _with_run_url(curve, "https://bot:pa55w0rd@mlflow.example/#/experiments/1/runs/r1")
    assert message(event, linked, "slack")["text"].endswith(f" · <{RUN_URL}|run page>")
    assert message(event, linked, "teams")["text"].endswith(f" · [run page]({RUN_URL})")
    assert message(event, linked, "generic")["text"].endswith(f" · {RUN_URL}")
    assert "pa55w0rd" not in message(event, linked, "generic")["text"]
    assert "run page" not in message(event, curve, "slack")["text"]  # no link, none made up
    hostile = _with_run_url(curve, "javascript:alert(1)")
    assert "javascript" not in message(event, hostile, "slack")["text"]
    with WebhookServer() as hook:
        delivery = Webhook(hook.url, timeout=5).notify([event], [linked])
    assert delivery.sent == 1 and hook.posts[0]["text"].endswith(f" · {RUN_URL}")


# ---- how it is posted -------------------------------------------------------------------------


@pytest.mark.parametrize("code", [301, 302, 303])
def test_a_redirect_that_would_turn_the_post_into_a_get_is_not_a_delivery(code):
    with WebhookServer(mode="redirect", code=code) as hook:
        delivery = Webhook(hook.url, timeout=5).send(MESSAGE)
    assert (delivery.sent, delivery.failed) == (0, 1)
    assert delivery.why.startswith(f"HTTP {code}: the webhook redirects")
    assert hook.hits == 1 and hook.gets == [] and hook.posts == []


@pytest.mark.parametrize("code", [307, 308])
def test_a_307_or_308_is_posted_again_to_its_location(code):
    with WebhookServer(mode="redirect", code=code) as hook:
        url = hook.url.replace("http://", "http://bot:pa55w0rd@")
        delivery = Webhook(url, timeout=5).send(MESSAGE)
    assert (delivery.sent, delivery.failed) == (1, 0)
    assert hook.posts == MESSAGE and hook.paths == [f"/moved/{SECRET}"]
    assert len(set(hook.auths)) == 1 and hook.auths[0] is not None  # same origin: auth kept


def test_a_redirect_is_followed_once_only():
    with WebhookServer(mode="redirect", code=307, location=f"/services/{SECRET}") as hook:
        delivery = Webhook(hook.url, timeout=5, retries=0).send(MESSAGE)
    assert (delivery.sent, delivery.failed, hook.hits) == (0, 1, 2)
    assert delivery.why.startswith("HTTP 307: a redirect with no usable Location, or a second")


def test_credentials_in_the_url_are_basic_auth_and_never_shown():
    with WebhookServer() as hook:
        webhook = Webhook(hook.url.replace("http://", "http://bot:pa55w0rd@"), timeout=5)
        delivery = webhook.send(MESSAGE)
    assert (delivery.sent, delivery.failed) == (1, 0)
    assert hook.auths == ["Basic " + base64.b64encode(b"bot:pa55w0rd").decode()]
    assert webhook.host == hook.base_url.removeprefix("http://")
    for shown in (delivery.summary(webhook.host), repr(webhook)):
        assert "pa55w0rd" not in shown and SECRET not in shown


def test_retry_after_is_waited_for_within_the_budget():
    with WebhookServer(mode="status", code=503, retry_after=1, times=1) as hook:
        delivery = Webhook(hook.url, timeout=5, retries=2).send(MESSAGE)
    assert (delivery.sent, delivery.failed) == (1, 0)
    assert hook.hits == 2
    assert hook.times_at[1] - hook.times_at[0] >= 0.9  # as asked, not the 0.25 s back-off


@pytest.mark.parametrize(("retry_after", "said"), [
    (30, "HTTP 429: asked to retry after 30 s, beyond this pass's --notify-timeout"),
    (None, "HTTP 429"),  # rate-limited without saying when: no blind retry
])  # fmt: skip
def test_a_429_not_to_be_retried_in_time_is_reported_at_once(retry_after, said):
    with WebhookServer(mode="status", code=429, retry_after=retry_after) as hook:
        delivery = Webhook(hook.url, timeout=3, retries=2).send(MESSAGE)
    assert (delivery.failed, delivery.why, hook.hits) == (1, said, 1)


@contextmanager
def _not_http() -> Iterator[str]:
    """A server that answers every connection with bytes that are not HTTP."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"garbage\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/services/{SECRET}"
    finally:
        stop.set()
        server.close()
        thread.join(5)


def test_an_answer_that_is_not_http_is_a_failed_delivery_not_a_crash():
    with _not_http() as url:
        delivery = Webhook(url, timeout=3).send(MESSAGE)
    assert (delivery.sent, delivery.failed, delivery.why) == (0, 1, "the answer is not HTTP")


def test_a_failed_delivery_is_a_warning_and_the_watcher_goes_on(tmp_path):
    with WebhookServer() as hook:
        url = hook.url  # closed when the block ends: nothing listens there any more
    res = _two_passes(tmp_path, "--notify", url)
    assert res.exit_code == 0, res.output
    warned = [x for x in res.stderr.splitlines() if x.startswith("warning: notified")]
    assert len(warned) == 1 and "not delivered (connection refused)" in warned[0], res.stderr
    assert SECRET not in res.output


def test_a_message_that_cannot_be_made_is_a_warning_not_exit_3(tmp_path, monkeypatch):
    from saturate.tracker import notify

    def broken(curve):
        raise RuntimeError("a bug in making the message")

    monkeypatch.setattr(notify, "short_reason", broken)
    with WebhookServer() as hook:
        res = _two_passes(tmp_path, "--notify", hook.url)
    assert res.exit_code == 0, res.output
    assert "warning: notified" in res.stderr and "a bug in making the message" in res.stderr
    assert hook.posts == []


def test_webhook_checks_its_settings():
    with pytest.raises(SettingsError, match="--notify-timeout"):
        Webhook(f"http://127.0.0.1:8/{SECRET}", timeout=0)
    with pytest.raises(SettingsError, match="port 0"):
        Webhook(f"http://127.0.0.1:0/{SECRET}")
