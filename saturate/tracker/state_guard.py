"""Failures of the watch history file (a read-only folder, a full disk, a corrupt or foreign
file) turned into one :class:`~saturate.errors.InputError` line naming the file and the cause."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from saturate.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])
# What SQLite says -> what the user reads.
_CAUSES = (
    ("full", "the disk is full"),
    ("no space left", "the disk is full"),
    ("permission denied", "no permission to write there"),
    ("readonly", "the file or its folder is read-only"),
    ("unable to open", "cannot create or open it (is the folder writable?)"),
    ("not a database", "not a saturate history file (or it is corrupt)"),
    ("malformed", "the file is corrupt"),
    ("locked", "another process holds it locked"),
    ("disk i/o", "a disk error"),
)


def state_error(path: Path, exc: BaseException) -> InputError:
    """A failure of the history file as one line naming the file and the cause."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    low = text.lower().replace(" ", "")
    cause = next((why for key, why in _CAUSES if key.replace(" ", "") in low), text)
    return InputError(f"--state {path}: {cause} ({text})" if cause != text else
                      f"--state {path}: {cause}")  # fmt: skip


@contextmanager
def translated(path: Path) -> Iterator[None]:
    """Inside the block, SQLite, pandas-SQL and file errors become :func:`state_error`."""
    try:
        yield
    except (sqlite3.Error, OSError, pd.errors.DatabaseError) as exc:
        raise state_error(path, exc) from None


def guarded(method: F) -> F:
    """Turn SQLite and file errors of a HistoryStore method into one-line InputErrors."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with translated(self.path):
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


