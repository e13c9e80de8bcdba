"""Read W&B run folders from the run's own transaction log, ``run-<id>.wandb`` (32 KiB blocks of
the wandb package's ``Record`` protobufs: the ``wandb`` extra is needed), without a server.

History rows give the points (``_step``, ``_timestamp``; other numbers by key, nested keys joined
with ``/``; ``_``-keys and media left out); the run record its name, entity, project, config
(``params.*``), group, job type and tags; the exit record its state (none yet: RUNNING). A file
cut short or damaged is read up to that point, with a warning. A record that cannot give points (a
``_step`` that is NaN, infinite or beyond 64-bit integers, a number too large for a float, a value
nested deeper than :data:`MAX_DEPTH`) is skipped, and the records skipped are counted in a warning.

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
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.ingest.layouts import constant_column
from saturate.ingest.redaction import public_url, ui_link
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, DataWarning, tidy
from saturate.table.run_table import RUN_URL, merge_facts
from saturate.table.table import Table, concat_tables

BLOCK = 32 * 1024
HEADER = 7
MAGIC = b":W&B" + struct.pack("<H", 0xBEE1)
_VERSION = 0
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_CHUNK = struct.Struct("<IHB")
ENDS_INSIDE = "the file ends inside a record (still being written, or cut short)"
# The CRC-32 of each chunk type's byte, the seed of its payload's checksum.
_SEED = {t: zlib.crc32(bytes([t])) for t in (_FULL, _FIRST, _MIDDLE, _LAST)}
#: How deep a logged value may nest (its keys joined with ``/``); a deeper one is an odd record.
MAX_DEPTH = 100
_STEP_RANGE = range(-(2**63), 2**63)


class OddRecord(ValueError):
    """A record that cannot give points or facts (see the module docstring): it is skipped."""


class HistoryPoints:
    """A run's history points as columns: each metric name once, 28 bytes a point (a list of
    ``(metric, step, value, time)`` tuples costs about 150, ten times the log that held them)."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.codes = array("i")
        self.steps = array("q")
        self.values = array("d")
        self.times = array("d")

    def append(self, row: tuple[str, int, float, float]) -> None:
        """Add the point ``(metric, step, value, time)``."""
        key, step, value, when = row
        code = self.names.setdefault(key, len(self.names))
        self.codes.append(code)
        self.steps.append(step)
        self.values.append(value)
        self.times.append(when)

    def extend(self, rows: Iterable[tuple[str, int, float, float]]) -> None:
        for row in rows:
            self.append(row)

    def __len__(self) -> int:
        return len(self.codes)

    def frame(self) -> pd.DataFrame:
        """The points as a ``metric, step, value, timestamp`` frame (metric categorical)."""
        codes = np.frombuffer(self.codes, dtype=np.int32) if len(self) else np.empty(0, np.int32)
        return pd.DataFrame(copy=False, data={  # views of the columns, not copies
            "metric": pd.Categorical.from_codes(codes, categories=list(self.names)),
            "step": np.frombuffer(self.steps, dtype=np.int64) if len(self) else np.empty(0, np.int64),
            "value": np.frombuffer(self.values, dtype=float) if len(self) else np.empty(0),
            "timestamp": np.frombuffer(self.times, dtype=float) if len(self) else np.empty(0)})


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
    if data[:6] != MAGIC:
        return "no W&B header (not a run-<id>.wandb transaction log)"
    if data[6] != _VERSION:
        return f"W&B log version {data[6]}, only version {_VERSION} is known"
    return None


def scan(data: bytes) -> LogScan:
    """The records of a W&B transaction log; ``data`` must start with a valid header."""
    reader = LogReader(data)
    return LogScan(tuple(reader), reader.end, reader.problem)


