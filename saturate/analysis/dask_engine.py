"""The curves of :func:`~saturate.analysis.engine.run_curves` on a Dask cluster (the optional
``saturate[dask]`` extra; workers need the same saturate version).

One task per batch, its points carried in the task so that Dask can reschedule it; a task that
raises is retried (:data:`RETRIES`). Dask's default ``MALLOC_TRIM_THRESHOLD_`` makes the analysis
markedly slower (docs/many-runs.md): a local cluster gets :data:`WORKER_MALLOC` instead, and the
workers of an existing scheduler are checked once, with a warning.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pandas as pd

from saturate.analysis.settings import AnalysisSettings
from saturate.analysis.work import Engine, Tally, indexed_batch, local_workers
from saturate.errors import SettingsError, SourceError
from saturate.results import CurveAnalysis

if TYPE_CHECKING:
    from distributed import Client

#: Times a task that raised is run again (a worker lost mid-task is rescheduled regardless).
RETRIES = 2
#: Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_TIMEOUT = 20
_IN_FLIGHT_PER_WORKER = 3
_INSTALL = "pip install 'saturate[dask]'"
#: glibc's malloc settings for Dask workers: the mmap threshold glibc's adaptive rule settles at on
#: 64-bit Linux (32 MiB, its ceiling) and a trim threshold above it, both fixed at the start.
WORKER_MALLOC = {"MALLOC_TRIM_THRESHOLD_": str(128 << 20), "MALLOC_MMAP_THRESHOLD_": str(32 << 20)}
#: Dask's default trim threshold, which costs this analysis CPU (see the module's docstring).
_DASK_TRIM = "65536"
_PRE_SPAWN = "distributed.nanny.pre-spawn-environ"


class DaskWorkerWarning(UserWarning):
    """The Dask workers run with settings that make the analysis markedly slower."""


def worker_malloc_config() -> dict[str, dict[str, str]]:
    """The ``dask.config`` update that gives new workers :data:`WORKER_MALLOC`; empty when the
    user set a trim threshold of their own (kept as given)."""
    import dask

    pre_spawn = dict(dask.config.get(_PRE_SPAWN, default={}) or {})
    if str(pre_spawn.get("MALLOC_TRIM_THRESHOLD_", _DASK_TRIM)) != _DASK_TRIM:
        return {}
    return {_PRE_SPAWN: {**pre_spawn, **WORKER_MALLOC}}


def worker_malloc_variable(malloc: Mapping[str, str] = WORKER_MALLOC) -> tuple[str, str]:
    """The environment variable (name, value) that gives ``dask worker`` processes ``malloc``: a
    dict literal, which Dask merges into its defaults (a variable per key would lose the case)."""
    literal = ", ".join(f'"{k}": {v}' for k, v in malloc.items())
    return f"DASK_{_PRE_SPAWN.upper().replace('.', '__').replace('-', '_')}", f"{{{literal}}}"


def worker_malloc_environ() -> str:
    """:func:`worker_malloc_variable` as a shell assignment, for messages and docs."""
    name, value = worker_malloc_variable()
    return f"{name}='{value}'"


def _warn_slow_workers(client: Client) -> None:
    """One warning when some worker runs with Dask's default trim threshold."""
    try:
        trims = client.run(os.getenv, "MALLOC_TRIM_THRESHOLD_")
    except Exception:  # a hint only: never fail the analysis over it
        return
    slow = sum(1 for v in trims.values() if v == _DASK_TRIM)
    if slow:
        warnings.warn(
            f"{slow} of {len(trims)} Dask workers run with MALLOC_TRIM_THRESHOLD_={_DASK_TRIM} "
            f"(Dask's default), which makes this analysis about 1.2x slower; start them with "
            f"{worker_malloc_environ()} (docs/many-runs.md)", DaskWorkerWarning, stacklevel=3)


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
        import dask

        with dask.config.set(worker_malloc_config()):
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
        if engine.client is not None or engine.scheduler != "local":  # ours have WORKER_MALLOC
            _warn_slow_workers(client)
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
