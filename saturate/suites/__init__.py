"""Suites: is an agent, as a whole, still scaling over a benchmark suite, and which tasks hold it
back? :func:`analyze_suite` (:mod:`.analysis`) runs the steps: the rows picked (:mod:`.frame`),
normalised per task (:mod:`.normalize`), put on one compute grid (:mod:`.grid`), aggregated with a
stratified bootstrap (:mod:`.aggregate`), each group analysed (:mod:`.group`) and groups compared
(:mod:`.compare`) into the objects of :mod:`.result`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Loaded on first use: the settings read the light constants of :mod:`.aggregate` without the
# analysis (scipy.stats) being imported.
if TYPE_CHECKING:
    from saturate.suites.aggregate import (
        DEFAULT_N_BOOT,
        STATISTICS,
        aggregate,
        iqm,
        stratified_bootstrap,
        task_mean,
    )
    from saturate.suites.analysis import analyze_suite
    from saturate.suites.normalize import Normalization, parse_normalize, read_baselines
    from saturate.suites.result import (
        AggregateCurve,
        GroupComparison,
        SuiteAnalysis,
        SuiteGroup,
        TaskResult,
    )

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = [
    "analyze_suite", "DEFAULT_N_BOOT", "SuiteAnalysis", "SuiteGroup", "TaskResult",
    "AggregateCurve", "GroupComparison", "Normalization", "parse_normalize", "read_baselines",
    "STATISTICS", "aggregate", "iqm", "task_mean", "stratified_bootstrap",
]
