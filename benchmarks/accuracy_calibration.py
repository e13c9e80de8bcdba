"""Calibration of saturate's probability that the next doubling pays, on the benchmark's cases.

A probability is calibrated when, of the cases given ``p`` near 0.3, about three in ten paid.
Here "paid" is the case's label (:mod:`accuracy_cases`: the realised gain of the next doubling
above twice the threshold; below the threshold it did not pay; between, the case is not scored),
so the check is on scored cases only.

* :func:`reliability`: cases binned by decile of ``p``: how many, the mean ``p``, the share
  that paid;
* :func:`brier`: mean squared difference of ``p`` and the outcome (0 perfect; the base rate
  alone scores ``b (1 - b)``);
* :func:`fit_platt`: the logistic map ``logit p' = a + b logit p`` fitted by maximum likelihood
  (Platt scaling; ``statsmodels`` logistic regression), which the benchmark fits on the training
  sources only and the tool applies through
  :attr:`saturate.analysis.call_settings.DecisionSettings.calibration`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

CLIP = 1e-3
"""Model probabilities are held to ``[CLIP, 1 - CLIP]`` before the logit for the fit, so the
cases the model is certain about (an exact 0 or 1) do not dominate it."""


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=float), CLIP, 1.0 - CLIP)
    return np.log(q / (1.0 - q))


def calibrate(p: np.ndarray, cal: tuple[float, float]) -> np.ndarray:
    """The map of :meth:`DecisionSettings.calibrated`, vectorised (exact 0 and 1 stay put)."""
    p = np.asarray(p, dtype=float)
    a, b = cal
    if (a, b) == (0.0, 1.0):
        return p
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        z = a + b * np.log(p / (1.0 - p))
        out = 1.0 / (1.0 + np.exp(-z))
    return np.where((p <= 0.0) | (p >= 1.0), p, out)


def fit_platt(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Intercept and slope of ``logit P(pays) = a + b logit p`` (maximum likelihood); the
    identity ``(0, 1)`` when the fit fails or its slope is not positive."""
    import statsmodels.api as sm

    ok = np.isfinite(p) & np.isfinite(y)
    if ok.sum() < 20 or len(np.unique(y[ok])) < 2:
        return 0.0, 1.0
    x = sm.add_constant(logit(p[ok]))
    try:
        res = sm.Logit(y[ok], x).fit(disp=0)
    except Exception:  # noqa: BLE001 - perfect separation and the like: no map
        return 0.0, 1.0
    a, b = (float(v) for v in res.params)
    if not (math.isfinite(a) and math.isfinite(b) and b > 0):
        return 0.0, 1.0
    return round(a, 3), round(b, 3)


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


def outcome(label: pd.Series) -> np.ndarray:
    """1.0 paid, 0.0 did not, NaN not scored."""
    return label.map({True: 1.0, False: 0.0}).astype(float).to_numpy()
