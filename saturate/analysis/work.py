"""The unit of work of :mod:`.engine`: where curves go (:class:`Engine`), batches of curves and
their analysis (:func:`indexed_batch`, BLAS on one thread), and the progress :class:`Tally`.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from saturate.analysis.curve import analyze_curve
from saturate.analysis.settings import AnalysisSettings
from saturate.errors import shorten, step
from saturate.results import CurveAnalysis
from saturate.table.run_table import run_fact_columns

if TYPE_CHECKING:
    from saturate.settings import Settings


Progress = Callable[[int, int], None]

#: A batch holds curves up to this many points together (a longer curve travels alone): enough
#: work per task that sending it costs little, small enough that the work spreads evenly.
BATCH_POINTS = 5_000
#: ... and at most this many curves, so that a few hundred curves still make tasks for every worker.
BATCH_CURVES = 4
#: Columns a curve's stored points leave out: fields of its result, and the wall-clock time.
_DROPPED = ("source", "experiment", "run_id", "run", "metric", "timestamp")


@dataclass(frozen=True)
class Engine:
    """Where curves are analysed.

    ``workers``: processes (None: one per core, at most one per batch of curves; 1: this process
    only). ``scheduler``: the address of a running ``dask scheduler`` (``tcp://host:8786``), or
    ``"local"`` for a Dask cluster of ``workers`` processes on this machine. ``client``: a
    ``distributed.Client`` to use (and leave open). Without a scheduler or client, a local pool.
    """

    workers: int | None = None
    scheduler: str | None = None
    client: Any = field(default=None, compare=False, repr=False)

    @property
    def uses_dask(self) -> bool:
        return self.client is not None or self.scheduler is not None


def engine_for(settings: Settings, client: Any = None) -> Engine:
    """Where the settings say curves are analysed: ``workers`` processes here (at most one per
    core, with a warning), the Dask ``scheduler``, or ``client`` (which wins)."""
    if client is not None:
        return Engine(workers=settings.workers, client=client)
    workers = settings.workers
    if settings.scheduler is None or settings.scheduler == "local":  # processes on this machine
        cores = os.cpu_count() or 1
        if workers is not None and workers > cores:
            warnings.warn(f"{settings.option('workers')} {workers}: this machine has {cores} "
                          f"core(s); using {cores} worker(s)", stacklevel=2)
            workers = cores
    return Engine(workers=workers, scheduler=settings.scheduler)


def local_workers(workers: int | None = None) -> int:
    """``workers``, or the cores this process may use."""
    if workers is not None:
        return int(workers)
    from joblib import cpu_count

    return max(1, int(cpu_count()))


# ---- one task -----------------------------------------------------------------------------------


def compact(result: CurveAnalysis) -> CurveAnalysis:
    """The result with its points reduced to what is read along the curve (step, compute, value,
    per-point columns such as a seed spread): names, run facts and timestamps are dropped, so
    the results of a large sweep stay small in the driver."""
    pts = result.points
    if pts is None:
        return result
    drop = [c for c in (*_DROPPED, *run_fact_columns(pts)) if c in pts.columns]
    return dataclasses.replace(result, points=pts.drop(columns=drop).reset_index(drop=True))


def load_work() -> None:
    """Load now what a curve's analysis loads on first use (ruptures, the compiled fit kernels,
    threadpoolctl), so workers forked afterwards start with it."""
    import ruptures  # noqa: F401 - imported for its side effect: loaded once, before the fork
    import threadpoolctl  # noqa: F401

    from saturate.fit.kernels import warm
    from saturate.measure.collapse import lean_cost_class

    lean_cost_class()
    warm()


def analyze_one(points: pd.DataFrame, settings: AnalysisSettings) -> CurveAnalysis:
    """One curve analysed and made compact; an unexpected error names the curve it happened on."""
    first = points.iloc[0] if len(points) else None
    where = ("analysing a curve" if first is None else
             f"analysing run {shorten(repr(str(first['run'])))} / metric "
             f"{shorten(repr(str(first['metric'])))}")
    with step(where):
        return compact(analyze_curve(points, settings))


def indexed_batch(
    index: int, batch: list[pd.DataFrame], settings: AnalysisSettings
) -> tuple[int, list[CurveAnalysis]]:
    """A batch of curves analysed with BLAS on one thread, with the batch's position (results
    arrive out of order)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return index, [analyze_one(points, settings) for points in batch]


def batches(
    curves: Iterable[pd.DataFrame], points: int = BATCH_POINTS, size: int = BATCH_CURVES
) -> Iterator[list[pd.DataFrame]]:
    """Consecutive curves grouped up to ``points`` points and ``size`` curves."""
    batch: list[pd.DataFrame] = []
    total = 0
    for curve in curves:
        n = len(curve)
        if batch and (total + n > points or len(batch) >= size):
            yield batch
            batch, total = [], 0
        batch.append(curve)
        total += n
    if batch:
        yield batch


# ---- progress ----------------------------------------------------------------------------------


class Tally:
    """Counts curves handed out and analysed, and reports ``progress(done, total)``; while curves
    are still being read, ``total`` is the number handed out so far."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.total = 0
        self.done = 0

    def handed(self, batch: list[pd.DataFrame]) -> list[pd.DataFrame]:
        self.total += len(batch)
        return batch

    def finished(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)
