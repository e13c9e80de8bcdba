"""Evidence measured on one curve, before any call is made: the recent trend and its
autocorrelation-robust error, the point-to-point noise (:mod:`.trend`), collapses
(:mod:`.collapse`), the quantities read off a fitted curve: threshold, gain per doubling, stop
point, forecasts, headroom (:mod:`.quantities`), and the :class:`~.evidence.Evidence` the call
weighs (:mod:`.evidence`). Pure functions of arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Imported on first use (PEP 562): numpy and scipy only when a measurement is asked for.
if TYPE_CHECKING:
    from saturate.measure.collapse import detect_collapse
    from saturate.measure.evidence import Evidence, precision_share
    from saturate.measure.quantities import (
        find_stop_point,
        gain_per_doubling,
        headroom,
        honest_forecast,
        noise_range,
        project,
        roi_stage,
        smoothed_range,
        threshold_for,
    )
    from saturate.measure.trend import hac_slope, newey_west_se, noise_sd, trend_test

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = [
    "Evidence", "detect_collapse", "find_stop_point", "gain_per_doubling", "hac_slope", "headroom",
    "honest_forecast", "newey_west_se", "noise_range", "noise_sd", "precision_share", "project",
    "roi_stage", "smoothed_range", "threshold_for", "trend_test",
]
