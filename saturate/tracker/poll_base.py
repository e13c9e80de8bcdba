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

from saturate.ingest.mlflow_common import Experiment, RunMeta, Selection, kept_tags
from saturate.table.curves import AXIS_METRICS, concat, empty_table, tidy
from saturate.tracker.records import CurveKey, RunRecord

__all__ = [
    "CurveKey", "PollResult", "Poller", "PollSelection", "globs_match", "run_record",
    "new_rows", "rows_table", "mlflow_result", "merge_results",
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


def merge_results(results: Sequence[PollResult]) -> PollResult:
    """Several polls as one."""
    return PollResult(
        concat([r.points for r in results]) if results else empty_table(),
        tuple(run for r in results for run in r.runs),
        sum(r.fetched for r in results),
        sum(r.curves_checked for r in results),
        {k: v for r in results for k, v in r.file_stamps.items()},
        {k: v for r in results for k, v in r.seen.items()},
    )


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


def mlflow_result(
    label: str,
    exps: Sequence[Experiment],
    runs: Sequence[RunMeta],
    points: pd.DataFrame,
    checked: int,
    cursors: Mapping[CurveKey, int] | None = None,
) -> PollResult:
    """A poll of an MLflow store: its points (``mlflow_common.points_frame``, all received) as
    tidy rows after each curve's cursor, with the runs' facts; ``seen`` from every point."""
    names = {e.id: e.name for e in exps}
    last_steps = points.groupby(["run_id", "metric"], sort=False)["step"].max()
    seen = {(label, r, k): int(s) for (r, k), s in last_steps.items()}
    fetched = len(points)
    if cursors:
        floor = [cursors.get((label, r, k)) for r, k in zip(points["run_id"], points["metric"],
                                                          strict=True)]  # fmt: skip
        keep = [f is None or s > f for f, s in zip(floor, points["step"], strict=True)]
        points = points.loc[keep].reset_index(drop=True)
    by_id = {r.run_id: r for r in runs}
    exp_of = {i: names.get(r.experiment_id, r.experiment_id) for i, r in by_id.items()}
    records = tuple(run_record(label, r.run_id, r.display_name, exp_of[r.run_id], r.status,
                               r.params, r.tags) for r in runs)  # fmt: skip
    run_ids = points["run_id"]
    table = rows_table({
        "source": [label] * len(points),
        "experiment": run_ids.map(exp_of).to_numpy(),
        "run_id": run_ids.to_numpy(),
        "run": run_ids.map({i: r.display_name for i, r in by_id.items()}).to_numpy(),
        "metric": points["metric"].to_numpy(),
        "step": points["step"].to_numpy(),
        "value": points["value"].to_numpy(),
        "timestamp": points["timestamp"].to_numpy() / 1000.0,
        "run_status": run_ids.map({i: r.status for i, r in by_id.items()}).to_numpy(),
    })  # fmt: skip
    return PollResult(table, records, fetched, checked, seen=seen)
