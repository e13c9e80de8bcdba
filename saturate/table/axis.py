"""The x axis of an analysis (:class:`ComputeAxis`): what it measures, its unit, and which runs
fell back to their step because no measure of compute was found; and GPU-hours from wall time
(:func:`gpu_hours_from_time`, ``--gpus``).

The x axis of a read is chosen once, in :func:`saturate.ingest.axis_join.auto_compute`. Steps are
never called GPU-hours: the cost and allocation diagnostics refuse to run on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from saturate.errors import InputError, SettingsError, miss_text, shorten
from saturate.results.codec import Coded, derived
from saturate.table.curves import PARAM_PREFIX
from saturate.table.run_table import run_starts
from saturate.vocabulary.names import GPU_HOURS, STEPS, axis_label, axis_unit

__all__ = ["AxisWarning", "ComputeAxis", "named_axis", "joined_axis", "describe_axis", "axis_from",
           "gpu_hours_from_time", "GPUS_AXIS"]

GPUS_AXIS = "gpu_hours"
"""The name of the x axis derived by :func:`gpu_hours_from_time`."""
_MS_EPOCH = 1e11  # epoch seconds stay below this until the year 5138; milliseconds are above it


_NO_AXIS = ("no compute axis found (no compute column, and no GPU-hours, FLOPs, tokens, samples or "
            "environment-steps metric): the x axis is the step; give one with --compute NAME, or "
            "--gpus N for GPU-hours from wall time")


class AxisWarning(UserWarning):
    """The x axis is not what the numbers may be taken for: (some) runs are on their step."""


@dataclass(frozen=True)
class ComputeAxis(Coded):
    """The x axis: its ``name`` (a column or metric, ``step``, or ``compute`` when runs differ),
    its ``unit`` (``None`` when the name does not say), a ``note`` on how it was obtained or
    what is missing, and the runs left on their step (``step_runs``) while others are not."""

    name: str
    unit: str | None
    note: str | None = None
    step_runs: tuple[str, ...] = ()

    @derived("unit")
    def label(self) -> str:
        """``GPU-hours (compute/gpu_hours)``: how reports and plots name the axis."""
        return axis_label(self.name, self.unit)

    @derived("unit", key="steps")
    def is_steps(self) -> bool:
        """Whether every run is on its step (no measure of compute was found or given)."""
        return self.unit == STEPS

    @property
    def is_gpu_hours(self) -> bool:
        return self.unit == GPU_HOURS

    @property
    def heading(self) -> str:
        """``GPU-hours (compute/gpu_hours)``, or the label with a short word on a fallback to
        steps (the whole :attr:`note` is the warning, and in the JSON report)."""
        if self.is_steps and self.note == _NO_AXIS:
            return f"{self.label} (no compute axis found: give one with --compute NAME or --gpus N)"
        if self.step_runs:
            return f"{self.label} ({len(self.step_runs)} run(s) on their step instead)"
        return self.label + (f" ({self.note})" if self.note else "")

    def warning(self) -> str | None:
        """The one line to tell a user whose curves are (partly) on steps, else ``None``."""
        return self.note if (self.is_steps and self.note) or self.step_runs else None


def named_axis(name: str, unit: str | None = None, note: str | None = None) -> ComputeAxis:
    """The axis ``name`` in ``unit`` (default: the unit its name says, :func:`axis_unit`), as a
    reader or a part of a read names it (no run on its step yet: :func:`axis_from` says that)."""
    return ComputeAxis(name, unit or axis_unit(name), note)


def joined_axis(axes: Sequence[ComputeAxis]) -> ComputeAxis:
    """The axis of parts read together: their name when they share it, else ``compute``; their
    unit when they share name and unit; the first note."""
    names, units = {a.name for a in axes}, {a.unit for a in axes}
    name = next(iter(names)) if len(names) == 1 else ("step" if not names else "compute")
    unit = next(iter(units)) if len(names) == 1 and len(units) == 1 else axis_unit(name)
    return ComputeAxis(name, unit, next((a.note for a in axes if a.note is not None), None))


def describe_axis(points: pd.DataFrame, axis: ComputeAxis, *, explicit: bool = False) -> ComputeAxis:
    """The :class:`ComputeAxis` of ``points`` on ``axis``, with the runs left on their step
    (``explicit``: the user named the axis, so steps are no fallback worth a warning)."""
    return axis_from(axis.name, axis.unit, given_note(axis), run_step_flags(points),
                     explicit=explicit)


def given_note(axis: ComputeAxis) -> str | None:
    """The note of ``axis`` on how it was made, without the one :func:`axis_from` adds on runs
    left on their step."""
    if axis.note == _NO_AXIS or (axis.step_runs and axis.note == _steps_note(axis.step_runs,
                                                                             axis.name)):
        return None
    return axis.note


def axis_from(
    name: str, unit: str | None, note: str | None, step_flags: Sequence[tuple[str, bool]],
    *, explicit: bool = False,
) -> ComputeAxis:
    """The :class:`ComputeAxis` named ``name`` in ``unit``, from each run's ``(name, on its
    step)`` (:func:`run_step_flags`; gathered part by part when the runs are read in parts)."""
    if unit == STEPS:
        if note is None and not explicit:
            note = _NO_AXIS
        return ComputeAxis(name, unit, note)
    on_steps = [run for run, steps in step_flags if steps]
    if len(on_steps) == len(step_flags):
        on_steps = []  # every run on its step: that is the axis, not a fallback of some runs
    if on_steps and note is None:
        note = _steps_note(on_steps, name)
    return ComputeAxis(name, unit, note, tuple(on_steps))


def _steps_note(on_steps: Sequence[str], name: str) -> str:
    shown = ", ".join(on_steps[:3]) + (", ..." if len(on_steps) > 3 else "")
    return (f"{len(on_steps)} run(s) log no compute axis and are analysed against their step "
            f"({shown}); their numbers are not comparable with the others' on {name}")


def run_step_flags(df: pd.DataFrame) -> list[tuple[str, bool]]:
    """``(run name, whether its compute is its step)`` for each run of a tidy table."""
    if df.empty:
        return []
    same = (df["compute"].to_numpy(float) == df["step"].to_numpy(float))
    starts = run_starts(df)
    if starts is not None:  # rows sorted by run, as tidy leaves them: no grouping of text
        names = df["run"].to_numpy()[starts]
        return [(str(n), bool(f)) for n, f in zip(names, np.logical_and.reduceat(same, starts),
                                                   strict=True)]
    flags = pd.Series(same, index=df.index).groupby([df["source"], df["run_id"]], sort=False).all()
    runs = df.drop_duplicates(["source", "run_id"]).set_index(["source", "run_id"])["run"]
    return [(str(runs[k]), bool(v)) for k, v in flags.items()]


def gpu_hours_from_time(df: pd.DataFrame, gpus: float | str) -> tuple[pd.DataFrame, ComputeAxis]:
    """The points with GPU-hours from wall time as their x axis, and that axis; ``df`` has the
    run facts on every row.

    GPU-hours are ``(timestamp - the run's first) / 3600 * gpus`` (a run whose timestamps exceed
    1e11 is in milliseconds): idle time between points counts. ``gpus``: a count, or the run
    parameter holding it. A run without timestamps or a positive GPU count is an error.
    """
    if "timestamp" not in df.columns or not np.isfinite(pd.to_numeric(
            df["timestamp"], errors="coerce").to_numpy(float)).any():
        raise SettingsError("--gpus derives GPU-hours from the logged timestamps, and the data has "
                            "none; give the axis with --compute NAME instead")
    counts, how = _gpu_counts(df, gpus)
    t = pd.to_numeric(df["timestamp"], errors="coerce").astype(float)
    keys = [df["source"], df["run_id"]]
    t0 = t.groupby(keys, sort=False).transform("min")
    scale = np.where(t.groupby(keys, sort=False).transform("max") > _MS_EPOCH, 1000.0, 1.0)
    timed = pd.Series(np.isfinite(t.to_numpy(float)), index=df.index).groupby(df["run"]).any()
    if not timed.all():
        untimed = ", ".join(map(str, timed.index[~timed.to_numpy()][:3]))
        raise SettingsError(f"--gpus: run(s) {untimed} logged no timestamps, so GPU-hours cannot "
                            "be derived for them; leave them out with --run")
    hours = (t - t0) / scale / 3600.0 * counts
    out = df.assign(compute=hours.to_numpy(float))
    dropped = int((~np.isfinite(out["compute"].to_numpy(float))).sum())
    out = out.loc[np.isfinite(out["compute"].to_numpy(float))].reset_index(drop=True)
    note = f"GPU-hours from wall time: (timestamp - the run's first timestamp) / 3600 x {how}"
    if dropped:
        note += f"; {dropped} point(s) without a timestamp dropped"
    return out, ComputeAxis(GPUS_AXIS, GPU_HOURS, note)


def _gpu_counts(df: pd.DataFrame, gpus: float | str) -> tuple[np.ndarray, str]:
    """The GPU count of each row, and how it was given (``8 GPUs``, ``params.n_gpus GPUs``)."""
    if not isinstance(gpus, str):
        return np.full(len(df), float(gpus)), f"{gpus:g} GPUs"
    col = next((c for c in (gpus, PARAM_PREFIX + gpus) if c in df.columns), None)
    if col is None:
        params = [c[len(PARAM_PREFIX):] for c in df.columns if c.startswith(PARAM_PREFIX)]
        raise SettingsError(miss_text(f"--gpus {shorten(repr(gpus))} is neither a number nor a "
                                      "run parameter", [gpus], params, "parameters"))
    counts = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    bad = ~(np.isfinite(counts) & (counts > 0))
    if bad.any():
        run = df.loc[bad, "run"].iloc[0]
        raise InputError(f"--gpus {gpus!r}: run {run!r} has no positive GPU count "
                         f"(got {df.loc[bad, col].iloc[0]!r})")
    return counts, f"{col} GPUs"
