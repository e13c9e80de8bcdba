"""Suites: is an agent, as a whole, still scaling over a benchmark suite, and which tasks hold it
back?

* :mod:`.frame`: the suite's rows (task key, group key, metric), checked;
* :mod:`.normalize`: per-task normalisation (baselines ``random``/``human``, min-max, none);
* :mod:`.grid`: every (task, seed) run on one compute grid;
* :mod:`.aggregate`: IQM and mean across tasks and seeds, and their stratified bootstrap;
* :mod:`.group`: one group's aggregate curve analysed, its tasks' verdicts;
* :mod:`.compare`: two groups' aggregates compared now, at 2x, and where they cross;
* :mod:`.result`: the result objects; :mod:`.codec` reads them back from JSON;
* :mod:`.analysis`: :func:`analyze_suite`, which runs the steps.
"""

from __future__ import annotations

from saturate.suites.aggregate import STATISTICS, aggregate, iqm, stratified_bootstrap, task_mean
from saturate.suites.analysis import DEFAULT_N_BOOT, analyze_suite
from saturate.suites.normalize import Normalization, parse_normalize, read_baselines
from saturate.suites.result import (
    AggregateCurve,
    GroupComparison,
    SuiteAnalysis,
    SuiteGroup,
    TaskResult,
)

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
