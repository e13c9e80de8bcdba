"""The curves of :func:`~saturate.analysis.engine.run_curves` on a Dask cluster.

One task per batch of curves (:func:`~saturate.analysis.work.indexed_batch`), its points
carried in the task itself, so that the scheduler can run it again elsewhere: a worker lost
mid-run has its tasks rescheduled by Dask, and a task that raises is retried
(:data:`RETRIES`). Results are gathered as they complete (``as_completed``), which feeds the
progress, and put back in the order the curves were given. At most a few batches per worker
are in flight, so the driver reads curves as the cluster takes them.

Dask's ``distributed`` is an optional extra (``pip install "saturate[dask]"``); the workers need
saturate installed, in the same version.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pandas as pd

from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.work import Engine, Tally, indexed_batch, local_workers
from saturate.errors import SettingsError, SourceError
from saturate.results import CurveAnalysis

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["run_on_dask", "dask_client", "require_distributed", "RETRIES", "CONNECT_TIMEOUT"]

#: Times a task that raised is run again (a worker lost mid-task is rescheduled regardless).
RETRIES = 2
#: Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_TIMEOUT = 20
_IN_FLIGHT_PER_WORKER = 3
_INSTALL = "pip install 'saturate[dask]'"


def require_distributed(option: str = "scheduler") -> Any:
    """The ``distributed`` module, or a :class:`SettingsError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise SettingsError(
            f"{option}: running on Dask needs its 'distributed' package, which is not "
            f"installed; {_INSTALL} (or use the local pool: --workers N without --scheduler)"
        ) from None
    return distributed


@contextmanager
def dask_client(engine: Engine, option: str = "scheduler") -> Iterator[Client]:
    """The client ``engine`` names: its own (left open), a connection to its scheduler, or a
    local cluster of ``engine.workers`` processes (both closed on exit)."""
    distributed = require_distributed(option)
    if engine.client is not None:
        yield engine.client
        return
    if engine.scheduler == "local":
        cluster = distributed.LocalCluster(
            n_workers=local_workers(engine.workers), threads_per_worker=1, processes=True,
            dashboard_address=":0", silence_logs=logging.ERROR,  # any free port: no clash
        )
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = distributed.Client(engine.scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SourceError(f"{option} {engine.scheduler}: cannot reach the Dask scheduler "
                          f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
                          ) from None
    try:
        yield client
    finally:
        client.close()


def _wait_for_workers(client: Client, option: str) -> int:
    """The number of worker threads; a :class:`SourceError` if none joins in time."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (TimeoutError, OSError):
        raise SourceError(f"{option}: the Dask scheduler has no workers "
                          f"(none joined within {CONNECT_TIMEOUT} s)") from None
    threads = client.nthreads()
    return max(1, sum(threads.values()))


def _failure(exc: BaseException, option: str) -> BaseException:
    """What the user is told when a task fails for a reason of the cluster, not of the data."""
    if isinstance(exc, ModuleNotFoundError) and "saturate" in str(exc):
        return SourceError(f"{option}: the Dask workers cannot import saturate; install it "
                           "(the same version) where the workers run")
    if type(exc).__name__ == "KilledWorker":
        return SourceError(f"{option}: Dask workers died while analysing curves ({exc})")
    return exc


def run_on_dask(
    stream: Iterable[list[pd.DataFrame]], settings: AnalysisSettings, engine: Engine, tally: Tally
) -> list[CurveAnalysis]:
    """Analyse the batches of ``stream`` on the cluster ``engine`` names; results in order."""
    option = "client" if engine.client is not None else "scheduler"
    with dask_client(engine, option) as client:
        from distributed import as_completed

        window = _IN_FLIGHT_PER_WORKER * _wait_for_workers(client, option)
        done: dict[int, list[CurveAnalysis]] = {}
        pending = as_completed()
        futures: list[Any] = []

        def collect_one() -> None:
            future = next(pending)
            index, results = future.result()
            done[index] = results
            tally.finished(len(results))
            future.release()

        try:
            for i, batch in enumerate(stream):
                future = client.submit(indexed_batch, i, batch, settings, retries=RETRIES,
                                       pure=False)
                futures.append(future)
                pending.add(future)
                while pending.count() >= window:
                    collect_one()
            while pending.count():
                collect_one()
        except Exception as exc:
            client.cancel([f for f in futures if not f.done()])
            failure = _failure(exc, option)
            if failure is exc:
                raise
            raise failure from None
    return [r for i in sorted(done) for r in done[i]]
