"""Tell the team when a verdict changes: ``watch --notify URL`` posts ``{"text": "..."}`` (what
Slack and Teams incoming webhooks accept) per verdict change, collapse or stop point reached.

The URL is checked when the webhook is made, before the first pass: a malformed one is one
:class:`~saturate.errors.SettingsError` that never shows it (its path is the secret; the webhook
is named by its host only). Credentials in it (``https://user:pass@host/hook``) are sent as Basic
auth. Names from the data are escaped for the receiver's markup (:func:`flavour_of`), so a run
named ``<!channel>`` cannot ping a channel nor ``[x](url)`` post a disguised link; the run's page
is linked when the source knows it.

A pass waits for its posting at most ``timeout`` seconds, retries included (the rules of
:mod:`saturate.ingest.http_retry`: a timeout, a reset, 408/5xx and a 429 with Retry-After are
tried again, a refused connection is not). A redirect is not a delivery: a 307 or 308 is posted
again, once, to its Location; a 301, 302 or 303 (which would turn the POST into a GET) is
reported. Whatever happens, :meth:`Webhook.notify` returns a :class:`Delivery`, never raises.
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from saturate.errors import SettingsError
from saturate.ingest.http_retry import Failed, RetryPolicy, cause_of, retry_after, with_retries
from saturate.ingest.redaction import redact, remember_secret, remember_uri, userinfo_split
from saturate.report.rows import short_reason
from saturate.report.text import for_chat, for_markdown, for_slack
from saturate.results import CurveAnalysis
from saturate.tracker.events import Event

#: The events posted: what the team needs to hear about.
NOTIFY_KINDS: tuple[str, ...] = ("verdict_changed", "collapse_detected", "stop_point_reached")
#: The markup of each kind of receiver, named by :func:`flavour_of`: how a name is escaped.
ESCAPES: dict[str, Callable[[Any], str]] = {"slack": for_slack, "teams": for_markdown,
                                            "generic": for_chat}
_SLACK_HOSTS = ("hooks.slack.com", "hooks.slack-gov.com")
_TEAMS_HOSTS = ("webhook.office.com", "outlook.office.com", "outlook.office365.com",
                "logic.azure.com", "powerplatform.com")
_HIDDEN = "(the URL is not shown: webhook URLs hold secrets)"
_READ = 1024  # bytes of an answer read: Slack says "ok", an error a few words


def flavour_of(host: str) -> str:
    """``slack``, ``teams`` or ``generic``: the markup a webhook host's messages are read in
    (``generic``: unknown, so both Slack's and Markdown's link syntax are escaped)."""
    host = host.lower().rstrip(".")

    def on(names: tuple[str, ...]) -> bool:
        return any(host == n or host.endswith("." + n) for n in names)

    return "slack" if on(_SLACK_HOSTS) else "teams" if on(_TEAMS_HOSTS) else "generic"


def _p_pays(curve: CurveAnalysis | None) -> str:
    p = getattr(getattr(curve, "decision", None), "p_pays", None)
    return f"{p:.2f}" if isinstance(p, float) and math.isfinite(p) else "n/a"


def _run_link(curve: CurveAnalysis | None, flavour: str) -> str:
    """`` · `` and a link to the run's page (``curve.run_url``) in the receiver's markup; empty
    when there is none or it is not an http(s) URL. Credentials in it are dropped."""
    url = getattr(curve, "run_url", None)
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        return ""
    parts = userinfo_split(url)
    if parts is not None:
        url = parts[0] + parts[2]
    url = urllib.parse.quote(url.strip(), safe="/:?#[]@!$&'*+,;=%~-._")  # no space, < > | ( )
    url = url.replace("(", "%28").replace(")", "%29")
    if flavour == "slack":
        return f" · <{url.replace('&', '&amp;')}|run page>"
    if flavour == "teams":
        return f" · [run page]({url})"
    return f" · {url}"


def message(event: Event, curve: CurveAnalysis | None, flavour: str = "generic"
            ) -> dict[str, str]:  # fmt: skip
    """The webhook message of one event (``curve``: the analysis that raised it, for P(pays) and
    the run's page); every name from the data escaped for ``flavour``'s markup."""
    esc = ESCAPES[flavour]
    verdict = esc(curve.verdict if curve is not None else event.after)
    before, after = esc(event.before), esc(event.after)
    where = f"run {esc(event.run)} · {esc(event.metric)}"
    if event.kind == "verdict_changed":
        what = f"verdict {before} → {after}"
    elif event.kind == "collapse_detected":
        what = f"collapse: {before} → {after} ({esc(event.detail)}); verdict {verdict}"
    else:
        what = f"stop point reached at {after}; verdict {verdict}"
    reason = short_reason(curve) if curve is not None else event.detail.split(";")[0]
    text = f"saturate: {where}: {what} · P(pays) {_p_pays(curve)}"
    if reason:
        text += f" · {esc(reason)}"
    return {"text": redact(" ".join(text.split()) + _run_link(curve, flavour))}


def notices(events: Iterable[Event], curves: Iterable[CurveAnalysis], flavour: str = "generic"
            ) -> list[dict[str, str]]:  # fmt: skip
    """The messages of a pass: one per event of :data:`NOTIFY_KINDS`, in order."""
    by_key = {(c.source, c.run_id, c.metric): c for c in curves}
    return [message(e, by_key.get((e.source, e.run_id, e.metric)), flavour) for e in events
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


def _bad_character(url: str) -> str | None:
    """What is wrong with ``url``'s characters, in words that do not show it; None if nothing."""
    for ch in url:
        if ch == " ":
            return "a space"
        if ch == "\u00a0":
            return "a non-breaking space (U+00A0)"
        if ch == "\t":
            return "a tab"
        if ch in "\r\n":
            return "a line break"
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            return f"a control character (U+{ord(ch):04X})"
        if ord(ch) > 0x7F:
            return f"a non-ASCII character (U+{ord(ch):04X})"
    return None


def _port_text(netloc: str) -> str:
    """The port as written after the host (for a message: a port is no secret)."""
    hostport = netloc.rpartition("@")[2]
    return hostport.rpartition("]")[2].partition(":")[2] if hostport.startswith("[") else (
        hostport.rpartition(":")[2])


@dataclass(frozen=True)
class Target:
    """Where a webhook posts: the URL without credentials, Basic auth, the host (and port) it is
    named by, and the markup its messages are read in (:func:`flavour_of`)."""

    url: str = field(repr=False)
    auth: tuple[str, str] | None = field(repr=False)
    host: str
    flavour: str

    @classmethod
    def of(cls, url: str) -> Target:
        """Check ``url`` and split off its credentials; a :class:`SettingsError` that does not
        show the URL when it cannot be posted to. Its secrets are remembered for redaction."""
        if not isinstance(url, str):
            raise SettingsError(f"--notify wants a webhook URL, got {type(url).__name__}")
        url = url.strip()
        remember_uri(url)
        bad = _bad_character(url)
        if bad:
            raise SettingsError(f"--notify: the webhook URL holds {bad}; percent-encode it or "
                                f"copy the URL again {_HIDDEN}")
        try:
            parts = urllib.parse.urlsplit(url)
            hostname = parts.hostname
        except ValueError:  # a bracket left open: "http://[::1/hook"
            raise SettingsError(f"--notify: the webhook URL's host is malformed {_HIDDEN}"
                                ) from None
        for secret in (parts.path, parts.query):
            if secret and secret != "/":
                remember_secret(secret)
        if parts.scheme.lower() not in ("http", "https") or not hostname:
            raise SettingsError(f"--notify wants an http:// or https:// webhook URL {_HIDDEN}")
        try:
            port = parts.port
        except ValueError:
            raise SettingsError(f"--notify: the webhook URL's port {_port_text(parts.netloc)!r} is "
                                f"not a port number (1-65535) {_HIDDEN}") from None
        if port == 0:
            raise SettingsError(f"--notify: the webhook URL's port 0 is not a port number "
                                f"(1-65535) {_HIDDEN}")
        auth = None
        if parts.username is not None or parts.password is not None:
            auth = (urllib.parse.unquote(parts.username or ""),
                    urllib.parse.unquote(parts.password or ""))
        hostport = parts.netloc.rpartition("@")[2]
        host = hostname if port is None else f"{hostname}:{port}"
        plain = urllib.parse.urlunsplit((parts.scheme.lower(), hostport, parts.path or "/",
                                         parts.query, ""))
        return cls(plain, auth, host, flavour_of(hostname))


@dataclass(frozen=True)
class _Answer:
    """One answer to a post: its status, Retry-After (s) and redirect target."""

    status: int
    retry_after: float | None = None
    location: str | None = None


@dataclass
class Webhook:
    """An incoming webhook: ``timeout`` bounds one pass's posting, ``retries`` the tries after the
    first for each message. The URL is checked here (:meth:`Target.of`)."""

    url: str = field(repr=False)
    timeout: float = 10.0
    retries: int = 2
    host: str = field(init=False)
    flavour: str = field(init=False)
    _target: Target = field(init=False, repr=False)
    _policy: RetryPolicy = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0
                and math.isfinite(self.timeout)):
            raise SettingsError(f"--notify-timeout must be > 0 seconds, got {self.timeout!r}")
        self._target = Target.of(self.url)
        self.host, self.flavour = self._target.host, self._target.flavour
        self._policy = RetryPolicy(max_retries=self.retries, backoff=0.25,
                                   connect_timeout=min(self.timeout, 10.0))

    def notify(self, events: Iterable[Event], curves: Iterable[CurveAnalysis]) -> Delivery:
        """Post the messages of a pass's events (:func:`notices`); a failure of any kind is a
        :class:`Delivery` that says so, never an exception."""
        try:
            messages = notices(events, curves, self.flavour)
        except Exception as exc:  # noqa: BLE001 - the watcher goes on; the team hears nothing
            return Delivery(0, 1, f"no message made: {_internal(exc)}")
        return self.send(messages)

    def send(self, messages: Sequence[Mapping[str, str]]) -> Delivery:
        """Post ``messages`` in order; return within about ``timeout`` seconds whatever happens."""
        if not messages:
            return Delivery()
        deadline = time.monotonic() + self.timeout
        outcome: list[Delivery] = []

        def post() -> None:
            try:
                outcome.append(self._post_all(messages, deadline))
            except BaseException as exc:  # noqa: BLE001 - said in the Delivery, not a traceback
                outcome.append(Delivery(0, len(messages), _internal(exc)))

        worker = threading.Thread(target=post, name="saturate-notify", daemon=True)
        worker.start()
        worker.join(self.timeout + 0.05)
        if outcome:
            return outcome[0]
        return Delivery(0, len(messages), f"no answer within {self.timeout:g}s")

    def _post_all(self, messages: Sequence[Mapping[str, str]], deadline: float) -> Delivery:
        import requests

        sent, failed, why = 0, 0, ""
        with requests.Session() as session:
            for msg in messages:
                ok, problem = self._post(session, json.dumps(msg).encode(), deadline)
                sent, failed = sent + ok, failed + (not ok)
                why = why or problem
        return Delivery(sent, failed, why)

    def _post(self, session: Any, body: bytes, deadline: float) -> tuple[bool, str]:
        """One message, tried as :func:`~saturate.ingest.http_retry.with_retries` says before
        ``deadline``: (delivered, why not)."""
        try:
            answer, _ = with_retries(lambda: self._attempt(session, body, deadline), self._policy,
                                     deadline, status=lambda a: (a.status, a.retry_after))
        except Failed as failed:
            return False, failed.cause
        return _verdict(answer, deadline)

    def _attempt(self, session: Any, body: bytes, deadline: float) -> _Answer:
        """One post; a 307 or 308 is followed once (credentials only to the same origin)."""
        answer = self._send(session, self._target.url, body, deadline, self._target.auth)
        if answer.status not in (307, 308) or not answer.location:
            return answer
        there = urllib.parse.urljoin(self._target.url, answer.location)
        if urllib.parse.urlsplit(there).scheme.lower() not in ("http", "https"):
            return answer
        remember_uri(there)
        remember_secret(urllib.parse.urlsplit(there).path)
        same = _origin(there) == _origin(self._target.url)
        return self._send(session, there, body, deadline, self._target.auth if same else None)

    def _send(self, session: Any, url: str, body: bytes, deadline: float,
              auth: tuple[str, str] | None) -> _Answer:  # fmt: skip
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failed("no time left", False)
        try:
            resp = session.post(url, data=body, headers={"Content-Type": "application/json"},
                                auth=auth, timeout=(min(self._policy.connect_timeout, left), left),
                                allow_redirects=False, stream=True)  # fmt: skip
            try:
                resp.raw.read(_READ)
            finally:
                resp.close()
        except Exception as exc:  # noqa: BLE001 - requests', urllib3's, the socket's: a cause
            raise Failed(*cause_of(exc)) from None
        return _Answer(resp.status_code, retry_after(resp.headers.get("Retry-After")),
                       resp.headers.get("Location"))


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port


def _verdict(answer: _Answer, deadline: float) -> tuple[bool, str]:
    """(delivered, why not) of the last answer: only a 2xx is a delivery."""
    status = answer.status
    if 200 <= status < 300:
        return True, ""
    if status in (301, 302, 303):
        return False, (f"HTTP {status}: the webhook redirects (moved?), and a redirected POST "
                       "would arrive as a GET without the message; give its new URL")
    if status in (307, 308):
        return False, f"HTTP {status}: a redirect with no usable Location, or a second one"
    if answer.retry_after is not None and answer.retry_after >= deadline - time.monotonic():
        return False, (f"HTTP {status}: asked to retry after {answer.retry_after:g} s, beyond "
                       "this pass's --notify-timeout")
    return False, f"HTTP {status}"


def _internal(exc: BaseException) -> str:
    """An unexpected failure in a few words, credentials masked."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return redact(" ".join(text.split()))[:200]
