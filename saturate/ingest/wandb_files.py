"""Read W&B run folders from the run's own transaction log, ``run-<id>.wandb`` (32 KiB blocks of
the wandb package's ``Record`` protobufs: the ``wandb`` extra is needed), without a server.

History rows give the points (``_step``, ``_timestamp``; other numbers by key, nested keys joined
with ``/``; ``_``-keys and media left out); the run record its name, entity, project, config
(``params.*``), group, job type and tags; the exit record its state (none yet: RUNNING). A file
cut short or damaged is read up to that point, with a warning.

A run's page (``run_url``) is ``<app>/<entity>/<project>/runs/<id>``, as the wandb package makes
it; the log does not say which W&B server the run syncs to, so ``<app>`` is the one the wandb
package would use here (:func:`app_url`).
"""

from __future__ import annotations

import json
import math
import os
import struct
import urllib.parse
import warnings
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.ingest.redaction import public_url, ui_link
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, DataWarning, tidy
from saturate.table.run_table import RUN_URL, merge_facts
from saturate.table.table import Table, concat_tables

BLOCK = 32 * 1024
HEADER = 7
_MAGIC = b":W&B" + struct.pack("<H", 0xBEE1)
_VERSION = 0
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_CHUNK = struct.Struct("<IHB")
ENDS_INSIDE = "the file ends inside a record (still being written, or cut short)"
# The CRC-32 of each chunk type's byte, the seed of its payload's checksum.
_SEED = {t: zlib.crc32(bytes([t])) for t in (_FULL, _FIRST, _MIDDLE, _LAST)}


@dataclass(frozen=True)
class LogScan:
    """What :func:`scan` read: the records' payloads; ``end`` the offset after the last whole
    record; ``problem`` why reading stopped early (None: it did not)."""

    records: tuple[bytes, ...]
    end: int
    problem: str | None = None


def header_problem(data: bytes) -> str | None:
    """Why ``data`` is not a W&B transaction log of the version read here (None: it is)."""
    if len(data) < HEADER:
        return "shorter than the W&B header"
    if data[:6] != _MAGIC:
        return "no W&B header (not a run-<id>.wandb transaction log)"
    if data[6] != _VERSION:
        return f"W&B log version {data[6]}, only version {_VERSION} is known"
    return None


def scan(data: bytes) -> LogScan:
    """The records of a W&B transaction log; ``data`` must start with a valid header."""
    records: list[bytes] = []
    pos = end = HEADER
    parts: list[bytes] = []  # the chunks of a record spread over blocks, so far
    size = len(data)
    while True:
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # the block's zero trailer
            if data[pos:pos + left].strip(b"\0"):
                return LogScan(tuple(records), end, f"bytes other than zeros at the end of "
                                                    f"the block at {pos - pos % BLOCK}")
            pos += left
            continue
        if pos >= size:
            problem = None if not parts else ENDS_INSIDE
            return LogScan(tuple(records), end, problem)
        if pos + HEADER > size:
            return LogScan(tuple(records), end, ENDS_INSIDE)
        checksum, length, kind = _CHUNK.unpack_from(data, pos)
        if checksum == 0 and length == 0 and kind == 0 and not parts:
            if data[pos:].strip(b"\0"):
                return LogScan(tuple(records), end, f"a zeroed chunk at byte {pos}")
            return LogScan(tuple(records), end)  # space reserved but not written yet
        start, stop = pos + HEADER, pos + HEADER + length
        if length > left - HEADER:
            return LogScan(tuple(records), end, f"a chunk longer than its block at byte {pos}")
        if stop > size:
            return LogScan(tuple(records), end, ENDS_INSIDE)
        if kind not in _SEED:
            return LogScan(tuple(records), end, f"an unknown chunk type {kind} at byte {pos}")
        payload = data[start:stop]
        if zlib.crc32(payload, _SEED[kind]) != checksum:
            return LogScan(tuple(records), end, f"a checksum mismatch at byte {pos}")
        if kind == _FULL and not parts:
            records.append(payload)
            end = stop
        elif kind == _FIRST and not parts:
            parts.append(payload)
        elif kind in (_MIDDLE, _LAST) and parts:
            parts.append(payload)
            if kind == _LAST:
                records.append(b"".join(parts))
                parts, end = [], stop
        else:
            return LogScan(tuple(records), end, f"a chunk out of order at byte {pos}")
        pos = stop


_TAGS = f"{TAG_PREFIX}wandb.tags"
_STATUS = {None: "RUNNING", 0: "FINISHED"}


def is_wandb_file(path: Path) -> bool:
    """A W&B transaction log: named ``*.wandb`` and starting with the W&B header."""
    if not path.name.endswith(".wandb") or path.name.startswith("."):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(HEADER)[:6] == _MAGIC
    except OSError:
        return False


