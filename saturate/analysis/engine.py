"""Run the per-curve analysis over many curves: in this process, on a local pool or on a Dask
cluster (:mod:`.dask_engine`).

Curves travel in batches, one task per batch, results in the order given. Every engine gives the
same numbers: each curve's bootstrap is seeded from the settings alone and BLAS runs on one
thread everywhere. At most a few batches per worker are in flight, so the driver holds the curves
being analysed, not the whole sweep.

The two kinds of local pool: a long-lived program (a notebook) reuses a pool of fresh processes
across calls (joblib's loky); a one-shot command says so (:func:`forked_workers`, as the CLI does):
on Linux its workers are then forked, start with its imports and compiled kernels loaded, and end
with the call.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor

import pandas as pd

from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.work import (
    Engine,
    Progress,
    Tally,
    analyze_one,
    batches,
    indexed_batch,
    load_work,
    local_workers,
)
from saturate.results import CurveAnalysis

#: Seconds an idle pool waits for more work (a notebook's next call reuses it) before it exits.
_IDLE_SECONDS = 300
_ONE_THREAD = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
_FORK = {"on": False}



def forked_workers(on: bool = True) -> None:
    """Say that this process runs one command and ends: its pools fork their workers (Linux)."""
    _FORK["on"] = bool(on) and sys.platform.startswith("linux")


def forking() -> bool:
    """Whether this process's pools fork their workers (see :func:`forked_workers`)."""
    return _FORK["on"]


def forked_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes forked from this one (end it with ``shutdown`` or
    :func:`stop`)."""
    import multiprocessing

    return ProcessPoolExecutor(max_workers=workers, initializer=_forked_child,
                               mp_context=multiprocessing.get_context("fork"))


def _forked_child() -> None:
    """A forked worker: Ctrl-C is the parent command's to handle, SIGTERM ends it at once, and
    its standard streams are opened afresh (no lock a parent thread held at the fork)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for name, fd in (("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        if old is not None:
            setattr(sys, name, open(fd, "w", encoding=getattr(old, "encoding", None) or "utf-8",  # noqa: SIM115
                                    errors="backslashreplace", closefd=False, buffering=1))


def stop(executor: Executor) -> None:
    """End a forked pool now: workers killed, waiting batches cancelled."""
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
    else:
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)
    executor.shutdown(wait=False, cancel_futures=True)


def run_curves(curves: Iterable[pd.DataFrame], settings: AnalysisSettings,
               engine: Engine | None = None, progress: Progress | None = None
               ) -> list[CurveAnalysis]:
    """Analyse every curve (each the tidy rows of one curve); results in the order given.

    With ``workers=None`` a fresh pool starts only once :data:`POOL_MIN_WORK` is read ahead
    (less is analysed here: a fresh worker's start costs more); forked workers, or a given
    ``workers``, take the curves when there are at least two batches.
    """
    engine = engine or Engine()
    tally = Tally(progress)
    stream: Iterator[list[pd.DataFrame]] = (tally.handed(b) for b in batches(curves))
    if engine.uses_dask:
        from saturate.analysis.dask_engine import run_on_dask

        return run_on_dask(stream, settings, engine, tally)
    workers = local_workers(engine.workers)
    if workers > 1 and engine.workers is None and not forking():
        head, enough = _read_ahead(stream, POOL_MIN_WORK)
        stream = itertools.chain(head, stream)
        if not enough:
            return _in_process(stream, settings, tally)
    head = list(itertools.islice(stream, workers))
    stream = itertools.chain(head, stream)
    if workers == 1 or len(head) < 2:
        return _in_process(stream, settings, tally)
    return _on_pool(stream, settings, min(workers, len(head)), tally)


#: Work (:func:`_work`) that makes a fresh pool worth starting: about 10 s of one core's time,
#: several times what starting a worker costs.
POOL_MIN_WORK = 200.0
#: Points that weigh as much as one more curve in :func:`_work` (a curve's fixed cost, the
#: bootstrap of every law, dominates below a few thousand points).
POINTS_PER_CURVE = 2_000


def _work(batch: list[pd.DataFrame]) -> float:
    """The analysis's cost of a batch in curves of a few hundred points."""
    return sum(1.0 + len(points) / POINTS_PER_CURVE for points in batch)


def _read_ahead(stream: Iterable[list[pd.DataFrame]], work: float
                ) -> tuple[list[list[pd.DataFrame]], bool]:
    """Batches taken from ``stream`` until they make ``work`` (True) or it ends (False)."""
    head: list[list[pd.DataFrame]] = []
    total = 0.0
    for batch in stream:
        head.append(batch)
        total += _work(batch)
        if total >= work:
            return head, True
    return head, False


def _in_process(stream: Iterable[list[pd.DataFrame]], settings: AnalysisSettings, tally: Tally
                ) -> list[CurveAnalysis]:
    """Curve after curve here, progress after each."""
    from threadpoolctl import threadpool_limits

    out: list[CurveAnalysis] = []
    with threadpool_limits(limits=1):
        for batch in stream:
            for points in batch:
                out.append(analyze_one(points, settings))
                tally.finished(1)
    return out


def _on_pool(stream: Iterable[list[pd.DataFrame]], settings: AnalysisSettings, workers: int,
             tally: Tally) -> list[CurveAnalysis]:
    """A pool of ``workers`` processes (forked for this call, or loky's reused across calls).
    Batches are taken from ``stream`` in the calling thread (a reader's connection stays in the
    thread that opened it)."""
    if not forking():
        from joblib.externals.loky import get_reusable_executor

        executor = get_reusable_executor(max_workers=workers, timeout=_IDLE_SECONDS,
                                         env=_ONE_THREAD)
        return _run_on(executor, stream, settings, workers, tally)
    load_work()  # once here, not in each worker
    forked = forked_pool(workers)
    try:
        out = _run_on(forked, stream, settings, workers, tally)
    except BaseException:
        stop(forked)
        raise
    forked.shutdown(wait=True)
    return out


def _run_on(executor: Executor, stream: Iterable[list[pd.DataFrame]], settings: AnalysisSettings,
            workers: int, tally: Tally) -> list[CurveAnalysis]:
    """The batches of ``stream`` on ``executor``, at most two per worker waiting; results in
    the order of the batches."""
    from concurrent.futures import FIRST_COMPLETED, Future, wait

    done: dict[int, list[CurveAnalysis]] = {}
    pending: set[Future] = set()

    def collect() -> None:
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in finished:
            pending.discard(future)
            index, results = future.result()
            done[index] = results
            tally.finished(len(results))

    try:
        for i, batch in enumerate(stream):
            pending.add(executor.submit(indexed_batch, i, batch, settings))
            while len(pending) >= 2 * workers:
                collect()
        while pending:
            collect()
    except BaseException:
        for future in pending:
            future.cancel()
        raise
    return [r for i in sorted(done) for r in done[i]]
