"""The watch history: a small local SQLite file (default ``.saturate/history.db``) holding what
``watch`` needs to resume without fetching twice (points, cursors, file stamps, run statuses) and
what it found (analyses, events, polls). WAL lets ``history``/``timeline`` read while one writer
(holding a lock) writes; a pass commits in one transaction or not at all. The file carries
saturate's marker (a foreign ``--state`` is refused unchanged); any failure of the file is one
:class:`~saturate.errors.InputError` line.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import math
import os
import re
import socket
import sqlite3
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np
import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, SettingsError, no_match, shorten
from saturate.results import CurveAnalysis
from saturate.results.codec import Coded, meta
from saturate.settings.fields import DEFAULT_STATE
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, empty_table, tidy
from saturate.tracker.events import Event

CurveKey = tuple[str, str, str]
#: The columns of the ``analyses`` table :func:`analysis_row` fills, in its order.
ANALYSIS_COLUMNS: tuple[str, ...] = (
    "time", "source", "run_id", "run", "metric", "compute_name", "compute_last", "n_points",
    "verdict", "gain", "gain_lo", "gain_hi", "asymptote", "asymptote_lo", "asymptote_hi",
    "asymptote_identified", "knee", "stop_point", "stop_lo", "stop_hi", "collapse", "run_status",
    "payload",
)  # fmt: skip


#: The layout of the history file, kept in ``PRAGMA user_version``.
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    source TEXT NOT NULL, run_id TEXT NOT NULL, run TEXT NOT NULL, experiment TEXT NOT NULL,
    status TEXT, params TEXT NOT NULL DEFAULT '{}', tags TEXT NOT NULL DEFAULT '{}',
    updated REAL NOT NULL, url TEXT, PRIMARY KEY (source, run_id));
CREATE TABLE IF NOT EXISTS cursors (
    source TEXT NOT NULL, run_id TEXT NOT NULL, metric TEXT NOT NULL,
    last_step INTEGER NOT NULL, n_points INTEGER NOT NULL, updated REAL NOT NULL,
    PRIMARY KEY (source, run_id, metric));
CREATE TABLE IF NOT EXISTS points (
    source TEXT NOT NULL, run_id TEXT NOT NULL, metric TEXT NOT NULL, step INTEGER NOT NULL,
    compute REAL NOT NULL, value REAL NOT NULL, timestamp REAL,
    PRIMARY KEY (source, run_id, metric, step)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS polls (
    id INTEGER PRIMARY KEY, time REAL NOT NULL, source TEXT NOT NULL, fetched INTEGER NOT NULL,
    new_points INTEGER NOT NULL, curves_changed INTEGER NOT NULL, analysed INTEGER NOT NULL,
    events INTEGER NOT NULL, error TEXT);
CREATE TABLE IF NOT EXISTS analyses (
    id INTEGER PRIMARY KEY, time REAL NOT NULL, source TEXT NOT NULL, run_id TEXT NOT NULL,
    run TEXT NOT NULL, metric TEXT NOT NULL, compute_name TEXT NOT NULL, compute_last REAL,
    n_points INTEGER NOT NULL, verdict TEXT NOT NULL, gain REAL, gain_lo REAL, gain_hi REAL,
    asymptote REAL, asymptote_lo REAL, asymptote_hi REAL, asymptote_identified INTEGER,
    knee REAL, stop_point REAL, stop_lo REAL, stop_hi REAL, collapse REAL, run_status TEXT,
    payload TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS analyses_curve ON analyses (source, run_id, metric, id);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, time REAL NOT NULL, source TEXT NOT NULL, run_id TEXT NOT NULL,
    run TEXT NOT NULL, metric TEXT NOT NULL, kind TEXT NOT NULL, before TEXT, after TEXT,
    compute REAL, detail TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS events_curve ON events (source, run_id, metric, id);
"""


def _pairs(d: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(d.items()))


