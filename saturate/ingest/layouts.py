"""A long or wide table (columns already given their tidy names) as the points
:func:`saturate.table.curves.tidy` takes, the run-level columns kept apart.

Run parameters (``params.*``, ``tags.*``) stay once per row read (:class:`Points`), never spread
over melted points, and end once per run in the run frame (:func:`with_facts`). Run and metric
names travel as categoricals, rows in the order tidy sorts to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, names_text, shorten
from saturate.ingest.melt import melt
from saturate.table.axis import named_axis
from saturate.table.cells import Uniques, grouped_codes, grouped_factorize
from saturate.table.curves import (
    OPTIONAL_COLUMNS,
    PARAM_PREFIX,
    REQUIRED_COLUMNS,
    TAG_PREFIX,
    TidyPoints,
)
from saturate.table.run_table import RUN_KEY, merge_facts
from saturate.table.table import Table
from saturate.vocabulary.names import is_replicate_name

_CORE = {"run", "run_id", "experiment", "metric", "step", "compute", "value", "timestamp",
         "run_status", "source"}


@dataclass(frozen=True)
class Points:
    """A table's points for :func:`saturate.table.curves.tidy`, the run-level columns apart in
    ``facts`` (name -> column): its row ``row[i]`` belongs to point ``i`` (``row`` None: the
    rows are the points)."""

    frame: pd.DataFrame
    facts: dict[str, pd.Series]
    row: np.ndarray | None = None


def is_numeric(col: pd.Series, factorized: tuple[np.ndarray, Uniques] | None = None) -> bool:
    """Whether a column holds numbers: a numeric type, or over 90% of its filled cells text that
    reads as a number. ``factorized``: ``grouped_factorize(col)``, when the caller has it."""
    if _numeric_type(col):
        return True
    # Each distinct cell is read once, then weighed by how often it occurs; the distinct cells
    # of the first rows first: enough text there settles it without reading the others.
    codes, uniques = grouped_factorize(col) if factorized is None else factorized
    filled = codes >= 0  # missing cells do not count
    total = int(filled.sum())
    if not total:
        return False
    count = np.bincount(codes if total == len(codes) else codes[filled], minlength=len(uniques))
    numeric = np.zeros(len(uniques), dtype=np.bool_)
    head = np.unique(codes[: total // 10 + 16])
    head = head[head >= 0]
    numeric[head] = _reads_as_number(uniques.take(head))
    if len(head) < len(uniques) and not (total - count[head][~numeric[head]].sum()) / total > 0.9:
        return False
    rest = np.setdiff1d(np.arange(len(uniques)), head, assume_unique=True)
    if len(rest):
        numeric[rest] = _reads_as_number(uniques.take(rest))
    return bool((total - count[~numeric].sum()) / total > 0.9)


def _numeric_type(col: pd.Series) -> bool:
    """Whether the column's type is numeric (booleans are not)."""
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


class _Coded:
    """The value codes of a table's columns (missing a value of its own), each made once;
    :meth:`numeric` keeps those :func:`is_numeric` computed when the column has no gap."""

    def __init__(self) -> None:
        self.known: dict[str, np.ndarray] = {}

    def numeric(self, name: str, col: pd.Series) -> bool:
        """:func:`is_numeric` of the column ``name``."""
        factorized = None if _numeric_type(col) else grouped_factorize(col)
        if factorized is not None and not (factorized[0] < 0).any():
            self.known[name] = factorized[0]
        return is_numeric(col, factorized)

    def codes(self, name: str, col: pd.Series) -> np.ndarray:
        """:func:`_value_codes` of the column ``name``."""
        if name not in self.known:
            self.known[name] = _value_codes(col)
        return self.known[name]

    def renamed(self, names: dict[str, str], columns: pd.Index) -> _Coded:
        """The codes under the new ``names`` (none when a new name clashes with ``columns``)."""
        out = _Coded()
        if not any(new in columns for new in names.values()):
            out.known = {names.get(c, c): v for c, v in self.known.items()}
        return out


def _reads_as_number(values: Iterable[object]) -> np.ndarray:
    """Which of the ``values`` are numbers or text that reads as one."""
    text = np.array([str(u).strip().lower() for u in values], dtype=object)
    return pd.notna(pd.to_numeric(text, errors="coerce"))


