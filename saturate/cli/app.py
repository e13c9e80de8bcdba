"""The Typer application every command registers itself on (kept apart from the package's
``__init__``, which imports the command modules, so that no module imports its importer)."""

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
