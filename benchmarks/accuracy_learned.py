"""Does learned evidence earn its place beside P(pays)? A gradient-boosted model on scale-free
features of the observed curve, stacked with P(pays) (its logit a feature, its effect held
monotone), fitted leave-one-source-out: each source's probabilities come from a model fitted
on the other sources only.

The features are those that carried signal in the issue's study: the slope over the last
quarter and over the last half in units of today's noise, the gain over the last doubling (over
the observed range), the drawdown from the best level in noise units, where the last points sit
in the observed range, and the doublings since the best level. The tool would ship the model
as data only where it gains at least :data:`MIN_GAIN` AUC on every source with enough cases
and keeps every canonical shape right; this report says whether it does on these curves.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from accuracy_calibration import ece, outcome
from accuracy_cases import Case
from accuracy_scoring import MIN_CASES, auc

from saturate.measure.trend import noise_sd

MIN_GAIN = 0.03
"""The AUC the stacked model must add on every source to earn its place."""


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    lx = np.log2(x)
    return float(np.polyfit(lx, y, 1)[0]) if lx.size >= 3 and np.ptp(lx) > 0 else math.nan


def features(case: Case, p: float) -> dict[str, float]:
    """The stacked model's inputs for one case (module docstring)."""
    x, y = case.compute, case.value
    r = case.scale
    recent = x >= x[-1] / 2.0
    sigma = noise_sd(y[recent]) if recent.sum() >= 3 else noise_sd(y)
    sigma = sigma if math.isfinite(sigma) and sigma > 0 else r
    q = max(4, y.size // 4)
    w = max(3, y.size // 10)
    smooth = pd.Series(y).rolling(w, min_periods=1).mean().to_numpy()
    best = int(np.argmax(smooth))
    now = (x >= 0.8 * x[-1])
    before = (x >= 0.4 * x[-1]) & (x <= 0.5 * x[-1])
    logit = math.log(min(max(p, 1e-4), 1 - 1e-4) / (1 - min(max(p, 1e-4), 1 - 1e-4)))
    return {
        "logit_p": logit,
        "slope_quarter": _slope(x[-q:], y[-q:]) / sigma,
        "slope_half": _slope(x[recent], y[recent]) / sigma,
        "last_doubling": ((y[now].mean() - y[before].mean()) / r) if before.any() else math.nan,
        "drawdown": (smooth[best] - smooth[-1]) / sigma,
        "position": (smooth[-1] - smooth.min()) / max(np.ptp(smooth), 1e-300),
        "doublings_since_best": math.log2(x[-1] / x[best]),
    }


def learned_report(rows: pd.DataFrame, cases: dict[str, Case], p: np.ndarray) -> None:
    """Print, per source, the AUC and ECE of P(pays) (``p``, leave-one-source-out) and of the
    stacked model fitted on the other sources, and whether the model earns its place."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    y = outcome(rows["label"])
    x = pd.DataFrame([features(cases[k], pi) for k, pi in zip(rows["key"], p, strict=True)],
                     index=rows.index).replace([np.inf, -np.inf], np.nan)
    src = rows["source"].to_numpy()
    stacked = np.full(len(rows), math.nan)
    ok = np.isfinite(y) & np.isfinite(p)
    mono = [1] + [0] * (x.shape[1] - 1)
    for s in np.unique(src):
        train, held = ok & (src != s), src == s
        model = HistGradientBoostingClassifier(max_depth=2, learning_rate=0.05, max_iter=200,
                                               l2_regularization=1.0, min_samples_leaf=40,
                                               monotonic_cst=mono, random_state=0)
        model.fit(x[train].to_numpy(), y[train])
        stacked[held] = model.predict_proba(x[held].to_numpy())[:, 1]
    table, earns = [], True
    for s in ["ALL", *sorted(np.unique(src))]:
        m = ok & (np.ones(len(rows), bool) if s == "ALL" else src == s)
        gain = auc(stacked[m], y[m]) - auc(p[m], y[m])
        table.append({"source": s, "n": int(m.sum()), "auc_p": auc(p[m], y[m]),
                      "auc_stacked": auc(stacked[m], y[m]), "gain": gain,
                      "ece_p": ece(p[m], y[m]), "ece_stacked": ece(stacked[m], y[m])})
        if s != "ALL" and m.sum() >= MIN_CASES and not gain >= MIN_GAIN:
            earns = False
    print("\n== learned evidence stacked with P(pays), fitted leave-one-source-out (a gradient-"
          "boosted model, depth 2)")
    print(pd.DataFrame(table).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"earns its place (at least +{MIN_GAIN} AUC on every source with >= {MIN_CASES} "
          f"cases): {'yes' if earns else 'no'}")
