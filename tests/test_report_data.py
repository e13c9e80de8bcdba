"""Synthetic runs the report and gate tests analyse for real (no fixtures of analysis output).

Four curves with clear-cut shapes: ``grow`` gains a steady amount per doubling (passes),
``flat`` has saturated, ``<script>alert(1)</script>`` is a loss with a hostile name, and
``short`` has too few points to say anything (inconclusive).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HOSTILE = "<script>alert(1)</script>"
N_BOOT = 20


def write_runs(path: Path, seed: int = 0, names: tuple[str, ...] = ("grow", "flat", HOSTILE,
                                                                      "short")) -> Path:
    """Write the curves named in ``names`` to a CSV file and return its path."""
    rng = np.random.default_rng(seed)
    c = np.geomspace(1, 1000, 30)
    shapes = {
        "grow": ("reward", 0.1 * np.log2(c) + rng.normal(0, 0.01, c.size)),
        "flat": ("reward", 1 - np.exp(-c / 20) + rng.normal(0, 0.005, c.size)),
        HOSTILE: ("eval/loss", 2 * c ** -0.3 + 0.5 + rng.normal(0, 0.01, c.size)),
        "short": ("reward", np.array([0.1, 0.2, 0.25, 0.3])),
    }
    rows = []
    for run in names:
        metric, y = shapes[run]
        for i, v in enumerate(y):
            rows.append({"run": run, "metric": metric, "step": i, "compute": float(c[i]),
                         "value": float(v)})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_written_file_reads_back(tmp_path: Path) -> None:
    import saturate

    df = saturate.load(write_runs(tmp_path / "runs.csv")).points
    assert set(df["run"]) == {"grow", "flat", HOSTILE, "short"}
    assert df.groupby("run").size()["short"] == 4
