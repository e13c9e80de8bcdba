"""What the accuracy benchmark runs on each case: saturate's per-curve analysis and the simple
baselines a user could write in ten lines, all on the same cases.

Each method returns ``(call, {2: forecast, 4: forecast}, verdict, extra)`` with ``call`` True
("pays"), False ("does not pay") or None (inconclusive). Baselines never abstain:

* ``last-quarter``: level = rolling mean of the last 10% of points, slope per doubling = OLS on
  log2 compute over the last quarter; pays when the slope exceeds the threshold; forecasts the
  level (persistence);
* ``sigmoid`` (the ScaleRL law alone), ``power`` (saturating power law ``A - B x^-alpha``),
  ``log-linear``: one ``scipy.optimize.curve_fit`` on the standardised curve; pays when the fit's
  ``f(2C) - f(C)`` exceeds the threshold; forecasts the fit.

The threshold is the tool's (3% of the smoothed observed range) for every method.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from accuracy_cases import THRESHOLD, Case
from scipy.optimize import curve_fit

from saturate.analysis import AnalysisSettings, analyze_curve
from saturate.analysis.refine import refine
from saturate.measure.trend import noise_sd

BASELINES = ("last-quarter", "sigmoid", "power", "log-linear")
Result = tuple[bool | None, dict[int, float | None], str, dict[str, float]]


def case_points(case: Case) -> pd.DataFrame:
    """The observed part of a case as the tidy rows ``analyze_curve`` takes."""
    return pd.DataFrame({
        "source": case.source,
        "experiment": case.group or "bench",
        "run_id": case.name,
        "run": case.name,
        "metric": "return",
        "step": np.arange(case.compute.size, dtype="int64"),
        "compute": case.compute,
        "value": case.value,
    })


def run_saturate(case: Case, n_boot: int) -> Result:
    """The tool's own per-curve verdict and forecasts (the curve alone, no siblings), plus the
    quantities the verdict rests on (in units of the threshold) and the curve's outlook (``o_*``,
    what pooling with the siblings needs) for the per-case report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = AnalysisSettings(n_boot=n_boot, seed=0)
        res = refine(analyze_curve(case_points(case), settings), None, settings.decision,
                     case.domain, settings.confidence, settings.seed)
    call = {"scaling": True, "slowing": True, "saturated": False, "regressing": False}.get(
        res.verdict)
    last = float(case.compute[-1])
    fc: dict[int, float | None] = {2: None, 4: None}
    for f in res.forecast:
        k = round(f.compute / last)
        if k in fc and math.isfinite(f.value):
            fc[k] = f.value
    t = res.threshold
    g, tr = res.gain_per_doubling, res.trend
    extra: dict[str, float] = {
        "gain": g.value / t, "gain_lo": g.lo / t, "gain_hi": g.hi / t,
        "trend": tr.slope_per_doubling.value / t if tr else math.nan,
        "trend_lo": tr.slope_per_doubling.lo / t if tr else math.nan,
        "trend_hi": tr.slope_per_doubling.hi / t if tr else math.nan,
        "roi": res.roi, "noise": noise_sd(case.value) / t,
        "collapse": float(res.collapse is not None),
        "flags": ";".join(res.flags),
        "reason": res.reasons[0][:160] if res.reasons else "",
    }
    outlook = getattr(res, "outlook", None)
    if outlook is not None:
        extra.update({f"o_{k}": v for k, v in outlook.to_dict().items()})
    if res.fit is not None:
        extra.update(_fit_extras(res.fit, last))
    extra.update({f"fc{k}": v for k, v in fc.items()})
    return call, fc, res.verdict, extra


def _fit_extras(fit, last: float) -> dict[str, float]:
    """The averaged fit at C, 2C, 4C and, per law, its weight, predictions and the bootstrap
    spread of its gain per doubling (for studying law weights without refitting)."""
    at = np.array([last, 2 * last, 4 * last])
    raw = fit.predict(at)
    out = {"fit_c": float(raw[0]), "fit_2c": float(raw[1]), "fit_4c": float(raw[2]),
           "extrap_se": float(fit.extrapolation_se)}
    x = fit.norm.x(at)
    for lf in fit.laws:
        if not lf.fitted:
            continue
        with np.errstate(all="ignore"):
            p = fit.norm.value(lf.law(x, lf.theta))
            sd = math.nan
            if lf.theta_boot.shape[0] >= 2:
                b = fit.norm.value(lf.law(x[:2], lf.theta_boot))
                sd = float(np.nanstd(b[:, 1] - b[:, 0]))
        out.update({f"law_{lf.name}_w": lf.weight, f"law_{lf.name}_c": float(p[0]),
                    f"law_{lf.name}_2c": float(p[1]), f"law_{lf.name}_4c": float(p[2]),
                    f"law_{lf.name}_gsd": sd})
    return out


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
        return None, {2: None, 4: None}, "failed", {}

    def f(c: float) -> float:
        return float(model(np.asarray(c, dtype=float), *p)) * sd + mu

    pays = f(2.0) - f(1.0) > THRESHOLD * case.scale
    fc = {k: (f(float(k)) if math.isfinite(f(float(k))) else None) for k in (2, 4)}
    return pays, fc, "pays" if pays else "no", {}


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
        slope = float(np.polyfit(np.log2(case.compute[-q:]), y[-q:], 1)[0])
        pays = slope > THRESHOLD * case.scale
        return pays, {2: level, 4: level}, "pays" if pays else "no", {}
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
