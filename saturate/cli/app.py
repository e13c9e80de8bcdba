"""The Typer application every command registers itself on (kept apart from the package's
``__init__``, which imports the command modules, so that no module imports its importer)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

import click
import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

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
    """A stand-in for the help of an option whose text needs a heavy import (``--fail-on``,
    ``--law``): ``make()`` is called only when a help page shows it."""
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


# The exceptions of the click that typer runs on (its own copy since typer 0.2x, click before):
# found through typer's public BadParameter, whichever it is.
_UsageError: Any = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_ClickException: Any = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _UsageLine(_ClickException):  # type: ignore[misc]
    """A slip on the command line (an unknown option or command, a missing value) said in one
    ``error:`` line with exit 2, instead of click's block of usage, hint and error."""

    exit_code = 2

    def __init__(self, error: Any, where: str) -> None:
        where = error.ctx.command_path if error.ctx is not None else where
        super().__init__(f"{error.format_message()} (see '{where} --help')")

    def show(self, file: Any = None) -> None:
        print(f"error: {self.format_message()}", file=file or sys.stderr)


def _one_line(parse: Callable[[], Any], where: str) -> Any:
    """``parse()`` of the command ``where`` (its path, ``saturate analyze``), a usage error raised
    as one line; ``saturate`` alone still shows the help (click's "no arguments is help")."""
    try:
        return parse()
    except _UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        raise _UsageLine(exc, where) from None


def _path(info_name: str | None, parent: Any) -> str:
    """The command path a context made with ``info_name`` under ``parent`` will have."""
    return " ".join(p for p in (parent.command_path if parent else "", info_name or "") if p)


class _OneLineSlips:
    """A command or group whose context is made with a slip in its options said in one line."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        return _one_line(lambda: super(_OneLineSlips, self).make_context(info_name, args, parent,
                                                                         **extra),
                         _path(info_name, parent))


class PlainCommand(_OneLineSlips, TyperCommand):
    """Every command's help in plain words: arguments without Python types; options whose help is
    made late (:func:`late_help`) made when shown; a slip in its options one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if type(param) is TyperArgument:
                param.__class__ = _PlainArgument
            elif type(param) is TyperOption and (param.help or "") in _LATE_HELP:
                param.__class__ = _LateHelpOption


class _PlainGroup(_OneLineSlips, TyperGroup):
    """The ``saturate`` group: an unknown command, or a slip in the group's own options, one
    line."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        return _one_line(lambda: super(_PlainGroup, self).resolve_command(ctx, args),
                         ctx.command_path)


class _Typer(typer.Typer):
    """A Typer app whose commands are :class:`PlainCommand` unless they say otherwise."""

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or PlainCommand, **kwargs)


app = _Typer(
    name="saturate",
    cls=_PlainGroup,
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
