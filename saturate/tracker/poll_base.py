"""What every poller shares: the :class:`PollResult` it returns, the :class:`Poller` protocol, the
selection it applies (:class:`PollSelection`) and the helpers that turn what it read into run
records and tidy rows. The pollers themselves live in ``poll_mlflow_client``,
``poll_mlflow_sqlite`` and ``poll_files``; :mod:`saturate.tracker.poll` picks one for a source.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pandas as pd

from saturate.curves import AXIS_METRICS, empty_table, tidy
from saturate.ingest.mlflow_common import Selection, kept_tags
from saturate.tracker.records import CurveKey, RunRecord

__all__ = [
    "CurveKey", "PollResult", "Poller", "PollSelection", "globs_match", "run_record",
    "new_rows", "rows_table",
]


@dataclass(frozen=True)
class PollResult:
    """What one poll found: new points (tidy rows after the cursors), run facts, counters.

    ``fetched`` counts the points received from the source (what a poll costs), ``points`` holds
    only those after each curve's cursor. ``file_stamps`` are the (mtime_ns, size) of the files
    read, to be stored once the points are; ``seen`` the last step received per curve (so
    points dropped as NaN are not fetched again).
    """

    points: pd.DataFrame
    runs: tuple[RunRecord, ...] = ()
    fetched: int = 0
    curves_checked: int = 0
    file_stamps: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    seen: Mapping[CurveKey, int] = field(default_factory=dict)


class Poller(Protocol):
    """Anything with a ``label`` and ``poll(cursors, file_stamps) -> PollResult``."""

    label: str

    def poll(
        self, cursors: Mapping[CurveKey, int], file_stamps: Mapping[str, tuple[int, int]]
    ) -> PollResult: ...


def globs_match(value: str, patterns: Sequence[str] | None) -> bool:
    """True when no patterns are given or ``value`` matches one of them."""
    return not patterns or any(fnmatch.fnmatchcase(value, p) for p in patterns)


def _tuple(x: Sequence[str] | str | None) -> tuple[str, ...] | None:
    if x is None:
        return None
    return (x,) if isinstance(x, str) else tuple(x) or None


@dataclass(frozen=True)
class PollSelection:
    """Experiments (names or ids), an MLflow filter, metric and run globs, the compute metric."""

    experiment: tuple[str, ...] | None = None
    filter: str | None = None
    metric: tuple[str, ...] | None = None
    run: tuple[str, ...] | None = None
    compute: str | None = None

    @classmethod
    def of(
        cls,
        experiment: Sequence[str] | str | None = None,
        filter: str | None = None,  # noqa: A002 - the CLI's option name
        metric: Sequence[str] | str | None = None,
        run: Sequence[str] | str | None = None,
        compute: str | None = None,
    ) -> PollSelection:
        """The selection from the CLI's options (a single string counts as one pattern)."""
        return cls(_tuple(experiment), filter or None, _tuple(metric), _tuple(run), compute)

    def wants_metric(self, key: str) -> bool:
        """The selected metrics, the compute metric, and the axis metrics when none is named."""
        return (key == self.compute or globs_match(key, self.metric)
                or (self.compute is None and globs_match(key, AXIS_METRICS)))  # fmt: skip

    def wants_run(self, name: str, run_id: str) -> bool:
        return globs_match(name, self.run) or globs_match(run_id, self.run)

    def mlflow_runs(self) -> Selection:
        """The ingest selection of the runs (experiments and filter; metrics are chosen here)."""
        return Selection(experiment=self.experiment, filter=self.filter)


def run_record(label: str, run_id: str, name: str, experiment: str, status: str | None,
               params: Mapping[str, str], tags: Mapping[str, str]) -> RunRecord:  # fmt: skip
    """The facts kept about an MLflow run (bookkeeping tags dropped as the ingest does)."""
    return RunRecord(source=label, run_id=run_id, run=name, experiment=experiment, status=status,
                     params=tuple(sorted(params.items())),
                     tags=tuple(sorted(kept_tags(tags).items())))  # fmt: skip


def new_rows() -> dict[str, list]:
    """Empty columns for :func:`rows_table`, filled point by point."""
    return {k: [] for k in ("source", "experiment", "run_id", "run", "metric", "step", "value",
                            "timestamp", "run_status")}  # fmt: skip


def rows_table(rows: Mapping[str, Sequence]) -> pd.DataFrame:
    """Columns of points (step as the x axis) as the tidy table; empty when there are none."""
    if not len(rows["run_id"]):
        return empty_table()
    df = pd.DataFrame(rows)
    df["compute"] = df["step"].astype(float)
    return tidy(df, compute_name="step", allow_empty=True, origin=str(rows["source"][0]))
