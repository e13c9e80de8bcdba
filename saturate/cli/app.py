"""The Typer application every command registers itself on (kept apart from the package's
``__init__``, which imports the command modules, so that no module imports its importer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import click
import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from saturate import __version__
from saturate.cli.common import STATE


class _PlainArgument(TyperArgument):
    """An argument shown in the help by its name (``SOURCE...``), without a Python type
    (``SOURCE <list[str]>``)."""

    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None

    def _rich_display_name(self) -> str:
        return self.display_name_raw + ("..." if self.nargs != 1 else "")


_LATE_HELP: dict[str, Callable[[], str]] = {}


def late_help(make: Callable[[], str]) -> str:
    """A stand-in for the help of an option whose text needs a heavy import (the diagnostic kinds
    of ``--fail-on``, the laws of ``--law``): ``make()`` is called when a help page shows it, so
    ``saturate --help`` and a command's start do not import the diagnostics or scipy."""
    key = f"(see saturate COMMAND --help: {len(_LATE_HELP)})"
    _LATE_HELP[key] = make
    return key


class _LateHelpOption(TyperOption):
    """An option whose help is made by its :func:`late_help` function when it is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        make = _LATE_HELP.get(self.help or "")
        if make is not None:
            self.help = make()
        return super().get_help_record(ctx)


class PlainCommand(TyperCommand):
    """Every command's help in plain words: arguments without Python types; options whose help is
    made late (:func:`late_help`) made when shown."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:
                param.__class__ = _PlainArgument
            elif type(param) is TyperOption and (param.help or "") in _LATE_HELP:
                param.__class__ = _LateHelpOption


class _Typer(typer.Typer):
    """A Typer app whose commands are :class:`PlainCommand` unless they say otherwise."""

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or PlainCommand, **kwargs)


app = _Typer(
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
