"""One family of domain errors; the CLI turns any of them into one line on stderr and exit code 2.

Anything else is a bug: :func:`step` tags it with where it happened, and the CLI prints
:func:`internal_error_line` and exits 3. Messages quote user-given text through :func:`shorten`
(one short line, any length and character), and :class:`SaturateError` caps the whole message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress

#: Longest user-given name quoted whole in a message.
NAME_LIMIT = 80
#: Longest path or URI quoted whole in a message.
PATH_LIMIT = 120
#: Longest error message; with the CLI's ``error: `` prefix an error line stays within 300 characters.
MESSAGE_LIMIT = 290
_ELLIPSIS = "..."
#: Control characters shown escaped, so a message stays one line and cannot drive a terminal.
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
_CONTROL.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def shorten(text: object, limit: int = NAME_LIMIT) -> str:
    """``text`` as one line of at most ``limit`` characters: control characters escaped, a longer
    text cut in the middle (both ends of a name or path tell the most): ``'xxxx...xxxx'``."""
    s = str(text).translate(_CONTROL)
    if len(s) <= limit:
        return s
    keep = max(limit - len(_ELLIPSIS), 2)
    head = (keep + 1) // 2
    return s[:head] + _ELLIPSIS + s[len(s) - (keep - head):]


def names_text(names: Iterable[object], most: int = 10, limit: int = NAME_LIMIT) -> str:
    """Comma-separated names, each :func:`shorten`-ed, the first ``most`` of them and a count of
    the rest: ``"step, reward and 3 more"``."""
    items = [shorten(n, limit) for n in names]
    if len(items) <= most:
        return ", ".join(items)
    return f"{', '.join(items[:most])} and {len(items) - most} more"


class SaturateError(Exception):
    """Base class of every error saturate raises on purpose. ``str(error)`` is one line of at most
    :data:`MESSAGE_LIMIT` characters; the full message stays in ``error.args[0]``."""

    exit_code: int = 2

    def __str__(self) -> str:
        return shorten(super().__str__(), MESSAGE_LIMIT)


class InputError(SaturateError):
    """The data given cannot be used: missing or unreadable file, wrong columns, no curves."""


class SourceError(SaturateError):
    """A tracking source cannot be reached or answered with an error (server down, bad URI)."""


class SettingsError(SaturateError):
    """An option or configuration value is invalid."""


#: Attribute an unexpected exception carries once :func:`step` has named where it happened.
_STEP_ATTR = "saturate_step"


@contextmanager
def step(what: str) -> Iterator[None]:
    """Name the step an unexpected exception (not a :class:`SaturateError`) happened in, such as
    ``"fitting run 'a' / metric 'eval/acc'"`` (the innermost wins); it propagates unchanged."""
    try:
        yield
    except SaturateError:
        raise
    except Exception as exc:
        if getattr(exc, _STEP_ATTR, None) is None:
            with suppress(AttributeError):  # a type with __slots__: its step stays unnamed
                setattr(exc, _STEP_ATTR, what)
        raise


def internal_error_line(exc: BaseException, default_step: str) -> str:
    """The one line for an unexpected exception: where, what, and how to see more (at most
    :data:`MESSAGE_LIMIT` characters plus the ``error: `` prefix)."""
    where = getattr(exc, _STEP_ATTR, None) or default_step
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    hint = "; rerun with --debug for the traceback"
    head = f"internal error while {shorten(where, 120)}: "
    return f"error: {head}{shorten(what, MESSAGE_LIMIT - len(head) - len(hint))}{hint}"
