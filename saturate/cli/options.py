"""The commands' settings options, made from :data:`saturate.settings.OPTIONS`:
:func:`settings_options` writes them into a command's signature (which Typer reads) and hands the
command one validated :class:`~saturate.settings.Settings`. Every option is read as text and
checked once, by its declaration, as the settings file is.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from saturate.cli.app import app, late_help
from saturate.cli.common import handle_errors
from saturate.errors import SettingsError
from saturate.settings import OPTIONS, Option, Settings, cli_name
from saturate.settings.fields import GROUPS, on_declare

__all__ = ["settings_options", "settings_command"]

F = TypeVar("F", bound=Callable[..., Any])

_CONFIG_HELP = ("Settings file (pyproject.toml with [tool.saturate], or saturate.toml). Default: "
                "the nearest one from the current folder upward.")


def _help(o: Option) -> str:
    """The option's help as shown: made late when a later part makes it (``--law``,
    ``--fail-on``), ``(repeatable).`` after a repeatable option's."""
    if isinstance(o.help, str):
        return f"{o.help} (repeatable)." if o.many else o.help
    make = o.help
    return late_help((lambda: f"{make().removesuffix('.')} (repeatable).") if o.many else make)


def _annotation(o: Option) -> Any:
    """The Typer parameter of an option: text, a list of texts when repeatable, or
    ``--name/--no-name`` (``None`` when neither is given: the file decides)."""
    text = _help(o)
    if o.flag:
        flags = [f"{o.flag_names[0]}/--no-{o.flag_names[0].removeprefix('--')}",
                 *o.flag_names[1:]]
        return Annotated[bool | None, typer.Option(*flags, help=text, show_default=False)]
    kind = list[str] | None if o.many else str | None
    return Annotated[kind, typer.Option(*o.flag_names, help=text, metavar=o.metavar,
                                        show_default=False)]


def _switch_param(o: Option) -> str:
    assert o.switch is not None
    return o.switch.flag.lstrip("-").replace("-", "_")


def _parameters(options: list[Option]) -> list[inspect.Parameter]:
    """The signature's parameters of ``options``, each option's switch after it, ``--config``
    last."""
    params = []
    for o in options:
        params.append(inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=_annotation(o)))
        if o.switch is not None:
            flag = typer.Option(o.switch.flag, help=o.switch.help, show_default=False)
            params.append(inspect.Parameter(_switch_param(o), inspect.Parameter.KEYWORD_ONLY,
                                            default=False, annotation=Annotated[bool, flag]))
    config = typer.Option("--config", help=_CONFIG_HELP, metavar="PATH", show_default=False)
    params.append(inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, default=None,
                                    annotation=Annotated[str | None, config]))
    return params


def _given(options: list[Option], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options' values by name (popped from ``kwargs``); a switch sets its option unless
    the option was given too (both: a :class:`SettingsError`)."""
    given: dict[str, Any] = {}
    for o in options:
        given[o.name] = kwargs.pop(o.name, None)
        if o.switch is not None and kwargs.pop(_switch_param(o), False):
            if given[o.name] is not None:
                raise SettingsError(f"{o.switch.flag} and {cli_name(o.name)} both say where to "
                                    "run: give one")
            given[o.name] = o.switch.value
    return given


def _options(groups: tuple[str, ...], exclude: Collection[str]) -> list[Option]:
    return [o for g in groups for o in OPTIONS if o.group == g and o.cli and o.name not in exclude]


_COMMANDS: list[tuple[Any, list[inspect.Parameter], tuple[str, ...], Collection[str]]] = []
"""Each command with its own parameters and the option groups it takes."""


COMMON: tuple[str, ...] = ("format", "fmt", "out", "metric", "run", "min_gain", "compute", "group_by")
"""The parameters ``--help`` shows first, where a command has them."""


def _is_argument(p: inspect.Parameter) -> bool:
    return any(isinstance(m, typer.models.ArgumentInfo)
               for m in (*getattr(p.annotation, "__metadata__", ()), p.default))


def _sign(command: Any, own: list[inspect.Parameter], groups: tuple[str, ...],
          exclude: Collection[str]) -> None:
    """Write the command's signature: its arguments, the :data:`COMMON` options, then the rest."""
    arguments = [p for p in own if _is_argument(p)]
    options = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own if not _is_argument(p)]
    options += _parameters(_options(groups, exclude))
    first = sorted((p for p in options if p.name in COMMON), key=lambda p: COMMON.index(p.name))
    params = [*arguments, *first, *(p for p in options if p.name not in COMMON)]
    command.__signature__ = inspect.Signature(params)
    command.__annotations__ = {p.name: p.annotation for p in params}


def _remake() -> None:
    for made in _COMMANDS:
        _sign(*made)


on_declare(_remake)


def settings_options(*groups: str, exclude: Collection[str] = ()) -> Callable[[F], F]:
    """Add the options of ``groups`` (and ``--config``), less ``exclude``, to a command.

    The command's ``settings`` parameter receives the :class:`Settings` built from them. Put the
    decorator under :func:`~saturate.cli.common.handle_errors`, so that a bad value is one line.
    """
    if not set(groups) <= set(GROUPS):
        raise ValueError(f"option groups {groups}: not among {GROUPS}")

    def decorate(func: F) -> F:
        hints = typing.get_type_hints(func, include_extras=True)
        own = [p.replace(annotation=hints.get(p.name, p.annotation))
               for p in inspect.signature(func).parameters.values() if p.name != "settings"]

        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            given = _given(_options(groups, exclude), kwargs)
            config = kwargs.pop("config", None)
            settings = Settings.build(True if config is None else Path(config), cli=True,
                                      **given)
            return func(*args, settings=settings, **kwargs)

        _sign(command, own, groups, exclude)
        _COMMANDS.append((command, own, groups, exclude))
        return command  # type: ignore[return-value]

    return decorate


def settings_command(*groups: str, exclude: Collection[str] = ()) -> Callable[[F], F]:
    """Register a command on :data:`~saturate.cli.app.app` that takes the options of ``groups``
    (:func:`settings_options`) and says its errors in one line (:func:`handle_errors`)."""

    def decorate(func: F) -> F:
        return app.command()(handle_errors(settings_options(*groups, exclude=exclude)(func)))

    return decorate