@dataclass(frozen=True)
class RunRecord(Coded):
    """Run-level facts kept between polls: name, experiment, status, params, tags and the run's
    page in its tracker (``url``, when the source knows it)."""

    source: str
    run_id: str
    run: str
    experiment: str
    status: str | None = None
    params: tuple[tuple[str, str], ...] = field(default=(), metadata=meta(encode=dict, decode=_pairs))
    tags: tuple[tuple[str, str], ...] = field(default=(), metadata=meta(encode=dict, decode=_pairs))
    url: str | None = None

    @classmethod
    def of(cls, source: str, run_id: str, run: str, experiment: str, status: str | None,
           params: Mapping[str, str], tags: Mapping[str, str],
           url: str | None = None) -> RunRecord:  # fmt: skip
        """The record with ``params`` and ``tags`` as sorted pairs."""
        return cls(source, run_id, run, experiment, status, _pairs(params), _pairs(tags), url)


@dataclass(frozen=True)
class PollRecord(Coded):
    """One pass of the watcher: points received, points new, curves changed and re-analysed."""

    time: float
    source: str
    fetched: int
    new_points: int
    curves_changed: int
    analysed: int
    events: int
    error: str | None = None

    def summary(self) -> str:
        text = (f"fetched {self.fetched} point(s), {self.new_points} new, {self.curves_changed} "
                f"curve(s) changed, {self.analysed} analysed, {self.events} event(s)")
        return f"{text}; error: {self.error}" if self.error else text


# The columns each table is written with, in order (``analyses``: :data:`ANALYSIS_COLUMNS`).
POLL_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(PollRecord))
EVENT_COLUMNS = ("time", "source", "run_id", "run", "metric", "kind", "before", "after", "compute",
                 "detail")  # fmt: skip
RUN_COLUMNS = ("source", "run_id", "run", "experiment", "status", "params", "tags", "updated",
               "url")
POINT_COLUMNS = ("source", "run_id", "metric", "step", "compute", "value", "timestamp")


def insert_sql(table: str, columns: Sequence[str], verb: str = "INSERT") -> str:
    """The statement writing one row of ``columns`` into ``table``."""
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def curve_keys(points: pd.DataFrame) -> list[CurveKey]:
    """The (source, run_id, metric) of each row of ``points``."""
    return list(zip(points["source"], points["run_id"], points["metric"], strict=True))


def after_cursors(points: pd.DataFrame, keys: Sequence[CurveKey],
                  cursors: Mapping[CurveKey, int]) -> pd.DataFrame:  # fmt: skip
    """The rows of ``points`` after the cursor of their curve (``keys``: one per row)."""
    last = np.array([cursors.get(k, np.iinfo(np.int64).min) for k in keys], dtype=np.int64)
    return points.loc[points["step"].to_numpy() > last].reset_index(drop=True)


def finite_or_none(x: Any) -> float | None:
    """A number for a REAL column: None for missing or non-finite values."""
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def analysis_row(curve: CurveAnalysis, at: float) -> tuple:
    """One ``analyses`` row (see :data:`ANALYSIS_COLUMNS`): headline numbers and the JSON entry."""
    num = finite_or_none
    stop, gain, asym = curve.stop_point, curve.gain_per_doubling, curve.asymptote
    return (
        at, curve.source, curve.run_id, curve.run, curve.metric, curve.compute_name,
        num(curve.compute_last), int(curve.n_points), curve.verdict,
        num(gain.value), num(gain.lo), num(gain.hi),
        num(asym.value), num(asym.lo), num(asym.hi), int(bool(asym.identified)),
        num(curve.knee), None if stop is None else num(stop.value),
        None if stop is None else num(stop.lo), None if stop is None else num(stop.hi),
        None if curve.collapse is None else num(curve.collapse.compute), curve.run_status,
        json.dumps(curve.to_dict(), allow_nan=False),
    )  # fmt: skip


def points_table(rows: pd.DataFrame, compute_name: str, origin: str) -> pd.DataFrame:
    """Stored point rows joined with their run (params and tags as JSON) as the tidy table."""
    if rows.empty:
        return empty_table()
    extra: dict[str, list[Any]] = {}
    for col, prefix in (("params", PARAM_PREFIX), ("tags", TAG_PREFIX)):
        decoded = [json.loads(x) if isinstance(x, str) else {} for x in rows[col]]
        for i, d in enumerate(decoded):
            for k, v in d.items():
                extra.setdefault(prefix + k, [None] * len(rows))[i] = v
    df = rows.drop(columns=["params", "tags"])
    for col, values in sorted(extra.items()):
        df[col] = pd.Series(values, dtype=object)
    for col in ("run_status", "run_url"):  # facts no run has: no column
        if col in df.columns and df[col].isna().all():
            df = df.drop(columns=[col])
    return tidy(df, compute_name=compute_name, origin=origin)


