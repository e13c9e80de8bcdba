"""Accuracy of saturate's calls and forecasts on real RL curves, against simple baselines.

Real curves (Dopamine Atari/MuJoCo seed means and single seeds, DreamerV3 runs of every suite,
stable-baselines3 evaluation curves, LLM RL on GSM8K; see :mod:`realcurves`) are cut at 1/8, 1/4
and 1/2 of their compute; the analysis sees only the part before the cut and is judged by what
the run did later (:mod:`accuracy_cases`: "does the next doubling pay?" against the tool's own
threshold, and the 2x / 4x forecasts). Baselines on the same cases: last level + recent slope,
the ScaleRL sigmoid alone, a saturating power law alone, log-linear alone
(:mod:`accuracy_methods`); their expected gain of the next doubling is the score their AUC
ranks by.

Figures are leave-one-source-out: every tunable setting of the call chosen on the other sources
(:mod:`accuracy_calls`: the spread of a doubling beyond any estimate by the log loss of P(pays),
then the band by the balanced accuracy of the calls made), overall and per source:

* P(pays) as a probability (:func:`accuracy_scoring.probability_table`): its AUC (the forced
  call) against the best simple anchor's, the balanced accuracy of the 30% most confident
  calls, the ECE and the Brier score, with the reliability table of each source printed and
  (``--plot``) drawn;
* the calls made with the band: balanced accuracy over all cases (an inconclusive call counts
  as wrong) and of the calls made (``bal_dec``) with the share decided, the precision of the
  "does not pay" calls and the share of inconclusive calls;
* the forecasts' errors, and a bound from the seeds (:mod:`accuracy_report`);
* ``--learned``: whether learned evidence stacked with P(pays) earns its place
  (:mod:`accuracy_learned`).

saturate is scored alone, with its seeds pooled as ``analyze_table`` pools them (the figures
the targets are read on), and with every group of siblings pooled.

    python benchmarks/bench_accuracy.py               # full sample (~2,500 cases)
    python benchmarks/bench_accuracy.py --quick       # a seeded quarter for iterating
    python benchmarks/bench_accuracy.py --save rows.csv   # also write the per-case rows
    python benchmarks/bench_accuracy.py --rows rows.csv   # score saved rows (no per-case work)
    python benchmarks/bench_accuracy.py --plot docs/reliability.png   # draw the reliability

Per-case results are cached under ``benchmarks/.cache/`` (gitignored), keyed by the case, the
number of bootstrap draws and a hash of the code that produced them, so a re-run after changing
only the decision or the scoring is fast; ``--no-cache`` ignores the cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from saturate.decide import DecisionSettings

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from accuracy_calls import GRID, admissible, saturate_methods  # noqa: E402
from accuracy_cases import Case, forecast_error, make_cases  # noqa: E402
from accuracy_methods import BASELINES, run_baseline, run_saturate  # noqa: E402
from accuracy_report import (  # noqa: E402
    calibration_report,
    forecast_report,
    loso_probability,
    oracle_report,
    settings_report,
)
from accuracy_scoring import (  # noqa: E402
    MIN_CASES,
    Method,
    balanced,
    call_targets,
    fixed_calls,
    objective,
    probability_table,
    probability_targets,
    score_method,
    tradeoff,
)
from realcurves import DATA_DIR, FULL_CAPS, QUICK_CAPS, available, load_all  # noqa: E402

CACHE = HERE / ".cache" / "accuracy"
RUNNERS = ("saturate", *BASELINES)


PER_CASE = ("analysis", "fit", "measure", "results", "settings", "table", "vocabulary")
"""The packages of ``saturate`` the per-case work runs (the decision, ``saturate/decide``, is
applied afterwards from the stored evidence; reports and commands play no part), so changing
another does not invalidate the cache."""


def code_hash() -> str:
    """Hash of everything that can change a stored per-case result: the :data:`PER_CASE`
    packages and the modules that run the cases."""
    h = hashlib.sha1()
    root = HERE.parent / "saturate"
    files = sorted(p for p in root.rglob("*.py")
                   if p.relative_to(root).parts[0] in PER_CASE or p.parent == root)
    files += [HERE / "accuracy_methods.py", HERE / "accuracy_cases.py"]
    for p in files:
        h.update(p.relative_to(HERE.parent).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def evaluate(args: tuple[Case, tuple[str, ...], int]) -> list[dict]:
    """Run the requested methods on one case (in a worker process)."""
    case, methods, n_boot = args
    out = []
    for m in methods:
        t0 = time.perf_counter()
        try:
            if m == "saturate":
                call, fc, verdict, extra = run_saturate(case, n_boot)
            else:
                call, fc, verdict, extra = run_baseline(case, m)
        except Exception as e:  # noqa: BLE001 - a failure is a result, reported at the end
            call, fc, verdict = None, {}, "error"
            extra = {"error": f"{type(e).__name__}: {e}"[:300]}
        out.append({
            "key": case.key, "method": m, "call": call, "fc2": fc.get(2), "fc4": fc.get(4),
            "verdict": verdict, "seconds": time.perf_counter() - t0, "extra": extra,
        })
    return out


def run_cases(cases: list[Case], methods: tuple[str, ...], n_boot: int, jobs: int,
              use_cache: bool) -> dict[tuple[str, str], dict]:
    """Per (case key, method) results, from the cache where possible, the rest computed."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{code_hash()}-b{n_boot}.jsonl"
    done: dict[tuple[str, str], dict] = {}
    if use_cache and path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done[(r["key"], r["method"])] = r
    todo = []
    for c in cases:
        missing = tuple(m for m in methods if (c.key, m) not in done)
        if missing:
            todo.append((c, missing, n_boot))
    print(f"{len(cases)} cases: {len(cases) - len(todo)} fully cached, {len(todo)} to run",
          flush=True)
    with path.open("a") as fh:
        if jobs > 1 and todo:
            with ProcessPoolExecutor(jobs) as ex:
                results = ex.map(evaluate, todo, chunksize=4)
                for part in results:
                    _store(part, done, fh)
        else:
            for w in todo:
                _store(evaluate(w), done, fh)
    return done


