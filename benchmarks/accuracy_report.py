"""Extra tables of the accuracy benchmark: the settings chosen per held-out source, the
calibration of saturate's probability of paying, and what an oracle could score.

* :func:`settings_report`: the settings chosen per held-out source;
* :func:`calibration_report`: reliability by decile, ECE and Brier score of P(pays) under the
  shipped setting and leave-one-source-out (each source's from the setting chosen on the other
  sources), overall and per source, and a picture of the reliability tables;
* :func:`forecast_report`: the median 2x forecast error per source and cut;
* :func:`oracle_report`: bounds from the seeds. For a single seed, an oracle that knows the
  expected gain of its configuration (the mean realised gain of its sibling seeds at the same
  cut) calls "pays" when that gain clears the threshold; its balanced accuracy against the
  seed's own label is what no method that cannot foresee the seed's own noise can beat by much.
  Its 2x forecast is the seed's smoothed level at ``C`` (the mean over ``[0.8 C, C]``) plus the
  siblings' mean realised gain from there to ``2C``: the error left is the seed's own future
  noise and idiosyncrasy.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from accuracy_calibration import brier, ece, outcome, reliability
from accuracy_cases import ERROR_CAP, THRESHOLD, Case
from accuracy_scoring import MIN_CASES, summarize

FMT = {"float_format": lambda v: f"{v:.3f}"}


def settings_report(scored: dict[str, dict]) -> None:
    from accuracy_calls import describe_setting

    for name, s in scored.items():
        if s["engine"] is None:
            continue
        print(f"\n{name}: settings chosen per held-out source (on the other sources):")
        for src, v in s["chosen"].items():
            print(f"  {src:>10}: {describe_setting(v)}")
        print(f"  all sources (the procedure on the whole corpus): "
              f"{describe_setting(s['best_on_all'])}")
        same = "" if s["best_on_all"] == s["shipped"] else "  <- DIFFERS from the procedure's pick"
        print(f"  shipped default (pooled table): {describe_setting(s['shipped'])}{same}")


def loso_probability(engine, rows: pd.DataFrame, chosen: dict) -> np.ndarray:
    """Each source's P(pays) under the setting chosen on the other sources."""
    p = np.full(len(rows), math.nan)
    for src, v in chosen.items():
        held = (rows["source"] == src).to_numpy()
        p[held] = engine.probability(rows, v)[held]
    return p


def calibration_report(rows: pd.DataFrame, name: str, s: dict, plot: str | None = None
                       ) -> None:
    """Reliability, ECE and Brier score of one saturate method's P(pays): the shipped setting's
    and the leave-one-source-out one (each source's from the setting chosen on the other
    sources), overall and per source, each source's reliability table printed and, with
    ``plot``, drawn."""
    engine = s["engine"]
    y = outcome(rows["label"])
    raw = engine.probability(rows, s["shipped"])
    loso = loso_probability(engine, rows, s["chosen"])
    print(f"\n== calibration of P(next doubling pays), {name}: scored cases by decile of p")
    print("the shipped setting's P(pays), all sources:")
    print(reliability(raw, y).T.to_string(**FMT))
    print("LOSO P(pays) (each source's setting chosen on the other sources), all sources:")
    print(reliability(loso, y).T.to_string(**FMT))
    table = []
    for src in ["ALL", *sorted(rows["source"].unique())]:
        m = np.ones(len(rows), bool) if src == "ALL" else (rows["source"] == src).to_numpy()
        ok = m & np.isfinite(y)
        base = float(np.nanmean(y[ok])) if ok.any() else math.nan
        table.append({"source": src, "n": int((ok & np.isfinite(loso)).sum()), "paid": base,
                      "brier_base": base * (1 - base), "brier_shipped": brier(raw[m], y[m]),
                      "brier_loso": brier(loso[m], y[m]), "ece_shipped": ece(raw[m], y[m]),
                      "ece_loso": ece(loso[m], y[m])})
    print("Brier scores and ECE (lower is better; brier_base: the base rate alone, known in "
          "hindsight)")
    print(pd.DataFrame(table).to_string(index=False, **FMT))
    for src in sorted(rows["source"].unique()):
        m = (rows["source"] == src).to_numpy()
        print(f"LOSO P(pays) on {src} alone (its setting chosen on the other sources):")
        print(reliability(loso[m], y[m]).T.to_string(**FMT))
    if plot:
        _plot_reliability(rows, raw, loso, y, name, plot)