def split_facts(df: pd.DataFrame, run: pd.Categorical | None = None) -> Points:
    """``df`` as :class:`Points`: its run-level columns apart, ``run`` (when given) as its run."""
    facts = [c for c in df.columns if c.startswith((PARAM_PREFIX, TAG_PREFIX))]
    if df.columns.duplicated().any():  # tidy refuses the table, with the message it gives
        facts = []
    frame = df.drop(columns=facts) if facts else df.copy(deep=False)
    if run is not None:
        frame["run"] = run
    return Points(frame, {c: df[c] for c in facts})


def long_points(df: pd.DataFrame, path: Path) -> Points:
    """A long table's points: extra columns that are text, constant within each run, or named
    for a replicate (``seed``) are run parameters; numeric ones varying along a run stay."""
    extras = [c for c in df.columns if c not in _CORE and not c.startswith((PARAM_PREFIX, TAG_PREFIX))]
    columns = df.columns
    if "run" not in df.columns and "run_id" not in df.columns:
        df = df.assign(run=constant_column(path.name.split(".")[0], len(df)))
    key = "run_id" if "run_id" in df.columns else "run"
    coded = _Coded()
    run = grouped_codes(df[key])  # missing: not a run
    if key == "run" and not (run < 0).any():
        coded.known["run"] = run
    # Missing counts as a value of its own when telling whether a column varies within a run.
    ren = {c: PARAM_PREFIX + c for c in extras
           if is_replicate_name(c) or not coded.numeric(c, df[c])
           or not _varies_within(run, coded.codes(c, df[c]))}
    df = df.rename(columns=ren) if ren else df
    params = {c: df[c] for c in df.columns if c.startswith(PARAM_PREFIX)}
    names = None if "run_id" in df.columns else _run_names(df["run"], params, coded.renamed(ren, columns))
    return split_facts(df, names)


def _run_names(run: pd.Series, params: dict[str, pd.Series], known: _Coded | None = None
               ) -> pd.Categorical | None:
    """When a run name repeats across parameter values, the names that tell them apart
    (``1 (algo=ppo)``) as a categorical; ``None`` when none need change. ``known``: value codes
    the caller has made."""
    if not params:
        return None
    known = known or _Coded()
    run_values = known.codes("run", run)
    run_codes = grouped_codes(run) if run.hasnans else run_values  # missing: not a run
    coded = {p: known.codes(p, col) for p, col in params.items()}
    varying = [p for p in params if _varies_within(run_codes, coded[p])]
    if not varying:
        return None
    # Rows are told apart by the text of their run and parameters, made once per distinct
    # value; labels are built once per distinct row, then spread to the rows.
    cols = [run, *(params[p] for p in varying)]
    group = _row_codes([_text_codes(run, run_values),
                        *(_text_codes(params[p], coded[p]) for p in varying)])
    first = _first_rows(group)
    texts = [_texts_at(col, first) for col in cols]
    labels = [
        name if pd.isna(name) else name + " (" + ", ".join(
            f"{k[len(PARAM_PREFIX):]}={v}" for k, v in zip(varying, values, strict=True)
        ) + ")"
        for name, *values in zip(*texts, strict=True)
    ]
    codes, names = pd.factorize(np.array(labels, dtype=object))
    if all(isinstance(name, str) for name in names):  # categories sorted: tidy ranks by code
        by_name = np.argsort(names, kind="stable")
        names, codes = names.take(by_name), np.where(codes < 0, -1, np.argsort(by_name).take(codes))
    return pd.Categorical.from_codes(codes.take(group), categories=names, validate=False)


def _texts_at(col: pd.Series, rows: np.ndarray) -> list:
    """``col.astype(str)`` at ``rows``, as a list (text and integer columns converted at the rows
    only: the same text, cheaper)."""
    dtype = col.dtype
    if isinstance(dtype, pd.StringDtype) and getattr(dtype, "na_value", None) is np.nan:
        return col.array.take(rows).tolist()
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return [str(v) for v in col.to_numpy().take(rows).tolist()]
    if _text_categories(col):
        return np.asarray(dtype.categories, dtype=object).take(col.array.codes.take(rows)).tolist()
    return (col.iloc[rows].astype(str) if _cellwise(col) else col.astype(str).iloc[rows]).tolist()


