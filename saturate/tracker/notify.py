"""Tell the team when a verdict changes: ``watch --notify URL`` posts ``{"text": "..."}`` (what
Slack and Teams incoming webhooks accept) per verdict change, collapse or stop point reached.

A pass waits for its posting at most ``timeout`` seconds, retries included (hangs, refusals, 5xx);
what is not delivered then is dropped and counted. The text is redacted, and the webhook is named
by its host only: its path is the secret.
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from saturate.errors import SettingsError
from saturate.ingest.redaction import redact, remember_secret
from saturate.report.rows import short_reason
from saturate.results import CurveAnalysis
from saturate.tracker.events import Event

#: The events posted: what the team needs to hear about.
NOTIFY_KINDS: tuple[str, ...] = ("verdict_changed", "collapse_detected", "stop_point_reached")
_RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_FIRST_BACKOFF = 0.25


def _p_pays(curve: CurveAnalysis | None) -> str:
    p = getattr(getattr(curve, "decision", None), "p_pays", None)
    return f"{p:.2f}" if isinstance(p, float) and math.isfinite(p) else "n/a"


def message(event: Event, curve: CurveAnalysis | None) -> dict[str, str]:
    """The webhook message of one event (``curve``: the analysis that raised it, for P(pays))."""
    where = f"run {event.run} · {event.metric}"
    verdict = curve.verdict if curve is not None else event.after
    if event.kind == "verdict_changed":
        what = f"verdict {event.before} → {event.after}"
    elif event.kind == "collapse_detected":
        what = f"collapse: {event.before} → {event.after} ({event.detail}); verdict {verdict}"
    else:
        what = f"stop point reached at {event.after}; verdict {verdict}"
    reason = short_reason(curve) if curve is not None else event.detail.split(";")[0]
    text = f"saturate: {where}: {what} · P(pays) {_p_pays(curve)}"
    if reason:
        text += f" · {reason}"
    return {"text": redact(" ".join(text.split()))}


def notices(events: Iterable[Event], curves: Iterable[CurveAnalysis]) -> list[dict[str, str]]:
    """The messages of a pass: one per event of :data:`NOTIFY_KINDS`, in order."""
    by_key = {(c.source, c.run_id, c.metric): c for c in curves}
    return [message(e, by_key.get((e.source, e.run_id, e.metric))) for e in events
            if e.kind in NOTIFY_KINDS]


@dataclass(frozen=True)
class Delivery:
    """What a pass's posting did: messages ``sent``, ``failed`` (dropped), and why."""

    sent: int = 0
    failed: int = 0
    why: str = ""

    def summary(self, host: str) -> str:
        head = f"notified {host}: {self.sent} message(s)"
        return head if not self.failed else f"{head}; {self.failed} not delivered ({self.why})"


@dataclass
class Webhook:
    """An incoming webhook: ``timeout`` bounds one pass's posting, ``retries`` the tries after the
    first for each message."""

    url: str
    timeout: float = 10.0
    retries: int = 2
    host: str = field(init=False)

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SettingsError("--notify wants an http:// or https:// webhook URL (the value "
                                "given is not shown: webhook URLs hold secrets)")
        if not (self.timeout > 0 and math.isfinite(self.timeout)):
            raise SettingsError(f"--notify-timeout must be > 0 seconds, got {self.timeout!r}")
        self.host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
        for secret in (parts.path, parts.query, parts.password):
            if secret and secret != "/":
                remember_secret(secret)

    def send(self, messages: Sequence[Mapping[str, str]]) -> Delivery:
        """Post ``messages`` in order; return within about ``timeout`` seconds whatever happens."""
        if not messages:
            return Delivery()
        deadline = time.monotonic() + self.timeout
        outcome: list[Delivery] = []
        worker = threading.Thread(target=lambda: outcome.append(self._post_all(messages, deadline)),
                                  name="saturate-notify", daemon=True)
        worker.start()
        worker.join(self.timeout + 0.05)
        if outcome:
            return outcome[0]
        return Delivery(0, len(messages), f"no answer within {self.timeout:g}s")

    def _post_all(self, messages: Sequence[Mapping[str, str]], deadline: float) -> Delivery:
        sent, failed, why = 0, 0, ""
        for msg in messages:
            ok, problem = self._post(json.dumps(msg).encode(), deadline)
            sent, failed = sent + ok, failed + (not ok)
            why = why or problem
        return Delivery(sent, failed, why)

    def _post(self, body: bytes, deadline: float) -> tuple[bool, str]:
        """One message, tried up to ``1 + retries`` times before ``deadline``."""
        why = "no time left"
        for attempt in range(self.retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            request = urllib.request.Request(self.url, data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=left) as answer:  # noqa: S310
                    answer.read(1024)
                return True, ""
            except urllib.error.HTTPError as exc:
                why = f"HTTP {exc.code}"
                if exc.code not in _RETRY_STATUS:
                    break
            except (urllib.error.URLError, OSError) as exc:  # refused, reset, timed out
                reason = getattr(exc, "reason", exc)
                why = redact(f"{type(reason).__name__}: {reason}" if str(reason) else
                             type(reason).__name__)
            pause = min(_FIRST_BACKOFF * 2**attempt, deadline - time.monotonic())
            if attempt < self.retries and pause > 0:
                time.sleep(pause)
        return False, why
