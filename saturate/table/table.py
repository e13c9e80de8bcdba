"""The :class:`Table` every stage takes: the tidy points, the run facts beside them and the x axis.

``saturate.load()`` returns one. The three live in one object rather than in a frame's ``attrs``,
which a pandas operation may drop on the way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import pandas as pd

from saturate.table.axis import ComputeAxis, joined_axis, named_axis
from saturate.table.curves import concat, empty_table
from saturate.table.run_table import RUN_KEY, empty_facts, merge_facts, split_facts, with_facts

__all__ = ["Table", "as_table", "concat_tables"]


@dataclass(frozen=True, eq=False)
class Table:
    """The tidy ``points`` (:mod:`saturate.table.curves`), the run facts ``runs``, one row per
    ``(source, run_id)`` (:mod:`saturate.table.run_table`), and the x ``axis``.

    ``len(table)`` is the number of points; :meth:`to_frame` puts the run facts on every point.
    A part's ``runs`` may hold runs whose points a selection dropped.
    """

    points: pd.DataFrame
    runs: pd.DataFrame = field(default_factory=empty_facts)
    axis: ComputeAxis = field(default_factory=lambda: named_axis("step"))

    @classmethod
    def of(cls, df: pd.DataFrame, axis: ComputeAxis | None = None) -> Table:
        """A tidy frame (run facts on its rows or none), its run columns moved to :attr:`runs`;
        the x axis ``step`` unless ``axis`` says."""
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
    """``data`` as a :class:`Table`: a Table as it is, a tidy frame by :meth:`Table.of`."""
    return data if isinstance(data, Table) else Table.of(data, axis)


def concat_tables(tables: Iterable[Table | pd.DataFrame]) -> Table:
    """Tables (or wide tidy frames) as one: points concatenated, run frames merged, axes joined."""
    parts = [as_table(t) for t in tables]
    if len(parts) == 1:
        return parts[0]
    full = [p for p in parts if not p.empty]
    points = concat(p.points for p in parts) if full else empty_table()
    runs = merge_facts([p.runs for p in full])
    return Table(points, runs, joined_axis([p.axis for p in full]))
