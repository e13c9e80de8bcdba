"""The click application every command registers itself on (kept apart from the package's
``__init__``, which imports the command modules, so that no module imports its importer).

The commands are click commands: their settings options are made from the one declaration of
each option (:mod:`saturate.cli.options`; Typer reads options from a function's signature and
bundles a private copy of click, so options made from declarations cannot be handed to it), and
every command's own parameters are click parameters beside them, so one library parses and
shows them all.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, TypeVar

import click

from saturate import __version__
from saturate.cli.common import STATE

__all__ = ["app", "PlainCommand", "command"]

T = TypeVar("T")


class _UsageLine(click.ClickException):
    """A slip on the command line (an unknown option or command, a missing value) said in one
    ``error:`` line with exit 2, instead of click's block of usage, hint and error."""

    exit_code = 2

    def __init__(self, error: click.UsageError, where: str) -> None:
        where = error.ctx.command_path if error.ctx is not None else where
        super().__init__(f"{_said(error)} (see '{where} --help')")

    def show(self, file: IO[Any] | None = None) -> None:
        print(f"error: {self.format_message()}", file=file or sys.stderr)


def _shown(text: str) -> str:
    """``text`` from the command line with its control characters written as ``\\xNN``."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m[0]):02x}", text)


def _said(error: click.UsageError) -> str:
    """The message of a slip: an unknown option by its name as given, with the options it is
    close to."""
    if not isinstance(error, click.NoSuchOption):
        return error.format_message()
    near = f" (Possible options: {', '.join(sorted(error.possibilities))})" \
        if error.possibilities else ""
    return f"No such option: {_shown(error.option_name)}{near}"


def _one_line(parse: Callable[[], T], where: str) -> T:
    """``parse()`` of the command ``where`` (its path, ``saturate analyze``), a usage error raised
    as one line; ``saturate`` alone still shows the help (click's "no arguments is help")."""
    try:
        return parse()
    except click.exceptions.NoArgsIsHelpError:
        raise
    except click.UsageError as exc:
        raise _UsageLine(exc, where) from None


def _path(info_name: str | None, parent: click.Context | None) -> str:
    """The command path a context made with ``info_name`` under ``parent`` will have."""
    return " ".join(p for p in (parent.command_path if parent else "", info_name or "") if p)


def _format_params(command: click.Command, ctx: click.Context,
                   formatter: click.HelpFormatter) -> None:
    """The help's ``Arguments`` (with their help) and ``Options`` sections."""
    args: list[tuple[str, str]] = []
    opts: list[tuple[str, str]] = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None:
            (args if param.param_type_name == "argument" else opts).append(record)
    for title, records in (("Arguments", args), ("Options", opts)):
        if records:
            with formatter.section(title):
                formatter.write_dl(records)


class PlainCommand(click.Command):
    """A command whose help shows its arguments with their help, and whose slips on the command
    line are one line."""

    def format_arguments(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The arguments are shown with the options (:meth:`format_options`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """The arguments, any word left over a slip naming the words."""
        ctx.allow_extra_args = True
        rest = super().parse_args(ctx, args)
        if rest and not ctx.resilient_parsing:
            ctx.fail(f"Got unexpected extra argument(s) ({' '.join(map(_shown, rest))})")
        return rest

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_params(self, ctx, formatter)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        return _one_line(lambda: super(PlainCommand, self).make_context(info_name, args, parent,
                                                                        **extra),
                         _path(info_name, parent))


class _PlainGroup(click.Group):
    """The ``saturate`` group: its commands listed in the order they were added; an unknown
    command, or a slip in the group's own options, one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _format_params(self, ctx, formatter)
        self.format_commands(ctx, formatter)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        return _one_line(lambda: super(_PlainGroup, self).make_context(info_name, args, parent,
                                                                       **extra),
                         _path(info_name, parent))

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        return _one_line(lambda: super(_PlainGroup, self).resolve_command(ctx, args),
                         ctx.command_path)


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        click.echo(f"saturate {__version__}")
        ctx.exit()


def _root(debug: bool, version: bool) -> None:
    STATE["debug"] = debug


app = _PlainGroup(
    name="saturate",
    callback=_root,
    params=[
        click.Option(["--debug"], is_flag=True, default=False, help="Show tracebacks for errors."),
        click.Option(["--version"], is_flag=True, default=False, callback=_version,
                     is_eager=True, expose_value=True, help="Show the version."),
    ],
    help="Is RL still scaling, or has it saturated? Fit scaling laws to RL curves and say so.",
    no_args_is_help=True,
)


def command(params: Sequence[click.Parameter]) -> Callable[[Callable[..., Any]],
                                                            Callable[..., Any]]:
    """Register a function as a command of :data:`app` named after it, its ``params`` (click
    parameters) passed as keywords, its docstring its help."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        app.add_command(PlainCommand(func.__name__.replace("_", "-"), callback=func,
                                     params=list(params), help=inspect.getdoc(func)))
        return func

    return decorate