def _store(part: list[dict], done: dict, fh) -> None:
    for r in part:
        done[(r["key"], r["method"])] = r
        fh.write(json.dumps(r, default=_json_default) + "\n")
    fh.flush()


def _json_default(v):
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, np.bool_):
        return bool(v)
    raise TypeError(type(v))


def case_rows(cases: list[Case], results: dict, methods: tuple[str, ...]) -> pd.DataFrame:
    """One row per case: the case, its label and, per method, call / forecast errors / verdict
    (columns ``<method>:call`` ...) and saturate's extra quantities (``sat:<name>``)."""
    rows = []
    for c in cases:
        row: dict = {"key": c.key, "source": c.source, "kind": c.kind, "group": c.group,
                     "name": c.name, "frac": c.frac, "g": c.g, "label": c.label,
                     "scale": c.scale, "n_obs": c.compute.size}
        for m in methods:
            r = results[(c.key, m)]
            row[f"{m}:call"] = r["call"]
            row[f"{m}:err2"] = forecast_error(c, 2, r["fc2"])
            row[f"{m}:err4"] = forecast_error(c, 4, r["fc4"])
            row[f"{m}:verdict"] = r["verdict"]
            row[f"{m}:seconds"] = r["seconds"]
            if m == "saturate":
                row.update({f"sat:{k}": v for k, v in r["extra"].items()})
            else:
                row[f"{m}:score"] = r["extra"].get("score", math.nan)
        rows.append(row)
    df = pd.DataFrame(rows)
    df["label"] = df["label"].astype(object)
    df.index = pd.RangeIndex(len(df))
    for m in methods:
        df[f"{m}:call"] = df[f"{m}:call"].astype(object).where(df[f"{m}:call"].notna(), None)
    return df


