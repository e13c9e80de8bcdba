"""``watch --html PATH``: the page of the current verdicts (:mod:`saturate.report.live_page`)
written after every pass through the one output path of every report
(:func:`saturate.report.output.write_atomic`): a regular file is replaced in one step (a browser
or a web server never reads half a page), a symbolic link is followed, a pipe or a device is
written into. Inputs and the watch history are refused before the first pass (``saturate watch``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.report.live_page import render_live_page
from saturate.report.output import check_not_inputs, write_atomic
from saturate.results import CurveAnalysis


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
        """Write the page of ``curves`` (the last pass at ``at``, default now); never over a
        file they were read from (one found in a folder watched)."""
        curves = list(curves)
        check_not_inputs([("--html", self.path)], sorted({c.source for c in curves}))
        text = render_live_page(curves, source=self.source,
                                updated=time.time() if at is None else at, refresh=self.refresh)
        write_atomic(self.path, text, what="--html")
