"""Pick a suite out of a tidy table: which column names the task, which the group, which metric.

The suite key and the group key may name a column, a run parameter (``params.<key>``) or a tag
(``tags.<key>``). Seeds are the runs sharing a (task, group): a run is one ``(source, run_id)``.
With ``suite="metric"`` the tasks are metrics (eval sets logged by the same runs), chosen by the
``metric`` glob; otherwise the suite is one metric.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import pandas as pd

from saturate.errors import InputError, SettingsError, no_match
from saturate.table.curves import PARAM_PREFIX, REQUIRED_COLUMNS, TAG_PREFIX
from saturate.table.table import Table

#: The group label when no ``group_by`` is given: the whole table is one agent.
ALL_GROUP = "all"
#: Columns that vary along a curve or identify a run: never a task or a group.
_NOT_KEYS = frozenset({"step", "compute", "value", "run_id", "run", "timestamp"})


@dataclass(frozen=True)
class SuiteRows:
    """The tidy rows of one suite metric with ``_task``, ``_group`` and ``_run`` (run key) added."""

    rows: pd.DataFrame
    task_col: str
    group_col: str | None
    metric: str
    notes: tuple[str, ...] = ()


def resolve_key(df: pd.DataFrame, key: str, option: str) -> str:
    """The column a key names: itself, ``params.<key>`` or ``tags.<key>``; a clear error otherwise."""
    if not isinstance(key, str) or not key.strip():
        raise SettingsError(f"{option}: expected a column, parameter or tag name, got {key!r}")
    for name in (key, f"{PARAM_PREFIX}{key}", f"{TAG_PREFIX}{key}"):
        if name in df.columns and name not in _NOT_KEYS:
            return name
    keys = [c.removeprefix(PARAM_PREFIX).removeprefix(TAG_PREFIX) for c in df.columns
            if c.startswith((PARAM_PREFIX, TAG_PREFIX))]
    raise no_match(option, key, keys, "column, parameter or tag",
                   plural="parameters and tags in the data", error=SettingsError)


def _has_value(col: pd.Series) -> pd.Series:
    return col.notna() & (col.astype(str).str.strip() != "")


def _one_metric(df: pd.DataFrame, metric: str | None) -> str:
    metrics = sorted(df["metric"].astype(str).unique())
    chosen = metrics if metric is None else [m for m in metrics if fnmatch.fnmatchcase(m, metric)]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        raise no_match("--metric", str(metric), metrics, "metric of the suite",
                       plural="the suite's metrics", error=SettingsError)
    raise SettingsError(
        f"the suite's runs log {len(chosen)} metrics ({', '.join(chosen)}); "
        "choose one with metric= (--metric)")


def suite_rows(
    table: Table | pd.DataFrame,
    suite: str,
    group_by: str | None = None,
    metric: str | None = None,
) -> SuiteRows:
    """The rows of the runs that name a task (and a group), for one metric, checked: runs without
    one are left out (counted in the notes), a run naming two is an input error."""
    if isinstance(table, Table):
        table = table.to_frame()  # the suite and group keys are often run parameters or tags
    elif not isinstance(table, pd.DataFrame):
        raise InputError(f"analyze_suite: expected a tidy DataFrame or a Table, got "
                         f"{type(table).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"analyze_suite: the table lacks column(s) {', '.join(missing)}; "
                         "pass saturate.load(...) output")
    task_col = resolve_key(table, suite, "suite")
    group_col = resolve_key(table, group_by, "group_by") if group_by is not None else None
    if group_col == task_col:
        raise SettingsError(f"suite and group_by name the same column ({task_col}); the suite key "
                            "names the task, group_by the agent or recipe")
    notes: list[str] = []
    df = table.assign(_run=table["source"].astype(str) + "\x1f" + table["run_id"].astype(str))
    keep = _has_value(df[task_col])
    if group_col is not None:
        keep &= _has_value(df[group_col])
    dropped = df.loc[~keep, "_run"].nunique()
    if dropped:
        what = "a task" if group_col is None else "a task and a group"
        notes.append(f"{dropped} run(s) without {what} left out")
    df = df.loc[keep]
    if df.empty:
        raise InputError(f"suite {suite!r}: no run names a task in {task_col}"
                         + ("" if group_col is None else f" and a group in {group_col}"))
    if task_col == "metric":
        names = df["metric"].astype(str)
        df = df[names.map(lambda m: metric is None or fnmatch.fnmatchcase(m, metric))].copy()
        if df.empty:
            raise no_match("--metric", str(metric), names.unique(), "metric of the suite",
                           plural="the suite's metrics", error=SettingsError)
        chosen = metric or "*"
        df["_run"] = df["_run"] + "\x1f" + df["metric"].astype(str)
    else:
        chosen = _one_metric(df, metric)
        df = df[df["metric"].astype(str) == chosen].copy()
    df["_task"] = df[task_col].astype(str).str.strip()
    df["_group"] = df[group_col].astype(str).str.strip() if group_col is not None else ALL_GROUP
    for col, what in (("_task", "tasks"), ("_group", "groups")):
        n = df.groupby("_run")[col].nunique()
        if (n > 1).any():
            run = str(n.index[n > 1][0]).split("\x1f")[1]
            raise InputError(f"run {run!r} names several {what} ({what[:-1]} must be constant "
                             "within a run)")
    return SuiteRows(df, task_col, group_col, chosen, tuple(notes))
