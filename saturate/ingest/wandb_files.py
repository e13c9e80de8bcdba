"""Read W&B run folders (``wandb/``, ``run-*``, ``offline-run-*``) from the run's own
transaction log, ``run-<id>.wandb``, without a server and without a CSV export.

The log (:mod:`saturate.ingest.wandb_log`) holds the ``Record`` protobuf messages the wandb
package writes (``wandb.proto.wandb_internal_pb2``, read with the package's own schema, so the
``wandb`` extra is needed: ``pip install 'saturate[wandb]'``). From them:

* every history row: ``_step`` is the step, ``_timestamp`` the timestamp; every other numeric
  value a point of its metric, nested keys (``{"eval": {"reward": 1}}``) flattened with ``/``
  (``eval/reward``). ``_runtime`` (wall seconds since the start, the same clock as the timestamp:
  ``--gpus`` derives GPU-hours from it) and other ``_``-keys W&B keeps for itself are left out, and
  so are media, tables, histograms, text and booleans;
* the run: its id, its name (the display name), the project as the experiment, its config as run
  parameters (``params.<key>``, nested keys joined with ``.`` as W&B shows them), its group and job
  type (``params.group``, ``params.job_type``, unless the config has such a key; ``--group-by
  group`` pools a group's runs), its tags (``tags.wandb.tags``, comma-separated);
* its state: FINISHED (exit code 0), FAILED (another exit code) or RUNNING (no exit record yet: a
  run still being written, or one that crashed).

A file cut short (a crash, a copy not finished, a run still being written) or damaged (a bad
checksum) is read up to that point, and one :class:`~saturate.table.curves.DataWarning` says so. The
runs of a folder are read one run id at a time (a resumed run's folders as one run).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.ingest import wandb_log
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, DataWarning, tidy
from saturate.table.run_table import merge_facts
from saturate.table.table import Table, concat_tables

__all__ = ["is_wandb_file", "is_run_folder", "WandbRun", "parse_run", "read_wandb_files",
           "iter_wandb_runs", "run_table", "group_by_run_id"]

_TAGS = f"{TAG_PREFIX}wandb.tags"
_STATUS = {None: "RUNNING", 0: "FINISHED"}


def is_wandb_file(path: Path) -> bool:
    """A W&B transaction log: named ``*.wandb`` and starting with the W&B header."""
    if not path.name.endswith(".wandb") or path.name.startswith("."):
        return False
    try:
        with open(path, "rb") as f:
            return wandb_log.is_wandb_log(f.read(wandb_log.HEADER))
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
    project: str = ""
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
    return wandb_internal_pb2.Record


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _flat(prefix: str, value: Any, sep: str) -> Iterator[tuple[str, Any]]:
    """``(key, leaf)`` pairs of a nested value; media and tables (dicts with ``_type``) whole."""
    if isinstance(value, dict) and "_type" not in value:
        for k, v in value.items():
            yield from _flat(f"{prefix}{sep}{k}" if prefix else str(k), v, sep)
    else:
        yield prefix, value


def _number(value: Any) -> float | None:
    """A history value as a point's value: numbers only (not booleans, text or media)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _item_key(item: Any) -> str:
    return "/".join(item.nested_key) if len(item.nested_key) else item.key


def _history(run: WandbRun, history: Any) -> None:
    values: dict[str, Any] = {}
    for item in history.item:
        for key, leaf in _flat(_item_key(item), _json(item.value_json), "/"):
            values[key] = leaf
    step = values.get("_step", history.step.num if history.HasField("step") else None)
    if _number(step) is None:
        return
    stamp = _number(values.get("_timestamp"))
    when = math.nan if stamp is None else stamp
    for key, leaf in values.items():
        value = _number(leaf)
        if value is not None and not key.startswith("_"):
            run.rows.append((key, int(step), value, when))


def _config_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _config(run: WandbRun, config: Any) -> None:
    for item in config.update:
        key = _item_key(item)
        if key.startswith("_wandb"):
            continue
        for name, leaf in _flat(key, _json(item.value_json), "."):
            if leaf is not None:
                run.config[name] = _config_text(leaf)
    for item in config.remove:
        prefix = _item_key(item)
        for name in [k for k in run.config if k == prefix or k.startswith(prefix + ".")]:
            del run.config[name]


def _run(run: WandbRun, rec: Any) -> None:
    run.run_id = rec.run_id or run.run_id
    run.name = rec.display_name or run.name
    run.project = rec.project or run.project
    run.group = rec.run_group or run.group
    run.job_type = rec.job_type or run.job_type
    run.tags = tuple(rec.tags) or run.tags
    if rec.HasField("config"):
        _config(run, rec.config)


def parse_run(data: bytes, into: WandbRun | None = None) -> WandbRun:
    """The run a transaction log's bytes describe (``into``: add to a run read before, the
    earlier part of a resumed run). Raises :class:`InputError` when the bytes are not a log."""
    problem = wandb_log.header_problem(data)
    if problem is not None:
        raise InputError(problem)
    run = into or WandbRun()
    record_class = _record_class()
    log = wandb_log.scan(data)
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


def run_table(run: WandbRun, source: str) -> Table:
    """The :class:`~saturate.table.table.Table` of one run's points and facts (empty: no
    points)."""
    frame = pd.DataFrame(run.rows, columns=["metric", "step", "value", "timestamp"])
    frame = frame.assign(source=source, experiment=run.project or "wandb", run_id=run.run_id,
                         run=run.name or run.run_id, run_status=run.status)
    table = tidy(frame, allow_empty=True, origin=source)
    facts = {"source": source, "run_id": run.run_id, "run_status": run.status, **run.facts()}
    return Table(table.drop(columns=["run_status"]), merge_facts([pd.DataFrame([facts])]))


def group_by_run_id(files: Iterable[Path]) -> dict[str, list[Path]]:
    """The files of each run id (a resumed run leaves one folder per start), in name order,
    which for W&B's ``run-<date>_<time>-<id>`` folders is the order they were written."""
    out: dict[str, list[Path]] = {}
    for f in sorted(files, key=lambda p: (p.parent.name, p.name)):
        out.setdefault(f.stem.removeprefix("run-"), []).append(f)
    return out


def iter_wandb_runs(files: Iterable[Path], root: Path, *, source: str | None = None
                    ) -> Iterator[Table]:  # fmt: skip
    """The :class:`~saturate.table.table.Table` of each run of ``files`` (W&B transaction logs below ``root``), one run at
    a time; an error when none holds a point."""
    label = source or str(root)
    found = False
    for run_files in group_by_run_id(files).values():
        run: WandbRun | None = None
        for f in run_files:
            run = _read(f, run)
        if run is not None and run.rows:
            found = True
            yield run_table(run, label)
    if not found:
        raise InputError(f"{shorten(label, PATH_LIMIT)}: W&B run files hold no history points")


def read_wandb_files(files: Iterable[Path], root: Path, *, source: str | None = None
                     ) -> Table:  # fmt: skip
    """:func:`iter_wandb_runs` as one table."""
    return concat_tables(iter_wandb_runs(files, root, source=source))
