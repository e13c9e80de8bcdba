"""The analysis of curves, the path every command goes through: one curve from its points to its
call (:mod:`.curve`: observe, measure, fit, decide), many curves on an engine (:mod:`.engine`:
this process, a local pool, Dask), every curve of a table with its siblings' priors
(:mod:`.table`), and how curves are judged (:mod:`.settings`). What is measured on a curve lives
in :mod:`saturate.measure`, the call in :mod:`saturate.decide`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Each export is imported on first use (PEP 562, saturate.lazy_exports), so that importing the
# light submodules (settings) does not pull in scipy, statsmodels and ruptures.
if TYPE_CHECKING:
    from saturate.analysis.analyse_table import analyze_parts, analyze_table
    from saturate.analysis.curve import analyze_curve, with_decision
    from saturate.analysis.diagnostic_metrics import DiagnosticMetric, summarize_metrics
    from saturate.analysis.engine import Engine, run_curves
    from saturate.analysis.settings import AnalysisSettings, parse_min_gain

__getattr__, __dir__ = lazy_exports(__name__, globals())


__all__ = [
    "AnalysisSettings", "analyze_curve", "analyze_table", "analyze_parts", "Engine", "run_curves",
    "parse_min_gain", "with_decision", "DiagnosticMetric", "summarize_metrics",
]
