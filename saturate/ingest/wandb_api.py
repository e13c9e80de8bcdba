"""Read runs from a W&B server, ``wandb://ENTITY/PROJECT``, through the wandb package's public API
(``run.scan_history``: every point, not the sampled ``run.history``), into the table
:mod:`saturate.ingest.wandb_files` makes.

The key (``WANDB_API_KEY`` or ``~/.netrc``) is required, never prompted for, and redacted. Each
call gets ``timeout`` seconds, retries of passing failures included. ``--filter`` is W&B's JSON
run filter; ``--metric`` is applied here (``scan_history(keys=...)`` drops rows lacking a key).
"""

from __future__ import annotations

import fnmatch
import json
import math
import netrc
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from saturate.errors import InputError, SettingsError, SourceError, shorten
from saturate.ingest.http_retry import Failed, RetryPolicy, check_listening, with_retries
from saturate.ingest.mlflow_common import resolve_timeout
from saturate.ingest.redaction import redact, remember_secret
from saturate.ingest.wandb_files import WandbRun, flat_items, history_number, run_table
from saturate.table.selection import Offered, selection_miss
from saturate.table.table import Table

SCHEME = "wandb://"
RETRIES = 3
_POLICY = RetryPolicy(max_retries=RETRIES, backoff=0.5)
_STATES = {"finished": "FINISHED", "running": "RUNNING", "crashed": "FAILED", "failed": "FAILED",
           "killed": "KILLED", "preempted": "KILLED", "pending": "RUNNING"}
_AUTH_WORDS = ("401", "403", "unauthorized", "forbidden", "api key", "api_key", "permission",
               "not logged in", "authenticat", "relogin")
_PASSING_WORDS = ("500", "502", "503", "504", "429", "timed out", "timeout", "reset",
                  "temporarily", "unavailable", "connection")
T = TypeVar("T")


def parse_wandb_uri(text: str) -> tuple[str, str]:
    """``(entity, project)`` of ``wandb://ENTITY/PROJECT``; an error that shows the form."""
    parts = text[len(SCHEME):].strip("/").split("/")
    if len(parts) != 2 or not all(parts):
        raise SettingsError(f"{shorten(text)}: a W&B project is named wandb://ENTITY/PROJECT")
    return parts[0], parts[1]


def _base_url() -> str:
    return os.environ.get("WANDB_BASE_URL", "").strip() or "https://api.wandb.ai"


def _api_key() -> str:
    key = os.environ.get("WANDB_API_KEY", "").strip()
    if not key:
        host = urllib.parse.urlsplit(_base_url())
        try:
            entry = netrc.netrc().authenticators(host.hostname or "")
        except (OSError, netrc.NetrcParseError):
            entry = None
        key = (entry[2] or "") if entry else ""
    if not key:
        raise InputError("reading wandb:// needs a W&B API key: set WANDB_API_KEY (or run "
                         "`wandb login`); it is never printed")
    remember_secret(key)
    return key


def _why(exc: BaseException) -> str:
    text = redact(" ".join(str(exc).split()) or type(exc).__name__)
    return shorten(text, 160)


