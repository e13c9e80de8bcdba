"""The melt of a wide table's metric columns: one point per logged cell, in the order the tidy
table sorts to (run, metric, step), so :func:`saturate.table.curves.tidy` finds its rows sorted.
Long runs are copied stretch by stretch; otherwise each cell's place is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from saturate.table.cells import text_codes

_F8, _I8 = np.dtype("float64"), np.dtype("int64")


@dataclass(frozen=True)
class Melt:
    """The logged cells of the metric columns: each one's metric (the column's place), row and
    value."""

    which: np.ndarray
    rows: np.ndarray
    value: pd.Series


@dataclass(frozen=True)
class _Runs:
    """The rows by run then step (``order``; ``ordered``: the table's own), with ``starts`` and
    ``length`` of each run's stretch."""

    order: np.ndarray
    starts: np.ndarray
    length: np.ndarray
    ordered: bool


def melt(df: pd.DataFrame, run: pd.Categorical | None, metrics: list[str]) -> Melt:
    """The cells of the ``metrics`` columns that hold a value, in tidy order (``run``: run names
    other than ``df``'s); column by column when the steps are not plain numbers."""
    n, m = len(df), len(metrics)
    small = np.int8 if m < 128 else np.intp  # metric codes, as pandas keeps them
    runs = _runs(df, run)
    cols = [df[c] for c in metrics]
    floats = all(c.dtype in (_F8, _I8) for c in cols) and any(c.dtype == _F8 for c in cols)
    if runs is not None and floats and len(runs.starts) <= n // 16:
        # Long runs: each run's block (its rows for the first metric, the second, ...) copied
        # from the columns, several times less memory traffic than gathering cell by cell.
        which, rows, value = _blocks(runs, [c.to_numpy() for c in cols], small)
    else:
        which, rows = _cells(runs, n, m, small)
        stacked = _stacked(cols)
        cells = which.astype(np.intp) * n + rows
        if stacked.dtype == _F8:
            value = stacked.to_numpy().take(cells)
        else:
            logged = stacked.notna().to_numpy()[cells]
            if not logged.all():
                cells, which, rows = cells[logged], which[logged], rows[logged]
            return Melt(which, rows, pd.Series(stacked.array.take(cells), dtype=stacked.dtype))
    # A wide table leaves a cell empty where a metric was not logged at that step: no point.
    if np.isnan(value).any():
        logged = ~np.isnan(value)
        value, which, rows = value[logged], which[logged], rows[logged]
    return Melt(which, rows, pd.Series(value, copy=False))  # a new array already


def _stacked(cols: list[pd.Series]) -> pd.Series:
    """``pandas.concat(cols, ignore_index=True)``; int64 and float64 columns joined by numpy."""
    if all(c.dtype in (_F8, _I8) for c in cols):
        return pd.Series(np.concatenate([c.to_numpy() for c in cols]))
    return pd.concat(cols, ignore_index=True)


def _runs(df: pd.DataFrame, run: pd.Categorical | None) -> _Runs | None:
    """The rows by run, then step (stable); ``None`` when the steps are not plain numbers."""
    n = len(df)
    step = df["step"] if "step" in df.columns else None
    if (step is None or not pd.api.types.is_numeric_dtype(step.dtype)
            or pd.api.types.is_bool_dtype(step.dtype) or step.isna().any() or n == 0):
        return None
    key = pd.Series(run) if run is not None else df["run_id" if "run_id" in df.columns else "run"]
    codes, _, rank = text_codes(key)
    by_run = rank[codes]
    steps = step.to_numpy()
    ordered = bool(((by_run[1:] > by_run[:-1])
                    | ((by_run[1:] == by_run[:-1]) & (steps[1:] >= steps[:-1]))).all())
    order = np.arange(n) if ordered else _by_run_then_step(by_run, steps)
    by_run = by_run if ordered else by_run.take(order)
    starts = np.flatnonzero(np.r_[True, by_run[1:] != by_run[:-1]])
    return _Runs(order, starts, np.diff(np.r_[starts, n]), ordered)


def _by_run_then_step(by_run: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``numpy.lexsort((steps, by_run))``, by a cheaper stable sort on the run when that leaves
    each run's steps in order."""
    order = np.argsort(by_run, kind="stable")
    run, step = by_run.take(order), steps.take(order)
    if bool(((run[1:] != run[:-1]) | (step[1:] >= step[:-1])).all()):
        return order
    return np.lexsort((steps, by_run))


def _blocks(runs: _Runs, cols: list[np.ndarray], small: type[np.signedinteger]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(metric, row, value)`` of every cell, a block per run (values as float64)."""
    m, n, order = len(cols), len(runs.order), runs.order
    grid = np.empty((m, n))  # the columns as float64, their rows by run and step
    for j, col in enumerate(cols):
        grid[j] = col if runs.ordered else col.take(order)
    which, rows, value = np.empty(n * m, dtype=small), np.empty(n * m, dtype=_row_type(n)), np.empty(n * m)
    slot = np.arange(m, dtype=small)[:, None]
    for s, size in zip(runs.starts.tolist(), runs.length.tolist(), strict=True):
        at = slice(m * s, m * (s + size))
        which[at].reshape(m, size)[...] = slot
        rows[at].reshape(m, size)[...] = order[s:s + size]
        value[at].reshape(m, size)[...] = grid[:, s:s + size]
    return which, rows, value


def _row_type(n: int) -> type[np.signedinteger]:
    """The integer type of row numbers below ``n``: 32 bits where they fit (half the memory)."""
    return np.int32 if n < 2**31 else np.intp


def _cells(runs: _Runs | None, n: int, m: int, small: type[np.signedinteger]) -> tuple[np.ndarray, np.ndarray]:
    """``(metric, row)`` of every cell of ``m`` metric columns in ``runs`` order (None: by
    column)."""
    if runs is None:
        return np.repeat(np.arange(m, dtype=small), n), np.tile(np.arange(n), m)
    order, starts, length = runs.order, runs.starts, runs.length
    which, rows = np.empty(n * m, dtype=small), np.empty(n * m, dtype=_row_type(n))
    if len(starts) <= n // 16:  # long runs: a block filled per run beats a scatter of all cells
        slot = np.arange(m, dtype=small)[:, None]
        for s, size in zip(starts.tolist(), length.tolist(), strict=True):
            which[m * s:m * (s + size)].reshape(m, size)[...] = slot
            rows[m * s:m * (s + size)].reshape(m, size)[...] = order[s:s + size]
        return which, rows
    first = np.repeat(starts, length)  # of each sorted row's run
    at = (m * first + np.arange(m)[:, None] * np.repeat(length, length) + (np.arange(n) - first)).ravel()
    which[at] = np.repeat(np.arange(m, dtype=small), n)
    rows[at] = np.tile(order, m)
    return which, rows
