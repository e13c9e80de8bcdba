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
* :func:`fit_map`: the tool's :class:`~saturate.analysis.call_settings.EvidenceMap` (logistic
  regression of the outcome on the logit of the model's probability and other evidence of the
  curve, :func:`saturate.analysis.decision.evidence_features`) fitted by L2-penalised maximum
  likelihood; the benchmark fits it on the training sources only. With the one feature
  ``model`` it is Platt scaling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from saturate.analysis.call_settings import EVIDENCE_FEATURES, EvidenceMap

PENALTY_C = 1.0
"""Inverse L2 strength of the map's fit (scikit-learn's ``C``): the features are bounded and of
order one, so this keeps a weight from running off on a few separable cases without shrinking
the ones the data support."""


def logit(p: np.ndarray, clip: float = 1e-4) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=float), clip, 1.0 - clip)
    return np.log(q / (1.0 - q))


def apply_map(p: np.ndarray, x: np.ndarray, m: EvidenceMap) -> np.ndarray:
    """:meth:`EvidenceMap.probability` vectorised: ``p`` the model's probabilities, ``x`` the
    feature matrix (columns :data:`EVIDENCE_FEATURES`)."""
    p = np.asarray(p, dtype=float)
    if m.identity:
        return p
    z = np.full(p.shape, float(m.intercept))
    for name, w in m.weights:
        z = z + w * x[:, EVIDENCE_FEATURES.index(name)]
    with np.errstate(over="ignore"):
        out = 1.0 / (1.0 + np.exp(-z))
    return np.where(np.isfinite(p), out, np.nan)


def fit_map(x: np.ndarray, y: np.ndarray, features: Sequence[str],
            c: float = PENALTY_C) -> EvidenceMap:
    """The :class:`EvidenceMap` over ``features`` that best predicts ``y`` (1 paid, 0 not, NaN
    unscored) from the feature matrix ``x``; the identity when there is too little to fit or
    the weight on the model's own probability comes out not positive."""
    from sklearn.linear_model import LogisticRegression

    ok = np.isfinite(y) & np.all(np.isfinite(x), axis=1)
    if ok.sum() < 20 or len(np.unique(y[ok])) < 2:
        return EvidenceMap()
    cols = [EVIDENCE_FEATURES.index(f) for f in features]
    model = LogisticRegression(C=c, max_iter=5000).fit(x[ok][:, cols], y[ok])
    weights = tuple((f, round(float(w), 4)) for f, w in zip(features, model.coef_[0], strict=True))
    if dict(weights).get("model", 0.0) <= 0:
        return EvidenceMap()
    return EvidenceMap(round(float(model.intercept_[0]), 4), weights)


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
