"""``watch --notify URL`` posts each verdict change to a webhook (a local HTTP server here) and
``watch --html PATH`` keeps a page of the current verdicts."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from webhook_server import WebhookServer

from saturate.cli import app
from saturate.errors import SettingsError
from saturate.tracker import parse_event_line
from saturate.tracker.notify import NOTIFY_KINDS, Webhook

pytestmark = pytest.mark.server  # every test sends to a local webhook server

STEPS = np.arange(1, 121) * 10
VALUES = 0.8 * (1 - np.exp(-STEPS / 150)) + np.random.default_rng(1).normal(0, 0.005, STEPS.size)
MESSAGE = [{"text": "saturate: run ppo · reward: verdict scaling → saturated · P(pays) 0.23"}]


def _write(path, n):
    pd.DataFrame({"run": "ppo", "metric": "reward", "step": STEPS[:n],
                  "value": VALUES[:n]}).to_csv(path, index=False)


def _watch(tmp_path, *extra):
    args = ["watch", str(tmp_path / "run.csv"), "--once", "--state", str(tmp_path / "h.db"),
            "--n-boot", "40", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def _posted_kinds(output):
    return [e["event"] for e in map(parse_event_line, output.splitlines())
            if e and e["event"] in NOTIFY_KINDS]


def test_one_message_per_change_and_none_when_nothing_changes(tmp_path):
    page = tmp_path / "verdicts.html"
    with WebhookServer() as hook:
        opts = ["--notify", hook.url, "--html", str(page)]
        _write(tmp_path / "run.csv", 8)
        _watch(tmp_path, *opts)  # the baseline: verdicts recorded, no events, nothing posted
        assert hook.posts == []
        assert "slowing" in page.read_text()
        _write(tmp_path / "run.csv", 120)  # the curve saturates, past its stop point
        out = _watch(tmp_path, *opts)
        kinds = _posted_kinds(out)
        assert "verdict_changed" in kinds
        assert len(hook.posts) == len(kinds)
        changed = hook.posts[kinds.index("verdict_changed")]["text"]
        assert "run ppo · reward: verdict slowing → saturated · P(pays) 0." in changed
        assert f"notified 127.0.0.1:{hook.url.split(':')[2].split('/')[0]}" in out
        _watch(tmp_path, *opts)  # nothing new: nothing posted
        assert len(hook.posts) == len(kinds)
    assert all(set(p) == {"text"} for p in hook.posts)
    assert WebhookServer.SECRET not in out and "services" not in out
    html = page.read_text()
    assert '<meta http-equiv="refresh"' in html and "saturated" in html
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".verdicts")] == []


@pytest.mark.parametrize("mode", ["hang", "status"])
def test_a_webhook_that_hangs_or_fails_costs_a_pass_at_most_its_timeout(mode):
    with WebhookServer(mode=mode, code=500) as hook:
        webhook = Webhook(hook.url, timeout=1.5, retries=2)
        started = time.monotonic()
        delivery = webhook.send(MESSAGE * 3)
        took = time.monotonic() - started
    assert took < 1.5 + 1.0  # the budget, and a margin for a slow machine (a hang is 60 s)
    assert (delivery.sent, delivery.failed) == (0, 3)
    assert WebhookServer.SECRET not in delivery.summary(webhook.host)
    if mode == "status":
        assert delivery.why == "HTTP 500" and hook.hits >= 3  # tried again, within the budget


def test_a_refused_connection_and_a_bad_url(tmp_path):
    with WebhookServer() as hook:
        url = hook.url
    started = time.monotonic()
    delivery = Webhook(url, timeout=5.0, retries=2).send(MESSAGE)
    assert (delivery.failed, delivery.why) == (1, "connection refused")
    assert time.monotonic() - started < 4  # not hung (refused is never retried: tests/test_http_retry.py)
    with pytest.raises(SettingsError, match="not shown"):
        Webhook("ftp://example.org/secret-path")
    _write(tmp_path / "run.csv", 8)
    result = CliRunner().invoke(app, ["watch", str(tmp_path / "run.csv"), "--once", "--notify",
                                      "hooks.example/T0SECRET", "--state", str(tmp_path / "h.db")])
    assert result.exit_code == 2 and result.output.startswith("error:")
    assert "T0SECRET" not in result.output
