"""What the accuracy benchmark runs on each case: saturate's per-curve analysis and the simple
baselines a user could write in ten lines, all on the same cases.

Each method returns ``(call, {2: forecast, 4: forecast}, verdict, extra)`` with ``call`` True
("pays"), False ("does not pay") or None (inconclusive). Baselines never abstain; their
``extra["score"]`` is the gain they expect of the next doubling over the observed range (what
their AUC ranks by):

* ``last-quarter``: level = rolling mean of the last 10% of points, slope per doubling = OLS on
  log2 compute over the last quarter; pays when the slope exceeds the threshold; forecasts the
  level (persistence);
* ``sigmoid`` (the ScaleRL law alone), ``power`` (saturating power law ``A - B x^-alpha``),
  ``log-linear``: one ``scipy.optimize.curve_fit`` on the standardised curve; pays when the fit's
  ``f(2C) - f(C)`` exceeds the threshold; forecasts the fit.

The threshold is the tool's (:attr:`accuracy_cases.Case.t`) for every method.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
from accuracy_cases import Case
from scipy.optimize import curve_fit

from saturate.analysis import AnalysisSettings, analyze_curve

BASELINES = ("last-quarter", "sigmoid", "power", "log-linear")
Result = tuple[bool | None, dict[int, float | None], str, dict[str, float]]


def case_points(case: Case) -> pd.DataFrame:
    """The observed part of a case as the tidy rows ``analyze_curve`` takes."""
    return pd.DataFrame({
        "source": case.source,
        "experiment": case.group or "bench",
        "run_id": case.name,
        "run": case.name,
        "metric": case.metric,
        "step": np.arange(case.compute.size, dtype="int64"),
        "compute": case.compute,
        "value": case.value,
    })


def run_saturate(case: Case, n_boot: int) -> Result:
    """The tool's own per-curve call and forecasts (the curve alone, no siblings), plus what
    the call is made again from: the curve's evidence (``e_*``), and the averaged fit at ``C``,
    ``2C`` and ``4C`` (the shape the forecasts follow)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = AnalysisSettings(n_boot=n_boot, seed=0,
                                    domains={case.metric: case.domain} if case.domain else {})
        res = analyze_curve(case_points(case), settings)
    call = {"scaling": True, "slowing": True, "saturated": False, "regressing": False}.get(
        res.verdict)
    last = float(case.compute[-1])
    fc: dict[int, float | None] = {2: None, 4: None}
    for f in res.forecast:
        k = round(f.compute / last)
        if k in fc and math.isfinite(f.value):
            fc[k] = f.value
    extra: dict[str, float | str] = {"p": res.p_pays if res.p_pays is not None else math.nan,
                                     "flags": ";".join(res.flags)}
    if res.evidence is not None:
        extra["evidence"] = json.dumps(res.evidence.to_dict())
    if res.fit is not None:
        at = np.array([last, 2 * last, 4 * last])
        extra.update(zip(("fit_c", "fit_2c", "fit_4c"), map(float, res.fit.predict(at)),
                         strict=True))
    return call, fc, res.verdict, extra


def _norm(case: Case) -> tuple[np.ndarray, np.ndarray, float, float]:
    x = case.compute / case.compute[-1]
    mu, sd = float(case.value.mean()), float(case.value.std()) or 1.0
    return x, (case.value - mu) / sd, mu, sd


def _by_model(case: Case, model, p0, bounds) -> Result:
    x, y, mu, sd = _norm(case)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, _ = curve_fit(model, x, y, p0=p0, bounds=bounds, maxfev=20000)
    except (RuntimeError, ValueError):
        return None, {2: None, 4: None}, "failed", {"score": math.nan}

    def f(c: float) -> float:
        return float(model(np.asarray(c, dtype=float), *p)) * sd + mu

    gain = (f(2.0) - f(1.0)) / case.scale
    pays = gain > case.t
    fc = {k: (f(float(k)) if math.isfinite(f(float(k))) else None) for k in (2, 4)}
    return pays, fc, "pays" if pays else "no", {"score": gain}


def _sigmoid(x, r0, a, cmid, b):
    return r0 + (a - r0) / (1.0 + (cmid / x) ** b)


def _power(x, a, b, alpha):
    return a - b * x ** (-alpha)


def _loglinear(x, a, b):
    return a + b * np.log(x)


def run_baseline(case: Case, name: str) -> Result:
    """One of :data:`BASELINES` on one case (module docstring)."""
    if name == "last-quarter":
        y = case.value
        level = float(pd.Series(y).rolling(max(3, y.size // 10), min_periods=1).mean().iloc[-1])
        q = max(3, y.size // 4)
        slope = float(np.polyfit(np.log2(case.compute[-q:]), y[-q:], 1)[0]) / case.scale
        pays = slope > case.t
        return pays, {2: level, 4: level}, "pays" if pays else "no", {"score": slope}
    _, y, _, _ = _norm(case)
    if name == "sigmoid":
        lo, hi = float(y.min()), float(y.max())
        return _by_model(case, _sigmoid, [y[0], hi, 0.3, 1.0],
                         ([lo - 50, lo - 50, 1e-4, 0.05], [hi + 50, hi + 50, 1e4, 10.0]))
    if name == "power":
        return _by_model(case, _power, [y[-1], y[-1] - y[0], 0.5],
                         ([-100, -100, 1e-3], [100, 100, 5.0]))
    if name == "log-linear":
        return _by_model(case, _loglinear, [0.0, 1.0], ([-np.inf, -np.inf], [np.inf, np.inf]))
    raise ValueError(f"unknown baseline {name!r}")
