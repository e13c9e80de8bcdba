"""Find and read the settings file: ``[tool.saturate]`` in ``pyproject.toml``, or a
``saturate.toml`` (keys at the top level, or under ``[tool.saturate]``).

It is named with ``--config PATH`` or found upward from the current directory (:func:`find_config`).
This module only reads it; :class:`saturate.settings.Settings` validates the values. The
README shows an example file.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saturate.errors import SettingsError

__all__ = ["SettingsFile", "find_config", "read_config", "load_config"]


@dataclass(frozen=True)
class SettingsFile:
    """The saturate table of a settings file, as read (not yet validated), and where it came from."""

    path: Path
    values: Mapping[str, Any]


def _table(data: Mapping[str, Any], path: Path) -> Mapping[str, Any] | None:
    """The saturate table of a parsed file, or None when a pyproject.toml has none."""
    tool = data.get("tool", {})
    if isinstance(tool, Mapping) and "saturate" in tool:
        section = tool["saturate"]
        if not isinstance(section, Mapping):
            raise SettingsError(f"{path}: [tool.saturate] must be a table, got {section!r}")
        return section
    if path.name == "pyproject.toml":
        return None
    return {k: v for k, v in data.items() if k != "tool"}


def read_config(path: str | os.PathLike, *, name: str = "--config") -> SettingsFile:
    """Read one settings file (a ``pyproject.toml`` needs a ``[tool.saturate]`` table); ``name``
    is how errors name the option that gave the path."""
    p = Path(path).expanduser()
    if not p.is_file():  # a FIFO or a device is never opened: a read would wait for ever
        raise SettingsError(f"{name} {os.fspath(path)}: "
                            f"{'not a file' if p.exists() else 'no such file'}")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{p}: not valid TOML ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{p}: cannot read ({exc})") from None
    section = _table(data, p)
    if section is None:
        raise SettingsError(f"{p}: has no [tool.saturate] table")
    return SettingsFile(p, dict(section))


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``saturate.toml``, or ``pyproject.toml`` with ``[tool.saturate]``, upward from
    ``start`` (default: the current directory), as ruff and pytest find theirs: the search stops
    after a repository's root or the home folder, and never enters a folder anyone may write
    (``/tmp``), whose settings file is nobody's."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    home = _home()
    for d in (here, *here.parents):
        if d != here and _shared(d):
            return None
        candidate = d / "saturate.toml"
        if candidate.is_file():
            return candidate
        pyproject = d / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
                data = {}  # someone else's broken pyproject is not ours to report
            tool = data.get("tool")
            if isinstance(tool, Mapping) and "saturate" in tool:
                return pyproject
        if d == home or any((d / mark).exists() for mark in _ROOT_MARKS):
            return None
    return None


def _shared(folder: Path) -> bool:
    """A folder every user may write (``/tmp``, ``/var/tmp``): nobody's project."""
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return False


_ROOT_MARKS = (".git", ".hg", ".svn")  # a repository's root: the search for settings stops there


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


def load_config(
    config: str | os.PathLike | bool | None, *, start: str | os.PathLike | None = None,
    name: str = "--config",
) -> SettingsFile | None:
    """The settings file ``config`` names: a path, ``True`` to look upward from ``start`` (default:
    the current directory), ``None``/``False`` for none. ``None`` when there is no file."""
    if config is None or config is False:
        return None
    if config is True:
        found = find_config(start)
        return None if found is None else read_config(found, name=name)
    return read_config(config, name=name)
