"""What a command reads: the sources as its :class:`~saturate.settings.Settings` select them,
on the x axis ingest decides (``--gpus`` included)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any

from saturate.errors import SettingsError
from saturate.ingest import Tables
from saturate.ingest.stream import ReadProgress
from saturate.settings import Settings


def check_gpus_axis(settings: Settings) -> bool:
    """True when ``gpus`` makes the x axis GPU-hours from wall time (the points are then read on
    their steps); ``gpus`` with ``compute`` is an error."""
    if settings.gpus is None:
        return False
    if settings.compute is not None:
        raise SettingsError(f"{settings.option('gpus')} makes the x axis GPU-hours from wall "
                            f"time; give it or {settings.option('compute')}, not both")
    return True


def read_tables(source: Any, settings: Settings, *, fast: bool = True,
                on_read: Callable[[ReadProgress], None] | None = None) -> Tables:
    """The sources' tables as ``settings`` selects them, part by part on their x axis (what
    :func:`saturate.api.analyze_read` takes).

    The GPU-hours metric is read even when ``--metric`` leaves it out (the cost diagnostics need
    it) and kept apart from the analysed curves.
    """
    selection = settings.selection()
    check_gpus_axis(settings)
    metric, hours, apart = selection["metric"], settings.gpu_hours, None
    if metric and hours and not any(fnmatch.fnmatchcase(hours, g) for g in metric):
        selection["metric"], apart = [*metric, hours], hours
    return Tables(source, **selection, gpus=settings.gpus, fast=fast, as_given=True, apart=apart,
                  on_part=on_read)
