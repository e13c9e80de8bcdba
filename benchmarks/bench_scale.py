"""Benchmark: many curves on one machine, and the driver's memory on a 25M-point store.

1. A store of ``--big-runs`` runs (default 1,000) x 5 metrics x ``--big-steps`` steps (default
   5,000): 25M points; ``saturate analyze`` on the local pool; target: the driver's peak RSS
   under 1.5 GB (the points are read a few runs at a time, see ``saturate.ingest.stream``).
2. ``--curves`` synthetic curves (default 10,000) of ``--points`` points (default 500): runs of
   five metrics, the shapes taking turns (power law, sigmoid, log-linear, saturating, collapse),
   with noise, in an MLflow sqlite store written straight through sqlite3 (the schema from a
   database MLflow created; cached under ``benchmarks/.cache/``, which git ignores). Then
   ``saturate analyze STORE --format json`` three ways, each timed from the command's start to
   its end, peak RSS sampled for the driver and for every worker:

   (b) the local pool on 2 cores (``--workers 2``);
   (c) a ``dask scheduler`` and two single-threaded ``dask worker`` processes started here
       (``--scheduler tcp://127.0.0.1:PORT``; the cluster's start is not timed), their nannies
       given saturate's malloc settings as docs/many-runs.md says (``--dask-malloc dask``: Dask's
       defaults, which cost this analysis 40-60% more CPU; ``K=V,K=V``: others);
   (a) one local process (``--workers 1``), last: the longest.

   The three JSON reports must be identical; target: (c) / (b) within 1.3x.

The machine is shared and loaded: the load averages before and after each command and the CPU
time of every process (user + system, sampled) are printed; compare ratios, not seconds. Run::

    .venv/bin/python benchmarks/bench_scale.py            # the full benchmark (hours on a loaded machine)
    .venv/bin/python benchmarks/bench_scale.py --quick    # 300 curves, a 1M-point store
    .venv/bin/python benchmarks/bench_scale.py --skip big --skip one   # (b) and (c) only
    .venv/bin/python benchmarks/bench_scale.py --curves 1000 --skip big --skip one --rounds 4
                                    # (b) and (c) in turns, four times each: a noisy machine
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from dask_cluster import start_cluster  # noqa: E402
from mlflow_server import make_template_db  # noqa: E402
from synthetic_store import synthetic_runs, write_store  # noqa: E402

CACHE = ROOT / "benchmarks" / ".cache"
METRICS = 5
GB = 1024**3


def cached_store(runs: int, steps: int, cache: Path) -> Path:
    """The store of ``runs`` x METRICS x ``steps`` points, built once (written aside, then moved)."""
    db = cache / f"sweep-{runs}x{METRICS}x{steps}" / "mlflow.db"
    if db.exists():
        return db
    t0 = time.perf_counter()
    template = make_template_db(cache / "template" / "mlflow.db") if not (
        cache / "template" / "mlflow.db").exists() else cache / "template" / "mlflow.db"
    part = db.with_suffix(".partial")
    n = write_store(part, template, synthetic_runs(runs, METRICS, steps, seed=1))
    part.rename(db)
    print(f"built {db}: {n:,} points in {time.perf_counter() - t0:.0f} s",
          flush=True)
    return db


# ---- measuring processes ------------------------------------------------------------------------


@dataclass
class Sampler:
    """Peak RSS and CPU time of process trees, sampled every ``every`` seconds in a thread.

    ``roles`` maps a name (driver, scheduler, worker 1, ...) to a root pid; the root and its
    descendants count for that role, the root alone for ``<role> (own)``. CPU time is counted
    from the sampler's start (a dask worker started before it has its start-up left out).
    """

    roles: dict[str, int]
    every: float = 0.2
    peak: dict[str, int] = field(default_factory=dict)
    cpu: dict[int, float] = field(default_factory=dict)
    base: dict[int, float] = field(default_factory=dict)
    role_of: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._t0 = time.time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for role, pid in self.roles.items():
                self._sample(role, pid)
            self._stop.wait(self.every)

    def _sample(self, role: str, pid: int) -> None:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        total = 0
        for p in procs:
            try:
                rss = p.memory_info().rss
                t = p.cpu_times()
                if p.pid not in self.base:
                    self.base[p.pid] = t.user + t.system if p.create_time() < self._t0 else 0.0
            except psutil.NoSuchProcess:
                continue
            total += rss
            used = t.user + t.system - self.base[p.pid]
            self.cpu[p.pid] = max(self.cpu.get(p.pid, 0.0), used)
            self.role_of[p.pid] = role if p.pid == pid else f"{role}'s children"
            if p.pid == pid:
                self.peak[f"{role} (own)"] = max(self.peak.get(f"{role} (own)", 0), rss)
            else:
                self.peak["largest worker"] = max(self.peak.get("largest worker", 0), rss)
        self.peak[role] = max(self.peak.get(role, 0), total)

    @property
    def cpu_total(self) -> float:
        return sum(self.cpu.values())

    @property
    def cpu_by_role(self) -> dict[str, float]:
        """CPU seconds of each role's root and of its children (a pool's or a nanny's workers)."""
        out: dict[str, float] = {}
        for pid, used in self.cpu.items():
            role = self.role_of.get(pid, "?")
            out[role] = out.get(role, 0.0) + used
        return out