def curve_from_dict(d: dict[str, Any]) -> CurveAnalysis:
    """Rebuild a :class:`CurveAnalysis` from its ``to_dict()`` entry (fit and points are gone)."""
    return CurveAnalysis.from_dict(d)


F = TypeVar("F", bound=Callable[..., Any])
# What SQLite says -> what the user reads.
_CAUSES = (
    ("full", "the disk is full"),
    ("no space left", "the disk is full"),
    ("permission denied", "no permission to write there"),
    ("readonly", "the file or its folder is read-only"),
    ("unable to open", "cannot create or open it (is the folder writable?)"),
    ("not a database", "not a saturate history file (or it is corrupt)"),
    ("malformed", "the file is corrupt"),
    ("locked", "another process holds it locked"),
    ("disk i/o", "a disk error"),
)


def state_error(path: Path, exc: BaseException) -> InputError:
    """A failure of the history file as one line naming the file and the cause."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    low = text.lower().replace(" ", "")
    cause = next((why for key, why in _CAUSES if key.replace(" ", "") in low), text)
    return InputError(f"--state {path}: {cause} ({text})" if cause != text else
                      f"--state {path}: {cause}")  # fmt: skip


@contextmanager
def translated(path: Path) -> Iterator[None]:
    """Inside the block, SQLite, pandas-SQL and file errors become :func:`state_error`."""
    try:
        yield
    except (sqlite3.Error, OSError, pd.errors.DatabaseError) as exc:
        raise state_error(path, exc) from None


def guarded(method: F) -> F:
    """Turn SQLite and file errors of a HistoryStore method into one-line InputErrors."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with translated(self.path):
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


#: ``PRAGMA application_id`` of a saturate history file: the bytes "SATu".
APPLICATION_ID = 0x53415475
# The tables a history file written before the marker holds (all of them).
_OWN_TABLES = frozenset({"meta", "runs", "cursors", "points", "files", "polls", "analyses",
                         "events"})  # fmt: skip


def check_owner(db: sqlite3.Connection, path: Path, schema_version: int) -> bool:
    """Raise :class:`InputError` unless ``db`` is empty or a saturate history file; nothing is
    written. Returns True when the file still needs the marker (new, or written before it).
    Empty means nothing at all: a database holding only a view, an index or a trigger is
    someone's."""
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        entries = db.execute("SELECT type, name FROM sqlite_master ORDER BY type, name").fetchall()
    except sqlite3.DatabaseError as exc:
        if _cannot_open(exc):  # the file is there but cannot be opened as asked: say why
            raise state_error(path, exc) from None
        raise InputError(f"--state {path}: not a saturate history file ({exc}); it was left "
                         "unchanged") from None
    tables = {name for kind, name in entries if kind == "table"}
    if app_id == APPLICATION_ID:
        return False
    if app_id == 0 and not entries and version == 0:
        return True
    if app_id == 0 and 0 < version <= schema_version and tables >= _OWN_TABLES:
        return True
    if app_id:
        what = f"application id {app_id:#x}"
    elif tables:
        what = f"tables {', '.join(sorted(tables)[:5])}"
    elif entries:
        what = ", ".join(f"{kind} {name}" for kind, name in entries[:5])
    else:
        what = f"schema version {version}"
    raise InputError(f"--state {path}: not a saturate history file (an SQLite database with "
                     f"{what}); it was left unchanged; pass --state with a new file path")


def _cannot_open(exc: BaseException) -> bool:
    """An SQLite error that says the file could not be opened or written (not what it holds)."""
    text = str(exc).lower()
    return any(key in text for key in ("unable to open", "readonly", "read-only",
                                       "permission denied", "disk i/o"))


def state_files(state: str | os.PathLike) -> list[tuple[Path, str]]:
    """The history file and the files SQLite and the writer keep beside it, each with what it
    is: no output may replace them (:func:`saturate.report.output.check_not_inputs`)."""
    path = Path(state)
    own = [(path, f"the watch history (--state {path})"),
           (lock_path(path), f"the lock file of --state {path}")]
    return own + [(path.with_name(path.name + end), f"a file SQLite keeps for --state {path}")
                  for end in ("-wal", "-shm", "-journal")]


