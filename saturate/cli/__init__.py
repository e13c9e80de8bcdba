"""The ``saturate`` command: a thin click layer over the Python API.

Each command lives in its own module and registers itself on :data:`app`.
"""

from __future__ import annotations

import errno
import io

from saturate.cli import allocate as _allocate  # noqa: F401  (each registers its command)
from saturate.cli import analyze as _analyze  # noqa: F401
from saturate.cli import compare as _compare  # noqa: F401
from saturate.cli import gate as _gate  # noqa: F401
from saturate.cli import history as _history  # noqa: F401
from saturate.cli import ls as _ls  # noqa: F401
from saturate.cli import plot as _plot  # noqa: F401
from saturate.cli import timeline as _timeline  # noqa: F401
from saturate.cli import watch as _watch  # noqa: F401
from saturate.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point: SIGTERM unwinds like Ctrl-C (exit 143), a closed stdout is
    said (one ``error:`` line and exit 2 when something is written there; a reader that went away
    stays a quiet 141), and a pool of workers is forked from this process."""
    import signal
    import sys

    from saturate.analysis.engine import forked_workers
    from saturate.cli.common import INTERRUPTED, TERMINATED, Terminated

    def terminate(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it at once
        raise Terminated

    signal.signal(signal.SIGTERM, terminate)
    forked_workers()  # one command, then the process ends: workers forked from it start at once
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
        _hold_descriptor_1()
    try:
        app()
    except SystemExit as exc:
        if exc.code in (INTERRUPTED, TERMINATED):
            _end_interrupted(exc.code)
        raise


def _end_interrupted(code: int) -> None:
    """End an interrupted command now that its work is unwound (temporary files removed, workers
    killed): without waiting at exit on a process pool's manager thread, which a worker killed
    mid-message can leave waiting for ever."""
    import contextlib
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


def _hold_descriptor_1() -> None:
    """Point the closed descriptor 1 at /dev/null, so that no file opened later (the watch
    history, a report) gets number 1 and receives what a library writes to "stdout"."""
    import contextlib
    import os

    with contextlib.suppress(OSError):
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 1:
            os.dup2(fd, 1)
            os.close(fd)


class _ClosedStdout(io.TextIOBase):
    """What ``sys.stdout`` is when the process started with file descriptor 1 closed: writing
    there is an error the user is told of (the output is lost), unlike a reader that left."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def isatty(self) -> bool:
        return False