def methods_to_score(methods: tuple[str, ...], cases: dict[str, Case], rows: pd.DataFrame,
                     grid: tuple[DecisionSettings, ...]) -> list[Method]:
    """The scored methods: saturate's call (alone and pooled, :mod:`accuracy_calls`, settings
    chosen leave-one-source-out; their pooled tables show the shipped defaults), and each
    baseline's stored calls (no tunable settings)."""
    out = [Method(m, fixed_calls(f"{m}:")) for m in methods if m != "saturate"]
    if "saturate" in methods:
        out[:0] = saturate_methods(cases, rows, grid)
    return out


COLS = ["n", "pays%", "bal_acc", "rec_pays", "rec_not", "prec_not", "n_not", "inconcl%",
        "bal_dec", "med_err2", "mean_err2", "med_err4", "mean_err4"]


def report(rows: pd.DataFrame, scored: dict[str, dict]) -> None:
    """Print the LOSO and pooled tables (overall and per source) and the targets."""
    pd.set_option("display.width", 220)
    pd.set_option("display.max_columns", 40)
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    for which in ("loso", "pooled"):
        table = pd.DataFrame([
            {"method": name, **r} for name, s in scored.items() for r in s[which]
        ])
        table = table.sort_values(["source", "method"], key=lambda s: s.map(
            {m: i for i, m in enumerate(scored)}) if s.name == "method" else s, kind="stable")
        title = ("leave-one-source-out (settings chosen on the other sources)" if which == "loso"
                 else "pooled (the shipped settings on every source)")
        print(f"\n== {title}")
        print(table[["method", "source", *COLS]].to_string(**fmt))
    settings_report(scored)
    print("\nby kind of curve (LOSO):")
    kind_rows = []
    for name, s in scored.items():
        calls = s["loso_calls"]
        for kind, g in rows.groupby("kind"):
            kind_rows.append({"method": name, "kind": kind, **{
                k: v for k, v in _summ(rows.loc[g.index], calls.loc[g.index]).items()}})
    print(pd.DataFrame(kind_rows)[["method", "kind", *COLS]].to_string(**fmt))
    anchors = {m: rows[f"{m}:score"].to_numpy(dtype=float) for m in BASELINES
               if f"{m}:score" in rows.columns}
    for name, s in scored.items():
        if s["engine"] is None:
            continue
        p = loso_probability(s["engine"], rows, s["chosen"])
        table = probability_table(rows, p, anchors)
        print(f"\n== P(pays) of {name}, leave-one-source-out: AUC of the forced call against "
              "the best simple anchor's, the 30% most confident calls, calibration")
        print(pd.DataFrame(table).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"targets, {name} (LOSO):")
        for r in table:
            if r["source"] == "ALL" or r["n"] >= MIN_CASES:
                print(f"  {r['source']} (n={r['n']}): {probability_targets(r)}")
        for r in s["loso"]:
            if r["source"] == "ALL" or r["n"] >= MIN_CASES:
                print(f"  {r['source']} (n={r['n']}): {call_targets(r)}")