def is_run_folder(names: Iterable[str]) -> bool:
    """Whether a folder holding files ``names`` is a W&B run folder (it holds a ``*.wandb``)."""
    return any(n.endswith(".wandb") and n.startswith("run-") for n in names)


@dataclass
class WandbRun:
    """What one transaction log says about its run (see the module docstring)."""

    run_id: str = ""
    name: str = ""
    entity: str = ""
    project: str = ""
    url: str = ""  # the page a W&B server gave the run; else made from entity and project
    group: str = ""
    job_type: str = ""
    tags: tuple[str, ...] = ()
    config: dict[str, str] = field(default_factory=dict)
    exit_code: int | None = None
    rows: list[tuple[str, int, float, float]] = field(default_factory=list)
    records: int = 0
    problem: str | None = None

    @property
    def status(self) -> str:
        return _STATUS.get(self.exit_code, "FAILED")

    def page(self, app: str | None = None) -> str | None:
        """The run's page in the W&B app at ``app`` (default :func:`app_url`), credentials left
        out: the one a server gave it, else ``<app>/<entity>/<project>/runs/<id>``. None without
        an entity: an offline run started without one gets its entity (the account's default)
        only when ``wandb sync`` uploads it, so its folder cannot say where its page will be."""
        if self.url:
            return public_url(self.url)
        if not (self.entity and self.project and self.run_id):
            return None
        path = "/".join(urllib.parse.quote(x, safe="")
                        for x in (self.entity, self.project, "runs", self.run_id))  # fmt: skip
        return ui_link(app or app_url(), path)

    def facts(self) -> dict[str, str]:
        """The run parameters and tags, as the tidy table's run facts name them."""
        out = {f"{PARAM_PREFIX}{k}": v for k, v in self.config.items()}
        for key, value in (("group", self.group), ("job_type", self.job_type)):
            if value and f"{PARAM_PREFIX}{key}" not in out:
                out[f"{PARAM_PREFIX}{key}"] = value
        if self.tags:
            out[_TAGS] = ", ".join(self.tags)
        return out


def _record_class() -> Any:
    """The wandb package's ``Record`` message (the schema of the transaction log)."""
    try:
        from wandb.proto import wandb_internal_pb2
    except ImportError:
        raise InputError("reading W&B run files needs the wandb package: "
                         "pip install 'saturate[wandb]'") from None
    # wandb picks its generated module by the protobuf version at run time (a star import)
    return wandb_internal_pb2.Record  # type: ignore[attr-defined]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def flat_items(prefix: str, value: Any, sep: str) -> Iterator[tuple[str, Any]]:
    """``(key, leaf)`` pairs of a nested value; media and tables (dicts with ``_type``) whole."""
    if isinstance(value, dict) and "_type" not in value:
        for k, v in value.items():
            yield from flat_items(f"{prefix}{sep}{k}" if prefix else str(k), v, sep)
    else:
        yield prefix, value


