"""Benchmark: ``saturate.load`` against the plain pandas reader of the same file.

The shared rl_trained_agents evaluation curves (``rl_trained_agents/eval_curves_long.csv``:
43k rows x 4 metrics = 172k points, 192 curves) are loaded by ``saturate.load`` and by
``pandas.read_csv``; the same table written as JSON Lines and Parquet (in a temporary folder)
against ``pandas.read_json(lines=True)`` and ``pandas.read_parquet``. With ``--big``, also the
Dopamine baselines (966k rows, gzipped long CSV). Target: the CSV under 3x ``read_csv``.

Each figure is the best of ``--repeats`` runs, the two readers taking turns; the machine is shared,
so wall time and CPU time (this process) are both printed, with the load average: compare ratios,
not seconds. Skipped when the shared data is absent. Run::

    .venv/bin/python benchmarks/bench_load.py [--repeats 7] [--big]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from realcurves import DATA_DIR, available

import saturate

EVAL_CURVES = DATA_DIR / "rl_trained_agents" / "eval_curves_long.csv"
DOPAMINE = DATA_DIR / "dopamine" / "dopamine_baselines_long.csv.gz"


def best_times(readers: dict[str, Callable[[], object]], repeats: int) -> dict[str, tuple[float, float]]:
    """``name -> (best wall seconds, best CPU seconds)``, the readers taking turns."""
    best = {name: (float("inf"), float("inf")) for name in readers}
    for _ in range(repeats):
        for name, read in readers.items():
            wall, cpu = time.perf_counter(), time.process_time()
            read()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def compare(label: str, path: Path, baseline: Callable[[Path], object], repeats: int) -> float:
    """Print and return the wall-time ratio of ``saturate.load`` to ``baseline`` on ``path``."""
    times = best_times({"pandas": lambda: baseline(path), "saturate": lambda: saturate.load(path)},
                       repeats)
    (pw, pc), (sw, sc) = times["pandas"], times["saturate"]
    points = len(saturate.load(path))
    print(f"{label:<34} {points:>9,} pts  pandas {pw * 1e3:7.1f} ms  load {sw * 1e3:7.1f} ms  "
          f"ratio {sw / pw:5.2f}x wall, {sc / pc:5.2f}x cpu")
    return sw / pw


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="runs of each reader (best kept)")
    parser.add_argument("--big", action="store_true", help="also the 966k-row Dopamine CSV")
    args = parser.parse_args()
    if not (available() and EVAL_CURVES.is_file()):
        print(f"skipped: no shared real curves at {DATA_DIR}")
        return 0
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    ratio = compare("rl_trained_agents CSV (read_csv)", EVAL_CURVES, pd.read_csv, args.repeats)
    table = pd.read_csv(EVAL_CURVES)
    with tempfile.TemporaryDirectory() as tmp:
        jsonl, parquet = Path(tmp) / "eval_curves.jsonl", Path(tmp) / "eval_curves.parquet"
        table.to_json(jsonl, orient="records", lines=True)
        table.to_parquet(parquet)
        compare("same as JSONL (read_json)", jsonl, lambda p: pd.read_json(p, lines=True),
                args.repeats)
        compare("same as Parquet (read_parquet)", parquet, pd.read_parquet, args.repeats)
    if args.big and DOPAMINE.is_file():
        compare("Dopamine CSV.gz (read_csv)", DOPAMINE, pd.read_csv, max(2, args.repeats // 3))
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"target: the CSV under 3x read_csv: {'met' if ratio < 3 else 'not met'} ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
