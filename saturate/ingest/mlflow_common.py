"""The MLflow types and helpers every reader (and the tracker's pollers) shares, and which store
a source names (:func:`resolve_source`: cheap checks that never write). Imports no reader.

A reader returns the experiments it picked, the selected runs as :class:`RunMeta` and their
points as :func:`points_frame`.
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
import sqlite3
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import SupportsInt

import numpy as np
import pandas as pd

from saturate.errors import InputError, SettingsError, no_match
from saturate.ingest.redaction import redact, redact_uri, remember_uri, userinfo_split
from saturate.settings.checks import MAX_SECONDS
from saturate.table.selection import Offered

#: Seconds a read of a store (a server, a locked database) may wait before it stops.
DEFAULT_TIMEOUT = 120.0
TIMEOUT_ENV = "SATURATE_TIMEOUT"


def resolve_timeout(timeout: float | str | None = None) -> float:
    """``timeout`` seconds, else ``$SATURATE_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`; checked."""
    name = "timeout"
    if timeout is None:
        timeout = os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT
        name = f"${TIMEOUT_ENV}" if os.environ.get(TIMEOUT_ENV) else name
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be a number of seconds, got {timeout!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise SettingsError(f"{name} must be a positive number of seconds, got {timeout!r}")
    if value > MAX_SECONDS:  # longer waits overflow the clocks of sockets and locks
        raise SettingsError(f"{name} must be at most {MAX_SECONDS} seconds (a week), got "
                            f"{timeout!r}")
    return value


# mlflow takes seconds to import: the functions that use its filter parser import it themselves.

# MLflow's SQL stores clamp +-inf to +-DBL_MAX (and keep NaN as value 0 with is_nan set).
_DBL_MAX = float(np.finfo(np.float64).max)
# System tags worth keeping; the other mlflow.* tags are bookkeeping noise.
KEPT_SYSTEM_TAGS = frozenset(
    {"mlflow.runName", "mlflow.parentRunId", "mlflow.user", "mlflow.source.git.commit"}
)


@dataclass(frozen=True)
class MlflowSource:
    """A classified source: ``kind`` is 'rest', 'db' or 'files'; ``target`` what readers open."""

    kind: str
    target: str
    label: str
    sqlite_path: Path | None = None
    timeout: float = 30.0  # seconds a read may wait on another process's lock (``--timeout``)


@dataclass(frozen=True)
class Experiment:
    """One MLflow experiment as listed by a store."""

    id: str
    name: str
    active: bool = True


@dataclass(frozen=True)
class RunMeta:
    """Run-level facts every reader returns; times are epoch milliseconds as MLflow keeps them."""

    run_id: str
    experiment_id: str
    name: str
    status: str
    params: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    start_time: int = 0
    end_time: int | None = None
    user_id: str = ""
    artifact_uri: str = ""

    @classmethod
    def of(cls, run_id: object, experiment_id: object, name: object, status: object, *,
           params: Mapping[str, str], tags: Mapping[str, str],
           start_time: SupportsInt | str | None, end_time: SupportsInt | str | None,
           user_id: object, artifact_uri: object) -> RunMeta:
        """A run from a store's raw fields: ids and texts as str (None as ""), times as int."""
        return cls(
            run_id=str(run_id), experiment_id=str(experiment_id), name=str(name or ""),
            status=str(status or ""), params=dict(params), tags=dict(tags),
            start_time=int(start_time or 0), end_time=None if end_time is None else int(end_time),
            user_id=str(user_id or ""), artifact_uri=str(artifact_uri or ""),
        )  # fmt: skip

    @property
    def display_name(self) -> str:
        """tags.mlflow.runName, else the run's name attribute, else its id."""
        return self.tags.get("mlflow.runName") or self.name or self.run_id


@dataclass(frozen=True)
class Selection:
    """What to read: experiment names/ids (None = all active), a search filter, metric globs;
    ``offered`` hears of every metric key the store has (what a metric miss lists)."""

    experiment: tuple[str, ...] | None = None
    filter: str | None = None
    metric: tuple[str, ...] | None = None
    offered: Offered | None = field(default=None, compare=False, repr=False)

    def wants_metric(self, key: str) -> bool:
        if self.offered is not None:
            self.offered.metric(key)
        return self.metric is None or any(fnmatch.fnmatchcase(key, g) for g in self.metric)


def kept_tags(tags: Mapping[str, str]) -> dict[str, str]:
    """Drop MLflow's bookkeeping tags, keep user tags and a few useful system ones."""
    return {k: v for k, v in tags.items() if not k.startswith("mlflow.") or k in KEPT_SYSTEM_TAGS}


def pick_experiments(available: Iterable[Experiment], wanted: Sequence[str] | None, label: str
                     ) -> list[Experiment]:
    """The experiments named (by name or id) in ``wanted``, or every active one when None."""
    available = list(available)
    if not wanted:
        return [e for e in available if e.active]
    by_name = {e.name: e for e in available}
    by_id = {e.id: e for e in available}
    picked: dict[str, Experiment] = {}
    for item in wanted:
        exp = by_name.get(item) or by_id.get(str(item))
        if exp is None:
            raise no_match("--experiment", item, [e.name for e in available if e.active],
                           "experiment", where=label, plural="active experiments")
        if not exp.active:
            raise InputError(f"--experiment {item!r}: the experiment is deleted in {label}")
        picked[exp.id] = exp
    return list(picked.values())


def check_filter(filter_string: str | None) -> list[dict]:
    """Parse an MLflow search filter (so a typo fails before any reading); [] when empty."""
    if not filter_string:
        return []
    from mlflow.exceptions import MlflowException
    from mlflow.utils.search_utils import SearchUtils

    try:
        return list(SearchUtils.parse_search_filter(filter_string))
    except MlflowException as err:
        raise InputError(f"--filter {filter_string!r}: {err.message}") from None


def filter_runs(runs: Sequence[RunMeta], filter_string: str | None,
                latest_metrics: Mapping[str, Mapping[str, float]] | None = None) -> list[RunMeta]:
    """Apply an MLflow search filter locally with MLflow's own matcher (SQL and file stores);
    ``latest_metrics`` ({run_id: {key: latest value}}) serves ``metrics.`` clauses."""
    clauses = check_filter(filter_string)
    if not clauses:
        return list(runs)
    if any(c.get("type") == "dataset" for c in clauses):
        raise InputError(f"--filter {filter_string!r}: dataset clauses need a tracking server "
                         "source")
    from mlflow.entities import Metric, Param, Run, RunData, RunInfo, RunTag
    from mlflow.exceptions import MlflowException
    from mlflow.utils.search_utils import SearchUtils

    latest_metrics = latest_metrics or {}
    by_id = {r.run_id: r for r in runs}
    entities = []
    for r in runs:
        info = RunInfo(
            run_id=r.run_id, experiment_id=r.experiment_id, user_id=r.user_id,
            status=r.status, start_time=r.start_time, end_time=r.end_time,
            lifecycle_stage="active", artifact_uri=r.artifact_uri, run_name=r.display_name,
        )  # fmt: skip
        data = RunData(
            metrics=[Metric(k, v, 0, 0) for k, v in latest_metrics.get(r.run_id, {}).items()],
            params=[Param(k, v) for k, v in r.params.items()],
            tags=[RunTag(k, v) for k, v in r.tags.items()],
        )
        entities.append(Run(info, data))
    try:
        kept = SearchUtils.filter(entities, filter_string)
    except MlflowException as err:
        raise InputError(f"--filter {filter_string!r}: {err.message}") from None
    return [by_id[run.info.run_id] for run in kept]


def filter_uses_metrics(filter_string: str | None) -> bool:
    return any(c.get("type") == "metric" for c in check_filter(filter_string))


def restore_values(value: np.ndarray, is_nan: np.ndarray | None = None) -> np.ndarray:
    """Map MLflow's stored encodings back: is_nan rows to NaN, +-DBL_MAX to +-inf."""
    out = np.asarray(value, dtype=float).copy()
    out[out >= _DBL_MAX] = np.inf
    out[out <= -_DBL_MAX] = -np.inf
    if is_nan is not None:
        out[np.asarray(is_nan, dtype=bool)] = np.nan
    return out


def points_frame(run_id: Sequence[str] | np.ndarray, metric: Sequence[str] | np.ndarray,
                 step: Sequence[int] | np.ndarray, value: Sequence[float] | np.ndarray,
                 timestamp: Sequence[int] | np.ndarray) -> pd.DataFrame:
    """The readers' common output: one row per stored point, timestamp in epoch milliseconds."""
    return pd.DataFrame({
        "run_id": pd.Series(np.asarray(run_id, dtype=object), dtype=object),
        "metric": pd.Series(np.asarray(metric, dtype=object), dtype=object),
        "step": np.asarray(step, dtype=np.int64),
        "value": np.asarray(value, dtype=float),
        "timestamp": np.asarray(timestamp, dtype=np.int64),
    })


def empty_points() -> pd.DataFrame:
    return points_frame([], [], [], [], [])


def curve_points(run_ids: Sequence[str], metrics: Sequence[str], sizes: Sequence[int] | np.ndarray,
                 step: np.ndarray, value: np.ndarray, timestamp: np.ndarray) -> pd.DataFrame:
    """:func:`points_frame` of curves end to end, each run id and metric given once per curve."""
    return points_frame(np.repeat(np.array(run_ids, dtype=object), sizes),
                        np.repeat(np.array(metrics, dtype=object), sizes), step, value, timestamp)


def stack_curves(curves: Sequence[tuple], restore: bool = False) -> pd.DataFrame:
    """The points of ``(run_id, metric, steps, values, timestamps[, is_nan])`` curves in turn
    (``restore``: values through :func:`restore_values`)."""
    if not curves:
        return empty_points()
    step, value, ts = (np.concatenate([np.asarray(c[i], dtype=dt) for c in curves])
                       for i, dt in ((2, np.int64), (3, float), (4, np.int64)))
    if restore:
        is_nan = np.concatenate([c[5] for c in curves]) if len(curves[0]) > 5 else None
        value = restore_values(value, is_nan)
    sizes = [len(c[2]) for c in curves]
    return curve_points([c[0] for c in curves], [c[1] for c in curves], sizes, step, value, ts)


def first_line(text: object, default: str = "unknown error") -> str:
    """The first line of an error's text (else ``default``), credentials masked, <= 200 chars."""
    lines = str(text).strip().splitlines()
    return redact(lines[0] if lines else default)[:200]


def readonly_sqlite_uri(path: str | os.PathLike) -> str:
    """The sqlite URI opening ``path`` read-only (``mode=ro``: never written, never created)."""
    return f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro"


DB_FILE = "mlflow.db"
LEGACY_FOLDER = "mlruns"
_DB_SCHEMES = ("sqlite", "postgresql", "postgres", "mysql", "mssql")
_SQLITE_MAGIC = b"SQLite format 3\x00"
# label (credentials masked) -> the URI it was made from, for writing back to the same store.
_URIS: dict[str, str] = {}


def source_uri(label: str) -> str:
    """The URI (credentials kept, for writing back) a source label was made from in this process;
    the label itself otherwise."""
    return _URIS.get(label, label)


def _with_credentials(uri: str) -> str:
    """``uri`` remembered as holding secrets, with its userinfo percent-encoded where the user
    left ``/``, ``?``, ``#`` or ``@`` unencoded (so the password reaches the server intact)."""
    remember_uri(uri)
    parts = userinfo_split(uri)
    if parts is None:
        return uri
    head, userinfo, rest = parts
    user, sep, password = userinfo.partition(":")
    safe = "%!$&'()*+,;=-._~"
    encoded = urllib.parse.quote(user, safe=safe) + sep + urllib.parse.quote(password, safe=safe)
    return f"{head}{encoded}@{rest}"


def _scheme(text: str) -> str:
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*)://", text)
    return match.group(1).lower() if match else ""


def is_mlflow_sqlite(path: Path) -> bool:
    """True when ``path`` is a sqlite file holding MLflow's tables (opened read-only)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                return False
        conn = sqlite3.connect(readonly_sqlite_uri(path), uri=True, timeout=2)
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False
    return {"experiments", "runs", "metrics"} <= names


def is_legacy_store(path: Path) -> bool:
    """True for an ``mlruns/``-like folder: experiment folders with meta.yaml, or a ``.trash``."""
    path = Path(path)
    if not path.is_dir():
        return False
    try:
        children = [c for _, c in zip(range(200), path.iterdir(), strict=False)]
    except OSError:
        return False
    for child in children:
        if child.name.startswith(".") or not child.is_dir():
            continue
        meta = child / "meta.yaml"
        if meta.is_file():
            try:
                head = meta.read_text(errors="replace")[:4000]
            except OSError:
                continue
            if re.search(r"^experiment_id:", head, re.M) and re.search(r"^name:", head, re.M):
                return True
    return False


def resolve_source(source: str | os.PathLike | None) -> MlflowSource:
    """Classify ``source`` (None: ``MLFLOW_TRACKING_URI``) or raise InputError naming it."""
    if source is None or str(source).strip() == "":
        env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
        if not env:
            raise InputError("no MLflow source given and MLFLOW_TRACKING_URI is not set; pass a "
                             "tracking server URL, a database URI, an mlflow.db file or an mlruns/ "
                             "folder")
        source = env
    text = os.fspath(source)
    scheme = _scheme(text)
    if scheme in ("http", "https"):
        label = redact_uri(text).rstrip("/")
        _URIS[label] = _with_credentials(text).rstrip("/")
        return MlflowSource("rest", _URIS[label], label)
    if scheme.split("+")[0] in _DB_SCHEMES:
        text = _with_credentials(text)
        label = redact_uri(text)
        _URIS[label] = text
        if scheme.startswith("sqlite"):
            db = _sqlite_path(text)
            if not db.is_file():
                raise InputError(f"MLflow source {label!r}: database file {db} does not exist")
            return MlflowSource("db", text, label, sqlite_path=db)
        return MlflowSource("db", text, label)
    if scheme == "file":
        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(text).path))
        return _resolve_path(path, text)
    if scheme:
        raise InputError(f"MLflow source {redact_uri(text)!r}: unsupported scheme {scheme!r} "
                         "(expected http(s)://, sqlite:///, postgresql://, mysql:// or a path)")
    return _resolve_path(Path(text).expanduser(), text)


def _sqlite_path(uri: str) -> Path:
    rest = uri.split("://", 1)[1].split("?", 1)[0]
    if rest.startswith("/"):
        rest = rest[1:]  # sqlite:///rel.db is relative, sqlite:////abs.db absolute
    if not rest or rest == ":memory:":
        raise InputError(f"MLflow source {uri!r}: an in-memory sqlite database holds no runs")
    return Path(urllib.parse.unquote(rest))


def _resolve_path(path: Path, given: str) -> MlflowSource:
    if not path.exists():
        raise InputError(f"MLflow source {given!r} does not exist")
    if path.is_file():
        if is_mlflow_sqlite(path):
            return MlflowSource("db", f"sqlite:///{path.resolve()}", given, sqlite_path=path)
        raise InputError(f"MLflow source {given!r} is not an MLflow sqlite database")
    db = path / DB_FILE
    if db.is_file() and is_mlflow_sqlite(db):
        return MlflowSource("db", f"sqlite:///{db.resolve()}", given, sqlite_path=db)
    if is_legacy_store(path):
        return MlflowSource("files", str(path), given)
    if is_legacy_store(path / LEGACY_FOLDER):
        return MlflowSource("files", str(path / LEGACY_FOLDER), given)
    raise InputError(f"MLflow source {given!r} holds no MLflow store (no {DB_FILE}, no mlruns/ "
                     "experiment folders with meta.yaml)")


def is_mlflow_source(source: str | os.PathLike) -> bool:
    """Cheap check (no network, no full scan) that ``source`` is something MLflow keeps runs in."""
    try:
        text = os.fspath(source)
    except TypeError:
        return False
    scheme = _scheme(text)
    if scheme in ("http", "https") or scheme.split("+")[0] in _DB_SCHEMES:
        return True
    if scheme and scheme != "file":
        return False
    try:
        resolve_source(text)
    except InputError:
        return False
    return True
