"""Suites: is an agent, as a whole, still scaling over a benchmark suite, and which tasks hold it
back?

* :mod:`.frame`: the suite's rows (task key, group key, metric), checked;
* :mod:`.normalize`: per-task normalisation (baselines ``random``/``human``, min-max, none);
* :mod:`.grid`: every (task, seed) run on one compute grid;
* :mod:`.aggregate`: IQM and mean across tasks and seeds, and their stratified bootstrap;
* :mod:`.group`: one group's aggregate curve analysed, its tasks' verdicts;
* :mod:`.compare`: two groups' aggregates compared now, at 2x, and where they cross;
* :mod:`.result`: the result objects (JSON both ways by :mod:`saturate.results.codec`);
* :mod:`.analysis`: :func:`analyze_suite`, which runs the steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Loaded on first use (:func:`saturate.lazy_exports`): the settings read the light constants of
# :mod:`.aggregate` without the analysis (scipy.stats) being imported.
if TYPE_CHECKING:  # the exports, each imported on first use (saturate.lazy_exports)
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
    "analyze_suite",
    "DEFAULT_N_BOOT",
    "SuiteAnalysis",
    "SuiteGroup",
    "TaskResult",
    "AggregateCurve",
    "GroupComparison",
    "Normalization",
    "parse_normalize",
    "read_baselines",
    "STATISTICS",
    "aggregate",
    "iqm",
    "task_mean",
    "stratified_bootstrap",
]
