"""The :class:`Table` every stage takes: the tidy points, the run facts beside them and the x axis.

``saturate.load()`` returns one; each part of a read is one (:class:`saturate.ingest.Tables`).
Keeping the three together in one object, rather than in the attributes pandas lets a frame carry, means that no pandas
operation can drop the run facts or the name of the x axis on the way.

>>> import pandas as pd
>>> t = Table.of(pd.DataFrame({"source": "s", "run_id": ["a", "b"], "metric": "m", "step": [1, 1],
...                            "value": [0.1, 0.2], "params.lr": ["1e-3", "1e-4"]}))
>>> t
<Table: 2 points, 2 runs, 1 metric; x axis step (steps)>
>>> t.runs["params.lr"].tolist(), "params.lr" in t.points.columns
(['1e-3', '1e-4'], False)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import pandas as pd

from saturate.table.axis import ComputeAxis, joined_axis, named_axis
from saturate.table.curves import concat, empty_table
from saturate.table.run_table import (
    RUN_KEY,
    empty_facts,
    merge_facts,
    split_facts,
    with_facts,
)

__all__ = ["Table", "as_table", "concat_tables"]


@dataclass(frozen=True, eq=False)
class Table:
    """The tidy ``points`` (one row per logged point: ``source, experiment, run_id, run, metric,
    step, compute, value`` and any extra columns; see :mod:`saturate.table.curves`), the run
    facts ``runs`` (one row per run ``(source, run_id)``: ``run_status``, ``params.*``,
    ``tags.*``; see :mod:`saturate.table.run_table`) and the x ``axis`` with its unit and notes
    (:class:`~saturate.table.axis.ComputeAxis`).

    ``len(table)`` is the number of points; :meth:`to_frame` puts the run facts on every point.
    Inside a read, a part's ``runs`` may hold runs whose points a selection dropped
    (:func:`~saturate.table.run_table.run_facts` leaves them out).
    """

    points: pd.DataFrame
    runs: pd.DataFrame = field(default_factory=empty_facts)
    axis: ComputeAxis = field(default_factory=lambda: named_axis("step"))

    @classmethod
    def of(cls, df: pd.DataFrame, axis: ComputeAxis | None = None) -> Table:
        """A tidy frame whose run facts may be on every row (as a user builds it), its run
        columns moved to :attr:`runs`; the x axis ``step`` unless ``axis`` says."""
        points, runs = split_facts(df)
        return cls(points, runs, named_axis("step") if axis is None else axis)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def empty(self) -> bool:
        return self.points.empty

    def to_frame(self) -> pd.DataFrame:
        """The points with their run's facts on every row (a new frame)."""
        return with_facts(self.points, self.runs)

    def with_points(self, points: pd.DataFrame, axis: ComputeAxis | None = None) -> Table:
        """The same runs with other points (a selection, or the points on another axis)."""
        return replace(self, points=points, axis=self.axis if axis is None else axis)

    def __repr__(self) -> str:
        pts = self.points
        runs = len(pts[list(RUN_KEY)].drop_duplicates()) if len(pts) else 0
        metrics = pts["metric"].nunique() if len(pts) else 0
        return (f"<Table: {len(pts):,} point{'s' * (len(pts) != 1)}, {runs:,} run{'s' * (runs != 1)}"
                f", {metrics:,} metric{'s' * (metrics != 1)}; x axis {self.axis.heading}>")


def as_table(data: Table | pd.DataFrame, axis: ComputeAxis | None = None) -> Table:
    """``data`` as a :class:`Table`: a Table as it is, a tidy frame (run facts on its rows or
    none) with its run columns moved apart, on ``axis`` (default ``step``)."""
    return data if isinstance(data, Table) else Table.of(data, axis)


def concat_tables(tables: Iterable[Table | pd.DataFrame]) -> Table:
    """Tables (or wide tidy frames) as one: points concatenated by
    :func:`saturate.table.curves.concat`, run frames merged, the axes joined
    (:func:`~saturate.table.axis.joined_axis`)."""
    parts = [as_table(t) for t in tables]
    if len(parts) == 1:
        return parts[0]
    full = [p for p in parts if not p.empty]
    points = concat(p.points for p in parts) if full else empty_table()
    runs = merge_facts([p.runs for p in full])
    return Table(points, runs, joined_axis([p.axis for p in full]))
