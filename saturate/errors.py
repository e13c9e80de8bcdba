"""One family of domain errors; the CLI turns any of them into one line on stderr and exit code 2.

Anything else is a bug: :func:`step` tags it with where it happened, and the CLI prints
:func:`internal_error_line` and exits 3. Messages quote user-given text through :func:`shorten`
(one short line, any length and character), and :class:`SaturateError` caps the whole message.
"""

from __future__ import annotations

import difflib
import fnmatch
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


def closest(wanted: str, names: Iterable[object], *, globs: bool = False) -> str | None:
    """The name ``wanted`` was most likely meant to be, None when none is close: the same name
    in another case, the one name with the same last ``/`` part (``accuracy`` for
    ``eval/accuracy``), the one name a glob matches ignoring case, the one name holding it
    (``seed0``, as a table shows a run whose common prefix it left out), else the nearest by
    :func:`difflib.get_close_matches` (ignoring case). ``globs``: the option takes globs, so a
    part that several names hold is answered with the glob that matches them (``*seed0``)."""
    pool = sorted({str(n) for n in names})
    if not pool or wanted in pool:
        return None
    low = wanted.lower()
    lowered: dict[str, str] = {}
    for name in pool:
        lowered.setdefault(name.lower(), name)
    if low in lowered:
        return lowered[low]
    holding = [] if any(c in wanted for c in "*?[") else [n for n in pool if wanted in n]
    for hits in ([n for n in pool if n.lower().rsplit("/", 1)[-1] == low.rsplit("/", 1)[-1]],
                 [n for n in pool if fnmatch.fnmatchcase(n.lower(), low)], holding):
        if len(hits) == 1:
            return hits[0]
    if holding and globs:
        return f"*{wanted}" if all(n.endswith(wanted) for n in holding) else f"*{wanted}*"
    near = difflib.get_close_matches(low, list(lowered), n=1, cutoff=0.6)
    return lowered[near[0]] if near else None


def miss_text(head: str, wanted: Iterable[str], names: Iterable[object], plural: str,
              most: int = 5, *, globs: bool = False) -> str:
    """The one line of a name or pattern that matched nothing: ``head``, a "did you mean X?"
    when a name is close to one of ``wanted``, then the ``names`` there are (a few, and how many
    more), fitted to :data:`MESSAGE_LIMIT`::

        --metric 'eval/acuracy' matches no metric (did you mean 'eval/accuracy'?); metrics:
        eval/accuracy, train/loss and 3 more

    ``globs``: the option takes globs (:func:`closest` may then suggest one).
    """
    pool = sorted({str(n) for n in names})
    guesses = dict.fromkeys(g for w in wanted
                            if (g := closest(str(w), pool, globs=globs)) is not None)
    line = head + (f" (did you mean {' or '.join(shorten(repr(g)) for g in guesses)}?)"
                   if guesses else "")
    if not pool:
        return f"{line}; {plural}: none"
    for n in range(max(most, 1), 0, -1):  # fewer names rather than a line cut in the middle
        text = f"{line}; {plural}: {names_text(pool, most=n, limit=40)}"
        if len(text) <= MESSAGE_LIMIT:
            break
    return text


def miss_line(option: str, wanted: Iterable[str] | str, names: Iterable[object], noun: str, *,
              where: str | None = None, plural: str | None = None, globs: bool = False) -> str:
    """The one line of a selection that matched nothing, one form for every selector and
    command: ``[where: ]OPTION 'x' matches no NOUN (did you mean 'y'?); NOUNs: a, b and 3 more``
    (:func:`miss_text`). ``wanted``: the names or globs given that matched nothing; ``names``:
    what there is to select from; ``globs``: the option takes globs."""
    wanted = [wanted] if isinstance(wanted, str) else [str(w) for w in wanted]
    given = ", ".join(shorten(repr(w)) for w in wanted)
    verb = "matches" if len(wanted) == 1 else "match"
    head = f"{where}: " if where else ""
    return miss_text(f"{head}{option} {given} {verb} no {noun}", wanted, names,
                     plural or f"{noun}s", globs=globs)


def no_match(option: str, wanted: Iterable[str] | str, names: Iterable[object], noun: str, *,
             where: str | None = None, plural: str | None = None, globs: bool = False,
             error: type[SaturateError] | None = None) -> SaturateError:
    """The error (``error``, default :class:`InputError`) of :func:`miss_line`."""
    return (error or InputError)(miss_line(option, wanted, names, noun, where=where,
                                           plural=plural, globs=globs))


class SaturateError(Exception):
    """Base class of every error saturate raises on purpose. ``str(error)`` is one line of at most
    :data:`MESSAGE_LIMIT` characters; the full message stays in ``error.args[0]``."""

    exit_code: int = 2

    def __str__(self) -> str:
        return shorten(super().__str__(), MESSAGE_LIMIT)


class InputError(SaturateError):
    """The data given cannot be used: missing or unreadable file, wrong columns, no curves."""


class NoCurvesError(InputError):
    """A file that holds no curves (a config, a JSON Schema, notes, a data set, an empty file),
    as opposed to curve data that is broken: a folder walk skips it (named in one warning), a
    file the user named is an error. ``why`` is the message without the file's name."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where, self.why = where, why

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.where, self.why)


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
