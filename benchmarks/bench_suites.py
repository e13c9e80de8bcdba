"""Suites on the Dopamine Atari curves: the stratified bootstrap against rliable's, and the whole
``analyze_suite`` on 60 games x 6 agents x 5 seeds.

Baseline: ``rliable.library.get_interval_estimates`` on the IQM at one grid point (rliable's way to
get a band along a curve is one call per point), measured on a few points and scaled to all 198;
ours draws every replicate once and evaluates it at every point. Both use B replicates, both are
timed in this run, and the ratio is what counts (the machine may be shared: the load average is
printed).

    .venv/bin/python benchmarks/bench_suites.py               # bootstrap ratio + analyze_suite
    .venv/bin/python benchmarks/bench_suites.py --per-task    # also every task's own verdict

Uses ``../shared/data/realcurves`` when present, else the vendored subset under tests/data.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_suites_rliable import FULL, SUBSET, as_tidy, atari, rliable_scores  # noqa: E402

from saturate.analysis import AnalysisSettings  # noqa: E402
from saturate.suites import analyze_suite, stratified_bootstrap  # noqa: E402


def _rliable():
    """rliable's library and metrics, on arch 8 (see tests/test_suites_rliable.py)."""
    import arch.bootstrap as arch_bootstrap
    from rliable import library, metrics

    original = arch_bootstrap.IIDBootstrap.__init__

    @functools.wraps(original)
    def init(self, *args, random_state=None, **kwargs):
        original(self, *args, **kwargs)

    arch_bootstrap.IIDBootstrap.__init__ = init
    return library, metrics


def bench_bootstrap(df, n_boot: int, points: int) -> None:
    library, metrics = _rliable()
    cube = next(iter(rliable_scores(df).values()))  # (seeds, games, iterations)
    scores = np.moveaxis(cube, 0, 1)  # (games, seeds, iterations)
    n_points = scores.shape[2]
    t0 = time.perf_counter()
    stratified_bootstrap(scores, np.full(scores.shape[0], scores.shape[1]), n_boot=n_boot,
                         rng=np.random.default_rng(0))
    ours = time.perf_counter() - t0
    np.random.seed(0)
    t0 = time.perf_counter()
    for k in np.linspace(0, n_points - 1, points).astype(int):
        library.get_interval_estimates({"x": cube[:, :, k]},
                                       lambda s: np.array([metrics.aggregate_iqm(s)]),
                                       reps=n_boot)
    theirs = (time.perf_counter() - t0) / points * n_points
    print(f"stratified bootstrap, {scores.shape[0]} games x {scores.shape[1]} seeds x {n_points} "
          f"points, B={n_boot}: ours {ours:.2f} s, rliable {theirs:.1f} s "
          f"(measured on {points} points, scaled): {theirs / ours:.0f}x faster")


def bench_analysis(df, n_boot: int, per_task: bool) -> None:
    table = as_tidy(df)
    t0 = time.perf_counter()
    suite = analyze_suite(table, suite="game", group_by="agent", n_boot=n_boot,
                          settings=AnalysisSettings(), per_task=per_task)
    took = time.perf_counter() - t0
    what = "with" if per_task else "without"
    print(f"analyze_suite {what} per-task verdicts ({df['game'].nunique()} games x "
          f"{df['agent'].nunique()} agents x {df['seed'].nunique()} seeds, "
          f"{len(table):,} points): {took:.1f} s")
    for g in suite.groups:
        print(f"  {g.group:>24}: {g.verdict:<12} IQM {g.analysis.value_last:.3f}, gain/doubling "
              f"{g.analysis.gain_per_doubling.value:+.3f}, P(next doubling pays) "
              f"{g.p_next_doubling_pays:.2f}"
              + (f", {len(g.paying)}/{len(g.task_results)} games pay" if per_task else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--points", type=int, default=5, help="rliable calls measured")
    parser.add_argument("--per-task", action="store_true", help="also time per-task verdicts")
    args = parser.parse_args()
    path = FULL if FULL.exists() else SUBSET
    print(f"data: {path}; load average {os.getloadavg()[0]:.1f}")
    df = atari(path)
    bench_bootstrap(df, args.n_boot, args.points)
    bench_analysis(df, args.n_boot, per_task=False)
    if args.per_task:
        bench_analysis(df, args.n_boot, per_task=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
