"""The parts of a read made ready for the verdicts, one part (whole runs) at a time.

Each part is cut by metric role (:mod:`saturate.vocabulary.roles`): the objectives go on to the
engine, the other metrics are kept for their summary. What needs every part (run facts, roles) is
gathered on the way, so a read in parts says what the same read in one piece says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import pandas as pd

from saturate.table.axis import ComputeAxis
from saturate.table.run_table import merge_facts, run_facts
from saturate.table.table import Table, concat_tables
from saturate.vocabulary.roles import split_by_role

__all__ = ["PreparedParts"]


class PreparedParts:
    """Iterate once over the objective points of each part of ``parts``; then :meth:`axis`
    (``axis()``: the x axis of the whole read, known once it is read), :attr:`others` (the points
    of the metrics without a verdict), :meth:`roles` and :meth:`runs` describe the whole read."""

    def __init__(
        self,
        parts: Iterable[Table],
        axis: Callable[[], ComputeAxis],
        *,
        objective: Sequence[str] = (),
        diagnostic: Sequence[str] = (),
    ) -> None:
        self._parts, self.axis = parts, axis
        self._objective, self._diagnostic = tuple(objective), tuple(diagnostic)
        self.others: list[Table] = []
        self._roles: list[pd.DataFrame] = []
        self._facts: list[pd.DataFrame] = []

    def __iter__(self) -> Iterator[Table]:
        for part in self._parts:
            self._facts.append(run_facts(part.points, part.runs))
            judged, others, roles = split_by_role(part.points, self._objective, self._diagnostic)
            self._roles.append(roles)
            if not others.empty:
                self.others.append(part.with_points(others))
            if not judged.empty:
                yield part.with_points(judged)

    def roles(self) -> pd.DataFrame:
        """One row per curve read: ``source, run_id, metric, role, rule``."""
        frames = [r for r in self._roles if not r.empty]
        if not frames:
            return self._roles[0] if self._roles else pd.DataFrame(
                columns=["source", "run_id", "metric", "role", "rule"])
        return pd.concat(frames, ignore_index=True)

    def other_points(self) -> Table | None:
        """The points of the metrics without a verdict as one Table on the read's axis, or None."""
        if not self.others:
            return None
        out = concat_tables(self.others)
        return out.with_points(out.points, self.axis())

    def runs(self) -> pd.DataFrame:
        """The run facts of every part (one row per run)."""
        return merge_facts(self._facts)
