"""Put every (task, seed) run of a group on one compute grid: the ``(task, seed, point)`` tensor.

The grid, shared by all groups, is the runs' computes when they all match (nothing interpolated),
else their union thinned evenly in rank to the longest run's length, each run interpolated on log
compute. A task covers only the range all its seeds cover, so every point resamples the same seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from saturate.errors import InputError


@dataclass(frozen=True, eq=False)
class ScoreTensor:
    """Scores of one group: ``scores[t, s, g]`` is seed ``s`` of task ``t`` at grid point ``g``,
    NaN for missing seeds and outside the task's range; ``n_seeds[t]`` counts task ``t``'s seeds."""

    tasks: tuple[str, ...]
    runs: tuple[tuple[str, ...], ...]
    n_seeds: np.ndarray
    scores: np.ndarray

    @property
    def covered(self) -> np.ndarray:
        """``(T, G)``: whether task ``t`` covers grid point ``g``."""
        return np.isfinite(self.scores[:, 0, :])


def run_points(rows: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{run key: (compute, score)}`` over the positive computes, sorted, one score per compute
    (the last logged one)."""
    pts = rows.loc[rows["compute"] > 0, ["_run", "compute", "step", "_score"]]
    pts = pts.sort_values(["_run", "compute", "step"], kind="stable")
    pts = pts.drop_duplicates(["_run", "compute"], keep="last")
    keys = pts["_run"].to_numpy()
    c, y = pts["compute"].to_numpy(float), pts["_score"].to_numpy(float)
    out = {str(k): (np.empty(0), np.empty(0)) for k in pd.unique(rows["_run"])}
    if keys.size:
        cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        for lo, hi in zip(np.r_[0, cut], np.r_[cut, keys.size], strict=True):
            out[str(keys[lo])] = (c[lo:hi], y[lo:hi])
    return out


def common_grid(
    points: dict[str, tuple[np.ndarray, np.ndarray]], span: tuple[float, float] | None = None
) -> tuple[np.ndarray, bool]:
    """The shared compute grid and whether the runs were all logged at the same computes; a
    thinned grid gets the ends of ``span`` (the range all tasks cover) exactly, to reach them."""
    arrays = [c for c, _ in points.values() if c.size]
    if not arrays:
        raise InputError("suite: no run has a point with positive compute (the grid is on log "
                         "compute)")
    first = arrays[0]
    if all(a.size == first.size and np.array_equal(a, first) for a in arrays):
        return first.copy(), True
    union = np.unique(np.concatenate(arrays))
    n = max(a.size for a in arrays)
    if union.size > n:
        union = union[np.unique(np.round(np.linspace(0, union.size - 1, n)).astype(int))]
    if span is not None and span[1] > span[0]:
        for end in span:
            union[np.argmin(np.abs(np.log(union) - np.log(end)))] = end
        union = np.unique(union)
    return union, False


def task_span(rows: pd.DataFrame, points: dict[str, tuple[np.ndarray, np.ndarray]]
              ) -> tuple[float, float] | None:
    """The compute range every (group, task) covers with all of its seeds, or None."""
    lo, hi = -np.inf, np.inf
    for _, keys in rows.groupby(["_group", "_task"])["_run"]:
        curves = [points[k][0] for k in keys.unique() if points[k][0].size >= 2]
        if not curves:
            return None
        lo = max(lo, max(c[0] for c in curves))
        hi = min(hi, min(c[-1] for c in curves))
    return (float(lo), float(hi)) if hi > lo else None


def _on_grid(c: np.ndarray, y: np.ndarray, grid: np.ndarray, lo: float, hi: float) -> np.ndarray:
    inside = (grid >= lo) & (grid <= hi)
    out = np.full(grid.size, np.nan)
    out[inside] = np.interp(np.log(grid[inside]), np.log(c), y)
    return out


def score_tensor(
    rows: pd.DataFrame,
    points: dict[str, tuple[np.ndarray, np.ndarray]],
    grid: np.ndarray,
    group: str,
) -> ScoreTensor:
    """The tensor of one group's rows (with ``_task``, ``_run``); errors name the task."""
    tasks = tuple(sorted(rows["_task"].unique()))
    runs: list[tuple[str, ...]] = []
    blocks: list[np.ndarray] = []
    for task in tasks:
        keys = sorted(rows.loc[rows["_task"] == task, "_run"].unique())
        curves = [points[k] for k in keys if points[k][0].size >= 2]
        if not curves:
            raise InputError(f"suite task {task!r} ({group}): no run has two or more points with "
                             "positive compute")
        lo = max(c[0] for c, _ in curves)
        hi = min(c[-1] for c, _ in curves)
        if not hi > lo:
            raise InputError(f"suite task {task!r} ({group}): its {len(curves)} seeds share no "
                             "compute range")
        blocks.append(np.vstack([_on_grid(c, y, grid, lo, hi) for c, y in curves]))
        runs.append(tuple(k.split("\x1f")[1] for k in keys if points[k][0].size >= 2))
    s_max = max(b.shape[0] for b in blocks)
    scores = np.full((len(tasks), s_max, grid.size), np.nan)
    for t, b in enumerate(blocks):
        scores[t, : b.shape[0]] = b
    n_seeds = np.array([b.shape[0] for b in blocks], dtype=int)
    return ScoreTensor(tasks, tuple(runs), n_seeds, scores)
