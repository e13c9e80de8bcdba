"""Benchmark: reading full MLflow metric histories with saturate vs the naive client loop.

Builds RUNS x METRICS x STEPS points in a fresh sqlite store, then times, in the same process:

- baseline: ``MlflowClient.search_runs`` + one ``get_metric_history`` per (run, metric), the
  usual way to get whole curves out of MLflow (imports and MLflow's cached store warmed first);
- floor: one raw ``SELECT`` of the same metric rows (run, key, step, value, timestamp, is_nan)
  through ADBC's Arrow columns into numpy arrays, nothing else: the physical limit here;
- saturate: ``saturate.load`` (falls back to ``load_mlflow`` if the dispatcher is missing),

on the ``sqlite:///`` URI (targets: within 2x of the floor, >= 10x the client loop) and through a
local ``mlflow server`` on the same store (target >= 1.5x the client loop). Best of ``--repeat``
timings each, with this process's CPU time of the best run; the machine is shared, so the load
averages are printed before and after. Run::

    .venv/bin/python benchmarks/bench_mlflow.py [--runs 20 --metrics 5 --steps 1000 --repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from mlflow_server import make_template_db, start_server  # noqa: E402


def build_store(db: Path, runs: int, metrics: int, steps: int, seed: int = 0) -> str:
    """Log the synthetic runs with MlflowClient.log_batch; returns the experiment id."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param

    rng = np.random.default_rng(seed)
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    exp = client.create_experiment("bench")
    keys = [f"train/metric_{k}" for k in range(metrics)]
    for r in range(runs):
        run = client.create_run(exp, run_name=f"run-{r}")
        pts = []
        for k, key in enumerate(keys):
            noise = rng.normal(0, 0.01, steps)
            values = 1 - np.exp(-np.arange(steps) / (100 + 10 * k)) + noise
            pts += [Metric(key, float(v), 1_700_000_000_000 + s, s) for s, v in enumerate(values)]
        for i in range(0, len(pts), 1000):
            client.log_batch(run.info.run_id, metrics=pts[i : i + 1000])
        client.log_batch(run.info.run_id, params=[Param("seed", str(r % 4))])
        client.set_terminated(run.info.run_id)
    return exp


def naive(uri: str, exp_id: str) -> Callable[[], int]:
    """The baseline loop; returns the number of points read."""
    from mlflow import MlflowClient

    MlflowClient(tracking_uri=uri).search_experiments()  # warm-up: imports, cached store

    def run() -> int:
        n = 0
        client = MlflowClient(tracking_uri=uri)
        for r in client.search_runs([exp_id], max_results=1000):
            for key in r.data.metrics:
                n += len(client.get_metric_history(r.info.run_id, key))
        return n

    return run


def ours(uri: str) -> Callable[[], int]:
    try:
        from saturate import load

        load(uri, experiment=["bench"])
    except (ImportError, ModuleNotFoundError):
        from saturate.ingest.mlflow import load_mlflow as load

    def run() -> int:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return len(load(uri, experiment=["bench"]))

    return run


def raw_select(db: Path, exp_id: str) -> Callable[[], int]:
    """The floor: the experiment's metric rows in one query, as numpy arrays."""
    import adbc_driver_sqlite.dbapi as adbc

    query = ("SELECT m.run_uuid, m.key, m.step, m.value, m.timestamp, m.is_nan FROM metrics m "
             "JOIN runs r ON r.run_uuid = m.run_uuid WHERE r.experiment_id = ?")

    def run() -> int:
        with adbc.connect(f"file:{db}?mode=ro") as conn:
            cur = conn.cursor()
            cur.execute(query, (int(exp_id),))
            table = cur.fetch_arrow_table()
            cur.close()
        cols = [table.column(i).to_numpy() for i in range(table.num_columns)]
        return len(cols[0])

    return run


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int, float]:
    """(best wall time, points, this process's CPU time during that run)."""
    times, n = [], 0
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        n = fn()
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    wall, cpu = min(times)
    return wall, n, cpu


def _line(name: str, t: float, n: int, cpu: float) -> str:
    return f"{name} {t:7.3f} s (cpu {cpu:6.3f} s, {n} pts)"


def compare(label: str, uri: str, exp_id: str, repeat: int, target: float,
            floor: Callable[[], int] | None = None) -> float:
    base_t, base_n, base_cpu = best(naive(uri, exp_id), repeat)
    our_t, our_n, our_cpu = best(ours(uri), repeat)
    ratio = base_t / our_t
    ok = "OK" if ratio >= target else "BELOW TARGET"
    print(f"{label:<8} {_line('client loop', base_t, base_n, base_cpu)}   "
          f"{_line('saturate', our_t, our_n, our_cpu)}")
    print(f"{'':<8} saturate vs client loop: {ratio:5.1f}x faster (target >= {target}x: {ok})")
    if floor is not None:
        raw_t, raw_n, raw_cpu = best(floor, repeat)
        over = our_t / raw_t
        ok = "OK" if over <= 2.0 else "ABOVE TARGET"
        print(f"{'':<8} {_line('raw SELECT', raw_t, raw_n, raw_cpu)}   saturate / raw SELECT: "
              f"{over:4.2f}x (target <= 2x: {ok})")
    if base_n != our_n:
        print(f"  note: point counts differ ({base_n} vs {our_n})")
    return ratio


def _load_average() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--metrics", type=int, default=5)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import logging

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-mlflow-") as tmp:
        folder = Path(tmp) / "store"
        db = make_template_db(folder / "mlflow.db")
        t0 = time.perf_counter()
        exp = build_store(db, args.runs, args.metrics, args.steps)
        total = args.runs * args.metrics * args.steps
        print(f"store: {args.runs} runs x {args.metrics} metrics x {args.steps} steps "
              f"= {total} points, built in {time.perf_counter() - t0:.1f} s")  # fmt: skip
        print(_load_average())
        compare("sqlite", f"sqlite:///{db}", exp, args.repeat, 10.0, raw_select(db, exp))
        server = start_server(Path(tmp) / "server", db=db)
        try:
            compare("server", server.url, exp, args.repeat, 1.5)
        finally:
            server.stop()
        print(_load_average())


if __name__ == "__main__":
    main()
