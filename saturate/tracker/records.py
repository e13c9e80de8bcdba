"""What the watch history stores, and the conversions between those rows and saturate's objects:
run and poll records, an analysis as a row (headline columns plus its JSON entry) and back, the
stored points as the tidy table. :mod:`saturate.tracker.state` does the SQLite side.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from saturate.results import CurveAnalysis, jsonable
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX, empty_table, tidy

__all__ = [
    "SCHEMA", "SCHEMA_VERSION", "CurveKey", "RunRecord", "PollRecord", "ANALYSIS_COLUMNS", "analysis_row", "points_table",
    "curve_from_dict", "finite_or_none",
]

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
    updated REAL NOT NULL, PRIMARY KEY (source, run_id));
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


@dataclass(frozen=True)
class RunRecord:
    """Run-level facts kept between polls: name, experiment, status, params and tags."""

    source: str
    run_id: str
    run: str
    experiment: str
    status: str | None = None
    params: tuple[tuple[str, str], ...] = ()
    tags: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return jsonable({**self.__dict__, "params": dict(self.params), "tags": dict(self.tags)})


@dataclass(frozen=True)
class PollRecord:
    """One pass of the watcher: points received, points new, curves changed and re-analysed."""

    time: float
    source: str
    fetched: int
    new_points: int
    curves_changed: int
    analysed: int
    events: int
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self.__dict__)

    def summary(self) -> str:
        text = (
            f"fetched {self.fetched} point(s), {self.new_points} new, {self.curves_changed} "
            f"curve(s) changed, {self.analysed} analysed, {self.events} event(s)"
        )
        return f"{text}; error: {self.error}" if self.error else text


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
    if df["run_status"].isna().all():
        df = df.drop(columns=["run_status"])
    return tidy(df, compute_name=compute_name, origin=origin)


def curve_from_dict(d: dict[str, Any]) -> CurveAnalysis:
    """Rebuild a :class:`CurveAnalysis` from its ``to_dict()`` entry (fit and points are gone)."""
    return CurveAnalysis.from_dict(d)
