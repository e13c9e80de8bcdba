"""Per-curve saturation analysis: is the next doubling of compute still worth paying for?

* :mod:`.settings`: :class:`AnalysisSettings` (how curves are judged);
* :mod:`.diagnostic_metrics`: the summary of the metrics that are not judged (their roles, and
  which way is better, are read from their names by :mod:`saturate.vocabulary`);
* :mod:`.evidence`: model-free evidence (recent trend test, collapse detection);
* :mod:`.quantities`: gain per doubling, ROI, knee, stop point, forecasts, headroom;
* :mod:`.verdict`: the verdict rules and their reasons;
* :mod:`.seeds`: pooling the seeds of a recipe;
* :mod:`.curve`: :func:`analyze_curve`, which runs the steps on one curve;
* :mod:`.engine` (and :mod:`.dask_engine`): many curves in this process, a local pool or Dask;
* :mod:`.table`: :func:`analyze_table` and :func:`analyze_parts`, every curve of a table.
"""

from __future__ import annotations

from saturate.lazy import lazy_exports

# Exported name -> submodule. Loaded on first use (PEP 562), so that importing the light
# submodules (settings) does not pull in scipy, statsmodels and ruptures.
_EXPORTS = {
    "analyze_curve": "curve", "analyze_table": "table", "analyze_parts": "table",
    "Engine": "engine", "run_curves": "engine",
    "KNEE_ROI": "quantities", "elasticity": "quantities", "find_knee": "quantities",
    "find_stop_point": "quantities", "gain_per_doubling": "quantities", "headroom": "quantities",
    "honest_forecast": "quantities", "noise_range": "quantities", "recent_slope": "quantities",
    "roi_stage": "quantities", "share_above": "quantities", "smoothed_range": "quantities",
    "threshold_for": "quantities",
    "AnalysisSettings": "settings", "parse_min_gain": "settings",
    "Evidence": "verdict", "decide_verdict": "verdict", "fit_matches_trend": "verdict",
    "DiagnosticMetric": "diagnostic_metrics",
    "summarize_metrics": "diagnostic_metrics",
}  # fmt: skip

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "AnalysisSettings",
    "analyze_curve",
    "analyze_table",
    "analyze_parts",
    "Engine",
    "run_curves",
    "decide_verdict",
    "fit_matches_trend",
    "recent_slope",
    "Evidence",
    "parse_min_gain",
    "smoothed_range",
    "noise_range",
    "threshold_for",
    "gain_per_doubling",
    "share_above",
    "elasticity",
    "roi_stage",
    "find_knee",
    "find_stop_point",
    "headroom",
    "honest_forecast",
    "KNEE_ROI",
    "DiagnosticMetric",
    "summarize_metrics",
]
