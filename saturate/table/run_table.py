"""Run-level facts (``run_status``, ``run_url``, ``params.*``, ``tags.*``) kept beside the points,
one row per run keyed by ``(source, run_id)``, so a sweep of thousands of runs costs memory for its
points only.

:func:`split_facts` moves the run columns of a wide frame (as a user may build it) into a run
frame, :func:`with_facts` joins them back onto every point, :func:`merge_facts` merges parts'.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from saturate.table.cells import differs
from saturate.table.curves import PARAM_PREFIX, TAG_PREFIX

__all__ = ["RUN_KEY", "empty_facts", "run_fact_columns", "run_facts", "with_facts", "split_facts",
           "merge_facts", "run_count", "run_starts", "status_of", "facts_of", "RUN_URL"]

RUN_KEY: tuple[str, str] = ("source", "run_id")
_STATUS = "run_status"
#: The run's page in its tracker's web UI, when the source knows it (a tracking server, a W&B
#: run that names its entity): the link a verdict is one click from.
RUN_URL = "run_url"


def run_fact_columns(df: pd.DataFrame) -> list[str]:
    """The run-level columns of a table: ``run_status``, ``run_url``, ``params.*`` and
    ``tags.*``."""
    return [c for c in df.columns
            if c in (_STATUS, RUN_URL)
            or str(c).startswith((PARAM_PREFIX, TAG_PREFIX))]  # fmt: skip


def empty_facts() -> pd.DataFrame:
    """A run frame with no runs (and no facts)."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RUN_KEY})


def run_facts(points: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per run of ``points``: the rows of ``runs``, or (``runs=None``) the run columns of
    a wide frame; runs without points left out."""
    keys = _first_of_each_run(points)[list(RUN_KEY)] if len(points) else empty_facts()
    if runs is None:
        cols = run_fact_columns(points)
        facts = points.drop_duplicates(list(RUN_KEY))[[*RUN_KEY, *cols]] if cols else keys
        return facts.sort_values(list(RUN_KEY), kind="stable").reset_index(drop=True)
    return runs.merge(keys, on=list(RUN_KEY), how="inner").reset_index(drop=True)


def with_facts(points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The points with their run's facts on every row (a new frame; ``points`` is not changed)."""
    if runs.shape[1] <= len(RUN_KEY):
        return points
    facts = runs.drop(columns=[c for c in runs.columns if c in points.columns and c not in RUN_KEY])
    out = points.merge(facts, on=list(RUN_KEY), how="left", sort=False)
    out.index = points.index
    return out


def merge_facts(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Side tables stacked, one row per run (the last one met wins), sorted by run."""
    frames = [f for f in frames if f is not None and len(f.columns)]
    if not frames:
        return empty_facts()
    out = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    out = out.copy(deep=False)
    for col in out.columns:
        if col not in RUN_KEY and out[col].dtype != object:
            out[col] = out[col].astype(object)
    if _increasing(*(out[c].to_numpy() for c in RUN_KEY)):  # one table, as tidy sorts it
        return out.reset_index(drop=True)
    out = out.drop_duplicates(list(RUN_KEY), keep="last")
    return out.sort_values(list(RUN_KEY), kind="stable").reset_index(drop=True)


def _increasing(src: np.ndarray, run: np.ndarray) -> bool:
    """Whether the rows are sorted by ``(src, run)`` with no two equal (sorting and dropping
    duplicates would change nothing)."""
    if src.dtype != object or run.dtype != object:
        return False
    try:
        same = src[1:] == src[:-1]
        return bool(((src[1:] > src[:-1]) | (same & (run[1:] > run[:-1]))).all())
    except TypeError:  # values that do not compare (text and numbers)
        return False


def split_facts(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(points, runs)``: ``df`` without its run columns, and those columns one row per run
    (no rows when ``df`` has no run facts)."""
    cols = run_fact_columns(df)
    if not cols:
        return df.copy(deep=False), empty_facts()
    mine = _first_of_each_run(df)[[*RUN_KEY, *cols]]
    return df.drop(columns=cols), merge_facts([mine])


def _first_of_each_run(df: pd.DataFrame) -> pd.DataFrame:
    """``df.drop_duplicates(RUN_KEY)``, by comparing neighbours when the rows are sorted by run
    (several times faster than hashing every row's text)."""
    starts = run_starts(df)
    return df.drop_duplicates(list(RUN_KEY)) if starts is None else df.iloc[starts]


def run_starts(df: pd.DataFrame) -> np.ndarray | None:
    """The first row of each run when the rows are sorted by run (``None`` when they are not, or
    cannot be told so), found by comparing neighbours."""
    src, run = (df[c].to_numpy() for c in RUN_KEY)
    if len(df) <= 1 or src.dtype != object or run.dtype != object:
        return None
    try:
        starts = np.flatnonzero(np.r_[True, differs(src) | differs(run)])
        now, before = starts[1:], starts[1:] - 1
        same_src = src[now] == src[before]
        in_order = not ((src[now] < src[before]).any() or (same_src & (run[now] < run[before])).any())
    except TypeError:  # values that do not compare (text and numbers)
        return None
    # A missing value differs from its neighbours, so it would start a run: looked for there.
    if not in_order or pd.isna(src[starts]).any() or pd.isna(run[starts]).any():
        return None
    return starts


def run_count(df: pd.DataFrame) -> int:
    """The number of runs, ``(source, run_id)``, with points in ``df``."""
    if not len(df):
        return 0
    starts = run_starts(df)
    return len(df[list(RUN_KEY)].drop_duplicates()) if starts is None else len(starts)


def status_of(runs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """``{(source, run_id): run_status}`` of the runs whose status is known."""
    return facts_of(runs, _STATUS)


def facts_of(runs: pd.DataFrame, column: str) -> dict[tuple[str, str], str]:
    """``{(source, run_id): value}`` of the runs whose fact ``column`` is known."""
    if column not in runs.columns:
        return {}
    known = runs[runs[column].notna()]
    return dict(zip(zip(known["source"], known["run_id"], strict=True), known[column],
                    strict=True))
