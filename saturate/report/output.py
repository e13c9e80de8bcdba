"""Writing reports so that a write never destroys what is there (:func:`atomic_file`).

A regular file (or nothing yet) is written to a temporary file beside it and renamed over it once
on disk, so a full disk or an interrupt leaves the previous report and no temporary file (one left
by ``kill -9`` goes at the next write). A symlink is followed; a pipe, device or terminal is
written directly. :func:`check_not_inputs` refuses, before any work, an output that is one of
the inputs or a file the command keeps (the watch history and its lock): every option that writes
a file (``--out``, ``--junit``, ``--plot``, ``watch --html``) goes through both.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from saturate.errors import InputError

# A temporary file of an older saturate (no process id in its name) is stale after this long.
_STALE_SECONDS = 600.0


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, *, what: str = "--out") -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into (see the module). ``OSError`` becomes
    a one-line :class:`InputError` naming ``what`` and the path."""
    mode = _mode(Path(path))  # what the path leads to, links followed (/dev/stdout: a pipe)
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        with _direct(Path(path), Path(path), mode, what) as fh:
            yield fh
        return
    target = Path(os.path.realpath(path))  # a symlink is followed; the link itself stays
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{what} {path}: is a folder, expected a file path")
    if target.is_symlink():  # a loop of links: replacing the link would break it
        raise InputError(f"{what} {path}: a symbolic link that leads to no file (a loop)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.p{os.getpid()}.", suffix=".tmp",
                                   dir=target.parent)  # fmt: skip
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot write ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, mode & 0o777)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise InputError(f"{what} {path}: cannot write ({exc.strerror or exc}); "
                         "any earlier file there is unchanged") from None
    except BaseException:
        _remove(tmp)
        raise


@contextlib.contextmanager
def _direct(target: Path, given: Path, mode: int, what: str) -> Iterator[BinaryIO]:
    """A pipe, device or terminal opened for writing as it is (never replaced, never renamed)."""
    if stat.S_ISSOCK(mode):
        raise InputError(f"{what} {given}: is a socket, expected a file path")
    try:
        fh = open(target, "wb", buffering=0)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"{what} {given}: cannot write ({exc.strerror or exc})") from None
    try:
        with fh:
            yield fh
    except BrokenPipeError:
        raise InputError(f"{what} {given}: the reader closed the pipe") from None
    except OSError as exc:
        raise InputError(f"{what} {given}: cannot write ({exc.strerror or exc})") from None


def write_atomic(path: str | os.PathLike, data: str | bytes, *, what: str = "--out") -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` all at once or not at all (see the module)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_file(path, what=what) as fh:
        fh.write(payload)
    return Path(path)


def save_with(path: str | os.PathLike, write: Callable[[BinaryIO], None], *,
              what: str = "--out") -> Path:
    """Run ``write(file)`` (e.g. a matplotlib ``savefig`` into a file object) atomically."""
    with atomic_file(path, what=what) as fh:
        write(fh)
    return Path(path)


def check_not_inputs(outputs: Iterable[tuple[str, str | os.PathLike | None]],
                     inputs: Iterable[str | os.PathLike | None],
                     kept: Iterable[tuple[str | os.PathLike, str]] = ()) -> None:
    """Refuse, before any work, an output (``(option, path)``) that is one of the input files
    (the same file after following links), a file in ``kept`` (``(path, what it is)``: the watch
    history, its lock), an SQLite database (whichever command it is given to), or the same file
    as another output."""
    seen: dict[tuple[int, int] | str, str] = {}
    for path, what in kept:
        key = _identity(path)
        if key is not None:
            seen[key] = what
    for given in inputs:
        key = None if given is None else _identity(given)
        if key is not None:
            seen[key] = f"the input {given}"
    for option, out in outputs:
        if out is None:
            continue
        key = _identity(out)
        if key is None:
            continue
        if key in seen:
            raise InputError(f"{option} {out}: is {seen[key]}; writing there would replace it "
                             "(choose another path)")
        if _is_database(out):  # a watch history or a tracking store: never a report's file
            raise InputError(f"{option} {out}: is an SQLite database (a watch history or a "
                             "tracking store?); writing there would replace it (choose another "
                             "path)")
        if _is_regular_or_missing(out):
            seen[key] = f"also the output of {option}"


def settings_inputs(settings: Any) -> list[str]:
    """The files a command's settings name as inputs: the settings file read and a
    ``--normalize`` baselines file (an output there would replace them)."""
    named = [getattr(settings, "config", None), getattr(settings, "normalize", None)]
    return [v for v in named if isinstance(v, str) and os.path.isfile(v)]


def _identity(path: str | os.PathLike) -> tuple[int, int] | str | None:
    """The file ``path`` names (device and inode when it exists, else its resolved path); None
    for what is not a local file path (an MLflow URL) or not a regular file (a pipe, /dev/null)."""
    text = os.fspath(path)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///"):]  # sqlite:////abs/path keeps its leading slash
    elif "://" in text:
        return None
    try:
        st = os.stat(text)
    except (OSError, ValueError):
        return os.path.realpath(text) if text else None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _is_database(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular file that starts as every SQLite database does."""
    if not stat.S_ISREG(_mode(Path(path)) or 0):
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _is_regular_or_missing(path: str | os.PathLike) -> bool:
    mode = _mode(Path(path))
    return mode is None or stat.S_ISREG(mode)


def _mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return None


def _remove_stale(target: Path) -> None:
    """Remove temporary files of earlier writes to ``target`` whose process is gone."""
    prefix = f".{target.name}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            middle = name[len(prefix):-len(".tmp")]
            pid = middle.split(".", 1)[0][1:] if middle.startswith("p") and "." in middle else ""
            if pid.isdigit():
                if not _alive(int(pid)):
                    _remove(entry.path)
            elif len(middle) == 8 and time.time() - entry.stat().st_mtime > _STALE_SECONDS:
                _remove(entry.path)  # an older saturate's name: .<name>.XXXXXXXX.tmp


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, not ours
        pass
    return True


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
