"""Reading that scales: ``saturate ls`` on a W&B run with many metrics, the memory a W&B log
takes to read, and ``wandb://`` runs read from a local stand-in of W&B's GraphQL.

Each figure is printed against a baseline measured in the same run, never asserted:

* ``ls``: seconds for a run of ``--keys`` metrics against one of a tenth as many (linear: ~10x);
* memory: the peak RSS a ``saturate.load`` of the log adds, in a process of its own, over the
  log's size (the issue's target: at most 3x), after a warm-up read of a small log;
* ``wandb://``: seconds per run for ``--runs`` runs (the stand-in answers each history after
  ``--delay`` seconds, like a server far away) against the same read one run at a time
  (``workers=1``), and the time 20,000 runs would take at that rate.

The W&B runs are written by the wandb package offline (tests/wandb_runs.py), which takes a while
for the memory log; ``--quick`` makes everything smaller.

    python benchmarks/bench_read_scale.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

_MEMORY = r"""
import resource, sys
import saturate
saturate.load(sys.argv[1])  # the imports and a warm-up
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
df = saturate.load(sys.argv[2])
print(len(df), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _wide_run(folder: Path, keys: int, steps: int) -> Path:
    from wandb_runs import write_runs

    rows = [[s, {f"m/k{j:05d}": math.sin(s * 0.1 + j) for j in range(keys)}] for s in range(1, steps + 1)]
    return write_runs(folder, [{"name": "wide", "rows": rows}])


def _ls_seconds(folder: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "saturate", "ls", str(folder)], check=True, env=_env(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_ls(tmp: Path, keys: int) -> None:
    small = _ls_seconds(_wide_run(tmp / "ls-small", keys // 10, 20))
    big = _ls_seconds(_wide_run(tmp / "ls-big", keys, 20))
    print(f"ls: {keys:,} metrics {big:.1f} s, {keys // 10:,} metrics {small:.1f} s: "
          f"ratio {big / small:.1f} (linear: ~10; the target: {keys:,} metrics under 5 s)")


def bench_memory(tmp: Path, keys: int, steps: int) -> None:
    small = next(_wide_run(tmp / "mem-small", 5, 20).glob("*/run-*.wandb"))
    log = next(_wide_run(tmp / "mem-big", keys, steps).glob("*/run-*.wandb"))
    out = subprocess.run([sys.executable, "-c", _MEMORY, str(small), str(log)], check=True,
                         env=_env(), capture_output=True, text=True).stdout.split()
    points, added = int(out[0]), int(out[1])
    size = log.stat().st_size
    print(f"memory: a {size / 2**20:.0f} MB W&B log ({points:,} points) adds "
          f"{added / 2**20:.0f} MB of peak RSS: {added / size:.1f}x the log (the target: <= 3x)")


def bench_wandb_api(runs: int, delay: float) -> None:
    import wandb
    from wandb_server import WandbServer, remote_run

    from saturate.ingest.wandb_api import WORKERS, iter_wandb_api

    project = [remote_run(f"id{i}", f"ppo-{i}", [{"_step": s, "reward": s / 100} for s in range(50)])
               for i in range(runs)]
    os.environ["WANDB_API_KEY"] = "bench-key-" + "x" * 40
    rates = {}
    with WandbServer(project, delay=delay) as server:
        os.environ["WANDB_BASE_URL"] = server.url
        for workers in (1, WORKERS):
            start = time.perf_counter()
            got = sum(1 for _ in iter_wandb_api("wandb://team/rl", timeout=120, workers=workers,
                                                progress_every=math.inf))
            rates[workers] = (time.perf_counter() - start) / got
    wandb.teardown()
    one, many = rates[1], rates[WORKERS]
    print(f"wandb://: {runs:,} runs, each history answered after {delay:g} s: "
          f"{one * 1000:.0f} ms a run one at a time, {many * 1000:.0f} ms a run {WORKERS} at a "
          f"time: {one / many:.1f}x faster; 20,000 runs would take {20_000 * many / 60:.1f} min "
          f"(one at a time: {20_000 * one / 60:.1f} min)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (a smoke test)")
    parser.add_argument("--keys", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--api-only", action="store_true", help="only the wandb:// read")
    args = parser.parse_args()
    keys, runs, steps = (500, 40, 400) if args.quick else (args.keys, args.runs, 4000)
    with tempfile.TemporaryDirectory(prefix="saturate-bench-") as tmp:
        if not args.api_only:
            bench_ls(Path(tmp), keys)
            bench_memory(Path(tmp), 100, steps)
        bench_wandb_api(runs, args.delay)


if __name__ == "__main__":
    main()