@dataclass
class Run:
    label: str
    wall: float
    peak: dict[str, int]
    cpu: float
    load: tuple[tuple[float, ...], tuple[float, ...]]
    report: dict | None = None
    cpu_roles: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        mem = ", ".join(f"{k} {v / GB:.2f} GB" for k, v in sorted(self.peak.items()))
        before, after = (" ".join(f"{x:.1f}" for x in la) for la in self.load)
        roles = ", ".join(f"{k} {v:.0f} s" for k, v in sorted(self.cpu_roles.items()))
        return (f"{self.label:<34} wall {self.wall:8.1f} s   cpu {self.cpu:8.1f} s ({roles})   "
                f"peak RSS: {mem}   load {before} -> {after}")


def analyze(label: str, store: Path, out: Path, extra: list[str],
            watch: dict[str, int] | None = None) -> Run:
    """``saturate analyze STORE --format json --out OUT EXTRA`` timed and sampled."""
    cmd = [sys.executable, "-m", "saturate", "analyze", str(store), "--format", "json",
           "--out", str(out), *extra]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with Sampler({"driver": proc.pid, **(watch or {})}) as sampler:
        _, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{label}: exit {proc.returncode}\n{err}")
    report = json.loads(out.read_text(encoding="utf-8"))
    run = Run(label, wall, dict(sampler.peak), sampler.cpu_total, (load0, os.getloadavg()), report,
              sampler.cpu_by_role)
    print(run.line(), flush=True)
    return run


# ---- the two parts ------------------------------------------------------------------------------


