"""Walking a folder: which files are read as curves, which are skipped, and why.

A project folder holds more than curves (configs, schemas, notes, code, checkpoints, a pipe a
logger left behind), so a walk reads what holds curves and passes over the rest, naming what it
passed over in one warning (:func:`skipped_line`; ``saturate ls`` lists each with its reason).
The rule, for a file found by walking:

* **Never opened**: anything that is not a regular file (a FIFO, a socket, a device node, a
  broken link), whatever its name (``run-x.wandb``, ``mlflow.db``, ``train.log``, an event
  file): reading a pipe would wait forever. Only ``stat`` looks at it (:func:`special_kind`).
* **Not walked**: hidden files and folders, :data:`SKIP_DIRS`, a package's ``*.egg-info``, and the inside of an MLflow store
  or a W&B run folder (each read as a whole), and W&B's own ``debug*.log`` beside its run folders.
* **W&B run folders without a log to read** (``run-<date>_<time>-<id>`` holding W&B's ``files/``,
  ``logs/`` or ``tmp/``): a folder whose ``run-<id>.wandb`` is not there (yet: rsync copies it
  last; or a cleanup removed it) is skipped and named; a log that is empty (still being
  written) or whose header is damaged is skipped and named with what is wrong. ``watch`` reads
  each once it is a log.
* **Read by name**: TensorBoard event files (``*tfevents*``), W&B run logs (``*.wandb`` that
  start with W&B's header), MLflow stores (``mlruns/``, an ``mlflow.db`` holding MLflow's tables).
* **Read by name and content**: tables (:data:`~saturate.ingest.files.TABLE_SUFFIXES`, gzipped
  too) and trainers' console logs (``.log``/``.out`` whose lines carry metrics). A table that
  holds no curves (a config, a JSON Schema, a data set, an empty file) is skipped; one that
  looks like curve data but is broken is an error. What decides is written beside the code that
  decides it, :func:`saturate.ingest.files.read_table_file` (it raises
  :class:`~saturate.errors.NoCurvesError` for the first kind).
* **Skipped by name**: every other file (``.md``, ``.yaml``, ``.toml``, ``.py``, images,
  checkpoints, a ``.log`` without metric lines).

A file the user names is read whatever its name: one that holds no curves is an error naming what
it lacks, and one that is not a regular file is ``<path>: not a file``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from saturate.errors import names_text
from saturate.ingest.console_log import LOG_SUFFIXES
from saturate.ingest.files import is_log_file, is_table_file
from saturate.ingest.mlflow_common import is_legacy_store, is_mlflow_sqlite
from saturate.ingest.tensorboard import is_event_file
from saturate.ingest.wandb_files import HEADER, MAGIC, is_run_folder, is_wandb_file
from saturate.results.codec import Coded, meta

__all__ = ["SKIP_DIRS", "Found", "Skipped", "ordered", "skipped_line", "special_kind", "walk",
           "walk_all", "walk_folder"]

#: Folders a walk never enters (besides hidden ones and a package's build metadata,
#: ``*.egg-info``): caches, virtual environments, VCS data.
SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".git", ".venv", "venv", ".saturate",
                       ".ipynb_checkpoints"})

#: Folders W&B keeps its runs in; beside them, in ``wandb/``, its own ``debug*.log`` (not named).
_WANDB_RUN_DIRS = ("run-", "offline-run-", "latest-run")
#: A W&B run folder's name (``offline-run-20261207_204847-3xk1a9``) and what the wandb package
#: puts in one besides its log.
_WANDB_RUN_NAME = re.compile(r"(offline-)?run-\d{8}_\d{6}-[^/\\]+")
_WANDB_RUN_PARTS = frozenset({"files", "logs", "tmp"})
#: The order skipped files are named in: what was never opened, W&B runs without a log to read,
#: what was read and found to hold no curves, what was passed over by its name (the first are the
#: likeliest surprises).
_ORDER = ("special", "wandb", "content", "name")


@dataclass(frozen=True)
class Skipped(Coded):
    """A file a walk did not read: its path, why (``reason`` in JSON), and how that was decided
    (``special``: not a regular file, never opened; ``wandb``: a W&B run folder without its log,
    or a log that is empty or damaged; ``content``: read, holds no curves; ``name``: not a kind
    of file saturate reads)."""

    path: Path
    why: str = field(metadata=meta(key="reason"))
    how: str = "name"

    def label(self) -> str:
        """The path as the warning names it; a file that is not a regular one, or a W&B run
        without a log to read, says what it is."""
        if self.how == "wandb":  # the run folder's name kept whole: the line cuts names at 80
            room, path = 80 - len(self.why) - 3, str(self.path)
            if len(path) > room:
                is_log = self.path.name.endswith(".wandb")
                path = "…/" + (f"{self.path.parent.name}/" if is_log else "") + self.path.name
            return f"{path} ({self.why})"
        return f"{self.path} ({self.why})" if self.how == "special" else str(self.path)


@dataclass(frozen=True)
class Found:
    """What a walk found: table files (and console logs), TensorBoard event files, MLflow stores,
    W&B run logs, and the files it skipped."""

    tables: list[Path] = field(default_factory=list)
    events: list[Path] = field(default_factory=list)
    stores: list[Path] = field(default_factory=list)
    runs: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.tables or self.events or self.stores or self.runs)


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file (``"a FIFO"``, ``"a socket"``, ``"a device
    node"``, ``"a folder"``, ``"a broken link"``), None for a regular file (links followed). It is
    only stat-ed, never opened: opening a FIFO waits for a writer."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "a broken link" if os.path.islink(path) else "not readable"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def walk(root: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """Table files, TensorBoard event files and MLflow stores below ``root`` (W&B run folders
    are passed over: :func:`walk_all` finds them too)."""
    return walk_all(root)[:3]


def walk_all(root: Path) -> tuple[list[Path], list[Path], list[Path], list[Path]]:
    """:func:`walk`, and the W&B transaction logs (``run-<id>.wandb``) below ``root``."""
    found = walk_folder(root)
    return found.tables, found.events, found.stores, found.runs


def walk_folder(root: Path) -> Found:
    """Everything below ``root`` by the rule of this module: what to read, and what was skipped
    by its name or kind (files skipped for their content are found when they are read)."""
    found = Found()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not d.endswith(".egg-info"))
        if is_legacy_store(here):
            found.stores.append(here)
            dirnames.clear()
            continue
        names = sorted(n for n in filenames if not n.startswith("."))
        if any(d.startswith(_WANDB_RUN_DIRS) for d in dirnames):  # W&B's wandb/: its own logs
            names = [n for n in names if not (n.startswith("debug") and n.endswith(".log"))]
        if _is_run_folder(here, names) or _is_wandb_run_dir(here, dirnames, names):
            dirnames.clear()  # a W&B run folder: its logs are the run, the rest is W&B's
            names = [n for n in names if n.endswith(".wandb")]
            if not names:
                found.skipped.append(Skipped(here, _NO_LOG, "wandb"))
        elif "mlflow.db" in names and special_kind(here / "mlflow.db") is None \
                and is_mlflow_sqlite(here / "mlflow.db"):
            found.stores.append(here / "mlflow.db")
            names.remove("mlflow.db")
            # MLflow 3's default local layout keeps artifacts (not curves) in mlruns/ beside the db.
            if "mlruns" in dirnames and not is_legacy_store(here / "mlruns"):
                dirnames.remove("mlruns")
        for name in names:
            _sort(here / name, found)
    return found


def _is_run_folder(here: Path, names: list[str]) -> bool:
    """Whether ``here`` is a W&B run folder: it holds a ``run-*.wandb`` that is a regular file
    with W&B's header (a pipe or a stray file of that name does not make one)."""
    return is_run_folder(names) and any(
        special_kind(here / n) is None and is_wandb_file(here / n)
        for n in names if n.startswith("run-") and n.endswith(".wandb"))


