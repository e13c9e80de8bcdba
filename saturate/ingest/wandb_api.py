"""Read runs from a W&B server, ``wandb://ENTITY/PROJECT``, through the wandb package's public API
(``run.scan_history``: every point, not the sampled ``run.history``), into the table
:mod:`saturate.ingest.wandb_files` makes.

The key (``WANDB_API_KEY`` or ``~/.netrc``) is required, never prompted for, and redacted. Each
call gets ``timeout`` seconds, retries of passing failures included. ``--filter`` is W&B's JSON
run filter; ``--metric`` is applied here (``scan_history(keys=...)`` drops rows lacking a key).
"""

from __future__ import annotations

import collections
import contextlib
import fnmatch
import json
import math
import netrc
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from saturate.errors import InputError, SettingsError, SourceError, shorten
from saturate.ingest.http_retry import Failed, RetryPolicy, check_listening, with_retries
from saturate.ingest.mlflow_common import resolve_timeout
from saturate.ingest.redaction import redact, remember_secret
from saturate.ingest.wandb_files import (
    OddRecord,
    WandbRun,
    flat_items,
    history_number,
    history_step,
    run_table,
)
from saturate.table.curves import DataWarning
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
#: Runs whose histories are fetched at once (each its own requests; the order kept).
WORKERS = 8
#: Seconds between the progress lines of a long read when stderr is not a terminal.
PROGRESS_EVERY = 10.0
_PRIVATE_DIRS = ("WANDB_CACHE_DIR", "WANDB_DIR")
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
        try:
            flat = dict(flat_items("", row, "/"))
            step = history_step(flat.get("_step"))
            if step is None:
                continue
            stamp = history_number(flat.get("_timestamp"))
            values = [(key, value) for key, leaf in flat.items()
                      if not key.startswith("_") and (value := history_number(leaf)) is not None]
        except OddRecord as odd:
            run.skip(odd)
            continue
        when = math.nan if stamp is None else stamp
        for key, value in values:
            if offered is not None:
                offered.metric(key)
            if metric and not any(fnmatch.fnmatchcase(key, p) for p in metric):
                continue
            run.rows.append((key, step, value, when))


def _config(config: Any) -> dict[str, str]:
    """A run's config as run parameters (a value nested too deep to read ends it there)."""
    out: dict[str, str] = {}
    try:
        for key, leaf in flat_items("", dict(config or {}), "."):
            if leaf is not None and not key.startswith("_wandb"):
                out[key] = leaf if isinstance(leaf, str) else json.dumps(leaf)
    except (OddRecord, RecursionError, ValueError):
        pass  # the parameters before it are kept
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
                   tracker_url: str | None = None, offered: Offered | None = None,
                   workers: int = WORKERS, progress_every: float = PROGRESS_EVERY,
                   ) -> Iterator[Table]:  # fmt: skip
    """The tidy table of each run of a W&B project, one run at a time in the listing's order
    (each run's page the one the server gives it, or in the W&B app at ``tracker_url``).

    The histories are fetched ``workers`` runs at a time (a few runs ahead of the one yielded,
    no more). When stderr is not a terminal (a job's log), a line every ``progress_every``
    seconds says how far the read is. The wandb package's own files (its service's debug log
    holds the server's address, credentials and all) go to a private temporary folder, removed
    when the read ends (see :func:`_private_wandb_files`).

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
    with _private_wandb_files(wandb):
        api = calls("logging in", lambda: wandb.Api(api_key=key,
                                                    timeout=max(1, int(calls.timeout))))
        listing = calls("listing runs", lambda: api.runs(f"{entity}/{project}", filters=filters,
                                                         per_page=per_page))
        wanted = (remote for remote in _pages(calls, listing) if _wanted(remote, run, offered))
        tell = _Progress(uri, progress_every)
        found = False
        for remote, rows in _histories(calls, wanted, page_size, workers):
            got = _remote_run(remote, entity, project, tracker_url)
            _history_rows(rows, metric, got, offered)
            tell(len(rows))
            if (odd := got.skipped_text("row")) is not None:
                warnings.warn(f"{shorten(uri)}: run {shorten(got.run_id)}: {odd}", DataWarning,
                              stacklevel=2)
            if got.rows:
                found = True
                yield run_table(got, uri, tracker_url)
        tell.end()
    if not found and not judges:
        miss = selection_miss(offered, metric=metric, run=run, where=shorten(uri))
        raise miss or InputError(f"{shorten(uri)}: no runs with history points")


def _wanted(remote: Any, run: Sequence[str] | None, offered: Offered) -> bool:
    """Whether a listed run is selected by the ``run`` globs (``offered`` hears of it)."""
    name, run_id = str(remote.name or remote.id), str(remote.id)
    offered.run(name, run_id)
    return not run or any(fnmatch.fnmatchcase(n, p) for p in run for n in (name, run_id))


def _remote_run(remote: Any, entity: str, project: str, tracker_url: str | None) -> WandbRun:
    """A listed run's facts (its points are added from its history)."""
    state = _STATES.get(str(remote.state).lower(), "RUNNING")
    return WandbRun(run_id=str(remote.id), name=str(remote.name or remote.id), entity=entity,
                    project=project, url="" if tracker_url else _url(remote),
                    group=remote.group or "", job_type=remote.job_type or "",
                    tags=tuple(remote.tags or ()), config=_config(remote.config),
                    exit_code={"FINISHED": 0, "RUNNING": None}.get(state, 1))


