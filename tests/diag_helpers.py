"""Synthetic curves for the diagnostics tests: each built to have (or not have) one property."""

from __future__ import annotations

import numpy as np
import pandas as pd

from saturate.diagnostics.base import CurveRef
from saturate.vocabulary.names import metric_direction


def ref(metric: str, compute: np.ndarray, value: np.ndarray, run: str = "run-1") -> CurveRef:
    """A curve without an analysis, as the diagnostics see raw data."""
    return CurveRef("test", run, run, metric, np.asarray(compute, float),
                    np.asarray(value, float), metric_direction(metric))


def ar1(rng: np.random.Generator, n: int, sd: float, phi: float = 0.5) -> np.ndarray:
    """Autocorrelated noise like an RL curve's."""
    e = rng.normal(0.0, sd * np.sqrt(1 - phi**2), n)
    out = np.empty(n)
    out[0] = rng.normal(0.0, sd)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + e[i]
    return out


def table(curves: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]],
          params: dict[str, dict[str, str]] | None = None) -> pd.DataFrame:
    """A raw long table from {(run, metric): (compute, value)}."""
    rows = []
    for (run, metric), (c, y) in curves.items():
        frame = pd.DataFrame({"run": run, "metric": metric, "step": np.arange(len(c)),
                              "compute": c, "value": y})
        for k, v in (params or {}).get(run, {}).items():
            frame[k] = v
        rows.append(frame)
    return pd.concat(rows, ignore_index=True)
