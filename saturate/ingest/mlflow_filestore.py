"""Legacy MLflow file store (``mlruns/``) read directly (never written), without MLflow's
FileStore, which MLflow 3 refuses to open by default.

Layout: ``<exp_id>/meta.yaml`` (deleted ones under ``.trash``), ``<exp_id>/<run_id>/meta.yaml``,
and ``metrics/``, ``params/``, ``tags/`` folders (a key with ``/`` a nested path); a metric file
holds ``timestamp value [step [extra...]]`` lines.
"""

from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from saturate.errors import InputError
from saturate.ingest.folder import special_kind
from saturate.ingest.mlflow_common import (
    Experiment,
    RunMeta,
    Selection,
    filter_runs,
    filter_uses_metrics,
    pick_experiments,
    stack_curves,
)
from saturate.table.curves import DataWarning

_TRASH = ".trash"
_META = "meta.yaml"
_STATUS = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}
_COLS = ["timestamp", "value", "step", "x1", "x2", "x3"]
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _meta(folder: Path) -> dict | None:
    try:
        with open(folder / _META, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=_Loader)  # noqa: S506 - a safe loader
    except (OSError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def experiments_in(root: Path) -> list[tuple[Experiment, Path]]:
    """Every experiment of the store with its folder (deleted ones, in ``.trash``, inactive)."""
    found = []
    for parent, active in ((root, True), (root / _TRASH, False)):
        if not parent.is_dir():
            continue
        for child in sorted(parent.iterdir()):
            if child.name.startswith(".") or not child.is_dir():
                continue
            meta = _meta(child)
            if not meta or "experiment_id" not in meta:
                continue
            alive = active and meta.get("lifecycle_stage", "active") != "deleted"
            exp = Experiment(str(meta["experiment_id"]), str(meta.get("name", "")), alive)
            found.append((exp, child))
    return found


def _key_files(folder: Path) -> dict[str, Path]:
    """{key: file} under a metrics/params/tags folder; nested folders are '/' in the key."""
    out: dict[str, Path] = {}
    if not folder.is_dir():
        return out
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath) / name
            if (kind := special_kind(path)) is not None:  # a pipe would hang the read: not opened
                warnings.warn(f"{path}: not a file ({kind}); skipped", DataWarning, stacklevel=2)
                continue
            out[path.relative_to(folder).as_posix()] = path
    return out


def _values(folder: Path) -> dict[str, str]:
    out = {}
    for key, path in _key_files(folder).items():
        try:
            out[key] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _status(raw: object) -> str:
    if isinstance(raw, int):
        return _STATUS.get(raw, str(raw))
    return str(raw or "")


def runs_in(exp: Experiment, folder: Path) -> list[tuple[RunMeta, Path]]:
    """The active runs of an experiment folder with their folders."""
    runs = []
    for child in sorted(folder.iterdir()):
        if not child.is_dir() or not (child / _META).is_file():
            continue
        meta = _meta(child)
        if not meta or not (meta.get("run_id") or meta.get("run_uuid")):
            continue
        if meta.get("lifecycle_stage", "active") == "deleted":
            continue
        run = RunMeta.of(
            meta.get("run_id") or meta.get("run_uuid"), exp.id, meta.get("run_name"),
            _status(meta.get("status")), params=_values(child / "params"),
            tags=_values(child / "tags"), start_time=meta.get("start_time"),
            end_time=meta.get("end_time"), user_id=meta.get("user_id"),
            artifact_uri=meta.get("artifact_uri"),
        )  # fmt: skip
        runs.append((run, child))
    return runs


