"""Ordering the points of the tidy table on integer keys: numbering points logged without steps,
and sorting the rows keeping the last logged point of each (curve, step).

The keys are text ranks (:func:`saturate.table.cells.text_codes`) and steps: sorting text per
point costs several times more than sorting integers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["number_steps", "group_codes", "order", "starts", "last_of_each", "increasing"]


def number_steps(step: np.ndarray, compute: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
    """Integer steps; points without a step (NaN) are numbered in compute order within their
    curve (``keys``), ties in logged order. Steps beyond int64 must have been dropped before."""
    missing = np.isnan(step)
    if missing.any():
        by_compute = np.argsort(compute, kind="stable")
        curve = group_codes(keys).take(by_compute)
        within = np.argsort(curve, kind="stable")
        sorted_curve = curve.take(within)
        at = np.arange(len(within))
        first = np.maximum.accumulate(np.where(np.r_[True, sorted_curve[1:] != sorted_curve[:-1]], at, 0))
        count = np.empty(len(step))
        count[by_compute.take(within)] = at - first
        step = np.where(missing, count, step)
    return np.round(step).astype("int64")


def group_codes(keys: list[np.ndarray]) -> np.ndarray:
    """One code per distinct combination of the integer ``keys``."""
    group = np.zeros(len(keys[0]), dtype=np.int64)
    for k in keys:
        codes, uniques = pd.factorize(k)
        group, _ = pd.factorize(group * (len(uniques) + 1) + codes)
    return group


def order(keys: list[np.ndarray], step: np.ndarray, timestamp: pd.Series | None) -> np.ndarray | None:
    """The positions that make the rows one per (curve, step), the last logged winning, sorted;
    ``None`` when they already are. ``keys``: the text ranks of the key columns but ``step``."""
    keys = [*keys, step]
    return None if increasing(keys) else last_of_each(keys, timestamp)


def starts(keys: list[np.ndarray]) -> np.ndarray:
    """The rows where any of the integer ``keys`` differs from the row before."""
    n = len(keys[0])
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
        for k in keys:
            change[1:] |= k[1:] != k[:-1]
    return np.flatnonzero(change)


def last_of_each(keys: list[np.ndarray], timestamp: pd.Series | None) -> np.ndarray:
    """Positions of the rows sorted by ``keys``, one per key: the last logged (the latest
    timestamp, rows without one first, then the later row)."""
    order = _packed(keys)
    if timestamp is not None:
        missing = timestamp.isna().to_numpy()
        if pd.api.types.is_integer_dtype(timestamp) and not missing.any():
            when = timestamp.to_numpy()  # whole: large integers would lose digits as floats
        else:
            when = np.where(missing, 0.0, timestamp.to_numpy(dtype=float, na_value=np.nan))
        order = [when, ~missing, *order]
    # Stable: ties keep the logged order. One key sorts several times faster than lexsort.
    rows = np.argsort(order[0], kind="stable") if len(order) == 1 else np.lexsort(order)
    last = np.ones(len(rows), dtype=bool)
    if len(rows) > 1:
        same = np.ones(len(rows) - 1, dtype=bool)
        for k in keys:
            ks = k[rows]
            same &= ks[1:] == ks[:-1]
        last[:-1] = ~same
    return rows[last]


def _packed(keys: list[np.ndarray]) -> list[np.ndarray]:
    """The sort keys for :func:`numpy.lexsort`, packed into one int64 key where ranges allow."""
    packed = np.zeros(len(keys[0]), dtype=np.int64)
    room = 1
    for k in keys:
        low = int(k.min()) if len(k) else 0
        span = (int(k.max()) - low + 1) if len(k) else 1
        room *= span
        if room >= 2**62:
            return list(reversed(keys))
        packed = packed * span + (k - low)
    return [packed]


def increasing(keys: list[np.ndarray]) -> bool:
    """Whether the rows are sorted by the integer ``keys`` with no two rows equal on all."""
    tied = np.ones(max(len(keys[0]) - 1, 0), dtype=bool)
    for v in keys:
        if (tied & (v[1:] < v[:-1])).any():
            return False
        tied &= v[1:] == v[:-1]
    return not tied.any()
