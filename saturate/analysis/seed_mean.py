"""Pool the seeds of a recipe (``--group-by PARAM``) into one mean curve with its spread.

Runs sharing the parameter's value are interpolated onto the compute points of the run with most
points inside their common range, and averaged. ``value_se``: standard error of the mean value;
``doubling_se``: standard error across seeds of the gain over the last doubling ``y(c) - y(c/2)``,
measured per seed; ``n_seeds`` and ``group_runs`` (joined with ``"; "``) name the runs pooled.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from saturate.errors import SettingsError, no_match
from saturate.table.curves import PARAM_PREFIX, DataWarning, run_columns


def group_column(df: pd.DataFrame, group_by: str) -> str:
    """The column ``--group-by`` names: itself, or ``params.<name>``; a clear error otherwise."""
    for name in (group_by, f"{PARAM_PREFIX}{group_by}"):
        if name in df.columns:
            return name
    params = [c.removeprefix(PARAM_PREFIX) for c in df.columns if c.startswith(PARAM_PREFIX)]
    raise no_match("--group-by", group_by, params, "column or parameter",
                   plural="parameters in the data", error=SettingsError)


def pool_seeds(df: pd.DataFrame, group_by: str) -> pd.DataFrame:
    """One mean curve per (source, group value, metric), with the seed spread columns.

    Runs without a value for the parameter, and groups of one run, pass through unchanged (with
    ``n_seeds`` 1). Runs that share no compute range with the others cannot be averaged: the group
    is then passed through unpooled with a :class:`DataWarning`.
    """
    col = group_column(df, group_by)
    out = []
    keep_cols = [c for c in run_columns(df) if c != col]
    has_value = df[col].notna() & (df[col].astype(str) != "")
    alone = df.loc[~has_value]
    if not alone.empty:
        out.append(_as_single(alone))
    for (source, value, metric), g in df.loc[has_value].groupby(["source", col, "metric"],
                                                                 sort=True):
        runs = list(dict.fromkeys(g["run_id"]))
        if len(runs) == 1:
            out.append(_as_single(g))
            continue
        pooled = _pool_group(g, runs)
        if pooled is None:
            warnings.warn(f"--group-by {group_by}: runs with {col}={value!r} ({metric}) share no "
                          "compute range; analysed one by one", DataWarning, stacklevel=2)
            out.append(_as_single(g))
            continue
        label = f"{group_by}={value}"
        pooled = pooled.assign(source=source, experiment="; ".join(dict.fromkeys(g["experiment"])),
                               run_id=label, run=label, metric=metric)
        pooled[col] = value
        for c in keep_cols:
            vals = g[c].dropna().unique()
            pooled[c] = vals[0] if len(vals) == 1 else None
        if "run_status" in g.columns:
            statuses = g.drop_duplicates("run_id")["run_status"].astype(str)
            pooled["run_status"] = statuses.iloc[0] if statuses.nunique() == 1 else "MIXED"
        out.append(pooled)
    result = pd.concat(out, ignore_index=True, sort=False) if out else df.iloc[0:0].copy()
    result["step"] = result["step"].astype("int64")
    result["n_seeds"] = result["n_seeds"].astype("int64")
    result = result.sort_values(["source", "run_id", "metric", "step"], kind="stable")
    return result.reset_index(drop=True)


def _as_single(g: pd.DataFrame) -> pd.DataFrame:
    return g.assign(value_se=np.nan, doubling_se=np.nan, n_seeds=1, group_runs=g["run"].astype(str))


def _pool_group(g: pd.DataFrame, runs: list[str]) -> pd.DataFrame | None:
    """Mean curve of several runs on a common compute grid, or None when they do not overlap."""
    curves = []
    for r in runs:
        pts = g[g["run_id"] == r].sort_values(["compute", "step"], kind="stable")
        pts = pts.drop_duplicates("compute", keep="last")
        curves.append((pts["compute"].to_numpy(float), pts["value"].to_numpy(float),
                       pts["step"].to_numpy()))
    lo = max(c[0] for c, _, _ in curves)
    hi = min(c[-1] for c, _, _ in curves)
    if not hi > lo:
        return None
    ref = max(curves, key=lambda t: int(np.sum((t[0] >= lo) & (t[0] <= hi))))
    inside = (ref[0] >= lo) & (ref[0] <= hi)
    grid, steps = ref[0][inside], ref[2][inside]
    if grid.size < 2:
        return None
    ys = np.vstack([np.interp(grid, c, y) for c, y, _ in curves])
    k = ys.shape[0]
    mean = ys.mean(axis=0)
    se = ys.std(axis=0, ddof=1) / np.sqrt(k)
    half = grid / 2.0
    ok = half >= lo
    d_se = np.full(grid.size, np.nan)
    if ok.any():
        back = np.vstack([np.interp(half[ok], c, y) for c, y, _ in curves])
        d = ys[:, ok] - back
        d_se[ok] = d.std(axis=0, ddof=1) / np.sqrt(k)
    names = "; ".join(dict.fromkeys(g["run"].astype(str)))
    return pd.DataFrame({"step": steps.astype("int64"), "compute": grid, "value": mean,
                         "value_se": se, "doubling_se": d_se, "n_seeds": k, "group_runs": names})
