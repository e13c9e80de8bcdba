"""The parts of a read made ready for the verdicts, one part (whole runs) at a time.

Each part is put on GPU-hours from wall time when ``--gpus`` asks, and cut by metric role
(:mod:`saturate.vocabulary.roles`): the objectives go on to the engine, the other metrics are kept
for their summary and the diagnostics. What needs every part (the x axis and the runs left on
their step, the run facts, the metrics without a verdict) is gathered on the way and settled
once the last part is read, so a read in parts says what the same read in one piece says.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd

from saturate.axis import ComputeAxis, axis_from, gpu_hours_from_time, run_step_flags
from saturate.run_table import (
    concat_tables,
    merge_facts,
    run_facts,
    split_run_facts,
    with_run_facts,
)
from saturate.vocabulary.names import axis_unit
from saturate.vocabulary.roles import split_by_role

__all__ = ["PreparedParts"]


class PreparedParts:
    """Iterate once over the objective points of each part of ``parts``; then :meth:`axis`,
    :attr:`others` (the points of the metrics without a verdict), :meth:`roles` and
    :meth:`runs` describe the whole read."""

    def __init__(
        self,
        parts: Iterable[pd.DataFrame],
        *,
        gpus: float | str | None = None,
        objective: Sequence[str] = (),
        diagnostic: Sequence[str] = (),
        explicit_axis: bool = False,
    ) -> None:
        self._parts, self._gpus = parts, gpus
        self._objective, self._diagnostic = tuple(objective), tuple(diagnostic)
        self._explicit = explicit_axis
        self.others: list[pd.DataFrame] = []
        self._roles: list[pd.DataFrame] = []
        self._facts: list[pd.DataFrame] = []
        self._names: list[str] = []
        self._units: list[str | None] = []
        self._note: str | None = None
        self._flags: list[tuple[str, bool]] = []

    def __iter__(self) -> Iterator[pd.DataFrame]:
        for part in self._parts:
            if self._gpus is not None and not part.empty:
                part = split_run_facts(gpu_hours_from_time(with_run_facts(part), self._gpus))
            self._facts.append(run_facts(part))
            self._note_axis(part)
            judged, others, roles = split_by_role(part, self._objective, self._diagnostic)
            self._roles.append(roles)
            if not others.empty:
                self.others.append(others)
            if not judged.empty:
                yield judged

    def _note_axis(self, part: pd.DataFrame) -> None:
        name = str(part.attrs.get("compute_name", "step"))
        self._names.append(name)
        self._units.append(part.attrs.get("compute_unit") or axis_unit(name))
        self._note = self._note or part.attrs.get("axis_note")
        self._flags += run_step_flags(part)

    @property
    def compute_name(self) -> str:
        """The x axis of every part, or ``"compute"`` when the parts differ."""
        names = set(self._names)
        return names.pop() if len(names) == 1 else ("step" if not names else "compute")

    def axis(self) -> ComputeAxis:
        """The x axis of the whole read, as :func:`saturate.axis.describe_axis` gives it for the
        table read in one piece."""
        name = self.compute_name
        units = set(self._units)
        unit = units.pop() if len(set(self._names)) == 1 and len(units) == 1 else axis_unit(name)
        return axis_from(name, unit, self._note, self._flags, explicit=self._explicit)

    def attrs(self) -> dict[str, Any]:
        """The table ``attrs`` of the whole read (x axis name, unit and note)."""
        axis = self.axis()
        out: dict[str, Any] = {"compute_name": axis.name}
        if axis.unit is not None:
            out["compute_unit"] = axis.unit
        if self._note is not None:
            out["axis_note"] = self._note
        return out

    def roles(self) -> pd.DataFrame:
        """One row per curve read: ``source, run_id, metric, role, rule``."""
        frames = [r for r in self._roles if not r.empty]
        if not frames:
            return self._roles[0] if self._roles else pd.DataFrame(
                columns=["source", "run_id", "metric", "role", "rule"])
        return pd.concat(frames, ignore_index=True)

    def other_points(self) -> pd.DataFrame | None:
        """The points of the metrics without a verdict as one tidy table, or ``None``."""
        if not self.others:
            return None
        out = concat_tables(self.others)
        out.attrs.update(self.attrs())
        return out

    def runs(self) -> pd.DataFrame:
        """The run facts of every part (one row per run)."""
        return merge_facts(self._facts)
