"""What every command shares: sources, output, the analysis with a progress bar, error handling
and warnings. The library never prints; here a :class:`~saturate.errors.SaturateError` becomes
one line on stderr and exit code 2, a warning one ``warning:`` line.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click

from saturate.errors import InputError, SaturateError

if TYPE_CHECKING:
    from rich.console import Console

    from saturate.api import Analysis
    from saturate.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])

STATE: dict[str, bool] = {"debug": False}

class HelpArgument(click.Argument):
    """An argument shown by the name ``shown`` (``[SOURCE]...`` in the usage, ``SOURCE...`` with
    its help in the ``Arguments`` section)."""

    def __init__(self, param_decls: Sequence[str], *, shown: str, help: str,
                 **attrs: Any) -> None:
        super().__init__(param_decls, **attrs)
        self.shown, self.help = shown, help

    def _many(self) -> str:
        return "..." if self.nargs != 1 else ""

    def make_metavar(self, ctx: click.Context) -> str:
        return (self.shown if self.required else f"[{self.shown}]") + self._many()

    def get_help_record(self, ctx: click.Context) -> tuple[str, str]:
        return self.shown + self._many(), self.help or ""


def _sources_list(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
                  ) -> list[str] | None:
    return list(value) or None


def sources_argument() -> click.Argument:
    """The ``SOURCE...`` argument: a list of sources, or ``None`` when none is given."""
    return HelpArgument(
        ["sources"], nargs=-1, shown="SOURCE", callback=_sources_list,
        help="Files, folders, or MLflow URIs/stores (http://host:port, sqlite:///mlflow.db, "
        "mlruns/). Default: $MLFLOW_TRACKING_URI.")


def fast_option() -> click.Option:
    """``--fast/--no-fast``: the read-only fast path of MLflow databases."""
    return click.Option(
        ["--fast/--no-fast"], default=True, show_default=True,
        help="Read MLflow databases through the read-only fast path (--no-fast: MLflow's client).")


def format_option(formats: Sequence[str], what: str = "Output format") -> click.Option:
    """A ``--format``/``-f`` option among ``formats`` (the first is the default; the command
    checks the value), passed as ``fmt``."""
    return click.Option(["--format", "-f", "fmt"], default=formats[0], show_default=True,
                        help=f"{what}: {' | '.join(formats)}.", metavar="FORMAT")


def out_option() -> click.Option:
    """``--out``/``-o``: the file to write the report to (``None``: stdout)."""
    return click.Option(["--out", "-o"], type=click.Path(path_type=Path), metavar="PATH",
                        help="Write the report to this file instead of stdout.")


class _Number(click.ParamType):
    """A number of ``kind`` (``int`` or ``float``), a word that is not one said as such."""

    def __init__(self, kind: type[int] | type[float], what: str) -> None:
        self.kind, self.what, self.name = kind, what, kind.__name__

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        try:
            return self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"Input should be a valid {self.what}, unable to parse string as "
                      f"{'an' if self.what[0] in 'aeiou' else 'a'} {self.what}", param, ctx)


NUMBER = _Number(float, "number")
INTEGER = _Number(int, "integer")


def flag(name: str, help: str) -> click.Option:
    """An on/off flag, off unless given."""
    return click.Option([name], is_flag=True, default=False, help=help)


def _bar(console: Any) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True)


def _progress_callback(console: Any) -> tuple[Any, Any, Any]:
    """A progress bar on a terminal, with the ``on_read(ReadProgress)`` hook of the read and the
    ``progress(done, total)`` hook of the fits (a second line)."""
    if not console.is_terminal:
        return None, None, None
    bar = _bar(console)
    reading = bar.add_task("reading", total=None)
    fitting: list[Any] = []

    def on_read(read: Any) -> None:
        bar.update(reading, description=f"reading: {read.summary()}", completed=read.done,
                   total=read.total)

    def hook(done: int, total: int) -> None:
        if not fitting:
            fitting.append(bar.add_task("fitting curves", total=None))
        bar.update(fitting[0], completed=done, total=total)

    return hook, on_read, bar


@contextlib.contextmanager
def progress_bar(what: str) -> Iterator[Callable[[int, int], None] | None]:
    """A ``progress(done, total)`` hook that drives a bar on stderr, when stderr is a terminal
    (else ``None``: nothing is shown)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bar = _bar(console)
    task = bar.add_task(what, total=None)

    def hook(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield hook


def check_sources_listening(sources: Sequence[str] | None) -> None:
    """Stop at once when nothing listens at a tracking server given (or $MLFLOW_TRACKING_URI):
    a refused connection is no passing fault, and saying so before the readers are imported
    takes milliseconds, not seconds (:func:`saturate.ingest.http_retry.check_listening`)."""
    import os

    from saturate.ingest.http_retry import check_listening

    check_listening(sources or [os.environ.get("MLFLOW_TRACKING_URI", "").strip()])


def run_analysis(
    sources: list[str] | None, settings: Settings, *, diagnostics: bool = True, fast: bool = True,
    outputs: dict[str, Path | None] | None = None,
) -> Analysis:
    """:func:`saturate.analyze` with a progress bar on a terminal; no curves is an error, and so
    is an output (``{option: path}``) that is one of the input files (before any work) or a file
    the read found in a folder given (before anything is written)."""
    check_sources_listening(sources)
    from rich.console import Console

    from saturate.api import analyze
    from saturate.report.output import check_not_inputs, settings_inputs

    check_not_inputs((outputs or {}).items(), [*(sources or ()), *settings_inputs(settings)])

    hook, on_read, bar = _progress_callback(Console(stderr=True))
    with bar or contextlib.nullcontext():
        analysis = analyze(sources or None, settings=settings, progress=hook, on_read=on_read,
                           diagnostics=diagnostics, fast=fast)
    if not analysis.curves:
        raise no_objective(analysis)
    # a file read from a folder given is an input too (before anything is written)
    check_not_inputs((outputs or {}).items(), sorted({c.source for c in analysis.curves}))
    return analysis


def no_objective(analysis: Analysis) -> InputError:
    """The error of a read that left no curve to judge: the metrics it did read, if any, are all
    diagnostics or axes (and ``--objective`` judges one)."""
    from saturate.errors import names_text

    unjudged = sorted({d.metric for d in analysis.diagnostic_metrics})
    if not unjudged:
        return InputError("no curves to analyse after selection")
    return InputError(f"no curve to judge: the metrics read get no verdict (diagnostics or axes: "
                      f"{names_text(unjudged, most=5, limit=40)}); --objective GLOB judges one")


PIPED_WIDTH = 120
"""Columns of output that goes to a pipe or a file when ``$COLUMNS`` does not say."""


def text_width(file: TextIO | None = None, *, width: int = PIPED_WIDTH) -> int:
    """The columns plain text written to ``file`` (default: stdout as it is now) gets:
    ``$COLUMNS``, else a terminal's own width, else ``width``."""
    import os
    import shutil

    file = sys.stdout if file is None else file

    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size((width, 24)).columns if file.isatty() else width


def terminal(file: TextIO, *, width: int = PIPED_WIDTH) -> Console:
    """A rich console on ``file``: a terminal's own width; when it is not a terminal (piped,
    captured), ``$COLUMNS`` columns, else ``width``."""
    import os

    console = _Console(file=file, soft_wrap=False)
    if console.is_terminal:
        return console
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        width = int(columns)
    return _Console(file=file, soft_wrap=False, width=width)


def _console_class() -> type:
    from rich.console import Console

    class SafeConsole(Console):
        """A console whose broken pipe exits quietly with :data:`BROKEN_PIPE` (rich exits 1,
        the code ``gate`` uses for "saturated")."""

        def on_broken_pipe(self) -> None:
            _silence_stdout()
            raise click.exceptions.Exit(BROKEN_PIPE)

        def _check_buffer(self) -> None:
            with stdout_errors():
                super()._check_buffer()

    return SafeConsole


def _Console(**kwargs: Any) -> Console:  # noqa: N802 - a class, made on first use (rich is heavy)
    return _console_class()(**kwargs)


def write_text(text: str, out: Path | None) -> None:
    """Write a report to ``out`` (all at once or not at all, a note on stderr) or to stdout."""
    if out is None:
        with stdout_errors():
            sys.stdout.write(text)
            sys.stdout.flush()
        return
    from saturate.report.output import write_atomic

    write_atomic(out, text, what="--out")
    print(f"wrote {out}", file=sys.stderr)


@contextlib.contextmanager
def stdout_errors() -> Iterator[None]:
    """A full disk while writing stdout: one line and exit 2; a reader that went away: a quiet
    exit with :data:`BROKEN_PIPE`, as ``cmd | head`` expects. Stdout is pointed at /dev/null
    first, so the interpreter's last flush has nothing to fail on."""
    try:
        yield
    except BrokenPipeError:
        _silence_stdout()
        raise click.exceptions.Exit(BROKEN_PIPE) from None
    except OSError as exc:
        _silence_stdout()
        raise InputError("cannot write the report to standard output "
                         f"({exc.strerror or exc})") from None


def _silence_stdout() -> None:
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def save_figure(figure: Any, path: Path) -> None:
    """Save a matplotlib figure (format from the suffix, written atomically), a note on stderr."""
    from saturate.report.output import save_with

    fmt = path.suffix.lstrip(".").lower() or None
    try:
        save_with(path, lambda fh: figure.savefig(fh, format=fmt, dpi=120), what="--plot")
    except ValueError as exc:  # matplotlib: an unknown image format
        raise InputError(f"--plot {path}: {str(exc).splitlines()[0]}") from None
    print(f"plot written to {path}", file=sys.stderr)


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    from saturate.report.text import for_message

    text = str(message).splitlines()[0] if str(message) else category.__name__
    print(f"warning: {for_message(text)}", file=sys.stderr)


#: Exit code of an unexpected internal error (a bug), distinct from 1 (gate failed) and 2 (bad input).
INTERNAL_ERROR = 3
#: Exit code when the reader of stdout went away (or stdout was closed): 128 + SIGPIPE, quietly.
BROKEN_PIPE = 141
#: Exit codes of an interrupt: Ctrl-C (128 + SIGINT) and SIGTERM (128 + SIGTERM).
INTERRUPTED, TERMINATED = 130, 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so it unwinds like Ctrl-C (temporary files removed,
    workers shut down)."""


def _debug_exit(code: int) -> click.exceptions.Exit:
    """With ``--debug``: the traceback on stderr, and still the error's own exit code."""
    import traceback

    traceback.print_exc()
    return click.exceptions.Exit(code)


def handle_errors(func: F) -> F:
    """Run a command: domain errors (and operating-system errors the library let through) -> one
    stderr line and exit 2; any other exception (a bug) -> one line naming the step and exit 3;
    warnings -> one line each."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            for noisy in (DeprecationWarning, FutureWarning, PendingDeprecationWarning, ResourceWarning):
                warnings.simplefilter("ignore", noisy)
            warnings.showwarning = _show_warning
            try:
                return func(*args, **kwargs)
            except SaturateError as exc:
                if STATE["debug"]:
                    raise _debug_exit(exc.exit_code) from None
                from saturate.report.text import for_message

                print(f"error: {for_message(exc)}", file=sys.stderr)
                raise click.exceptions.Exit(exc.exit_code) from None
            except BrokenPipeError:  # the reader of stdout went away: quietly, like `cmd | head`
                _silence_stdout()
                raise click.exceptions.Exit(BROKEN_PIPE) from None
            except OSError as exc:  # a file or socket the library did not wrap: still one line
                if STATE["debug"]:
                    raise _debug_exit(2) from None
                where = f"{exc.filename}: " if exc.filename else ""
                print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
                raise click.exceptions.Exit(2) from None
            except KeyboardInterrupt as exc:
                term = isinstance(exc, Terminated)
                print("terminated" if term else "interrupted", file=sys.stderr)
                raise click.exceptions.Exit(TERMINATED if term else INTERRUPTED) from None
            except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException,
                    SystemExit):
                raise
            except Exception as exc:  # a bug of saturate: one line, exit 3 (--debug: traceback)
                if STATE["debug"]:
                    raise _debug_exit(INTERNAL_ERROR) from None
                from saturate.errors import internal_error_line

                name = func.__name__.removesuffix("_cmd").replace("_", " ")
                print(internal_error_line(exc, f"running saturate {name}"), file=sys.stderr)
                raise click.exceptions.Exit(INTERNAL_ERROR) from None

    return wrapper  # type: ignore[return-value]
