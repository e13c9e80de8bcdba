"""The commands' settings options, made from their one declaration
(:class:`~saturate.settings.fields.SettingsFields`): :class:`SettingsCommand` is a click command
with the options of its groups beside its own parameters, and hands its function one validated
:class:`~saturate.settings.Settings`. Every option is read as text and checked once, by its
declaration, as the settings file is.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import click

from saturate.cli.app import PlainCommand, app
from saturate.cli.common import handle_errors
from saturate.errors import SettingsError
from saturate.settings import OPTIONS, Option, Settings, cli_name
from saturate.settings.fields import GROUPS, Ref

__all__ = ["SettingsCommand", "settings_params", "settings_command", "COMMON"]

_CONFIG_HELP = ("Settings file (pyproject.toml with [tool.saturate], or saturate.toml). Default: "
                "the nearest one from the current folder upward.")

COMMON: tuple[str, ...] = ("format", "fmt", "out", "metric", "run", "min_gain", "compute", "group_by")
"""The parameters ``--help`` shows first, where a command has them."""


class SettingOption(click.Option):
    """The option of a declaration; a help a later part makes (``--law``, ``--fail-on``) is made
    when a help page shows it, so ``saturate --help`` imports nothing heavy."""

    def __init__(self, param_decls: Sequence[str], *, late_help: Callable[[], str] | None = None,
                 **attrs: Any) -> None:
        super().__init__(param_decls, **attrs)
        self.late_help = late_help

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.late_help is not None:
            self.help, self.late_help = self.late_help(), None
        return super().get_help_record(ctx)


def _late(o: Option, make: Ref) -> Callable[[], str]:
    """The help of ``o`` made by ``make()`` when shown (``(repeatable).`` after it when it is)."""
    if o.many:
        return lambda: f"{make().removesuffix('.')} (repeatable)."
    return make


def _setting_params(o: Option) -> list[click.Option]:
    """The click options of a declaration: text, repeatable text, or ``--name/--no-name``
    (``None`` when neither is given: the file decides); a switch after its option."""
    help, late = (o.help, None) if isinstance(o.help, str) else (None, _late(o, o.help))
    if help is not None and o.many:
        help = f"{help} (repeatable)."
    if o.flag:
        flags = [f"{o.flag_names[0]}/--no-{o.flag_names[0].removeprefix('--')}",
                 *o.flag_names[1:]]
        params: list[click.Option] = [SettingOption([*flags, o.name], default=None, help=help,
                                                    late_help=late)]
    else:
        params = [SettingOption([*o.flag_names, o.name], help=help, late_help=late,
                                metavar=o.metavar or None, multiple=o.many)]
    if o.switch is not None:
        params.append(click.Option([o.switch.flag, _switch_param(o)], is_flag=True,
                                   default=False, help=o.switch.help))
    return params


def _switch_param(o: Option) -> str:
    assert o.switch is not None
    return o.switch.flag.lstrip("-").replace("-", "_")


def _options(groups: Sequence[str], exclude: Collection[str]) -> list[Option]:
    return [o for g in groups for o in OPTIONS if o.group == g and o.cli and o.name not in exclude]


def settings_params(options: Sequence[Option]) -> list[click.Option]:
    """The click options of ``options`` and ``--config``."""
    params = [p for o in options for p in _setting_params(o)]
    params.append(click.Option(["--config"], help=_CONFIG_HELP, metavar="PATH"))
    return params


def _ordered(own: Sequence[click.Parameter], settings: Sequence[click.Parameter]
             ) -> list[click.Parameter]:
    """The command's arguments, the :data:`COMMON` options, then the rest in order."""
    arguments = [p for p in own if isinstance(p, click.Argument)]
    options = [p for p in own if not isinstance(p, click.Argument)] + list(settings)
    first = sorted((p for p in options if p.name in COMMON),
                   key=lambda p: COMMON.index(p.name or ""))
    return [*arguments, *first, *(p for p in options if p.name not in COMMON)]


def _given(options: Sequence[Option], values: dict[str, Any]) -> dict[str, Any]:
    """The options' values by name (popped from ``values``); a switch sets its option unless
    the option was given too (both: a :class:`SettingsError`)."""
    given: dict[str, Any] = {}
    for o in options:
        given[o.name] = values.pop(o.name, None)
        if o.switch is not None and values.pop(_switch_param(o), False):
            if given[o.name] is not None:
                raise SettingsError(f"{o.switch.flag} and {cli_name(o.name)} both say where to "
                                    "run: give one")
            given[o.name] = o.switch.value
    return given


class SettingsCommand(PlainCommand):
    """A command taking the settings options of ``groups`` (less ``exclude``) and ``--config``
    beside its own ``params``: ``func`` is called with the :class:`Settings` they build as
    ``settings`` and its own parameters as keywords, its errors said in one line
    (:func:`~saturate.cli.common.handle_errors`)."""

    def __init__(self, func: Callable[..., Any], groups: Sequence[str],
                 exclude: Collection[str] = (), params: Sequence[click.Parameter] = (),
                 name: str | None = None) -> None:
        if not set(groups) <= set(GROUPS):
            raise ValueError(f"option groups {groups}: not among {GROUPS}")
        self.options = _options(groups, exclude)

        @functools.wraps(func)
        def run(**values: Any) -> Any:
            given = _given(self.options, values)
            config = values.pop("config", None)
            settings = Settings.build(True if config is None else Path(config), cli=True,
                                      **given)
            return func(settings=settings, **values)

        super().__init__(name or func.__name__, callback=handle_errors(run),
                         params=_ordered(params, settings_params(self.options)),
                         help=inspect.getdoc(func))


def settings_command(*groups: str, exclude: Collection[str] = (),
                     params: Sequence[click.Parameter] = ()
                     ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a :class:`SettingsCommand` on :data:`~saturate.cli.app.app` that takes the
    options of ``groups`` and its own ``params``."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        app.add_command(SettingsCommand(func, groups, exclude, params))
        return func

    return decorate
