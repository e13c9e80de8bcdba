"""Per-curve saturation analysis: is the next doubling of compute still worth paying for?

* :mod:`.settings`: :class:`AnalysisSettings` (how curves are judged);
* :mod:`.direction`: which way is better for a metric;
* :mod:`.evidence`: model-free evidence (recent trend test, collapse detection);
* :mod:`.quantities`: gain per doubling, ROI, knee, stop point, forecasts, headroom;
* :mod:`.verdict`: the verdict rules and their reasons;
* :mod:`.seeds`: pooling the seeds of a recipe;
* :mod:`.curve`: :func:`analyze_curve` and :func:`analyze_table`, which run the steps.
"""

from __future__ import annotations

from saturate.analysis.curve import analyze_curve, analyze_table
from saturate.analysis.quantities import (
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
from saturate.analysis.settings import AnalysisSettings, parse_min_gain
from saturate.analysis.verdict import Evidence, decide_verdict, fit_matches_trend

__all__ = [
    "AnalysisSettings",
    "analyze_curve",
    "analyze_table",
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
]