def lock_path(state: Path) -> Path:
    """The writer's lock file beside the history file: ``<state>.lock``."""
    return state.with_name(state.name + ".lock")


#: What a lock file of saturate holds: nothing yet, or its holder's line.
_LOCK_TEXT = re.compile(r"\A(?:pid \d+ on \S+ since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n?)?\Z")


class WriterLock:
    """An exclusive lock on ``<state>.lock`` for one writing process, naming its holder.

    The lock file is owned like the history: a symbolic link is never followed, and a file that
    is not a regular file or holds anything but saturate's holder line is refused unchanged."""

    def __init__(self, state: Path) -> None:
        import fcntl

        self.path = lock_path(state)
        self._fh: IO[str] | None = None
        fh = self._open(state, create=True)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = fh.read(200).strip().splitlines()[:1]
            fh.close()
            who = holder[0] if holder else "another process"
            raise InputError(f"--state {state}: another saturate watch writes it ({who}); stop "
                             "it first, or pass a different --state") from None
        text = fh.read(4096)  # under the lock: saturate's writers write only while holding it
        if not _LOCK_TEXT.match(text):
            fh.close()
            raise InputError(f"--state {state}: {self.path} is not saturate's lock file (it holds "
                             "other text); it was left unchanged; move it away or pass a "
                             "different --state")
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime())}\n")
        fh.flush()
        self._fh = fh

    @classmethod
    def check(cls, state: Path) -> None:
        """Refuse, before the history file is opened or made, a lock file that is not
        saturate's (a link, a pipe, a device, other text); nothing is created or written."""
        lock = cls.__new__(cls)
        lock.path = lock_path(state)
        if not os.path.lexists(lock.path):
            return
        with lock._open(state, create=False) as fh:
            if not _LOCK_TEXT.match(fh.read(4096)):
                raise InputError(f"--state {state}: {lock.path} is not saturate's lock file (it "
                                 "holds other text); it was left unchanged; move it away or pass "
                                 "a different --state")

    def _open(self, state: Path, *, create: bool) -> IO[str]:
        """The lock file opened for reading (and writing, created when missing, with
        ``create``); never through a symbolic link, never a pipe or a device (opened without
        waiting, then refused)."""
        flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        flags |= (os.O_RDWR | os.O_CREAT) if create else os.O_RDONLY
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise InputError(f"--state {state}: its lock file {self.path} is a symbolic "
                                 "link, which saturate never follows; it was left unchanged; "
                                 "remove it or pass a different --state") from None
            raise InputError(f"--state {state}: cannot create its lock file {self.path} "
                             f"({exc.strerror or exc})") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise InputError(f"--state {state}: its lock file {self.path} is not a regular file "
                             f"({_kind(mode)}); it was left unchanged; remove it or pass a "
                             "different --state")
        os.set_blocking(fd, True)
        return open(fd, "r+" if create else "r", encoding="utf-8",  # noqa: SIM115 - held
                    errors="replace")

    def release(self) -> None:
        """Drop the lock (the file stays: removing it could let two writers hold two files)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _mode(path: Path) -> int | None:
    """The mode of what ``path`` leads to (links followed); None when nothing is there."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return None


