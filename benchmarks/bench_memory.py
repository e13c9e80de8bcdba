"""Peak memory of analysing ONE long curve (issue 14: 1M points under 1 GB, 10M under 2 GB).

Each size runs in a fresh child process, which builds the curve (a tidy-looking DataFrame with
``run, metric, step, value``: a noisy saturating reward), then runs ``saturate.analyze`` on it.
The child reports its peak resident set size (``getrusage``) before the analysis (the interpreter,
the imports and the input itself) and after it, so the analysis' own share is the difference.

    .venv/bin/python benchmarks/bench_memory.py                        # 100k, 1M and 10M points
    .venv/bin/python benchmarks/bench_memory.py --points 1000000 --file   # also via a CSV file

``--file`` writes the curve to a CSV (in another process) and runs ``saturate analyze FILE --format
json`` in the child (the CLI path: reading, tidying and the report); "before" is then the imports. Sizes run smallest first; a size whose predicted
peak (linear in the points, from the previous size) is above ``--max-gb`` is skipped, so a
regression cannot exhaust a shared machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAKE_CURVE = r"""
import sys
import numpy as np, pandas as pd
def make_curve(n):
    rng = np.random.default_rng(0)
    step = np.arange(1, n + 1, dtype=np.int64)
    value = 0.8 * (1 - np.exp(-step / (n / 4))) + rng.normal(0, 0.05, n)
    return pd.DataFrame({"run": "long", "metric": "reward", "step": step, "value": value})
"""
WRITE_CURVE = MAKE_CURVE + "make_curve(int(sys.argv[1])).to_csv(sys.argv[2], index=False)\n"

CHILD = MAKE_CURVE + r"""
import json, resource, time, warnings
n, path = int(sys.argv[1]), sys.argv[2]
df = make_curve(n) if path == "-" else None
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import saturate  # imported after the input is built, so "before" holds the imports too
before = peak_mb()
t = time.perf_counter()
if path == "-":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = saturate.analyze(df)
    verdict = res.curves[0].verdict
else:
    from saturate.cli import main
    sys.argv = ["saturate", "analyze", path, "--format", "json", "--out", path + ".json"]
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, exc.code
    verdict = json.load(open(path + ".json"))["curves"][0]["verdict"]
print(json.dumps({"before_mb": before, "peak_mb": peak_mb(), "seconds": time.perf_counter() - t,
                  "verdict": verdict}))
"""


def measure(n: int, via_file: bool) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "long.csv") if via_file else "-"
        if via_file:  # written by another process, so the measured one only reads it
            subprocess.run([sys.executable, "-c", WRITE_CURVE, str(n), path], check=True)
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), path], capture_output=True,
                             text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{n} points: child failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    ap.add_argument("--file", action="store_true", help="also measure the CLI on a CSV file")
    ap.add_argument("--max-gb", type=float, default=8.0, help="skip sizes predicted above this")
    args = ap.parse_args()
    modes = [False, True] if args.file else [False]
    print(f"{'points':>10}  {'path':<9} {'peak MB':>9} {'input+imports MB':>17} "
          f"{'analysis MB':>12} {'bytes/point':>12} {'seconds':>8}  verdict")
    for via_file in modes:
        last: tuple[int, float] | None = None
        for n in sorted(args.points):
            if last is not None and last[1] * n / last[0] / 1024 > args.max_gb:
                print(f"{n:>10}  skipped: predicted peak above {args.max_gb:g} GB")
                continue
            t = time.perf_counter()
            r = measure(n, via_file)
            own = r["peak_mb"] - r["before_mb"]
            print(f"{n:>10}  {'CLI file' if via_file else 'API':<9} {r['peak_mb']:>9.0f} "
                  f"{r['before_mb']:>17.0f} {own:>12.0f} {own * 2**20 / n:>12.0f} "
                  f"{r['seconds']:>8.1f}  {r['verdict']}  ({time.perf_counter() - t:.0f} s in all)",
                  flush=True)
            last = (n, r["peak_mb"])


if __name__ == "__main__":
    main()
