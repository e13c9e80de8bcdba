"""The ``saturate`` command: a thin Typer layer over the Python API.

Each command lives in its own module and registers itself on :data:`app`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from saturate import __version__
from saturate.cli.common import STATE

app = typer.Typer(
    name="saturate",
    help="Is RL still scaling, or has it saturated? Fit scaling laws to RL curves and say so.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: flags without a <bool> type, text as written
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"saturate {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    STATE["debug"] = debug


from saturate.cli import allocate as _allocate  # noqa: E402,F401
from saturate.cli import analyze as _analyze  # noqa: E402,F401  (registers commands)
from saturate.cli import compare as _compare  # noqa: E402,F401
from saturate.cli import gate as _gate  # noqa: E402,F401
from saturate.cli import history as _history  # noqa: E402,F401
from saturate.cli import plot as _plot  # noqa: E402,F401
from saturate.cli import timeline as _timeline  # noqa: E402,F401
from saturate.cli import watch as _watch  # noqa: E402,F401


def main() -> None:
    """Console-script entry point."""
    app()