def _read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only. A history SQLite cannot open so (its file or folder cannot be
    written: a read-only copy, mount or archive, where the shared-memory file of its write-ahead
    log cannot be made) is read as an unchanging file, which it then is."""
    uri = f"file:{path.resolve()}?mode=ro"
    db = sqlite3.connect(uri, uri=True, timeout=30)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        if not _cannot_open(exc):
            return db  # said by check_owner, with what the file holds
        db.close()
        return sqlite3.connect(uri + "&immutable=1", uri=True, timeout=30)
    return db


class HistoryStore:
    """The watch state and history in one SQLite file; use as a context manager or ``close()``.
    ``readonly=True`` opens an existing file without changing it (``history``, ``timeline``)."""

    def __init__(self, path: str | Path = DEFAULT_STATE, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self._depth = 0
        self._db: sqlite3.Connection | None = None
        self._lock: WriterLock | None = None
        try:
            with translated(self.path):
                self._open(readonly)
        except BaseException:
            self.close()
            raise

    @property
    def _conn(self) -> sqlite3.Connection:
        """The open file (``_db`` is None only while ``__init__`` opens it, or fails to)."""
        assert self._db is not None
        return self._db

    def _open(self, readonly: bool) -> None:
        mode = _mode(self.path)
        if mode is not None and stat.S_ISDIR(mode):
            raise SettingsError(f"--state {self.path}: is a folder, expected a file path")
        if mode is not None and not stat.S_ISREG(mode):  # a pipe would wait for ever
            raise InputError(f"--state {self.path}: not a file ({_kind(mode)})")
        if readonly:
            if mode is None:
                raise InputError(f"--state {self.path}: no watch history there (run `saturate "
                                 "watch` first or pass --state)")
            self._db = _read_only(self.path)
        else:
            WriterLock.check(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30)
        self._db.row_factory = sqlite3.Row
        unmarked = check_owner(self._db, self.path, SCHEMA_VERSION)
        if not readonly:  # the file is ours (or new): one writer at a time
            self._lock = WriterLock(self.path)
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise InputError(f"--state {self.path}: written by a newer saturate (schema {version}, "
                             f"this one reads up to {SCHEMA_VERSION})")
        if readonly:
            if version == 0:
                raise InputError(f"--state {self.path}: not a saturate history file")
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self.transaction():
            self._db.executescript(SCHEMA)
            if not self._has_run_url():  # a file written before runs had their page
                self._db.execute("ALTER TABLE runs ADD COLUMN url TEXT")
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            if unmarked:  # the marker, inside this transaction
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def _has_run_url(self) -> bool:
        """Whether the ``runs`` table has the ``url`` column (files written before it do not;
        the column is added when such a file is next written, and older saturates ignore it)."""
        return any(r[1] == "url" for r in self._conn.execute("PRAGMA table_info(runs)"))

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the file and drop the writer's lock."""
        if self._db is not None:
            self._db.close()
        if self._lock is not None:
            self._lock.release()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything written inside commits together when the block ends, or not at all when it
        raises (KeyboardInterrupt included); nested blocks join the outer one."""
        if self._depth:
            yield
            return
        self._depth += 1
        try:
            with translated(self.path), self._conn:
                yield
        finally:
            self._depth -= 1

    @guarded
    def has_analyses(self) -> bool:
        """True once any analysis is recorded (the first pass of a new history has none)."""
        return self._conn.execute("SELECT 1 FROM analyses LIMIT 1").fetchone() is not None

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ meta

    @guarded
    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ cursors and points

    @guarded
    def cursors(self, source: str | None = None) -> dict[CurveKey, int]:
        """The last seen step per (source, run_id, metric)."""
        where, params = _where(source=source or None)
        rows = self._conn.execute(f"SELECT source, run_id, metric, last_step FROM cursors{where}",
                                params)
        return {(r[0], r[1], r[2]): int(r[3]) for r in rows}

    @guarded
    def add_points(self, points: pd.DataFrame) -> dict[CurveKey, int]:
        """Store new points (tidy rows) and move the cursors; returns new points per curve.

        Points at or before a curve's last seen step are ignored, so a re-read never duplicates.
        """
        if points.empty:
            return {}
        new = after_cursors(points, curve_keys(points), self.cursors())
        if new.empty:
            return {}
        now = time.time()
        keys = curve_keys(new)
        stamps = new["timestamp"] if "timestamp" in new.columns else [None] * len(new)
        rows = [(*key, int(step), float(compute), float(value),
                 None if t is None or pd.isna(t) else float(t))
                for key, step, compute, value, t in zip(keys, new["step"], new["compute"],
                                                        new["value"], stamps, strict=True)]  # fmt: skip
        added = dict(Counter(keys))
        with self.transaction():
            self._conn.executemany(insert_sql("points", POINT_COLUMNS, "INSERT OR REPLACE"), rows)
            self._conn.executemany(
                "INSERT INTO cursors (source, run_id, metric, last_step, n_points, updated) "
                "SELECT source, run_id, metric, MAX(step), COUNT(*), ? FROM points "
                "WHERE source = ? AND run_id = ? AND metric = ? "
                "ON CONFLICT(source, run_id, metric) DO UPDATE SET "
                "last_step = MAX(cursors.last_step, excluded.last_step), "
                "n_points = excluded.n_points, "
                "updated = excluded.updated", [(now, *key) for key in added])
        return added

    @guarded
    def advance(self, seen: dict[CurveKey, int]) -> None:
        """Move cursors to the last step received even when its points were dropped (NaN)."""
        if not seen:
            return
        now = time.time()
        with self.transaction():
            self._conn.executemany(
                "INSERT INTO cursors (source, run_id, metric, last_step, n_points, updated) "
                "VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT(source, run_id, metric) DO UPDATE SET "
                "last_step = MAX(cursors.last_step, excluded.last_step)",
                [(*k, int(step), now) for k, step in seen.items()])

    @guarded
    def points(
        self, runs: Iterable[tuple[str, str]] | None = None, compute_name: str = "step"
    ) -> pd.DataFrame:
        """The stored points of the given (source, run_id) runs (all when None) as a tidy table."""
        sql = (
            "SELECT p.source, COALESCE(r.experiment, '') AS experiment, p.run_id, "
            "COALESCE(r.run, p.run_id) AS run, p.metric, p.step, p.compute, p.value, p.timestamp, "
            f"r.status AS run_status, {'r.url' if self._has_run_url() else 'NULL'} AS run_url, "
            "r.params, r.tags FROM points p LEFT JOIN runs r "
            "ON r.source = p.source AND r.run_id = p.run_id")
        if runs is None:
            frames = [pd.read_sql_query(sql, self._db)]
        else:
            frames = [pd.read_sql_query(sql + " WHERE p.source = ? AND p.run_id = ?", self._db,
                                        params=(s, r)) for s, r in dict.fromkeys(runs)]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return points_table(df, compute_name, origin=str(self.path))

    # ------------------------------------------------------------------ runs

    @guarded
    def runs(self, source: str | None = None) -> dict[tuple[str, str], RunRecord]:
        where, params = _where(source=source or None)
        rows = self._conn.execute(f"SELECT * FROM runs{where}", params)
        return {(r["source"], r["run_id"]): RunRecord.of(
            r["source"], r["run_id"], r["run"], r["experiment"], r["status"],
            json.loads(r["params"]), json.loads(r["tags"]),
            r["url"] if "url" in r.keys() else None)  # noqa: SIM118 - a Row holds values
            for r in rows}  # fmt: skip

    @guarded
    def upsert_runs(self, records: Iterable[RunRecord]) -> list[RunRecord]:
        """Store run facts; returns the runs whose status changed from a known earlier one."""
        known = self.runs()
        changed = []
        now = time.time()
        with self.transaction():
            for rec in records:
                old = known.get((rec.source, rec.run_id))
                if old is not None and old.status is not None and old.status != rec.status:
                    changed.append(rec)
                if old == rec:
                    continue
                self._conn.execute(
                    insert_sql("runs", RUN_COLUMNS, "INSERT OR REPLACE"),
                    (rec.source, rec.run_id, rec.run, rec.experiment, rec.status,
                     json.dumps(dict(rec.params)), json.dumps(dict(rec.tags)), now, rec.url),
                )  # fmt: skip
        return changed

    # ------------------------------------------------------------------ files

    @guarded
    def file_stamps(self) -> dict[str, tuple[int, int]]:
        return {r[0]: (int(r[1]), int(r[2]))
                for r in self._conn.execute("SELECT path, mtime_ns, size FROM files")}

    @guarded
    def set_file_stamps(self, stamps: dict[str, tuple[int, int]]) -> None:
        with self.transaction():
            self._conn.executemany(
                insert_sql("files", ("path", "mtime_ns", "size"), "INSERT OR REPLACE"),
                [(p, m, s) for p, (m, s) in stamps.items()])

    # ------------------------------------------------------------------ analyses

    @guarded
    def record_analysis(self, curve: CurveAnalysis, at: float | None = None) -> int:
        """Store one analysis (its JSON entry plus the headline numbers as columns)."""
        row = analysis_row(curve, time.time() if at is None else at)
        with self.transaction():
            cur = self._conn.execute(insert_sql("analyses", ANALYSIS_COLUMNS), row)
        assert cur.lastrowid is not None  # an INSERT sets it
        return int(cur.lastrowid)

    @guarded
    def last_analysis(self, key: CurveKey) -> CurveAnalysis | None:
        """The latest recorded analysis of a curve, rebuilt from its JSON entry."""
        row = self._conn.execute("SELECT payload FROM analyses WHERE source = ? AND run_id = ? AND "
                               "metric = ? ORDER BY id DESC LIMIT 1", key).fetchone()
        return None if row is None else curve_from_dict(json.loads(row[0]))

    @guarded
    def latest_analyses(self) -> list[CurveAnalysis]:
        """The latest analysis of every curve the watcher analysed."""
        rows = self._conn.execute(
            "SELECT payload FROM analyses WHERE id IN (SELECT MAX(id) FROM analyses "
            "GROUP BY source, run_id, metric) ORDER BY run, metric")
        return [curve_from_dict(json.loads(r[0])) for r in rows]

    @guarded
    def check_names(self, run: str | None = None, metric: str | None = None) -> None:
        """An error naming what the history holds when ``run`` (a name or id) or ``metric`` names
        nothing in it (``saturate history``, ``timeline --from history``)."""
        where = f"the watch history {shorten(self.path, PATH_LIMIT)}"
        runs = self.runs().values()
        if run is not None and not any(run in (r.run, r.run_id) for r in runs):
            raise no_match("--run", run, {r.run for r in runs}, "run", where=where)
        metrics = {key[2] for key in self.cursors()}
        if metric is not None and metric not in metrics:
            raise no_match("--metric", metric, metrics, "metric", where=where)

    @guarded
    def analyses(
        self, run: str | None = None, metric: str | None = None, source: str | None = None
    ) -> pd.DataFrame:
        """Every recorded analysis (headline columns), oldest first; run matches name or id."""
        where, params = _where(run=run, metric=metric, source=source)
        return pd.read_sql_query(
            f"SELECT id, {', '.join(ANALYSIS_COLUMNS)} FROM analyses{where} ORDER BY id",
            self._db, params=params)

    # ------------------------------------------------------------------ events and polls

    @guarded
    def record_events(self, events: Sequence[Event]) -> None:
        with self.transaction():
            self._conn.executemany(insert_sql("events", EVENT_COLUMNS), map(_event_row, events))

    @guarded
    def events(
        self,
        run: str | None = None,
        metric: str | None = None,
        kind: Sequence[str] | None = None,
        source: str | None = None,
    ) -> list[Event]:
        """Recorded events, oldest first; ``run`` matches the run name or id."""
        where, params = _where(run=run, metric=metric, source=source, kind=tuple(kind) if kind else None)
        rows = self._conn.execute(f"SELECT * FROM events{where} ORDER BY id", params)
        return [Event(**{**{c: r[c] for c in EVENT_COLUMNS},
                         "compute": math.nan if r["compute"] is None else r["compute"]})
                for r in rows]  # fmt: skip

    @guarded
    def has_event(self, key: CurveKey, kind: str) -> bool:
        """True when an event of ``kind`` was recorded for the curve ``key``."""
        return self._conn.execute(
            "SELECT 1 FROM events WHERE source = ? AND run_id = ? AND metric = ? AND kind = ? "
            "LIMIT 1", (*key, kind)).fetchone() is not None

    @guarded
    def record_poll(self, poll: PollRecord) -> None:
        with self.transaction():
            self._conn.execute(insert_sql("polls", POLL_COLUMNS),
                             tuple(getattr(poll, c) for c in POLL_COLUMNS))

    @guarded
    def polls(self) -> list[PollRecord]:
        rows = self._conn.execute(f"SELECT {', '.join(POLL_COLUMNS)} FROM polls ORDER BY id")
        return [PollRecord(*tuple(r)) for r in rows]


def _event_row(e: Event) -> tuple:
    """The values of an event's row in the order of :data:`EVENT_COLUMNS` (a non-finite compute
    stored as NULL)."""
    row = {**e.__dict__, "compute": finite_or_none(e.compute)}
    return tuple(row[c] for c in EVENT_COLUMNS)


def _where(run: str | None = None, **filters: str | Sequence[str] | None
           ) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause of the given filters (None: no filter): ``run`` matches the name or the id,
    a list matches any of its values."""
    clauses: list[str] = []
    params: list[str] = []
    if run is not None:
        clauses.append("(run = ? OR run_id = ?)")
        params += [run, run]
    for name, value in filters.items():
        if value is None:
            continue
        if not isinstance(value, str):
            clauses.append(f"{name} IN ({', '.join('?' * len(value))})")
            params += value
        else:
            clauses.append(f"{name} = ?")
            params.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)
