"""Accuracy of saturate's verdicts and forecasts on real RL curves, against simple baselines.

Each real curve is cut at 1/8, 1/4 and 1/2 of its compute range; only the part before the cut
(compute <= c) is analysed, the rest is the truth:

* label ``g = (mean y over [1.6c, 2c] - mean y over [0.8c, c]) / R`` with ``R`` the range of the
  observed part after a light rolling mean. "pays" if g > 6%, "does not pay" if g < 3%, otherwise
  the case is not scored. scaling/slowing answer "pays", saturated/regressing "does not pay",
  inconclusive counts as wrong. Headline: balanced accuracy.
* forecasts at 2x and 4x the last observed compute against the mean of the real curve over
  [0.9kc, 1.1kc]; error = |forecast - truth| / R, capped at 10 (a missing forecast counts 10).

Baselines measured in the same run: last level + slope of the last quarter on log compute; the
ScaleRL sigmoid alone; a saturating power law alone; log-linear alone.

    python benchmarks/bench_accuracy.py            # full (~1,000 scored cases)
    python benchmarks/bench_accuracy.py --quick    # a seeded subset for iterating
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realcurves import DATA_DIR, RealCurve, available, load_all  # noqa: E402

from saturate.analysis import (  # noqa: E402
    AnalysisSettings,
    analyze_curve,
    recent_slope,
    smoothed_range,
)
from saturate.analysis.evidence import noise_sd, trend_test  # noqa: E402

CUTS = (1 / 8, 1 / 4, 1 / 2)
PAYS, FLAT = 0.06, 0.03
MIN_OBSERVED = 8
ERROR_CAP = 10.0
METHODS = ("saturate", "last-quarter", "sigmoid", "power", "log-linear")


@dataclass(frozen=True)
class Case:
    """One cut of one real curve with its truth."""

    source: str
    name: str
    frac: float
    cut: float
    compute: np.ndarray
    value: np.ndarray
    scale: float
    g: float
    truth: dict[int, float]


def make_cases(curves: list[RealCurve]) -> list[Case]:
    """Cut every curve at 1/8, 1/4 and 1/2 of its compute range and label the future."""
    cases = []
    for cur in curves:
        x, y = cur.compute, cur.value
        for frac in CUTS:
            cut = frac * float(x[-1])
            obs = x <= cut
            if obs.sum() < MIN_OBSERVED:
                continue
            scale = smoothed_range(y[obs])
            if not scale > 0:
                continue
            now = (x >= 0.8 * cut) & (x <= cut)
            later = (x >= 1.6 * cut) & (x <= 2.0 * cut)
            if not now.any() or not later.any():
                continue
            g = (float(y[later].mean()) - float(y[now].mean())) / scale
            last = float(x[obs][-1])
            truth = {}
            for k in (2, 4):
                w = (x >= 0.9 * k * last) & (x <= 1.1 * k * last)
                if w.any():
                    truth[k] = float(y[w].mean())
            cases.append(Case(cur.source, cur.name, frac, cut, x[obs], y[obs], scale, g, truth))
    return cases


# --------------------------------------------------------------------------------------------
# Methods: each returns (pays: True/False/None, {k: forecast at k x last compute or None})


def _settings(n_boot: int) -> AnalysisSettings:
    return AnalysisSettings(n_boot=n_boot, seed=0)


def run_saturate(
    case: Case, n_boot: int
) -> tuple[bool | None, dict[int, float | None], str, dict[str, float]]:
    pts = pd.DataFrame(
        {
            "source": case.source,
            "experiment": "bench",
            "run_id": case.name,
            "run": case.name,
            "metric": "return",
            "step": np.arange(case.compute.size, dtype="int64"),
            "compute": case.compute,
            "value": case.value,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze_curve(pts, _settings(n_boot))
    pays = {"scaling": True, "slowing": True, "saturated": False, "regressing": False}.get(
        res.verdict
    )
    fc: dict[int, float | None] = {2: None, 4: None}
    for f in res.forecast:
        k = round(f.compute / case.compute[-1])
        if k in fc and math.isfinite(f.value):
            fc[k] = f.value
    t = res.threshold
    g, tr = res.gain_per_doubling, res.trend
    extra = {
        "gain": g.value / t,
        "gain_lo": g.lo / t,
        "gain_hi": g.hi / t,
        "roi": res.roi,
        "trend": tr.slope_per_doubling.value / t if tr else math.nan,
        "trend_lo": tr.slope_per_doubling.lo / t if tr else math.nan,
        "trend_hi": tr.slope_per_doubling.hi / t if tr else math.nan,
        "collapse": res.collapse is not None,
        "threshold": t,
        "scale": case.scale,
        "p_trend": tr.p_value if tr else math.nan,
        "flags": ";".join(res.flags),
        "reason": res.reasons[0][:160] if res.reasons else "",
    }
    fit = res.fit
    if fit is not None and tr is not None:
        extra["fit_recent"] = (
            recent_slope(lambda x: fit.predict(x), tr.compute_from, tr.compute_to, case.compute) / t
        )
    if fit is not None:
        last = case.compute[-1]
        smp = fit.predict_samples(np.array([last, 2 * last]))
        extra["p_above"] = float(np.nanmean((smp[:, 1] - smp[:, 0]) > t))
        extra["extrap_se"] = fit.extrapolation_se / t
        d = smp[:, 1] - smp[:, 0]
        extra["boot_sd"] = float(np.nanstd(d)) / t
        extra["above_r0"] = (float(fit.predict(np.array([last]))[0]) - fit.start_level.value) / t
    extra["noise"] = noise_sd(case.value) / t
    whole = trend_test(case.compute, case.value, min_points=case.compute.size)
    if whole is not None:
        extra["whole"] = whole.slope_per_doubling.value / t
        extra["whole_p"] = whole.p_value
    return pays, fc, res.verdict, extra


def _norm(case: Case) -> tuple[np.ndarray, np.ndarray, float, float]:
    x = case.compute / case.compute[-1]
    mu, sd = float(case.value.mean()), float(case.value.std()) or 1.0
    return x, (case.value - mu) / sd, mu, sd


def _by_model(case: Case, model, p0, bounds) -> tuple[bool | None, dict[int, float | None], str]:
    x, y, mu, sd = _norm(case)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, _ = curve_fit(model, x, y, p0=p0, bounds=bounds, maxfev=20000)
    except (RuntimeError, ValueError):
        return None, {2: None, 4: None}, "failed"
    f = lambda c: float(model(np.asarray(c, dtype=float), *p)) * sd + mu  # noqa: E731
    gain = f(2.0) - f(1.0)
    pays = gain > 0.03 * case.scale
    fc = {k: (f(float(k)) if math.isfinite(f(float(k))) else None) for k in (2, 4)}
    return pays, fc, "pays" if pays else "no"


def _sigmoid(x, r0, a, cmid, b):
    return r0 + (a - r0) / (1.0 + (cmid / x) ** b)


def _power(x, a, b, alpha):
    return a - b * x ** (-alpha)


def _loglinear(x, a, b):
    return a + b * np.log(x)


def run_baseline(case: Case, name: str) -> tuple[bool | None, dict[int, float | None], str]:
    if name == "last-quarter":
        y = case.value
        level = float(pd.Series(y).rolling(max(3, y.size // 10), min_periods=1).mean().iloc[-1])
        q = max(3, y.size // 4)
        xs = np.log2(case.compute[-q:])
        slope = float(np.polyfit(xs, y[-q:], 1)[0])
        pays = slope > 0.03 * case.scale
        return pays, {2: level, 4: level}, "pays" if pays else "no"
    _, y, _, _ = _norm(case)
    if name == "sigmoid":
        lo, hi = float(y.min()), float(y.max())
        return _by_model(
            case,
            _sigmoid,
            [y[0], hi, 0.3, 1.0],
            ([lo - 50, lo - 50, 1e-4, 0.05], [hi + 50, hi + 50, 1e4, 10.0]),
        )
    if name == "power":
        return _by_model(
            case, _power, [y[-1], y[-1] - y[0], 0.5], ([-100, -100, 1e-3], [100, 100, 5.0])
        )
    if name == "log-linear":
        return _by_model(case, _loglinear, [0.0, 1.0], ([-np.inf, -np.inf], [np.inf, np.inf]))
    raise ValueError(name)


def _no_fit(*_args, **_kwargs):
    raise RuntimeError("ablation: no law fitted")


def evaluate(args: tuple[Case, tuple[str, ...], int, bool]) -> list[dict]:
    case, methods, n_boot, trend_only = args
    if trend_only:
        import saturate.analysis

        saturate.analysis._fit = _no_fit
    rows = []
    for m in methods:
        t0 = time.perf_counter()
        extra: dict[str, float] = {}
        if m == "saturate":
            pays, fc, verdict, extra = run_saturate(case, n_boot)
        else:
            pays, fc, verdict = run_baseline(case, m)
        row = {
            "source": case.source,
            "name": case.name,
            "frac": case.frac,
            "method": m,
            "g": case.g,
            "pays": pays,
            "verdict": verdict,
            "seconds": time.perf_counter() - t0,
            **extra,
        }
        for k in (2, 4):
            if k in case.truth:
                f = fc.get(k)
                err = (
                    ERROR_CAP if f is None else min(ERROR_CAP, abs(f - case.truth[k]) / case.scale)
                )
                row[f"err{k}"] = err
            else:
                row[f"err{k}"] = math.nan
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------
# Scoring


def score(rows: pd.DataFrame) -> pd.DataFrame:
    """Per method and source (and overall): balanced accuracy, split, forecast errors."""
    out = []
    scored = rows[(rows["g"] > PAYS) | (rows["g"] < FLAT)].copy()
    scored["truth"] = scored["g"] > PAYS
    for (method, source), g in [
        *scored.groupby(["method", "source"], sort=False),
        *(((str(m), "ALL"), gg) for m, gg in scored.groupby("method", sort=False)),
    ]:
        right = g["pays"].eq(g["truth"]) & g["pays"].notna()
        rec_p = right[g["truth"]].mean()
        rec_n = right[~g["truth"]].mean()
        flat = g["g"].abs() < FLAT
        dec = g["g"] < -PAYS
        allr = rows[(rows["method"] == method) & ((rows["source"] == source) | (source == "ALL"))]
        out.append(
            {
                "method": method,
                "source": source,
                "n": len(g),
                "pays%": 100 * g["truth"].mean(),
                "bal_acc": np.nanmean([rec_p, rec_n]),
                "rec_pays": rec_p,
                "rec_not": rec_n,
                "inconcl%": 100 * g["pays"].isna().mean(),
                "gaining": right[g["truth"]].mean(),
                "flat": right[flat].mean() if flat.any() else math.nan,
                "declining": right[dec].mean() if dec.any() else math.nan,
                "n_decl": int(dec.sum()),
                "med_err2": allr["err2"].median(),
                "mean_err2": allr["err2"].mean(),
                "med_err4": allr["err4"].median(),
                "mean_err4": allr["err4"].mean(),
                "sec/case": allr["seconds"].mean(),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a seeded subset (~1/4 of the cases)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--sources", default=None, help="comma-separated subset of sources")
    ap.add_argument("--save", default=None, help="write the per-case rows to this CSV")
    ap.add_argument("--data", default=str(DATA_DIR))
    ap.add_argument(
        "--trend-only",
        action="store_true",
        help="ablation: saturate without any fitted law (trend and collapse evidence alone)",
    )
    args = ap.parse_args(argv)
    root = Path(args.data)
    if not available(root):
        print(f"real curves not found at {root}; nothing to benchmark", file=sys.stderr)
        return 1
    caps = {"dopamine": 40, "dreamerv3": 54, "sb3": 30, "llm": None} if args.quick else None
    sources = tuple(args.sources.split(",")) if args.sources else None
    curves = load_all(root, caps=caps, seed=0, sources=sources)
    cases = make_cases(curves)
    methods = tuple(args.methods.split(","))
    print(f"{len(curves)} curves, {len(cases)} cases; methods: {', '.join(methods)}", flush=True)
    t0 = time.perf_counter()
    work = [(c, methods, args.n_boot, args.trend_only) for c in cases]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as ex:
            parts = list(ex.map(evaluate, work, chunksize=4))
    else:
        parts = [evaluate(w) for w in work]
    rows = pd.DataFrame([r for p in parts for r in p])
    if args.save:
        rows.to_csv(args.save, index=False)
    table = score(rows)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    order = {m: i for i, m in enumerate(methods)}
    table = table.sort_values(
        ["source", "method"], key=lambda s: s.map(order) if s.name == "method" else s
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    sat = rows[rows["method"] == "saturate"]
    if not sat.empty:
        print("\nsaturate verdicts:", sat["verdict"].value_counts().to_dict())
        overall = table[table["source"] == "ALL"].set_index("method")
        base = overall.drop(index="saturate", errors="ignore")
        me = overall.loc["saturate"]
        print(
            f"\nheadline: balanced accuracy {me['bal_acc']:.3f} (target >= 0.75; best baseline "
            f"{base['bal_acc'].max() if len(base) else float('nan'):.3f}), inconclusive "
            f"{me['inconcl%']:.1f}% (target <= 15%), median 2x error {me['med_err2']:.3f} "
            f"(target <= 0.15), mean 2x error {me['mean_err2']:.3f} (best baseline "
            f"{base['mean_err2'].min() if len(base) else float('nan'):.3f})"
        )
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