def _summ(rows: pd.DataFrame, calls: pd.DataFrame) -> dict:
    from accuracy_scoring import summarize

    return summarize(rows["label"], calls["call"], calls["err2"], calls["err4"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a seeded quarter-size sample")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--methods", default=",".join(RUNNERS))
    ap.add_argument("--sources", default=None, help="comma-separated subset of sources")
    ap.add_argument("--save", default=None, help="write the per-case rows to this CSV")
    ap.add_argument("--rows", default=None,
                    help="score the per-case rows an earlier run wrote with --save instead of "
                         "running the cases (the scoring and the post-hoc modules only)")
    ap.add_argument("--data", default=str(DATA_DIR))
    ap.add_argument("--no-cache", action="store_true", help="recompute every case")
    ap.add_argument("--select", choices=("balanced", "tradeoff", "targets"), default="balanced",
                    help="how LOSO chooses a setting on the training sources (accuracy_scoring)")
    ap.add_argument("--weight", type=float, default=0.5,
                    help="--select tradeoff: points of balanced accuracy a point of 'does not "
                         "pay' precision is worth")
    ap.add_argument("--any-setting", action="store_true",
                    help="offer every setting of the grid, not only those that call the "
                         "canonical shapes with the fewest problems (accuracy_calls.admissible)")
    ap.add_argument("--learned", action="store_true",
                    help="try learned evidence stacked with P(pays), fitted leave-one-source-out "
                         "(accuracy_learned): does it earn its place?")
    ap.add_argument("--plot", default=None,
                    help="draw the reliability tables of saturate/seeds to this picture "
                         "(docs/reliability.png)")
    args = ap.parse_args(argv)
    root = Path(args.data)
    if not available(root):
        print(f"real curves not found at {root}; nothing to benchmark", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    sources = tuple(args.sources.split(",")) if args.sources else None
    curves = load_all(root, caps=QUICK_CAPS if args.quick else FULL_CAPS, seed=0, sources=sources)
    cases = make_cases(curves)
    methods = tuple(args.methods.split(","))
    print(f"{len(curves)} curves in {len({c.group for c in curves})} groups, {len(cases)} cases "
          f"({sum(c.label is not None for c in cases)} scored); methods: {', '.join(methods)}",
          flush=True)
    if args.rows:
        rows = pd.read_csv(args.rows, low_memory=False)
        rows["label"] = rows["label"].map({True: True, False: False, "True": True,
                                           "False": False}).astype(object)
        for m in methods:
            c = rows[f"{m}:call"].map({True: True, False: False, "True": True, "False": False})
            rows[f"{m}:call"] = c.astype(object).where(c.notna(), None)
        rows = rows.set_index(pd.RangeIndex(len(rows)))
        results = {}
    else:
        results = run_cases(cases, methods, args.n_boot, args.jobs, not args.no_cache)
        rows = case_rows(cases, results, methods)
    if args.save:
        rows.to_csv(args.save, index=False)
    by_key = {c.key: c for c in cases}
    select = {"targets": objective, "balanced": balanced,
              "tradeoff": tradeoff(args.weight)}[args.select]
    grid = GRID if args.any_setting else admissible()
    spreads = list(dict.fromkeys((s.innovation, s.history, s.lean) for s in grid))
    print(f"settings of the call offered: {len(grid)} of {len(GRID)}; (innovation, history, "
          f"lean): {', '.join(map(str, spreads))}", flush=True)
    to_score = methods_to_score(methods, by_key, rows, grid)
    scored = {m.name: score_method(m, rows, select=select) for m in to_score}
    report(rows, scored)
    for m in to_score:
        if m.engine is not None:
            bad = m.engine.check(scored[m.name]["shipped"])
            print(f"\n{m.name}: the benchmark's vectorised calls differ from the tool's decide() "
                  f"on {bad} cases (shipped setting)")
            calibration_report(rows, m.name, scored[m.name],
                               args.plot if m.name == "saturate/seeds" else None)
    if args.learned and "saturate/seeds" in scored:
        from accuracy_learned import learned_report

        s = scored["saturate/seeds"]
        learned_report(rows, by_key, loso_probability(s["engine"], rows, s["chosen"]))
    forecast_report(rows, scored)
    oracle_report(rows, by_key)
    for m in methods:
        failed = rows[rows[f"{m}:verdict"] == "error"]
        if len(failed):
            first = results.get((failed["key"].iloc[0], m), {}).get("extra", {}).get("error", "")
            print(f"\n{m} FAILED on {len(failed)} cases, e.g. {failed['key'].iloc[0]}: {first}")
    if "saturate" in methods:
        print("\nsaturate verdicts:", rows["saturate:verdict"].value_counts().to_dict())
        print(f"saturate seconds per case: {rows['saturate:seconds'].mean():.2f}")
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
