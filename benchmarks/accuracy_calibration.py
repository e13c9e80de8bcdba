"""Calibration of saturate's probability that the next doubling pays, on the benchmark's cases.

A probability is calibrated when, of the cases given ``p`` near 0.3, about three in ten paid.
Here "paid" is the case's label (:mod:`accuracy_cases`: the realised gain of the next doubling
above twice the threshold; below the threshold it did not pay; between, the case is not scored),
so the check is on scored cases only.

* :func:`reliability`: cases binned by decile of ``p``: how many, the mean ``p``, the share
  that paid; :func:`ece`: the expected calibration error over those deciles (the mean gap
  between ``p`` and the share paid, weighted by the cases in each);
* :func:`brier`: mean squared difference of ``p`` and the outcome (0 perfect; the base rate
  alone scores ``b (1 - b)``);
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def brier(p: np.ndarray, y: np.ndarray) -> float:
    ok = np.isfinite(p) & np.isfinite(y)
    return float(np.mean((p[ok] - y[ok]) ** 2)) if ok.any() else math.nan


def reliability(p: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    """Scored cases by decile of ``p``: count, mean ``p``, share that paid."""
    ok = np.isfinite(p) & np.isfinite(y)
    bins = np.clip((p[ok] * 10).astype(int), 0, 9)
    t = pd.DataFrame({"bin": bins, "p": p[ok], "y": y[ok]})
    out = t.groupby("bin").agg(n=("y", "size"), mean_p=("p", "mean"), paid=("y", "mean"))
    out.index = [f"[{b / 10:.1f}, {(b + 1) / 10:.1f})" for b in out.index]
    return out


def ece(p: np.ndarray, y: np.ndarray) -> float:
    """Expected calibration error over the deciles of :func:`reliability`."""
    t = reliability(p, y)
    if t.empty:
        return math.nan
    return float(np.sum(t["n"] * (t["mean_p"] - t["paid"]).abs()) / t["n"].sum())


def outcome(label: pd.Series) -> np.ndarray:
    """1.0 paid, 0.0 did not, NaN not scored."""
    return label.map({True: 1.0, False: 0.0}).astype(float).to_numpy()
