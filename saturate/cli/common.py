"""What every command shares: the selection options, error handling and warning display.

The library never prints; here a :class:`~saturate.errors.SaturateError` becomes one line on stderr
and exit code 2, and a warning becomes one ``warning:`` line. ``--debug`` shows the traceback.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from saturate.errors import SaturateError

F = TypeVar("F", bound=Callable[..., Any])

STATE: dict[str, bool] = {"debug": False}

Sources = Annotated[
    list[str] | None,
    typer.Argument(
        help="Files, folders, or MLflow URIs/stores (http://host:port, sqlite:///mlflow.db, mlruns/). "
        "Default: $MLFLOW_TRACKING_URI.",
        show_default=False,
    ),
]
Experiment = Annotated[
    list[str] | None,
    typer.Option("--experiment", "-e", help="Experiment name or id (repeatable).", show_default=False),
]
Filter = Annotated[
    str | None,
    typer.Option("--filter", help="MLflow search filter, e.g. \"params.recipe = 'cispo'\".", show_default=False),
]
Metric = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", help="Metric glob to keep, e.g. 'eval/*' (repeatable).", show_default=False),
]
Run = Annotated[
    list[str] | None,
    typer.Option("--run", "-r", help="Run name or id glob to keep (repeatable).", show_default=False),
]
Compute = Annotated[
    str | None,
    typer.Option(
        "--compute",
        help="The x axis: a column, or a metric such as compute/gpu_hours joined on step. "
        "Default: a 'compute' column if present, else step.",
        show_default=False,
    ),
]
Out = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Write the report to this file instead of stdout.", show_default=False),
]


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    text = str(message).splitlines()[0] if str(message) else category.__name__
    print(f"warning: {text}", file=sys.stderr)


def handle_errors(func: F) -> F:
    """Run a command: domain errors -> one stderr line and exit 2; warnings -> one line each."""

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
                    raise
                print(f"error: {exc}", file=sys.stderr)
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt:
                print("interrupted", file=sys.stderr)
                raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
