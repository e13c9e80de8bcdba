"""One :class:`Settings` object for every entry point: built once, validated once, then read.

Its fields are declared once, on :class:`~saturate.settings.fields.SettingsFields`. Precedence: defaults < the
settings file < ``$SATURATE_SCHEDULER`` < the options given. Each value is checked once, here, so
an error names the option as it was spelled; the parts that use the settings build their own
views from it and do not check again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from saturate.errors import SettingsError
from saturate.settings.fields import OPTIONS, OPTIONS_BY_NAME, SettingsFields, cli_name, closest
from saturate.settings.file import load_config

__all__ = ["Settings", "SCHEDULER_ENV"]

#: Environment variable naming the Dask scheduler to analyse on (below the options given).
SCHEDULER_ENV = "SATURATE_SCHEDULER"

ConfigArg = str | os.PathLike | bool | None


def _unset(value: Any) -> bool:
    """``None`` and empty lists leave the value below in place (an unused CLI option is ``None``)."""
    return value is None or (isinstance(value, (list, tuple)) and len(value) == 0)


@dataclass(frozen=True)
class Settings(SettingsFields):
    """Every option of saturate, validated: the fields of
    :class:`~saturate.settings.fields.SettingsFields`. Build it with :meth:`build`.

    ``config`` is the settings file read (``None`` when none was), ``explicit`` the options the
    file or the caller set (the rest are defaults), ``cli`` whether options are named as on the
    command line in messages.
    """

    config: str | None = None
    explicit: frozenset[str] = field(default_factory=frozenset, repr=False)
    cli: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check a value made directly (``Settings(n_boot=3)``); :meth:`build` and
        :meth:`updated` check theirs as they come in."""
        for o in OPTIONS:
            value = getattr(self, o.name)
            if o.name not in self.explicit and value is not None and value != o.default:
                object.__setattr__(self, o.name, o.checked(value, o.name))

    # ---- building ------------------------------------------------------------------------

    @classmethod
    def build(cls, config: ConfigArg = None, *, cli: bool = False, **given: Any) -> Settings:
        """Defaults < the settings file < ``$SATURATE_SCHEDULER`` < ``given`` (options by name;
        ``None`` or ``[]`` leaves the value below). ``config``: a path, ``True`` to look upward
        for one, ``None``/``False`` for none. ``cli``: name options as ``--min-gain`` in errors.
        """
        base = cls(cli=cli)
        found = load_config(config, name=cli_name("config") if cli else "config")
        if found is not None:
            path = str(found.path)
            base = base._overlay(found.values, lambda key: f"{path}: {key}", where=f"{path}: ",
                                 config=path)
        scheduler = os.environ.get(SCHEDULER_ENV, "").strip()
        if scheduler:
            base = base._overlay({"scheduler": scheduler}, lambda key: SCHEDULER_ENV)
        return base.updated(**given)

    def updated(self, **given: Any) -> Settings:
        """These settings with ``given`` laid over them (validated, named as the caller spells them)."""
        return self._overlay(given, cli_name if self.cli else str)

    def _overlay(
        self, raw: Mapping[str, Any], name: Callable[[str], str], where: str = "", **extra: Any
    ) -> Settings:
        unknown = [k for k in raw if k not in OPTIONS_BY_NAME]
        if unknown:
            raise closest(unknown, where)
        values = {k: OPTIONS_BY_NAME[k].checked(v, name(k)) for k, v in raw.items()
                  if not _unset(v)}
        for key, value in values.items():  # a glob given here replaces the same glob below
            if OPTIONS_BY_NAME[key].merge:
                values[key] = {**getattr(self, key), **value}
        return dataclasses.replace(
            self, **values, **extra, explicit=self.explicit | frozenset(values)
        )

    # ---- views -----------------------------------------------------------------------------

    def option(self, key: str) -> str:
        """How messages name the option ``key`` (``--min-gain`` or ``min_gain``)."""
        return cli_name(key) if self.cli else key

    def require(self, *keys: str, example: str) -> None:
        """A :class:`SettingsError` unless one of ``keys`` was set by the file or the caller."""
        if not self.explicit & set(keys):
            raise SettingsError(f"{self.option(keys[0])} is required (e.g. {example}), "
                                f"or set {keys[0]} in [tool.saturate]")

    def selection(self) -> dict[str, Any]:
        """What to read: keyword arguments of :func:`saturate.load` (unset ones are ``None``)."""
        return {
            "experiment": list(self.experiment) or None, "filter": self.filter,
            "metric": list(self.metric) or None, "run": list(self.run) or None,
            "compute": self.compute, "timeout": self.timeout, "tracker_url": self.tracker_url,
        }

    def suite_options(self) -> dict[str, Any] | None:
        """Keyword arguments of :func:`saturate.suites.analyze_suite` (None without ``suite``):
        ``group_by`` names its groups (no pooling across runs), one ``metric`` glob its metric."""
        if self.suite is None:
            return None
        return {
            "suite": self.suite, "group_by": self.group_by,
            "metric": self.metric[0] if len(self.metric) == 1 else None,
            "normalize": self.normalize, "statistic": self.suite_statistic,
            "n_boot": self.suite_boot, "task_bootstrap": self.task_bootstrap,
            "min_coverage": self.min_coverage,
        }

    def to_dict(self) -> dict[str, Any]:
        """Every option (tuples as lists), JSON-safe."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("explicit", "cli"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[f.name] = dict(value) if isinstance(value, Mapping) else value
        return out

    def summary(self) -> str:
        """``settings from <path>: key=value, ...`` for the options set, or ``defaults``."""
        items = ", ".join(f"{k}={v}" for k, v in self.to_dict().items() if k in self.explicit)
        head = f"settings from {self.config}" if self.config else "settings"
        return f"{head}: {items or 'defaults'}"
