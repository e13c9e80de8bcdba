"""Run-level facts (status, parameters, tags) kept beside the points, one row per run.

The tidy table (:mod:`saturate.curves`) holds one row per logged point. What belongs to a whole
run, ``run_status``, ``params.<name>`` and ``tags.<name>``, is not repeated on every point: it
lives in a side table keyed by ``(source, run_id)``, carried in ``df.attrs["runs"]`` (a
:class:`RunTable`), so that a sweep of thousands of runs costs memory for its points only.

* :func:`run_facts`: the side table of a tidy table (one row per run);
* :func:`with_run_facts`: the points with the run facts joined onto every row (the wide form
  ``saturate.load(..., with_runs=True)`` returns, and that seed pooling reads);
* :func:`split_run_facts`: the other way: run columns of a wide table moved into the side table;
* :func:`concat_tables`: tidy tables of several sources as one, their side tables merged.

A wide table (run facts on every row, as a user may build it) is accepted everywhere.

>>> import pandas as pd
>>> wide = pd.DataFrame({"source": "s", "run_id": ["a", "a", "b"], "metric": "m",
...                      "step": [1, 2, 1], "params.lr": ["1e-3", "1e-3", "1e-4"]})
>>> df = split_run_facts(wide)
>>> list(df.columns), run_facts(df)["params.lr"].tolist()
(['source', 'run_id', 'metric', 'step'], ['1e-3', '1e-4'])
>>> with_run_facts(df)["params.lr"].tolist()
['1e-3', '1e-3', '1e-4']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from saturate.cells import differs
from saturate.curves import PARAM_PREFIX, TAG_PREFIX, concat

__all__ = [
    "RUNS_ATTR",
    "RUN_KEY",
    "RunTable",
    "run_fact_columns",
    "run_facts",
    "with_run_facts",
    "split_run_facts",
    "concat_tables",
    "merge_facts",
    "run_count",
    "status_of",
]

RUNS_ATTR = "runs"
RUN_KEY: tuple[str, str] = ("source", "run_id")
_STATUS = "run_status"


@dataclass(frozen=True, eq=False)
class RunTable:
    """The side table in ``df.attrs``: one row per ``(source, run_id)``, sorted by them.

    Immutable, and compared by identity: pandas deep-copies and compares ``attrs`` on most
    operations, which for a frame would cost a copy each time (and fail to compare).
    ``merged``: the frame is as :func:`merge_facts` leaves it (then not merged again).
    """

    frame: pd.DataFrame
    merged: bool = False

    def __deepcopy__(self, memo: dict) -> RunTable:
        return self

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        facts = [c for c in self.frame.columns if c not in RUN_KEY]
        return f"<RunTable: {len(self.frame)} runs; {', '.join(map(str, facts)) or 'no facts'}>"


def run_fact_columns(df: pd.DataFrame) -> list[str]:
    """The run-level columns of a table: ``run_status``, ``params.*`` and ``tags.*``."""
    return [c for c in df.columns
            if c == _STATUS or str(c).startswith((PARAM_PREFIX, TAG_PREFIX))]  # fmt: skip


def _empty_facts() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in RUN_KEY})


def _stored(df: pd.DataFrame) -> pd.DataFrame | None:
    table = df.attrs.get(RUNS_ATTR)
    return table.frame if isinstance(table, RunTable) else None


def run_facts(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run of ``df`` (``source``, ``run_id``, ``run_status``, ``params.*``,
    ``tags.*``): the side table, or the run columns of a wide table; runs without points left
    out."""
    keys = df[list(RUN_KEY)].drop_duplicates() if len(df) else _empty_facts()
    stored = _stored(df)
    if stored is None:
        cols = run_fact_columns(df)
        facts = df.drop_duplicates(list(RUN_KEY))[[*RUN_KEY, *cols]] if cols else keys
        return facts.sort_values(list(RUN_KEY), kind="stable").reset_index(drop=True)
    out = stored.merge(keys, on=list(RUN_KEY), how="inner")
    return out.reset_index(drop=True)


def with_run_facts(df: pd.DataFrame) -> pd.DataFrame:
    """The points with their run's facts on every row (a new frame; ``df`` is not changed)."""
    stored = _stored(df)
    if stored is None or stored.shape[1] <= len(RUN_KEY):
        return df
    facts = stored.drop(columns=[c for c in stored.columns if c in df.columns and c not in RUN_KEY])
    out = df.merge(facts, on=list(RUN_KEY), how="left", sort=False)
    out.index = df.index
    out.attrs = {k: v for k, v in df.attrs.items() if k != RUNS_ATTR}
    return out


def merge_facts(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Side tables stacked, one row per run (the last one met wins), sorted by run."""
    frames = [f for f in frames if f is not None and len(f.columns)]
    if not frames:
        return _empty_facts()
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
    """Whether the rows are sorted by ``(src, run)`` with no two equal (so no missing value):
    then sorting and dropping duplicates would change nothing."""
    if src.dtype != object or run.dtype != object:
        return False
    try:
        same = src[1:] == src[:-1]
        return bool(((src[1:] > src[:-1]) | (same & (run[1:] > run[:-1]))).all())
    except TypeError:  # values that do not compare (text and numbers)
        return False


def split_run_facts(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its run columns, which go (merged with any side table it has) into
    ``attrs["runs"]``. A table without run facts gets an empty side table."""
    cols = run_fact_columns(df)
    mine = _first_of_each_run(df)[[*RUN_KEY, *cols]] if cols else None
    out = df.drop(columns=cols) if cols else df.copy(deep=False)
    table = df.attrs.get(RUNS_ATTR)
    if not (mine is None and isinstance(table, RunTable) and table.merged):  # else: as it is
        table = RunTable(merge_facts([_stored(df), mine]), merged=True)
    out.attrs = {**df.attrs, RUNS_ATTR: table}
    return out


def _first_of_each_run(df: pd.DataFrame) -> pd.DataFrame:
    """``df.drop_duplicates(RUN_KEY)``; when the rows are sorted by run, as tidy leaves them,
    found by comparing neighbours (several times faster than hashing every row's text)."""
    starts = _run_starts(df)
    return df.drop_duplicates(list(RUN_KEY)) if starts is None else df.iloc[starts]


def _run_starts(df: pd.DataFrame) -> np.ndarray | None:
    """The first row of each run when the rows are sorted by run with each run's rows together
    (``None`` when they are not, or cannot be told so): neighbours are compared, and the order
    is checked only where a row's run differs from the one before."""
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
    starts = _run_starts(df)
    return len(df[list(RUN_KEY)].drop_duplicates()) if starts is None else len(starts)


def concat_tables(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Tidy tables (each split, or wide) as one split table: points concatenated by
    :func:`saturate.curves.concat`, side tables merged."""
    parts = [split_run_facts(t) for t in tables]
    if len(parts) == 1:
        return parts[0]
    out = concat(parts)
    out.attrs[RUNS_ATTR] = RunTable(merge_facts(_stored(p) for p in parts if not p.empty), merged=True)
    return out


def status_of(df: pd.DataFrame) -> dict[tuple[str, str], str]:
    """``{(source, run_id): run_status}`` of the runs whose status is known."""
    stored = _stored(df)
    if stored is None or _STATUS not in stored.columns:
        return {}
    known = stored[stored[_STATUS].notna()]
    return dict(zip(zip(known["source"], known["run_id"], strict=True), known[_STATUS],
                    strict=True))
