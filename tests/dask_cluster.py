"""A real Dask cluster for tests and benchmarks: one ``dask scheduler`` and ``dask worker``
processes on 127.0.0.1, each in its own process group, stopped by its own process id.

Usage::

    with start_cluster(workers=2) as cluster:
        run(["saturate", "analyze", ..., "--scheduler", cluster.address])
        cluster.kill_worker(0)   # a worker lost (its nanny too)

The workers are started as docs/many-runs.md tells users to start theirs: with saturate's
malloc settings (``malloc=None``: Dask's defaults).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mlflow_server import free_port

from saturate.analysis.dask_engine import WORKER_MALLOC, worker_malloc_variable

__all__ = ["DaskCluster", "start_cluster"]

_DASK = str(Path(sys.executable).with_name("dask"))
_PRE_SPAWN = worker_malloc_variable()[0]  # and its per-key forms


@dataclass
class DaskCluster:
    """The address of the scheduler and the processes started (scheduler first)."""

    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker ``i`` and its nanny (its process group): lost, not restarted."""
        _signal_group(self.workers[i], signal.SIGKILL)

    def n_workers(self) -> int:
        """Workers the scheduler knows now."""
        from distributed import Client

        with Client(self.address, timeout=20) as client:
            return len(client.scheduler_info(n_workers=-1)["workers"])


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # the group the process leads: its own id


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait(timeout=15)


def _spawn(args: list[str], log: Path, malloc: dict[str, str] | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MALLOC_", _PRE_SPAWN))}
    if malloc:
        name, value = worker_malloc_variable(malloc)
        env[name] = value
    with open(log, "ab") as out:
        return subprocess.Popen([_DASK, *args], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)


def _wait_for(address: str, n: int, procs: list[subprocess.Popen], timeout: float) -> None:
    from distributed import Client

    deadline = time.monotonic() + timeout
    while True:
        dead = [p.args for p in procs if p.poll() is not None]
        if dead:
            raise RuntimeError(f"dask process exited early: {dead}")
        try:
            with Client(address, timeout=10) as client:
                client.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))
                return
        except (OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@contextlib.contextmanager
def start_cluster(workers: int = 2, log_dir: Path | None = None, timeout: float = 120,
                  malloc: dict[str, str] | None | Literal["saturate"] = "saturate",
                  ) -> Iterator[DaskCluster]:
    """A scheduler and ``workers`` single-threaded workers on 127.0.0.1 (free ports, no
    dashboards), their nannies given ``malloc`` (saturate's ``WORKER_MALLOC``; None: Dask's
    defaults); every process is stopped on exit, whatever happened."""
    if malloc == "saturate":
        malloc = WORKER_MALLOC
    log_dir = Path(log_dir or os.environ.get("TMPDIR", "/tmp"))
    log = log_dir / f"dask-cluster-{os.getpid()}-{time.monotonic_ns()}.log"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _spawn(["scheduler", "--host", "127.0.0.1", "--port", str(port),
                        "--no-dashboard"], log)
    cluster = DaskCluster(address, scheduler)
    try:
        for _ in range(workers):
            cluster.workers.append(_spawn(
                ["worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--nworkers", "1",
                 "--no-dashboard", "--memory-limit", "0"], log, malloc))  # fmt: skip
        _wait_for(address, workers, [scheduler, *cluster.workers], timeout)
        yield cluster
    finally:
        for proc in [*cluster.workers, scheduler]:
            _stop(proc)
