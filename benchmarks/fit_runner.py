"""Fit curves with the ``saturate`` of a given source tree and print how long each fit took.

The worker behind ``bench_fit.py --reference``: the same script runs the fit of this checkout
and the fit of an older version (extracted from git into a temporary folder), so both are
timed the same way in the same run. It imports only ``saturate.fit.fit_curve`` and
``FitSettings``, which every version has.

    python benchmarks/fit_runner.py SOURCE_TREE CURVES.npz --workers 2 --boot 200

``CURVES.npz`` holds ``compute`` and ``value`` arrays (curves x points). Prints one JSON line:
the wall time of the whole job (worker start and a warm-up fit excluded), each fit's CPU
seconds in its worker, and the file ``saturate`` was imported from.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def one_blas_thread() -> None:
    """Worker initialiser: one BLAS thread per process (bench_fit's pools use it too)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it BLAS keeps its default threads
        return
    threadpool_limits(1)


def _fit(args: tuple) -> float:
    """CPU seconds of one fit."""
    from saturate.fit import FitSettings, fit_curve

    c, y, n_boot = args
    cpu = time.process_time()
    fit_curve(c, y, settings=FitSettings(n_boot=n_boot))
    return time.process_time() - cpu


def _warm(c, y) -> None:
    """One untimed fit in each worker: imports, and numba's kernels loaded or compiled."""
    one_blas_thread()
    _fit((c, y, 10))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="the folder that holds the saturate package to time")
    ap.add_argument("curves", help=".npz with compute and value arrays (curves x points)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--boot", type=int, default=200)
    args = ap.parse_args()
    sys.path.insert(0, args.tree)
    import numpy as np

    import saturate

    data = np.load(args.curves)
    jobs = [(c, y, args.boot) for c, y in zip(data["compute"], data["value"], strict=True)]
    context = multiprocessing.get_context("spawn")  # nothing inherited: each worker warms itself
    with ProcessPoolExecutor(args.workers, mp_context=context, initializer=_warm,
                             initargs=jobs[0][:2]) as pool:
        list(pool.map(_fit, [(jobs[0][0], jobs[0][1], 10)] * args.workers))  # workers up
        t0 = time.perf_counter()
        cpu = list(pool.map(_fit, jobs, chunksize=4))
        wall = time.perf_counter() - t0
    print(json.dumps({"wall": wall, "cpu": cpu, "saturate": saturate.__file__}))


if __name__ == "__main__":
    main()
