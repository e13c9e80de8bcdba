"""The two kinds of local pool the engine runs curves on, and which one this process uses.

A long-lived program (a notebook) reuses a pool of fresh processes across calls (joblib's loky).
A one-shot command says so (:func:`forked_workers`, as the CLI does): on Linux its workers are
then forked, start with its imports and compiled kernels loaded, and end with the call.
"""

from __future__ import annotations

import os
import signal
import sys
from concurrent.futures import Executor, ProcessPoolExecutor

__all__ = ["forked_pool", "forked_workers", "forking", "stop"]

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
