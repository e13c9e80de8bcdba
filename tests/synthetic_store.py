"""Synthetic RL curves written straight into an MLflow sqlite store, for tests and benchmarks.

The schema comes from a database MLflow itself created (:func:`mlflow_server.make_template_db`);
rows go in with sqlite3's ``executemany``, which writes millions of points a minute where
MlflowClient's ``log_batch`` writes thousands. The store then reads like any MLflow store.

:func:`synthetic_curve` draws one curve of a named shape (power law, sigmoid, log-linear,
saturating, collapse) with noise; :func:`write_store` writes runs of such curves.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["SHAPES", "SyntheticRun", "synthetic_curve", "synthetic_runs", "write_store"]

SHAPES = ("power", "sigmoid", "loglinear", "saturating", "collapse")
_T0 = 1_700_000_000_000


def synthetic_curve(shape: str, steps: int, rng: np.random.Generator) -> np.ndarray:
    """``steps`` values of a curve of ``shape`` on compute ``1..steps``, with noise."""
    c = np.arange(1, steps + 1, dtype=float)
    x = c / steps
    if shape == "power":
        y = 0.9 - 0.8 * (1 + 50 * x) ** -rng.uniform(0.3, 0.8)
    elif shape == "sigmoid":
        mid = rng.uniform(0.05, 0.4)
        y = 0.1 + 0.7 / (1 + (mid / x) ** rng.uniform(1.0, 2.5))
    elif shape == "loglinear":
        y = 0.1 + 0.08 * np.log(c)
    elif shape == "saturating":
        y = 0.8 - 0.7 * np.exp(-x / rng.uniform(0.02, 0.1))
    elif shape == "collapse":
        y = 0.8 - 0.7 * np.exp(-x / 0.1)
        at = int(steps * rng.uniform(0.6, 0.8))
        y[at:] -= 0.4 * (1 - np.exp(-(np.arange(steps - at)) / 5))
    else:
        raise ValueError(f"unknown shape {shape!r}; known: {', '.join(SHAPES)}")
    return y + rng.normal(0, 0.01, steps)


@dataclass(frozen=True)
class SyntheticRun:
    """One run: its name, status, params and curves ``{metric: (steps, values)}``."""

    name: str
    metrics: dict[str, tuple[np.ndarray, np.ndarray]]
    params: dict[str, str] = field(default_factory=dict)
    status: str = "FINISHED"
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def synthetic_runs(runs: int, metrics: int, steps: int, seed: int = 0) -> Iterator[SyntheticRun]:
    """``runs`` runs of ``metrics`` curves of ``steps`` points; the shapes take turns, so that
    every fifth curve collapses. Run ids are drawn from ``seed`` too (the same store twice)."""
    rng = np.random.default_rng(seed)
    step = np.arange(steps, dtype=np.int64) * 10
    for r in range(runs):
        curves = {}
        for m in range(metrics):
            shape = SHAPES[(r * metrics + m) % len(SHAPES)]
            curves[f"eval/task_{m}"] = (step, synthetic_curve(shape, steps, rng))
        yield SyntheticRun(
            name=f"run-{r:05d}", metrics=curves,
            params={"seed": str(r % 4), "recipe": ("ppo", "grpo", "cispo")[r % 3]},
            run_id=f"{int(rng.integers(1 << 62)):032x}",
        )  # fmt: skip


def _rows(run: SyntheticRun) -> Iterator[tuple]:
    for key, (steps, values) in run.metrics.items():
        stamps = _T0 + np.asarray(steps, dtype=np.int64)
        yield from zip([key] * len(steps), np.asarray(values, float).tolist(), stamps.tolist(),
                       [run.run_id] * len(steps), np.asarray(steps).tolist(), [0] * len(steps),
                       strict=True)


def write_store(db: Path, template: Path, runs: Iterable[SyntheticRun],
                experiment: str = "bench") -> int:
    """A copy of ``template`` (an empty MLflow database) at ``db`` holding ``runs`` in a new
    experiment; returns the number of points written."""
    db = Path(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, db)
    con = sqlite3.connect(db)
    n = 0
    try:
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        exp = 1 + con.execute("SELECT COALESCE(MAX(experiment_id), 0) FROM experiments").fetchone()[0]
        con.execute(
            "INSERT INTO experiments (experiment_id, name, artifact_location, lifecycle_stage, "
            "creation_time, last_update_time) VALUES (?, ?, ?, 'active', ?, ?)",
            (exp, experiment, str(db.parent / "artifacts"), _T0, _T0),
        )
        for run in runs:
            con.execute(
                "INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name, "
                "user_id, status, start_time, end_time, source_version, lifecycle_stage, "
                "artifact_uri, experiment_id) VALUES (?, ?, 'LOCAL', '', '', 'bench', ?, ?, ?, "
                "'', 'active', '', ?)",
                (run.run_id, run.name, run.status, _T0, _T0 + 1, exp),
            )
            con.executemany("INSERT INTO params (key, value, run_uuid) VALUES (?, ?, ?)",
                            [(k, v, run.run_id) for k, v in run.params.items()])
            con.execute("INSERT INTO tags (key, value, run_uuid) VALUES "
                        "('mlflow.runName', ?, ?)", (run.name, run.run_id))
            con.executemany("INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) "
                            "VALUES (?, ?, ?, ?, ?, ?)", _rows(run))
            con.executemany(
                "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) "
                "VALUES (?, ?, ?, ?, 0, ?)",
                [(k, float(v[-1]), _T0 + int(s[-1]), int(s[-1]), run.run_id)
                 for k, (s, v) in run.metrics.items()],
            )  # fmt: skip
            n += sum(len(s) for s, _ in run.metrics.values())
        con.commit()
    finally:
        con.close()
    return n
