"""Choosing and joining a run's compute axis, part by part as the sources are read:
``--compute NAME`` (:func:`set_compute`), the first logged measure of compute that grows with the
step (:func:`auto_compute`), or GPU-hours from wall time (``--gpus``, :func:`gpu_hours`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from saturate.errors import InputError, names_text, shorten
from saturate.table.axis import gpu_hours_from_time, named_axis
from saturate.table.cells import distinct
from saturate.table.curves import (
    KEY_COLUMNS,
    OPTIONAL_COLUMNS,
    PARAM_PREFIX,
    REQUIRED_COLUMNS,
    TAG_PREFIX,
    DataWarning,
)
from saturate.table.table import Table
from saturate.vocabulary import names

__all__ = ["set_compute", "auto_compute", "gpu_hours"]


def set_compute(table: Table, name: str | None) -> Table:
    """Use ``name`` as the compute axis: a column or run fact (``params.*``), or a metric
    interpolated on step within each run (its own rows leave the table; points outside its
    logged steps are dropped with a warning)."""
    if name is None or name == table.axis.name:
        return table
    df = table.points
    if name == "step":
        return table.with_points(df.assign(compute=df["step"].astype(float)), named_axis("step"))
    cells = df if name in df.columns or name not in table.runs.columns else table.to_frame()
    if name in cells.columns and name not in REQUIRED_COLUMNS:
        x = pd.to_numeric(cells[name], errors="coerce")
        out = df.assign(compute=x.astype(float).to_numpy())
    elif (df["metric"] == name).any():
        out = _join_axis(df, name)
    else:
        metrics = names_text(sorted(map(str, df["metric"].unique())), most=5, limit=40)
        raise InputError(f"--compute {shorten(repr(name))} is neither a column nor a metric of "
                         f"the data (metrics: {metrics})")
    if not np.isfinite(out["compute"].to_numpy(float)).any():
        raise InputError(f"--compute {shorten(repr(name))} gives no usable compute values")
    out = _drop_missing_compute(out, f"with no {shorten(repr(name))} value at their step")
    return table.with_points(out, named_axis(name))


def _drop_missing_compute(df: pd.DataFrame, why: str) -> pd.DataFrame:
    """Drop points whose compute is not finite (with a warning that counts them), re-sorted."""
    bad = ~np.isfinite(df["compute"].to_numpy(float))
    if bad.any():
        warnings.warn(f"dropped {int(bad.sum())} point(s) {why}", DataWarning, stacklevel=3)
    return df.loc[~bad].sort_values([*KEY_COLUMNS, "step"], kind="stable").reset_index(drop=True)


def _join_axis(df: pd.DataFrame, name: str, only_runs: set | None = None) -> pd.DataFrame:
    """Interpolate metric ``name`` on step as the compute of each run's other metrics; runs
    outside ``only_runs`` (``(source, run_id)``) keep theirs, a run without it gets NaN."""
    axis = df[df["metric"] == name]
    rest = df[df["metric"] != name]
    parts = []
    for key, g in rest.groupby(["source", "run_id"], sort=False):
        if only_runs is not None and key not in only_runs:
            parts.append(g)
            continue
        a = axis[(axis["source"] == key[0]) & (axis["run_id"] == key[1])].sort_values("step")
        if a.empty:
            parts.append(g.assign(compute=np.nan))
            continue
        xs, ys = a["step"].to_numpy(float), a["value"].to_numpy(float)
        c = np.interp(g["step"].to_numpy(float), xs, ys, left=np.nan, right=np.nan)
        parts.append(g.assign(compute=c))
    return pd.concat(parts, ignore_index=True) if parts else rest.iloc[0:0]


def auto_compute(table: Table) -> Table:
    """Give each run still on its step a logged measure of compute as its x axis: the best-ranked
    metric or extra column named for compute (:func:`~saturate.vocabulary.names.is_compute_name`)
    that grows with the step, joined as with ``--compute``. The axis has a unit when every run
    got one of the same unit.
    """
    df = table.points
    chosen = _axis_choices(df)
    if not chosen:
        return table
    out = df
    for name in sorted(set(chosen.values())):
        runs = {k for k, v in chosen.items() if v == name}
        if (df["metric"] == name).any():
            out = _join_axis(out, name, only_runs=runs)
        else:
            rows = pd.MultiIndex.from_frame(out[["source", "run_id"]]).isin(list(runs))
            out = out.assign(compute=np.where(rows, pd.to_numeric(out[name], errors="coerce"),
                                              out["compute"]))
    out = _drop_missing_compute(out, "logged after the last compute value of their run")
    every = set(chosen) == set(map(tuple, df[["source", "run_id"]].drop_duplicates().to_numpy()))
    used, units = set(chosen.values()), {names.axis_unit(n) for n in chosen.values()}
    name = used.pop() if len(used) == 1 and every else "compute"
    unit = units.pop() if len(units) == 1 and every and None not in units else None
    return table.with_points(out, named_axis(name, unit))


def gpu_hours(table: Table, gpus: float | str) -> Table:
    """``table`` on GPU-hours from wall time (``--gpus``), its run facts kept apart."""
    points, axis = gpu_hours_from_time(table.to_frame(), gpus)
    joined = [c for c in table.runs.columns if c not in table.points.columns]
    return table.with_points(points.drop(columns=joined), axis)


def _axis_choices(df: pd.DataFrame) -> dict[tuple[str, str], str]:
    """``{(source, run_id): axis name}`` for the runs on their step that log a measure of compute."""
    metrics = [m for m in distinct(df["metric"]) if names.is_compute_name(str(m))]
    columns = [c for c in df.columns if c not in REQUIRED_COLUMNS and c not in OPTIONAL_COLUMNS
               and not c.startswith((PARAM_PREFIX, TAG_PREFIX)) and names.is_compute_name(c)]
    if not metrics and not columns:
        return {}
    chosen: dict[tuple[str, str], str] = {}
    for key, g in df.groupby(["source", "run_id"], sort=False):
        if not (g["compute"] == g["step"]).all():
            continue
        found = [str(m) for m in metrics if _grows(g[g["metric"] == m].sort_values("step")["value"])]
        for col in columns:
            per_step = g.sort_values("step").groupby("step", sort=True)[col].first()
            if _grows(pd.to_numeric(per_step, errors="coerce").dropna()):
                found.append(col)
        if found:
            chosen[key] = min(found, key=_rank)
    return chosen


def _rank(name: str) -> tuple[int, str]:
    """The order in which measures of compute are preferred as the x axis, then by name."""
    quantity = names.axis_quantity(name)
    assert quantity is not None  # a compute name (is_compute_name) measures a known quantity
    return quantity.rank, name


def _grows(values: pd.Series) -> bool:
    """A cumulative measure: at least two finite values, never decreasing, not constant."""
    v = values.to_numpy(float)
    v = v[np.isfinite(v)]
    return v.size >= 2 and bool(np.all(np.diff(v) >= 0)) and v[-1] > v[0]
