"""``watch --html PATH``: the page of the current verdicts (:mod:`saturate.report.live_page`)
written after every pass, atomically: the new text goes to a temporary file beside ``PATH``
that then replaces it, so a browser or a web server never reads half a page.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.report.live_page import render_live_page
from saturate.results import CurveAnalysis


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (a temporary file in the same folder, renamed)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class LivePage:
    """The page at ``path``, refreshing every ``refresh`` seconds, for the watch of ``source``."""

    path: Path
    source: str
    refresh: int = 60

    def check(self) -> None:
        """A clear error before the first pass when the page cannot be written where asked."""
        if self.path.is_dir():
            raise InputError(f"--html {shorten(self.path, PATH_LIMIT)}: is a folder, not a file")
        if not self.path.parent.is_dir():
            raise InputError(f"--html {shorten(self.path, PATH_LIMIT)}: no such folder "
                             f"{shorten(self.path.parent, PATH_LIMIT)}")

    def write(self, curves: Iterable[CurveAnalysis], at: float | None = None) -> None:
        """Write the page of ``curves`` (the last pass at ``at``, default now)."""
        text = render_live_page(curves, source=self.source,
                                updated=time.time() if at is None else at, refresh=self.refresh)
        write_atomic(self.path, text)