def _value_codes(col: pd.Series) -> np.ndarray:
    """One code per distinct value of ``col`` (missing is a value of its own)."""
    return grouped_codes(col, use_na_sentinel=False)


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row holding each code ``0 .. codes.max()``."""
    if len(codes) and codes[0] == 0:
        # Codes numbered in order of first appearance (as factorize gives): each first row
        # is where the code exceeds every code before it.
        new = np.flatnonzero(np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]])
        if len(new) == int(codes.max()) + 1:
            return new
    first = np.full(int(codes.max(initial=-1)) + 1, len(codes), dtype=np.intp)
    np.minimum.at(first, codes, np.arange(len(codes)))
    return first


def _text_codes(col: pd.Series, codes: np.ndarray) -> np.ndarray:
    """One code per distinct text of ``col.astype(str)``, given its value ``codes`` (the same for
    text, integers and booleans; other equal values may print differently: 0.0 and -0.0)."""
    dtype = col.dtype
    if isinstance(dtype, pd.StringDtype) or pd.api.types.is_integer_dtype(dtype) or (
            pd.api.types.is_bool_dtype(dtype) and not pd.api.types.is_object_dtype(dtype)) or _text_categories(col):
        return codes
    return _value_codes(col.astype(str))


def _text_categories(col: pd.Series) -> bool:
    """Whether ``col`` is categorical with text categories and no missing cell."""
    dtype = col.dtype
    return (isinstance(dtype, pd.CategoricalDtype) and all(isinstance(c, str) for c in dtype.categories)
            and not (col.array.codes < 0).any())


def constant_column(text: str, n: int) -> pd.Categorical:
    """A categorical column of ``n`` rows all holding ``text``."""
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=[text], validate=False)


def _cellwise(col: pd.Series) -> bool:
    """Whether ``col.astype(str)`` makes each cell text on its own (not dates, written alike)."""
    dtype = col.dtype
    return bool(pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)
                or (pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype)))


def _varies_within(run: np.ndarray, value: np.ndarray) -> bool:
    """Whether the value codes ``value`` take more than one value within a run (``run``: each
    row's run code, -1 for none)."""
    if len(run) and run.min() < 0:
        has_run = run >= 0
        run, value = run[has_run], value[has_run]
    if not len(run):
        return False
    same_run = run[1:] == run[:-1]
    if (same_run & (value[1:] != value[:-1])).any():
        return True
    # The same value along each stretch of a run's rows: the stretches' values are compared
    # with the value at their run's first row.
    starts = np.flatnonzero(np.r_[True, ~same_run])
    run, value = run.take(starts), value.take(starts)
    return bool((value != value.take(_first_rows(run)).take(run)).any())


def _row_codes(cols: list[np.ndarray]) -> np.ndarray:
    """One code per distinct row of the integer columns, in order of first appearance (worked out
    per stretch of equal rows when they come in stretches)."""
    n = len(cols[0])
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for codes in reversed(cols):  # the last columns change most often: they settle it soonest
        change |= codes[1:] != codes[:-1]
        if np.count_nonzero(change) >= n // 4:
            return _combined(cols)
    starts = np.r_[0, np.flatnonzero(change) + 1]
    return np.repeat(_combined([c.take(starts) for c in cols]), np.diff(np.r_[starts, n]))


def _combined(cols: list[np.ndarray]) -> np.ndarray:
    """:func:`_row_codes` of every row: each column's codes folded into one integer, in place."""
    group, bound = np.zeros(len(cols[0]), dtype=np.int64), 1  # every code below bound
    for codes in cols:
        span = int(codes.max(initial=0)) + 1
        if bound > 2**62 // span:  # would overflow: renumber first
            group, _ = pd.factorize(group)
            bound = int(group.max(initial=0)) + 1
        group *= span
        group += codes
        bound *= span
    return grouped_codes(group)


def wide_points(df: pd.DataFrame, path: Path) -> Points:
    """A wide table's points: each metric column melted to one point per logged cell; text and
    replicate columns (``seed``) are run parameters."""
    id_cols = [c for c in ("run", "run_id", "experiment", "step", "compute", "timestamp", "run_status")
               if c in df.columns]
    params: list[str] = []
    metrics: list[str] = []
    coded = _Coded()
    for c in df.columns:
        if c not in id_cols:
            (metrics if coded.numeric(c, df[c]) and not is_replicate_name(c) else params).append(c)
    if not metrics:
        raise InputError(
            f"{shorten(path, PATH_LIMIT)}: no metric columns: expect long columns (metric, value, "
            f"step) or a step column and one numeric column per metric; found {names_text(df.columns)}"
        )
    if "run" not in df.columns and "run_id" not in df.columns:
        df = df.assign(run=constant_column(path.name.split(".")[0], len(df)))
        id_cols.append("run")
    # Rows with no metric value give no points; runs are told apart on the others, before the
    # melt, on a quarter of the rows (for four metrics) and with the same labels.
    # A numpy integer column has no missing cells: then every row has a value.
    if not any(isinstance(df[m].dtype, np.dtype) and df[m].dtype.kind in "iub" for m in metrics):
        some = np.logical_or.reduce([df[m].notna().to_numpy() for m in metrics])
        if not some.all():
            df, coded = df.loc[some], _Coded()  # the codes were of all rows
    facts = {PARAM_PREFIX + p: df[p] for p in params}
    # Runs are told apart by every column named params.*, parameter or metric, in table order.
    named = {(PARAM_PREFIX + c if c in params else c): df[c] for c in df.columns}
    run = None if "run_id" in df.columns else _run_names(
        df["run"], {c: col for c, col in named.items() if c.startswith(PARAM_PREFIX)},
        coded.renamed({p: PARAM_PREFIX + p for p in params}, df.columns))
    metrics = sorted(metrics, key=str)  # categories in sorted order: tidy ranks by code
    # The melt without the empty cells, in the order tidy sorts to.
    cells = melt(df, run, metrics)
    which, rows = cells.which, cells.rows
    # dtype given: an object column handed to pandas as it is would be read again for text
    long = {c: pd.Categorical.from_codes(run.codes.take(rows), dtype=run.dtype, validate=False)
            if c == "run" and run is not None else pd.Series(df[c].array.take(rows), dtype=df[c].dtype, copy=False)
            for c in id_cols}
    long["metric"] = pd.Categorical.from_codes(which, categories=metrics, validate=False)
    long["value"] = cells.value
    frame = pd.DataFrame(long, index=pd.RangeIndex(len(rows)), copy=False)  # new columns already
    return Points(frame, facts, rows)


def with_facts(points: Points, tidied: TidyPoints, split: bool) -> Table:
    """The :class:`~saturate.table.table.Table` of the tidied points, run facts taken from each
    run's first point (``split``) or put on every point and moved apart by ``Table.of``."""
    table = tidied.table
    axis = named_axis(tidied.compute_name)

    def row(at: np.ndarray | None = None) -> np.ndarray:
        """The input rows of the points ``at`` (all), for the facts."""
        rows = at if tidied.rows is None else (tidied.rows if at is None else tidied.rows.take(at))
        if rows is None:  # every point, in its place
            return np.arange(len(table)) if points.row is None else points.row
        return rows if points.row is None else points.row.take(rows)

    if not split:
        if not points.facts:
            return Table.of(table, axis)
        every = row()
        out = table.assign(**{c: col.take(every).set_axis(table.index) for c, col in points.facts.items()})
        lead = [*REQUIRED_COLUMNS, *[c for c in OPTIONAL_COLUMNS if c in out.columns]]
        return Table.of(out[[*lead, *sorted(c for c in out.columns if c not in lead)]], axis)
    starts = tidied.run_starts
    keys = [c for c in (*RUN_KEY, "run_status") if c in table.columns]
    first = row(starts)
    facts = {c: _cells_at(table[c], starts) for c in keys}
    facts.update({c: _cells_at(points.facts[c], first) for c in sorted(points.facts)})
    frames = [pd.DataFrame(facts, copy=False)] if len(facts) > len(RUN_KEY) else []
    out = table.drop(columns=["run_status"]) if "run_status" in table.columns else table
    return Table(out, merge_facts(frames), axis)


def _cells_at(col: pd.Series, rows: np.ndarray) -> pd.Series:
    """``col`` at ``rows``, text and objects as Python objects (as the run table keeps them)."""
    dtype = col.dtype
    if pd.api.types.is_object_dtype(dtype):
        return pd.Series(col.to_numpy()[rows], dtype=object, copy=False)
    if isinstance(dtype, pd.StringDtype) and getattr(dtype, "na_value", None) is np.nan:
        return pd.Series(np.asarray(col.array.take(rows), dtype=object), dtype=object, copy=False)
    return col.take(rows).reset_index(drop=True)
