"""Run the per-curve analysis over many curves: in this process, on a local pool of processes,
or on a Dask cluster (:mod:`.dask_engine`).

Each curve's analysis (:func:`~saturate.analysis.curve.analyze_curve`) is a pure function of its
points and the :class:`~saturate.analysis.AnalysisSettings`, so a curve can be analysed anywhere.
Curves travel in batches (:func:`~saturate.analysis.work.batches`: a long curve alone, short ones
together), one task per batch; results come back in the order the curves were given. Every engine
gives the same numbers: each curve's bootstrap is seeded from the settings alone (nothing depends
on which curve ran before), and BLAS runs on one thread in every process, the driver's included.

Curves are read from an iterator, and at most a few batches per worker are in flight, so the
driver holds the curves being analysed, not the whole sweep (see :mod:`saturate.ingest.stream`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import pandas as pd

from saturate.analysis.curve import analyze_curve
from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.work import (
    Engine,
    Tally,
    batches,
    compact,
    indexed_batch,
    local_workers,
)
from saturate.results import CurveAnalysis

__all__ = ["Engine", "run_curves"]

Progress = Callable[[int, int], None]


# ---- running them -------------------------------------------------------------------------------


def run_curves(
    curves: Iterable[pd.DataFrame],
    settings: AnalysisSettings,
    engine: Engine | None = None,
    progress: Progress | None = None,
) -> list[CurveAnalysis]:
    """Analyse every curve (each the tidy rows of one curve); results in the order given.

    The local pool is started only when there are at least two batches of work for it: fewer
    curves are analysed in this process, where starting workers would cost more than it saves.
    """
    engine = engine or Engine()
    tally = Tally(progress)
    stream = (tally.handed(b) for b in batches(curves))
    if engine.uses_dask:
        from saturate.analysis.dask_engine import run_on_dask

        return run_on_dask(stream, settings, engine, tally)
    workers = local_workers(engine.workers)
    head = list(itertools.islice(stream, workers))
    stream = itertools.chain(head, stream)
    if workers == 1 or len(head) < 2:
        return _in_process(stream, settings, tally)
    return _on_pool(stream, settings, min(workers, len(head)), tally)


def _in_process(
    stream: Iterable[list[pd.DataFrame]], settings: AnalysisSettings, tally: Tally
) -> list[CurveAnalysis]:
    """Curve after curve here, progress after each."""
    from threadpoolctl import threadpool_limits

    out: list[CurveAnalysis] = []
    with threadpool_limits(limits=1):
        for batch in stream:
            for points in batch:
                out.append(compact(analyze_curve(points, settings)))
                tally.finished(1)
    return out


def _on_pool(
    stream: Iterable[list[pd.DataFrame]], settings: AnalysisSettings, workers: int, tally: Tally
) -> list[CurveAnalysis]:
    """A pool of ``workers`` processes (joblib's loky: reused across calls, one BLAS thread
    each); at most two batches per worker wait, so curves are read as the workers take them."""
    from joblib import Parallel, delayed, parallel_config

    done: dict[int, list[CurveAnalysis]] = {}
    tasks = (delayed(indexed_batch)(i, b, settings) for i, b in enumerate(stream))
    with parallel_config(backend="loky", inner_max_num_threads=1):
        pool = Parallel(n_jobs=workers, return_as="generator_unordered", pre_dispatch="2*n_jobs",
                        batch_size=1, max_nbytes=None)
        for index, results in pool(tasks):
            done[index] = results
            tally.finished(len(results))
    return [r for i in sorted(done) for r in done[i]]