_NO_LOG = "W&B run folder, no .wandb log yet"


def _is_wandb_run_dir(here: Path, dirnames: list[str], names: list[str]) -> bool:
    """Whether ``here`` is a W&B run folder by its name and parts, whether or not its log is
    there (see the module docstring)."""
    return bool(_WANDB_RUN_NAME.fullmatch(here.name)) and (
        bool(_WANDB_RUN_PARTS.intersection(dirnames)) or is_run_folder(names))


def _log_problem(path: Path) -> str:
    """What is wrong with a ``.wandb`` file that does not start with W&B's header."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER)
    except OSError as exc:
        return f"a W&B log that cannot be read ({exc.strerror})"
    if not head:
        return "empty W&B log"
    if head[:6] == MAGIC and len(head) == HEADER:
        return f"W&B log version {head[6]}, unknown"
    return "W&B log, damaged header"


def _sort(path: Path, found: Found) -> None:
    """Put one file of a walk where it belongs in ``found``."""
    kind = special_kind(path)
    if kind is not None:
        found.skipped.append(Skipped(path, kind, "special"))
    elif is_event_file(path):
        found.events.append(path)
    elif path.name.endswith(".wandb"):
        if is_wandb_file(path, version=True):
            found.runs.append(path)
        else:
            found.skipped.append(Skipped(path, _log_problem(path), "wandb"))
    elif is_table_file(path) or is_log_file(path):
        found.tables.append(path)
    elif path.name.lower().removesuffix(".gz").endswith(LOG_SUFFIXES):
        found.skipped.append(Skipped(path, "a log without metric lines"))
    else:
        found.skipped.append(Skipped(path, "not a kind of file saturate reads"))


def ordered(skipped: Sequence[Skipped]) -> list[Skipped]:
    """Skipped files, the likeliest surprises first (see :data:`_ORDER`), then by path."""
    return sorted(skipped, key=lambda s: (_ORDER.index(s.how), str(s.path)))


def skipped_line(skipped: Sequence[Skipped], most: int = 5) -> str:
    """The one line that names the files a read skipped, the likeliest surprises first:
    ``skipped 3 file(s) that hold no curves: config.json, notes.md and 1 more``."""
    return (f"skipped {len(skipped)} file(s) that hold no curves: "
            f"{names_text([s.label() for s in ordered(skipped)], most=most, limit=80)}")