class LogReader:
    """The records of a W&B transaction log one at a time (``data`` must start with a valid
    header); once they are read, ``end`` is the offset after the last whole record and
    ``problem`` why reading stopped early (None: it did not)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.end = data, HEADER
        self.problem: str | None = None

    def __iter__(self) -> Iterator[bytes]:
        for payload, end, problem in _chunks(self.data):
            self.end, self.problem = end, problem
            if payload is not None:
                yield payload


def _chunks(data: bytes) -> Iterator[tuple[bytes | None, int, str | None]]:
    """``(record, end, None)`` for each record, then ``(None, end, problem)``."""
    pos = end = HEADER
    parts: list[bytes] = []  # the chunks of a record spread over blocks, so far
    while True:
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # the block's zero trailer
            if data[pos:pos + left].strip(b"\0"):
                yield None, end, (f"bytes other than zeros at the end of the block at "
                                  f"{pos - pos % BLOCK}")
                return
            pos += left
            continue
        problem = _chunk_problem(data, pos, left, bool(parts))
        if problem is not None:
            yield None, end, problem or None
            return
        checksum, length, kind = _CHUNK.unpack_from(data, pos)
        start, stop = pos + HEADER, pos + HEADER + length
        payload = data[start:stop]
        if zlib.crc32(payload, _SEED[kind]) != checksum:
            yield None, end, f"a checksum mismatch at byte {pos}"
            return
        if kind == _FULL and not parts:
            end = stop
            yield payload, end, None
        elif kind == _FIRST and not parts:
            parts.append(payload)
        elif kind in (_MIDDLE, _LAST) and parts:
            parts.append(payload)
            if kind == _LAST:
                end = stop
                yield b"".join(parts), end, None
                parts = []
        else:
            yield None, end, f"a chunk out of order at byte {pos}"
            return
        pos = stop


def _chunk_problem(data: bytes, pos: int, left: int, inside: bool) -> str | None:
    """Why the chunk at ``pos`` (``left`` bytes before its block ends; ``inside`` a record) ends
    the read: a problem, "" for the end of what was written, None to read it."""
    size = len(data)
    if pos >= size:
        return ENDS_INSIDE if inside else ""
    if pos + HEADER > size:
        return ENDS_INSIDE
    checksum, length, kind = _CHUNK.unpack_from(data, pos)
    if checksum == 0 and length == 0 and kind == 0 and not inside:
        # space reserved but not written yet, or zeros where records were
        return f"a zeroed chunk at byte {pos}" if data[pos:].strip(b"\0") else ""
    if length > left - HEADER:
        return f"a chunk longer than its block at byte {pos}"
    if pos + HEADER + length > size:
        return ENDS_INSIDE
    if kind not in _SEED:
        return f"an unknown chunk type {kind} at byte {pos}"
    return None


_TAGS = f"{TAG_PREFIX}wandb.tags"
_STATUS = {None: "RUNNING", 0: "FINISHED"}


def is_wandb_file(path: Path, *, version: bool = False) -> bool:
    """A W&B transaction log: named ``*.wandb`` and starting with the W&B header (``version``:
    of the version read here)."""
    if not path.name.endswith(".wandb") or path.name.startswith("."):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER)
    except OSError:
        return False
    return header_problem(head) is None if version else head[:6] == MAGIC


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
    rows: HistoryPoints = field(default_factory=HistoryPoints)
    records: int = 0
    problem: str | None = None
    odd: int = 0  # records skipped as odd (OddRecord)
    odd_why: str = ""  # why the first of them was

    def skip(self, odd: OddRecord) -> None:
        """Count a record skipped for ``odd``."""
        self.odd += 1
        self.odd_why = self.odd_why or str(odd)

    def skipped_text(self, what: str = "record") -> str | None:
        """What the warning says of the records skipped as odd (None: none was)."""
        if not self.odd:
            return None
        return (f"skipped {self.odd} history {what}(s) that cannot give points (the first: "
                f"{self.odd_why}); kept the others")

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
    except RecursionError:  # nested deeper than Python's parser goes
        raise OddRecord("a value nested too deep to read") from None


def flat_items(prefix: str, value: Any, sep: str) -> Iterator[tuple[str, Any]]:
    """``(key, leaf)`` pairs of a nested value, in order; media and tables (dicts with ``_type``)
    whole. :class:`OddRecord` for a value nested deeper than :data:`MAX_DEPTH` (walked with a
    stack of its own: no recursion to overflow)."""
    stack: list[Iterator[tuple[str, Any]]] = [iter([(prefix, value)])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        key, leaf = item
        if isinstance(leaf, dict) and "_type" not in leaf:
            if len(stack) > MAX_DEPTH:
                raise OddRecord(f"a value nested more than {MAX_DEPTH} deep")
            stack.append(_children(key, leaf, sep))
        else:
            yield key, leaf


def _children(key: str, value: dict[Any, Any], sep: str) -> Iterator[tuple[str, Any]]:
    """The ``(key, value)`` pairs one level down ``value`` (a dict) found at ``key``."""
    for k, v in value.items():
        yield (f"{key}{sep}{k}" if key else str(k)), v


def history_number(value: Any) -> float | None:
    """A history value as a point's value: numbers only (not booleans, text or media);
    :class:`OddRecord` for an integer too large for a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        raise OddRecord(f"a number of {len(str(abs(value)))} digits, too large for a float") \
            from None