def _histories(calls: _Calls, remotes: Iterator[Any], page_size: int, workers: int
               ) -> Iterator[tuple[Any, list[dict[str, Any]]]]:  # fmt: skip
    """``(run, history rows)`` of each run, in order, ``workers`` fetched at a time and at most
    twice that many held: the order and the errors are those of one run after the other."""
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="saturate-wandb")
    ahead: collections.deque[tuple[Any, Future[list[dict[str, Any]]]]] = collections.deque()

    def fetch(remote: Any) -> Future[list[dict[str, Any]]]:
        what = f"reading the history of run {shorten(str(remote.id))}"
        return pool.submit(calls, what, lambda: list(remote.scan_history(page_size=page_size)))

    try:
        for remote in remotes:
            ahead.append((remote, fetch(remote)))
            while len(ahead) >= 2 * max(1, workers):
                remote, rows = ahead.popleft()
                yield remote, rows.result()
        while ahead:
            remote, rows = ahead.popleft()
            yield remote, rows.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # each call ends by its own deadline


class _Progress:
    """A line on stderr every ``every`` seconds while runs are read, when stderr is not a
    terminal (on one, the CLI draws its own): ``wandb://team/rl: 1,200 runs read (350,000
    history rows) in 60 s``. A read shorter than ``every`` says nothing."""

    def __init__(self, uri: str, every: float) -> None:
        self.uri, self.every = shorten(uri), every
        self.start = self.last = time.monotonic()
        self.runs = self.rows = 0
        self.shown = False

    def __call__(self, rows: int) -> None:
        self.runs, self.rows = self.runs + 1, self.rows + rows
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            self._line("")

    def end(self) -> None:
        """The last line, when any was shown (so a job's log says the read ended)."""
        if self.shown:
            self._line(", done")

    def _line(self, tail: str) -> None:
        stream = sys.stderr
        if stream is None or _is_terminal(stream):
            return
        self.shown = True
        stream.write(f"{self.uri}: {self.runs:,} run(s) read ({self.rows:,} history rows) in "
                     f"{time.monotonic() - self.start:.0f} s{tail}\n")
        stream.flush()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


@contextlib.contextmanager
def _private_wandb_files(wandb: Any) -> Iterator[None]:
    """Where the wandb package writes while a ``wandb://`` read goes: its service (wandb-core)
    keeps a debug log in ``$WANDB_CACHE_DIR`` (default ``~/.cache/wandb/logs``) that holds the
    server's address with its credentials and, on an error, the API key; each run it lists makes
    a folder ``$WANDB_DIR/ENTITY/PROJECT/ID`` (default in the temporary folder). Both point at a
    private temporary folder (mode 0700) for the read; the service is ended when the read ends
    and the folder removed. A run of the caller's that is active keeps its service (and its
    logs, where the caller's settings put them)."""
    if getattr(wandb, "run", None) is not None:
        yield
        return
    folder = tempfile.mkdtemp(prefix="saturate-wandb-")
    saved = {k: os.environ.get(k) for k in _PRIVATE_DIRS}
    wandb.teardown()  # a service started before would log where it was started
    os.environ.update(dict.fromkeys(_PRIVATE_DIRS, folder))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        try:
            wandb.teardown()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


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
