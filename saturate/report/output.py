"""Writing reports to files so that a failed write never leaves a broken one behind.

:func:`write_atomic` writes to a temporary file in the target's folder and renames it over the
target only once everything is on disk: a full disk, a file-size limit or an interrupt leaves the
previous report as it was (and no temporary file).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from saturate.errors import InputError

__all__ = ["write_atomic", "atomic_file"]


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, *, what: str = "--out") -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; it replaces ``path`` when the block
    ends without an error, and is removed otherwise. ``OSError`` becomes one-line
    :class:`InputError` naming ``what`` and the path."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"{what} {target}: cannot write ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, target.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise InputError(f"{what} {target}: cannot write ({exc.strerror or exc}); "
                         "any earlier file there is unchanged") from None
    except BaseException:
        _remove(tmp)
        raise


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


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