def read_metric_file(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(steps, values, timestamps, malformed line count) of one metric file; a line without a
    step has step 0 (as MLflow reads it)."""
    try:
        df = pd.read_csv(
            path, sep=" ", header=None, names=_COLS, usecols=[0, 1, 2], engine="c",
            skip_blank_lines=True, dtype=str, keep_default_na=False,
        )  # fmt: skip
    except pd.errors.EmptyDataError:
        return np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64), 0
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError):
        df = _read_lines(path)
    ts = pd.to_numeric(df["timestamp"], errors="coerce")
    value = pd.to_numeric(df["value"].str.strip(), errors="coerce")
    step_text = df["step"].fillna("").astype(str).str.strip()
    step = pd.to_numeric(step_text.where(step_text != "", "0"), errors="coerce")
    bad = ts.isna() | step.isna() | df["value"].isna()
    ok = ~bad.to_numpy()
    return (
        step.to_numpy()[ok].astype(np.int64),
        value.to_numpy(dtype=float)[ok],
        ts.to_numpy()[ok].astype(np.int64),
        int(bad.sum()),
    )


def _read_lines(path: Path) -> pd.DataFrame:
    rows = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if parts:
                rows.append((parts + [None, None, None])[:3])
    return pd.DataFrame(rows, columns=_COLS[:3], dtype=object)


def metric_files(run_folder: Path) -> dict[str, Path]:
    """{metric key: its file} of a run folder (a key with ``/`` is a nested path)."""
    return _key_files(run_folder / "metrics")


def _run_curves(run: RunMeta, folder: Path, selection: Selection) -> tuple[list[tuple], int]:
    """The run's wanted curves for :func:`~saturate.ingest.mlflow_common.stack_curves`, and its
    malformed line count."""
    curves, malformed = [], 0
    for key, path in sorted(metric_files(folder).items()):
        if selection.wants_metric(key):
            steps, values, stamps, bad = read_metric_file(path)
            malformed += bad
            curves.append((run.run_id, key, steps, values, stamps))
    return curves, malformed


def latest_values(points: pd.DataFrame) -> dict[str, dict[str, float]]:
    """MLflow's 'latest' metric value: the point with the largest (step, timestamp, value)."""
    if points.empty:
        return {}
    last = points.sort_values(["step", "timestamp", "value"]).groupby(["run_id", "metric"]).tail(1)
    out: dict[str, dict[str, float]] = {}
    for run_id, key, value in last[["run_id", "metric", "value"]].itertuples(index=False):
        out.setdefault(run_id, {})[key] = float(value)
    return out


def read_filestore(root: Path, selection: Selection, *, label: str, max_workers: int = 8
                   ) -> tuple[list[Experiment], list[RunMeta], pd.DataFrame]:
    """Experiments, selected active runs and their points from an ``mlruns/`` folder."""
    found = experiments_in(Path(root))
    if not found:
        raise InputError(f"MLflow file store {label!r} holds no experiments")
    exps = pick_experiments([e for e, _ in found], selection.experiment, label)
    folders = {e.id: f for e, f in found if e.active}
    runs = [pair for e in exps for pair in runs_in(e, folders[e.id])]
    uses_metrics = filter_uses_metrics(selection.filter)
    # A metrics clause needs latest values of every candidate run, so read before filtering.
    wanted = Selection(None, None, None) if uses_metrics else selection
    if not uses_metrics:
        kept = {r.run_id for r in filter_runs([r for r, _ in runs], selection.filter)}
        runs = [(r, f) for r, f in runs if r.run_id in kept]
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(runs) or 1))) as pool:
        results = list(pool.map(lambda rf: _run_curves(rf[0], rf[1], wanted), runs))
    malformed = sum(bad for _, bad in results)
    if malformed:
        warnings.warn(f"{label}: skipped {malformed} malformed metric line(s)", DataWarning,
                      stacklevel=3)
    points = stack_curves([c for curves, _ in results for c in curves])
    metas = [r for r, _ in runs]
    if uses_metrics:
        metas = filter_runs(metas, selection.filter, latest_values(points))
        keep_ids = {r.run_id for r in metas}
        keep = points["run_id"].isin(keep_ids) & points["metric"].map(selection.wants_metric)
        points = points.loc[keep.astype(bool)].reset_index(drop=True)
    return exps, metas, points
