"""Per-curve saturation analysis: is the next doubling of compute still worth paying for?

:mod:`.settings` (how curves are judged), :mod:`.evidence` (model-free trend and collapse),
:mod:`.quantities` (gain per doubling, ROI, knee, stop point, forecasts), :mod:`.verdict` and
:mod:`.refine` (the call), :mod:`.curve` (:func:`analyze_curve`), :mod:`.engine` (many curves,
locally or on Dask), :mod:`.table` (every curve of a table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Each export is imported on first use (PEP 562, saturate.lazy_exports), so that importing the
# light submodules (settings) does not pull in scipy, statsmodels and ruptures.
if TYPE_CHECKING:
    from saturate.analysis.curve import analyze_curve
    from saturate.analysis.diagnostic_metrics import DiagnosticMetric, summarize_metrics
    from saturate.analysis.engine import Engine, run_curves
    from saturate.analysis.settings import AnalysisSettings, parse_min_gain
    from saturate.analysis.table import analyze_parts, analyze_table
    from saturate.analysis.verdict import Evidence, decide_verdict, fit_matches_trend
    from saturate.measure.quantities import (
        KNEE_ROI,
        elasticity,
        find_knee,
        find_stop_point,
        gain_per_doubling,
        headroom,
        honest_forecast,
        noise_range,
        recent_slope,
        roi_stage,
        share_above,
        smoothed_range,
        threshold_for,
    )

__getattr__, __dir__ = lazy_exports(__name__, globals())


__all__ = [
    "AnalysisSettings", "analyze_curve", "analyze_table", "analyze_parts", "Engine", "run_curves",
    "decide_verdict", "fit_matches_trend", "recent_slope", "Evidence", "parse_min_gain",
    "smoothed_range", "noise_range", "threshold_for", "gain_per_doubling", "share_above",
    "elasticity", "roi_stage", "find_knee", "find_stop_point", "headroom", "honest_forecast",
    "KNEE_ROI", "DiagnosticMetric", "summarize_metrics",
]