def three_ways(store: Path, tmp: Path, n_boot: int | None, one: bool = True,
               malloc: dict[str, str] | None | str = "saturate", rounds: int = 1) -> None:
    """(b), (c) and (a) on ``store``; with ``rounds`` > 1, (b) and (c) take turns (b c, c b,
    ...) and (c) / (b) is the ratio of their summed times, so drift in the machine's speed
    falls on both alike."""
    extra = [] if n_boot is None else ["--n-boot", str(n_boot)]
    print(f"(c)'s workers: malloc settings {malloc or 'of Dask (its defaults)'}", flush=True)
    done: dict[str, list[Run]] = {"b": [], "c": []}
    for r in range(rounds):
        tag = f" #{r + 1}" if rounds > 1 else ""
        for side in ("b", "c") if r % 2 == 0 else ("c", "b"):
            if side == "b":
                done["b"].append(analyze(f"(b) local pool, 2 workers{tag}", store,
                                         tmp / f"b{r}.json", ["--workers", "2", *extra]))
            else:
                with start_cluster(workers=2, log_dir=tmp, malloc=malloc) as cluster:
                    watch = {"scheduler": cluster.scheduler.pid,
                             **{f"dask worker {i + 1}": w.pid
                                for i, w in enumerate(cluster.workers)}}
                    done["c"].append(analyze(f"(c) dask scheduler + 2 workers{tag}", store,
                                             tmp / f"c{r}.json",
                                             ["--scheduler", cluster.address, *extra], watch))
    wall = {k: sum(run.wall for run in v) for k, v in done.items()}
    cpu = {k: sum(run.cpu for run in v) for k, v in done.items()}
    ratio = wall["c"] / wall["b"]
    print(f"(c) / (b) = {ratio:.2f}x (target <= 1.3x: {'OK' if ratio <= 1.3 else 'ABOVE TARGET'});"
          f" cpu (c) / (b) = {cpu['c'] / cpu['b']:.2f}x", flush=True)
    runs = [*done["b"], *done["c"]]
    if one:
        runs.append(analyze("(a) one process", store, tmp / "a.json", ["--workers", "1", *extra]))
    b = done["b"][0]
    same = all(r.report["curves"] == b.report["curves"]
               and r.report["diagnostics"] == b.report["diagnostics"] for r in runs)
    print(f"curves: {len(b.report['curves'])}; the {len(runs)} reports are "
          f"{'identical' if same else 'DIFFERENT'}")
    if one:
        print(f"(a) / (b) = {runs[-1].wall / (wall['b'] / rounds):.2f}x", flush=True)


def big_store(store: Path, tmp: Path, n_boot: int | None) -> None:
    extra = [] if n_boot is None else ["--n-boot", str(n_boot)]
    run = analyze("25M-point store, local pool of 2", store, tmp / "big.json",
                  ["--workers", "2", *extra])
    driver = run.peak.get("driver (own)", 0)
    print(f"driver peak RSS {driver / GB:.2f} GB for {len(run.report['curves'])} curves "
          f"(target < 1.5 GB: {'OK' if driver < 1.5 * GB else 'ABOVE TARGET'})", flush=True)


def malloc_spec(spec: str) -> dict[str, str] | None | str:
    """``--dask-malloc``: "saturate", "dask" (None: Dask's defaults) or ``K=V,K=V``."""
    if spec in ("saturate", "dask"):
        return None if spec == "dask" else spec
    return dict(kv.split("=", 1) for kv in spec.split(","))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--curves", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=500)
    parser.add_argument("--big-runs", type=int, default=1_000)
    parser.add_argument("--big-steps", type=int, default=5_000)
    parser.add_argument("--n-boot", type=int, default=None, help="resamples (default: saturate's)")
    parser.add_argument("--quick", action="store_true", help="300 curves, a 1M-point store")
    parser.add_argument("--skip", choices=["three", "big", "one"], action="append", default=[],
                        help="three: the three-way comparison; big: the 25M-point store; "
                             "one: (a), the single process (the longest)")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--dask-malloc", type=malloc_spec, default="saturate",
                        help="(c)'s worker malloc settings: saturate (default), dask, or K=V,K=V")
    parser.add_argument("--rounds", type=int, default=1,
                        help="(b) and (c) this many times each, taking turns (b c, c b, ...)")
    args = parser.parse_args()
    if args.quick:
        args.curves, args.big_runs, args.big_steps = 300, 40, 5_000
    print(f"{os.cpu_count()} cores; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        if "big" not in args.skip:
            store = cached_store(args.big_runs, args.big_steps, args.cache)
            print(f"{args.big_runs * METRICS * args.big_steps:,} points "
                  f"({args.big_runs} runs x {METRICS} metrics x {args.big_steps} steps)", flush=True)
            big_store(store, Path(tmp), args.n_boot)
        if "three" not in args.skip:
            store = cached_store(max(1, args.curves // METRICS), args.points, args.cache)
            print(f"{args.curves:,} curves x {args.points} points", flush=True)
            three_ways(store, Path(tmp), args.n_boot, one="one" not in args.skip,
                       malloc=args.dask_malloc, rounds=args.rounds)


if __name__ == "__main__":
    main()
