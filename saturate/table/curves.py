"""The tidy curve table every source produces and every later stage consumes.

One row per logged point: ``source experiment run_id run metric step compute value`` (then
``timestamp``, ``run_status``, ``params.*``, ``tags.*`` when present). ``step`` is an integer,
``compute`` the x axis (``step`` unless another is chosen), ``value`` a finite float.
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, names_text, shorten
from saturate.table import row_order
from saturate.table.cells import (
    TextCodes,
    as_numeric,
    distinct,
    plain_cells,
    spread_texts,
    text_codes,
)
from saturate.vocabulary import names

__all__ = ["REQUIRED_COLUMNS", "KEY_COLUMNS", "PARAM_PREFIX", "TAG_PREFIX", "DataWarning", "tidy",
           "tidy_points", "TidyPoints", "empty_table", "select", "AXIS_METRICS", "iter_curves",
           "curve_table", "run_columns", "is_compute_sorted"]

REQUIRED_COLUMNS: tuple[str, ...] = (
    "source", "experiment", "run_id", "run", "metric", "step", "compute", "value")
OPTIONAL_COLUMNS: tuple[str, ...] = ("timestamp", "run_status")
KEY_COLUMNS: tuple[str, ...] = ("source", "run_id", "metric")
PARAM_PREFIX = "params."
TAG_PREFIX = "tags."
#: Glob patterns of the metrics that may become a run's compute axis (``compute/gpu_hours``,
#: ``gpu_hours``, ``*/total_flops``...): fetched with any metric selection, see :mod:`saturate.vocabulary.names`.
AXIS_METRICS: tuple[str, ...] = names.AXIS_GLOBS
#: Steps are whole numbers that fit in int64 (about +-9.2e18).
_STEP_LIMIT = 2.0**63


class DataWarning(UserWarning):
    """Something in the data was dropped or repaired; the message says what and how much."""


def empty_table() -> pd.DataFrame:
    """An empty tidy table with the right columns and dtypes."""
    df = pd.DataFrame({c: pd.Series(dtype=object) for c in REQUIRED_COLUMNS})
    return tidy(df, allow_empty=True)


def run_columns(df: pd.DataFrame) -> list[str]:
    """The run-level parameter and tag columns of a tidy table."""
    return [c for c in df.columns if c.startswith((PARAM_PREFIX, TAG_PREFIX))]


def tidy(
    df: pd.DataFrame, *, compute_name: str | None = None, allow_empty: bool = False,
    origin: str = "data",
) -> pd.DataFrame:
    """Validate and normalise a long table into the tidy form (the input is never modified).

    Fills missing ``source``/``experiment``/``run_id``/``run``, copies ``step`` into ``compute``
    when absent, coerces types, drops non-finite values with a :class:`DataWarning`, keeps the
    last logged of duplicate (run, metric, step) points and sorts by run, metric and step.
    ``origin`` names the input in error messages.
    """
    return _tidy(df, compute_name, allow_empty, origin).table


@dataclass(frozen=True)
class TidyPoints:
    """:func:`tidy`'s table with where its rows came from: ``rows[i]`` is the input position of
    row ``i`` (``None``: every row in its place), ``run_starts`` the first row of each run.
    Readers use them to put run-level columns they kept apart beside the points."""

    table: pd.DataFrame
    rows: np.ndarray | None
    run_starts: np.ndarray
    compute_name: str = "step"


def tidy_points(
    df: pd.DataFrame, *, compute_name: str | None = None, allow_empty: bool = False,
    origin: str = "data",
) -> TidyPoints:
    """:func:`tidy`, with the input position of each row and the first row of each run.

    The identifying columns are handled as integer codes until the rows are in their final
    order; their text is spread to the rows once, at the end.
    """
    return _tidy(df, compute_name, allow_empty, origin)


def _tidy(df: pd.DataFrame, compute_name: str | None, allow_empty: bool, origin: str) -> TidyPoints:
    """:func:`tidy_points` (warnings are given at the caller of :func:`tidy` or of it)."""
    df = plain_cells(_checked_copy(df, origin))
    texts = _id_texts(df, origin)
    value, step, compute, name = _axes(df, compute_name, origin)
    # Whole steps well within int64 are all usable, and finite as the x axis: not checked again.
    whole = _whole_steps(df)
    keep = _finite_points(value, None if whole and "compute" not in df.columns else compute, name, origin)
    if not whole:
        keep &= _usable_steps(step, keep, origin)
    rows = None if keep.all() else np.flatnonzero(keep)  # None: every row, in its place

    def kept(a: np.ndarray) -> np.ndarray:
        return a if rows is None else a.take(rows)

    # A key that is the same on every row (one source) orders and groups nothing: left out.
    ranks = [kept(texts[c].row_ranks()) for c in KEY_COLUMNS if not texts[c].constant]
    run_keys = len([c for c in KEY_COLUMNS[:2] if not texts[c].constant])
    if not ranks:
        ranks, run_keys = [np.zeros(len(keep) if rows is None else len(rows), dtype=np.intp)], 1
    values = {"value": kept(value.to_numpy(dtype=float)), "compute": kept(compute.to_numpy(dtype=float))}
    if "step" in df.columns and df["step"].dtype == np.int64:  # whole and none missing already
        values["step"] = kept(df["step"].to_numpy())
    else:
        values["step"] = row_order.number_steps(kept(step.to_numpy(dtype=float)), values["compute"], ranks)
    timestamp = None
    if "timestamp" in df.columns:
        ts = df["timestamp"] if rows is None else df["timestamp"].take(rows)
        timestamp = pd.to_numeric(ts, errors="coerce").reset_index(drop=True)
    order = row_order.order(ranks, values["step"], timestamp)
    if order is not None and timestamp is None:
        _warn_repeats(len(values["step"]) - len(order), origin)
    if order is not None:
        rows = order if rows is None else rows.take(order)
        values = {c: v.take(order) for c, v in values.items()}
        ranks = [r.take(order) for r in ranks]
        timestamp = None if timestamp is None else timestamp.take(order)
    out = _assemble(df, rows, spread_texts(texts, rows), values, timestamp)
    if out.empty and not allow_empty:
        raise InputError(f"{shorten(origin, PATH_LIMIT)}: holds no curves (no finite points)")
    return TidyPoints(out, rows, row_order.starts(ranks[:run_keys] or [np.zeros(len(out), np.intp)]),
                      name)


def _warn_repeats(n: int, origin: str) -> None:
    """Warn of points that repeat the (run, metric, step) of a later row, with no timestamp to
    say which was last: a column that tells runs apart would otherwise lose points silently."""
    if n > 0:
        warnings.warn(
            f"{shorten(origin, PATH_LIMIT)}: dropped {n} point(s) that repeat the run, metric and "
            "step of a later row (the later row kept); if a column tells runs apart, name it "
            "seed or give a run column",
            DataWarning, stacklevel=4)


def _checked_copy(df: pd.DataFrame, origin: str) -> pd.DataFrame:
    """A copy of ``df`` once it is a frame with a metric, a value and a step or compute column."""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{shorten(origin, PATH_LIMIT)}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in ("metric", "value") if c not in df.columns]
    if "step" not in df.columns and "compute" not in df.columns:
        missing.append("step")
    if missing:
        raise InputError(f"{shorten(origin, PATH_LIMIT)}: missing column(s) {', '.join(missing)}; "
                         f"found {names_text(df.columns) or 'none'}")
    dup = df.columns[df.columns.duplicated()].unique()
    if len(dup):
        raise InputError(f"{shorten(origin, PATH_LIMIT)}: more than one column is named {names_text(dup)}; "
                         "rename or drop all but one")
    # Shallow: columns are only ever replaced whole, never written into, so the caller's frame
    # is not changed and its data is not duplicated.
    return df.copy(deep=False)


def _id_texts(df: pd.DataFrame, origin: str) -> dict[str, TextCodes]:
    """The identifying columns as :class:`TextCodes`, missing ones filled (a missing ``run`` is
    the ``run_id``, and the other way round; ``source`` is ``origin``; ``experiment`` empty)."""
    n = len(df)

    def const(text: str) -> TextCodes:
        # Code 0 on every row, as a view of one cell: no memory per row.
        codes = np.broadcast_to(np.zeros(1, dtype=np.int8), (n,))
        return TextCodes(codes, np.array([text], dtype=object), np.zeros(1, np.intp))

    def column(col: str) -> TextCodes:
        return TextCodes(*text_codes(df[col]))

    out = {"source": column("source") if "source" in df.columns else const(str(origin)),
           "experiment": column("experiment") if "experiment" in df.columns else const("")}
    has_run, has_id = "run" in df.columns, "run_id" in df.columns
    out["run"] = column("run") if has_run else (column("run_id") if has_id else const("run"))
    out["run_id"] = column("run_id") if has_id else out["run"]
    out["metric"] = column("metric")
    return out


def _axes(
    df: pd.DataFrame, compute_name: str | None, origin: str
) -> tuple[pd.Series, pd.Series, pd.Series, str]:
    """(value, step, compute, name of the x axis) as floats; compute is the step when absent."""
    value = as_numeric(df["value"], "value", origin)
    if "step" in df.columns:
        step = as_numeric(df["step"], "step", origin)
    else:
        step = pd.Series(np.nan, index=df.index)
    if "compute" in df.columns:
        return value, step, as_numeric(df["compute"], "compute", origin), compute_name or "compute"
    return value, step, step.astype(float), compute_name or "step"


def _whole_steps(df: pd.DataFrame) -> bool:
    """Whether ``df`` has a step column of int64 within +-2**62 (so each step is usable and
    exact as a float)."""
    if "step" not in df.columns or df["step"].dtype != np.int64:
        return False
    steps = df["step"].to_numpy()
    return not len(steps) or (int(steps.min()) >= -(2**62) and int(steps.max()) <= 2**62)


def _finite_points(value: pd.Series, compute: pd.Series | None, name: str, origin: str) -> np.ndarray:
    """Which points have a finite value and x (``compute``; ``None``: finite everywhere); warns
    (at tidy's caller) with counts of the rest."""
    bad_value = ~np.isfinite(value.to_numpy(dtype=float))
    if bad_value.any():
        n_nan = int(value.isna().sum())
        n_inf = int(bad_value.sum()) - n_nan
        warnings.warn(
            f"{shorten(origin, PATH_LIMIT)}: dropped {int(bad_value.sum())} non-finite value(s) "
            f"({n_nan} NaN, {n_inf} infinite)",
            DataWarning, stacklevel=4)
    if compute is None:
        return ~bad_value
    bad_x = ~np.isfinite(compute.to_numpy(dtype=float)) & ~bad_value
    if bad_x.any():
        warnings.warn(
            f"{shorten(origin, PATH_LIMIT)}: dropped {int(bad_x.sum())} point(s) without a finite {name}",
            DataWarning, stacklevel=4)
    return ~(bad_value | bad_x)


def _usable_steps(step: pd.Series, keep: np.ndarray, origin: str) -> np.ndarray:
    """Which points have a usable step: missing (numbered later) or within int64; warns with the
    count of the others among the points ``keep`` holds."""
    s = step.to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        ok = np.isnan(s) | ((s < _STEP_LIMIT) & (s > -_STEP_LIMIT))  # booleans only: no float copy
    if not ok[keep].all():
        warnings.warn(
            f"{shorten(origin, PATH_LIMIT)}: dropped {int((~ok[keep]).sum())} point(s) whose step is infinite or "
            "beyond +-9.2e18",
            DataWarning, stacklevel=4)
    return ok


def _assemble(df: pd.DataFrame, rows: np.ndarray | None, texts: dict[str, np.ndarray],
              values: dict[str, np.ndarray], timestamp: pd.Series | None) -> pd.DataFrame:
    """The tidy table: the ``texts`` and ``values`` columns as given (already in row order), the
    other columns of ``df`` taken at ``rows`` (``None``: all, in place); columns in contract
    order."""
    extra = [c for c in df.columns if c not in REQUIRED_COLUMNS]
    ordered = [*REQUIRED_COLUMNS, *[c for c in OPTIONAL_COLUMNS if c in extra]]
    ordered += sorted(c for c in extra if c not in OPTIONAL_COLUMNS)
    index = pd.RangeIndex(len(df) if rows is None else len(rows))
    cols: dict[str, pd.Series] = {}
    for c in ordered:
        if c in texts:
            cols[c] = pd.Series(texts[c], index=index, dtype=object, copy=False)
        elif c in values:
            cols[c] = pd.Series(values[c], index=index, copy=False)
        elif c == "timestamp" and timestamp is not None:
            cols[c] = timestamp.set_axis(index)
        else:
            cols[c] = (df[c] if rows is None else df[c].take(rows)).set_axis(index)
    return pd.DataFrame(cols, index=index, copy=False)


def _strictly_increasing(df: pd.DataFrame, keys: list[str]) -> bool:
    """Whether the rows are sorted by ``keys`` with no two rows equal on all of them, one key at a
    time (a few bytes per row; a MultiIndex needs tens). Key columns hold no missing values."""
    n = len(df)
    tied = np.ones(max(n - 1, 0), dtype=bool)  # rows equal to their predecessor on keys so far
    for k in keys:
        col = df[k]
        plain = col.dtype == object or pd.api.types.is_numeric_dtype(col)
        v = col.to_numpy() if plain else col.array  # numpy compares objects fastest
        if (tied & np.asarray(v[1:] < v[:-1], dtype=bool)).any():
            return False
        tied &= np.asarray(v[1:] == v[:-1], dtype=bool)
    return not tied.any()


def _match_all(patterns: Sequence[str] | str | None) -> bool:
    return patterns is None or (not isinstance(patterns, str) and len(patterns) == 0)


def _match(values: pd.Series, patterns: Sequence[str] | str | None) -> pd.Series:
    if patterns is None or _match_all(patterns):
        return pd.Series(True, index=values.index)
    if isinstance(patterns, str):
        patterns = [patterns]
    uniq = distinct(values)
    hit = {v for v in uniq if any(fnmatch.fnmatchcase(str(v), p) for p in patterns)}
    return values.isin(hit)


def select(
    df: pd.DataFrame, *, metric: Sequence[str] | str | None = None,
    run: Sequence[str] | str | None = None, experiment: Sequence[str] | str | None = None,
) -> pd.DataFrame:
    """Keep the curves whose metric / run name (or id) / experiment match the glob patterns."""
    if _match_all(metric) and run is None and experiment is None:
        return df.reset_index(drop=True)  # nothing to select: a new frame, not a copy
    mask = _match(df["metric"], metric)
    if run is not None:
        mask &= _match(df["run"], run) | _match(df["run_id"], run)
    if experiment is not None:
        mask &= _match(df["experiment"], experiment)
    return df.loc[mask].reset_index(drop=True)


def iter_curves(df: pd.DataFrame) -> Iterator[tuple[tuple[str, str, str], pd.DataFrame]]:
    """Yield ((source, run_id, metric), points sorted by compute) for each curve, in key order; a
    curve already contiguous and sorted is a slice of ``df`` (copy-on-write), not a copy."""
    groups = df.groupby(list(KEY_COLUMNS), sort=True).indices
    for key in sorted(groups):
        idx = groups[key]
        contiguous = idx.shape[0] == 0 or idx[-1] - idx[0] + 1 == idx.shape[0]
        g = df.iloc[idx[0]: idx[-1] + 1] if contiguous else df.iloc[idx]
        if not is_compute_sorted(g):
            g = g.sort_values(["compute", "step"], kind="stable")
        yield key, g


def is_compute_sorted(points: pd.DataFrame) -> bool:
    """Whether the points are sorted by compute, then step."""
    c, s = points["compute"].to_numpy(float), points["step"].to_numpy()
    later = c[1:] > c[:-1]
    return bool(np.all(later | (c[1:] == c[:-1])) and np.all(later | (s[1:] >= s[:-1])))


def curve_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per curve: run, metric, number of points, compute range and last value."""
    cols = ["source", "experiment", "run_id", "run", "metric", "n_points",
            "compute_first", "compute_last", "value_last"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    ordered = df.sort_values([*KEY_COLUMNS, "compute", "step"], kind="stable")
    g = ordered.groupby(list(KEY_COLUMNS), sort=True)
    out = g.agg(
        experiment=("experiment", "first"),
        run=("run", "first"),
        n_points=("value", "size"),
        compute_first=("compute", "min"),
        compute_last=("compute", "max"),
        value_last=("value", "last"),
    ).reset_index()
    return out[cols]


def concat(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate tidy points (from several files or sources), sorted by curve and step."""
    tables = [t for t in tables if not t.empty]
    if not tables:
        return empty_table()
    if len(tables) == 1:  # nothing to join; a sorted table is not copied either
        out = tables[0].reset_index(drop=True)
    else:
        out = pd.concat(tables, ignore_index=True, sort=False)
    for col in run_columns(out):
        out[col] = out[col].astype(object)
    if not _strictly_increasing(out, [*KEY_COLUMNS, "step"]):
        out = out.sort_values([*KEY_COLUMNS, "step"], kind="stable").reset_index(drop=True)
    return out