def history_number(value: Any) -> float | None:
    """A history value as a point's value: numbers only (not booleans, text or media)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _item_key(item: Any) -> str:
    return "/".join(item.nested_key) if len(item.nested_key) else item.key


def _history(run: WandbRun, history: Any) -> None:
    values: dict[str, Any] = {}
    for item in history.item:
        for key, leaf in flat_items(_item_key(item), _json(item.value_json), "/"):
            values[key] = leaf
    step = values.get("_step", history.step.num if history.HasField("step") else None)
    if step is None or history_number(step) is None:
        return
    stamp = history_number(values.get("_timestamp"))
    when = math.nan if stamp is None else stamp
    for key, leaf in values.items():
        value = history_number(leaf)
        if value is not None and not key.startswith("_"):
            run.rows.append((key, int(step), value, when))


def _config(run: WandbRun, config: Any) -> None:
    for item in config.update:
        key = _item_key(item)
        if key.startswith("_wandb"):
            continue
        for name, leaf in flat_items(key, _json(item.value_json), "."):
            if leaf is not None:
                run.config[name] = leaf if isinstance(leaf, str) else json.dumps(leaf)
    for item in config.remove:
        prefix = _item_key(item)
        for name in [k for k in run.config if k == prefix or k.startswith(prefix + ".")]:
            del run.config[name]


def _run(run: WandbRun, rec: Any) -> None:
    run.run_id = rec.run_id or run.run_id
    run.name = rec.display_name or run.name
    run.entity = rec.entity or run.entity
    run.project = rec.project or run.project
    run.group = rec.run_group or run.group
    run.job_type = rec.job_type or run.job_type
    run.tags = tuple(rec.tags) or run.tags
    if rec.HasField("config"):
        _config(run, rec.config)


def parse_run(data: bytes, into: WandbRun | None = None) -> WandbRun:
    """The run a transaction log's bytes describe (``into``: the earlier part of a resumed run);
    :class:`InputError` when the bytes are not a log."""
    problem = header_problem(data)
    if problem is not None:
        raise InputError(problem)
    run = into or WandbRun()
    record_class = _record_class()
    log = scan(data)
    run.problem = log.problem
    for payload in log.records:
        rec = record_class()
        try:
            rec.ParseFromString(payload)
        except Exception:  # protobuf's DecodeError: a record the schema does not read
            run.problem = f"a record that does not decode after record {run.records}"
            break
        run.records += 1
        kind = rec.WhichOneof("record_type")
        if kind == "history":
            _history(run, rec.history)
        elif kind == "run":
            _run(run, rec.run)
        elif kind == "config":
            _config(run, rec.config)
        elif kind == "exit":
            run.exit_code = int(rec.exit.exit_code)
    return run


def _read(path: Path, into: WandbRun | None = None) -> WandbRun:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{shorten(path, PATH_LIMIT)}: cannot be read ({exc.strerror})") from None
    try:
        run = parse_run(data, into)
    except InputError as exc:
        raise InputError(f"{shorten(path, PATH_LIMIT)}: {exc}") from None
    if run.problem is not None:
        warnings.warn(f"{shorten(path, PATH_LIMIT)}: {run.problem}; kept the {run.records} "
                      "record(s) before it", DataWarning, stacklevel=3)
    if not run.run_id:
        run.run_id = path.stem.removeprefix("run-")
    return run


def app_url() -> str:
    """The address of W&B's web app as the wandb package finds it: ``$WANDB_APP_URL``, else the
    app of ``$WANDB_BASE_URL`` (its API server), else the app of the package's default server."""
    from wandb import util

    given = os.environ.get("WANDB_APP_URL", "").strip()
    if given:
        return given.rstrip("/")
    try:
        from wandb.sdk.lib.urls import DEFAULT_BASE_URL as default
    except ImportError:  # a wandb without it: W&B's cloud was the one default
        default = "https://api.wandb.ai"
    api = os.environ.get("WANDB_BASE_URL", "").strip() or default
    to_app = getattr(util, "api_to_app_url", None) or util.app_url  # app_url(api) before it
    return str(to_app(api)).rstrip("/")


def run_table(run: WandbRun, source: str, app: str | None = None) -> Table:
    """The :class:`~saturate.table.table.Table` of one run's points and facts (its page in the
    W&B app at ``app``, default :func:`app_url`, when known)."""
    frame = pd.DataFrame(run.rows, columns=["metric", "step", "value", "timestamp"])
    frame = frame.assign(source=source, experiment=run.project or "wandb", run_id=run.run_id,
                         run=run.name or run.run_id, run_status=run.status)
    table = tidy(frame, allow_empty=True, origin=source)
    facts = {"source": source, "run_id": run.run_id, "run_status": run.status, **run.facts()}
    page = run.page(app)
    if page:
        facts[RUN_URL] = page
    return Table(table.drop(columns=["run_status"]), merge_facts([pd.DataFrame([facts])]))


def group_by_run_id(files: Iterable[Path]) -> dict[str, list[Path]]:
    """The files of each run id (a resumed run leaves one folder per start), in name order: the
    order W&B's ``run-<date>_<time>-<id>`` folders were written."""
    out: dict[str, list[Path]] = {}
    for f in sorted(files, key=lambda p: (p.parent.name, p.name)):
        out.setdefault(f.stem.removeprefix("run-"), []).append(f)
    return out


def iter_wandb_runs(files: Iterable[Path], root: Path, *, source: str | None = None,
                    app: str | None = None) -> Iterator[Table]:  # fmt: skip
    """The :class:`~saturate.table.table.Table` of each run of ``files`` (W&B logs below ``root``),
    one at a time (``app``: the W&B app the runs' pages are in, default :func:`app_url`); an
    error when none holds a point."""
    label = source or str(root)
    found = False
    for run_files in group_by_run_id(files).values():
        run: WandbRun | None = None
        for f in run_files:
            run = _read(f, run)
        if run is not None and run.rows:
            found = True
            yield run_table(run, label, app)
    if not found:
        raise InputError(f"{shorten(label, PATH_LIMIT)}: W&B run files hold no history points")


def read_wandb_files(files: Iterable[Path], root: Path, *, source: str | None = None,
                     app: str | None = None) -> Table:  # fmt: skip
    """:func:`iter_wandb_runs` as one table."""
    return concat_tables(iter_wandb_runs(files, root, source=source, app=app))