def _plot_reliability(rows: pd.DataFrame, raw: np.ndarray, loso: np.ndarray, y: np.ndarray,
                      name: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = rows.loc[np.isfinite(y), "source"].value_counts()
    sources = sorted(counts.index[counts >= MIN_CASES])  # fewer: a reliability curve of noise
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
    for ax, p, title in ((axes[0], raw, "P(pays), the shipped setting"),
                         (axes[1], loso, "reported P(pays), leave-one-source-out")):
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--")
        for src in ["ALL", *sources]:
            m = np.ones(len(rows), bool) if src == "ALL" else (rows["source"] == src).to_numpy()
            t = reliability(p[m], y[m])
            if t.empty:
                continue
            ax.plot(t["mean_p"], t["paid"], marker="o", lw=2.5 if src == "ALL" else 1,
                    color="black" if src == "ALL" else None,
                    label=f"{src} (ECE {ece(p[m], y[m]):.3f})", ms=4)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("stated P(the next doubling pays), by decile")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("share of cases that paid")
    small = sorted(set(counts.index) - set(sources))
    note = f"; not drawn alone (< {MIN_CASES} cases): {', '.join(small)}" if small else ""
    fig.suptitle(f"Reliability of {name} on held-out real curves "
                 f"(benchmarks/bench_accuracy.py){note}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"reliability picture written to {path}")


def oracle_report(rows: pd.DataFrame, cases: dict[str, Case]) -> None:
    """The seed oracle's figures against the seeds' own labels (module docstring)."""
    seeds = rows[rows["kind"] == "seed"]
    if seeds.empty:
        return
    level = {k: _level_now(cases[k]) for k in seeds["key"]}
    out = []
    for _, g in seeds.groupby(["source", "group", "frac"]):
        for i, r in g.iterrows():
            sib = g.drop(index=i)
            gains = sib["g"].dropna()
            if len(gains) < 2:
                continue
            c = cases[r["key"]]
            later = [cases[k].truth.get(2, math.nan) - level[k] for k in sib["key"]]
            later = [v for v in later if math.isfinite(v)]
            fc = level[r["key"]] + float(np.mean(later)) if later and 2 in c.truth else math.nan
            err = min(ERROR_CAP, abs(fc - c.truth[2]) / c.scale) if math.isfinite(fc) else math.nan
            out.append({"idx": i, "expected": float(gains.mean()), "err2": err})
    if not out:
        return
    o = pd.DataFrame(out).set_index("idx")
    sub = rows.loc[o.index]
    print("\n== oracle on single seeds (knows the configuration's expected next doubling from "
          "its sibling seeds, and the seed's level at C): a bound on what the seed's own past "
          "can reach")
    table = []
    for src in ["ALL", *sorted(sub["source"].unique())]:
        m = sub.index if src == "ALL" else sub.index[sub["source"] == src]
        for name, cut in (("at T", THRESHOLD), ("best cut", None)):
            cuts = [cut] if cut is not None else [THRESHOLD * k for k in np.arange(0.0, 4.01, 0.25)]
            best = max((summarize(sub.loc[m, "label"], (o.loc[m, "expected"] >= t).astype(object),
                                  o.loc[m, "err2"], o.loc[m, "err2"]) | {"cut": t}
                        for t in cuts), key=lambda f: f["bal_acc"])
            table.append({"source": src, "oracle": name, **{k: best[k] for k in (
                "cut", "n", "pays%", "bal_acc", "rec_pays", "rec_not", "prec_not", "n_not",
                "med_err2", "mean_err2")}})
    print("('best cut': the expected gain's cut with the best balanced accuracy in hindsight)")
    print(pd.DataFrame(table).to_string(index=False, **FMT))


def _level_now(c: Case) -> float:
    x, y = c.compute, c.value
    w = x >= 0.8 * x[-1]
    return float(y[w].mean())


def forecast_report(rows: pd.DataFrame, scored: dict[str, dict]) -> None:
    """Median 2x forecast error per source and cut (each method's LOSO forecasts), and the
    median realised gain of the next doubling (``g``, in units of the observed range): where
    the error comes from."""
    table = pd.DataFrame({"source": rows["source"], "frac": rows["frac"].round(3),
                          "g": rows["g"]})
    for name, s in scored.items():
        table[name] = s["loso_calls"]["err2"].to_numpy()
    out = table.groupby(["source", "frac"]).median()
    out.insert(0, "n", table.groupby(["source", "frac"]).size())
    print("\n== median 2x forecast error by source and cut (LOSO); g: median realised gain of "
          "the next doubling over the observed range")
    print(out.to_string(**FMT))
