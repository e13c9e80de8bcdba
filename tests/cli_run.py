"""Run ``saturate ARGS`` inside the test process and get what ``subprocess.run`` would give.

A CLI test whose subject is what a command says or writes (not how the process starts, ends on
a signal or meets a closed stream) need not pay a Python start-up and the imports of pandas,
scipy and mlflow for each call: :func:`run_cli` invokes the click app with click's CliRunner
and returns a :class:`subprocess.CompletedProcess` (``returncode``, ``stdout``, ``stderr``), so
the assertions read as they did. An exception that escapes the app is not swallowed: its
traceback is put on ``stderr`` with exit code 1, as the interpreter would, so a test that says
"no traceback" still fails on one; and what a logging handler writes to stderr (a library's
log line) is caught with the command's stderr, as in a process of its own. The few tests whose subject is the process itself (exit on
SIGTERM, a closed or full stdout, start-up imports) keep ``subprocess`` and the
``subprocess`` marker.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path

from click.testing import CliRunner

__all__ = ["run_cli"]


@contextlib.contextmanager
def _cwd(folder: Path | None) -> Iterator[None]:
    if folder is None:
        yield
        return
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time (CliRunner's while a command runs)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


@contextlib.contextmanager
def _logging_to_current_stderr() -> Iterator[None]:
    """Point every logging handler that writes to this process's stderr at the current one."""
    stderr_like = {id(sys.stderr), id(sys.__stderr__)}
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                      if isinstance(lg, logging.Logger))]
    swapped: list[tuple[logging.StreamHandler, object]] = []
    for logger in loggers:
        for handler in logger.handlers:
            if (type(handler) is logging.StreamHandler
                    and id(handler.stream) in stderr_like):
                swapped.append((handler, handler.setStream(_CurrentStderr())))  # type: ignore[arg-type]
    try:
        yield
    finally:
        for handler, stream in swapped:
            handler.setStream(stream)  # type: ignore[arg-type]


def _env_change(env: Mapping[str, str] | None) -> dict[str, str | None] | None:
    """The environment a subprocess would get as CliRunner's changes (None removes a variable)."""
    if env is None:
        return None
    change: dict[str, str | None] = {k: v for k, v in env.items() if os.environ.get(k) != v}
    change.update({k: None for k in os.environ if k not in env})
    return change


def run_cli(
    *args: str | os.PathLike,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,  # noqa: A002 - the name subprocess.run gives it
    timeout: float | None = None,  # noqa: ARG001 - accepted as subprocess.run does; not enforced
) -> subprocess.CompletedProcess:
    """``saturate *args`` in this process: its exit code, stdout and stderr (``env``: the whole
    environment, as ``subprocess.run`` takes it; ``cwd``: the folder it runs in)."""
    from saturate.cli import app

    argv = [os.fspath(a) for a in args]
    with _cwd(cwd), _logging_to_current_stderr():
        result = CliRunner().invoke(app, argv, input=input, env=_env_change(env),
                                    catch_exceptions=True)
    stderr = result.stderr
    code = result.exit_code
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        stderr += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        code = 1
    return subprocess.CompletedProcess(["saturate", *argv], code, result.stdout, stderr)


def ctrl_c_as_in_a_terminal() -> None:
    """``preexec_fn`` of a command a test sends Ctrl-C (SIGINT): the signal at its default in
    the child, as for a command in a terminal's foreground. A shell starts background jobs (CI
    runners among them) with SIGINT ignored, Python keeps an ignored SIGINT ignored, and the
    command would never hear the test's Ctrl-C."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