def _has_word(text: str, words: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(w in low for w in words)


class _Calls:
    """Calls to the server, each with its deadline and the retries of
    :mod:`saturate.ingest.http_retry`; the wandb package's errors are read by their words."""

    def __init__(self, label: str, timeout: float) -> None:
        self.label, self.timeout = label, timeout

    def __call__(self, what: str, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.timeout

        def attempt() -> T:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failed(f"no answer within {self.timeout:g}s", False)
            done, value, error = _within(left, fn)
            if not done:
                raise Failed(f"no answer within {self.timeout:g}s", False)
            if error is not None:
                raise self._failure(what, error)
            return value

        try:
            return with_retries(attempt, _POLICY, deadline)[0]
        except Failed as failed:
            raise SourceError(f"{self.label}: {what} failed ({failed.cause})") from None

    def _failure(self, what: str, error: BaseException) -> BaseException:
        """What a failed call means: the user's error, raised as is; else a :class:`Failed`,
        retried when its words say it may pass (never a refused connection)."""
        why = _why(error)
        if isinstance(error, (InputError, SettingsError)):
            return error
        if _has_word(why, _AUTH_WORDS):
            return InputError(f"{self.label}: W&B refused the API key ({why}); check "
                              "WANDB_API_KEY")
        passes = _has_word(why, _PASSING_WORDS) and not _has_word(why, ("refused",))
        if isinstance(error, ValueError) and not passes:
            return InputError(f"{self.label}: {what}: {why}")
        return Failed(why, passes)


def _within(seconds: float, fn: Callable[[], T]) -> tuple[bool, Any, BaseException | None]:
    """Run ``fn`` in a worker thread for at most ``seconds``: (finished, value, error)."""
    out: list[Any] = []

    def work() -> None:
        try:
            out.append((fn(), None))
        except BaseException as exc:  # handed to the caller, which decides
            out.append((None, exc))

    worker = threading.Thread(target=work, name="saturate-wandb", daemon=True)
    worker.start()
    worker.join(seconds)
    if not out:
        return False, None, None
    return True, out[0][0], out[0][1]


def _history_rows(rows: Sequence[dict[str, Any]], metric: Sequence[str] | None,
                  run: WandbRun, offered: Offered | None = None) -> None:  # fmt: skip
    for row in rows:
        flat = dict(flat_items("", row, "/"))
        step = history_number(flat.get("_step"))
        if step is None:
            continue
        stamp = history_number(flat.get("_timestamp"))
        for key, leaf in flat.items():
            value = history_number(leaf)
            if value is None or key.startswith("_"):
                continue
            if offered is not None:
                offered.metric(key)
            if metric and not any(fnmatch.fnmatchcase(key, p) for p in metric):
                continue
            run.rows.append((key, int(step), value, math.nan if stamp is None else stamp))


def _config(config: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, leaf in flat_items("", dict(config or {}), "."):
        if leaf is not None and not key.startswith("_wandb"):
            out[key] = leaf if isinstance(leaf, str) else json.dumps(leaf)
    return out


def _filters(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise SettingsError("--filter for wandb:// is W&B's JSON run filter, such as "
                            f"'{{\"config.lr\": 0.001}}'; got {shorten(text)!r}")
    return value


def iter_wandb_api(uri: str, *, filter: str | None = None,  # noqa: A002 - the CLI's option
                   run: Sequence[str] | None = None, metric: Sequence[str] | None = None,
                   timeout: float | None = None, per_page: int = 50, page_size: int = 1000,
                   tracker_url: str | None = None, offered: Offered | None = None
                   ) -> Iterator[Table]:  # fmt: skip
    """The tidy table of each run of a W&B project, one run at a time (each run's page the one
    the server gives it, or in the W&B app at ``tracker_url``).

    ``offered`` hears of every run listed and metric logged; a caller that passes it judges a
    ``run`` or ``metric`` selection that matched nothing over its whole read (no error here)."""
    judges, offered = offered is not None, offered or Offered()
    entity, project = parse_wandb_uri(uri)
    filters = _filters(filter)
    key = _api_key()
    try:
        import wandb
    except ImportError:
        raise InputError("reading wandb:// needs the wandb package: pip install "
                         "'saturate[wandb]'") from None
    # The wandb package retries a refused connection until the deadline: nothing listens there.
    check_listening([_base_url()], "the W&B server")
    calls = _Calls(uri, resolve_timeout(timeout))
    api = calls("logging in", lambda: wandb.Api(api_key=key, timeout=max(1, int(calls.timeout))))
    listing = calls("listing runs", lambda: api.runs(f"{entity}/{project}", filters=filters,
                                                     per_page=per_page))
    found = False
    for remote in _pages(calls, listing):
        name, run_id = str(remote.name or remote.id), str(remote.id)
        offered.run(name, run_id)
        if run and not any(fnmatch.fnmatchcase(n, p) for p in run for n in (name, run_id)):
            continue
        got = WandbRun(run_id=run_id, name=name, entity=entity, project=project,
                       url="" if tracker_url else _url(remote), group=remote.group or "",
                       job_type=remote.job_type or "", tags=tuple(remote.tags or ()),
                       config=_config(remote.config))
        def scan(r: Any = remote) -> list[Any]:
            return list(r.scan_history(page_size=page_size))

        rows = calls(f"reading the history of run {shorten(run_id)}", scan)
        _history_rows(rows, metric, got, offered)
        state = _STATES.get(str(remote.state).lower(), "RUNNING")
        got.exit_code = {"FINISHED": 0, "RUNNING": None}.get(state, 1)
        if got.rows:
            found = True
            yield run_table(got, uri, tracker_url)
    if not found and not judges:
        miss = selection_miss(offered, metric=metric, run=run, where=shorten(uri))
        raise miss or InputError(f"{shorten(uri)}: no runs with history points")


def _url(remote: Any) -> str:
    """The run's page as the wandb package gives it (``run.url``: the app of the server read),
    "" when it cannot say."""
    try:
        return str(remote.url or "")
    except Exception:  # an attribute the package computes: any failure only loses the link
        return ""


def _pages(calls: _Calls, listing: Any) -> Iterator[Any]:
    """The runs of a listing, each page fetched as one call (with its deadline and retries)."""
    iterator = iter(listing)
    while True:
        done, item = calls("listing runs", lambda: _next(iterator))
        if done:
            return
        yield item


def _next(iterator: Iterator[Any]) -> tuple[bool, Any]:
    try:
        return False, next(iterator)
    except StopIteration:
        return True, None