def history_step(value: Any) -> int | None:
    """A record's ``_step`` as a point's step (None: not a number, the record has no points);
    :class:`OddRecord` for NaN, an infinity or an integer beyond 64 bits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        raise OddRecord("a _step that is NaN" if math.isnan(value) else "an infinite _step")
    step = int(value)
    if step not in _STEP_RANGE:
        raise OddRecord(f"a _step of {len(str(abs(step)))} digits, beyond 64-bit integers")
    return step


def _item_key(item: Any) -> str:
    return "/".join(item.nested_key) if len(item.nested_key) else item.key


def _history(run: WandbRun, history: Any) -> None:
    """The points of one history record, all or (:class:`OddRecord`) none."""
    values: dict[str, Any] = {}
    for item in history.item:
        for key, leaf in flat_items(_item_key(item), _json(item.value_json), "/"):
            values[key] = leaf
    step = history_step(values.get("_step", history.step.num if history.HasField("step")
                                    else None))  # fmt: skip
    if step is None:
        return
    stamp = history_number(values.get("_timestamp"))
    when = math.nan if stamp is None else stamp
    rows = [(key, step, value, when) for key, leaf in values.items()
            if not key.startswith("_") and (value := history_number(leaf)) is not None]
    run.rows.extend(rows)


def _config(run: WandbRun, config: Any) -> None:
    """A config record's changes, all or (:class:`OddRecord`) none."""
    update: dict[str, str] = {}
    for item in config.update:
        key = _item_key(item)
        if key.startswith("_wandb"):
            continue
        for name, leaf in flat_items(key, _json(item.value_json), "."):
            if leaf is not None:
                update[name] = leaf if isinstance(leaf, str) else _dumps(leaf)
    run.config.update(update)
    for item in config.remove:
        prefix = _item_key(item)
        for name in [k for k in run.config if k == prefix or k.startswith(prefix + ".")]:
            del run.config[name]


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):
        raise OddRecord("a config value nested too deep to write") from None


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
    log = LogReader(data)  # one record at a time: the log's bytes are held once
    run.problem, run.odd, run.odd_why = None, 0, ""
    for payload in log:
        rec = record_class()
        try:
            rec.ParseFromString(payload)
        except Exception:  # protobuf's DecodeError: a record the schema does not read
            run.problem = f"a record that does not decode after record {run.records}"
            break
        run.records += 1
        kind = rec.WhichOneof("record_type")
        try:
            if kind == "history":
                _history(run, rec.history)
            elif kind == "run":
                _run(run, rec.run)
            elif kind == "config":
                _config(run, rec.config)
            elif kind == "exit":
                run.exit_code = int(rec.exit.exit_code)
        except OddRecord as odd:
            run.skip(odd)
    else:
        run.problem = log.problem
    return run


def warn_of(path: Path, run: WandbRun, *, cut_short: bool = True) -> None:
    """The warnings a log's read gives: where it stopped early (``cut_short``: also when it ends
    inside a record) and the records it skipped."""
    where = shorten(path, PATH_LIMIT)
    if run.problem is not None and (cut_short or run.problem != ENDS_INSIDE):
        warnings.warn(f"{where}: {run.problem}; kept the {run.records} record(s) before it",
                      DataWarning, stacklevel=3)
    if (odd := run.skipped_text()) is not None:
        warnings.warn(f"{where}: {odd}", DataWarning, stacklevel=3)


def _read(path: Path, into: WandbRun | None = None) -> WandbRun:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{shorten(path, PATH_LIMIT)}: cannot be read ({exc.strerror})") from None
    try:
        run = parse_run(data, into)
    except InputError as exc:
        raise InputError(f"{shorten(path, PATH_LIMIT)}: {exc}") from None
    warn_of(path, run)
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
    frame = run.rows.frame()
    n = len(frame)  # each fact a categorical column: a byte a row, not a pointer to a string
    frame = frame.assign(**{k: constant_column(v, n) for k, v in (
        ("source", source), ("experiment", run.project or "wandb"), ("run_id", run.run_id),
        ("run", run.name or run.run_id), ("run_status", run.status))})
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
