"""The suite analysis :func:`saturate.analyze` runs when its settings name a suite key: the
options read from :class:`~saturate.settings.Settings`, checked before any fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd

from saturate.analysis.settings import AnalysisSettings
from saturate.errors import SaturateError
from saturate.suites.analysis import analyze_suite
from saturate.suites.frame import resolve_key
from saturate.suites.normalize import read_baselines
from saturate.suites.result import SuiteAnalysis
from saturate.table.run_table import run_facts
from saturate.table.table import Table

if TYPE_CHECKING:
    from saturate.settings import Settings


def suite_from_settings(
    judged: Table, settings: Settings, progress: Callable[[int, int], None] | None
) -> SuiteAnalysis:
    """The suite analysis of the judged curves as ``settings`` ask for it
    (:meth:`Settings.suite_options`), the keys and the baselines file checked first, with
    errors named as the caller spells the options (``--suite`` on the command line)."""
    options = settings.suite_options() or {}
    keys = pd.DataFrame(columns=[*judged.points.columns,
                                 *run_facts(judged.points, judged.runs).columns])
    resolve_key(keys, options["suite"], settings.option("suite"))
    if options["group_by"] is not None:
        resolve_key(keys, options["group_by"], settings.option("group_by"))
    spec = options["normalize"]
    if isinstance(spec, str) and spec not in ("min-max", "none") and not spec.startswith("random="):
        try:
            read_baselines(spec)
        except SaturateError as exc:
            raise type(exc)(f"{settings.option('normalize')}: {exc}") from None
    return analyze_suite(judged, settings=AnalysisSettings.from_settings(settings),
                         seed=settings.seed, progress=progress, **options)

