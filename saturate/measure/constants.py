"""Named constants of the measurements and the call, each with what it means and why. Changing
one moves the numbers the analysis reports (and the accuracy benchmarks); the fit's own are in
saturate.fit."""

from __future__ import annotations

# ---- ROI stages (measure.quantities.roi_stage) --------------------------------------------------
# ROI is the return of the next doubling of compute over the last one's: the gain the next
# doubling is expected to make over the gain the last doubling made. A steady log-linear climb
# ("no sign of saturation") has ROI 1; a saturating curve's falls toward 0. The limits are the
# stages documented in the README.

ROI_INITIAL = 1.5
"""Above this ROI a curve is in its initial stage: each doubling gains half again the last's."""

KNEE_ROI = 0.8
"""Below this ROI a curve is past its knee: the gain per doubling shrinks by a fifth or more each
doubling; at or above it the gain per doubling holds (``scaling``)."""

ROI_SATURATION = 0.3
"""Below this ROI a curve is on its plateau: a doubling gains under a third of the last one's."""

# ---- horizons -----------------------------------------------------------------------------------

TARGET_HORIZON = 1000.0
"""How far ahead, as a multiple of the last compute, compute-to-target looks (about ten doublings):
a target further out is reported ``beyond_horizon`` rather than as a number."""

# ---- trend test (analysis.evidence.trend_test) --------------------------------------------------

MIN_TREND_POINTS = 6
"""The fewest points a trend test runs on: below it the HAC and AR(1) errors are not estimable."""

TREND_WINDOW_POINTS = 8
"""The recent window (the last doubling of compute) is widened until it holds this many points, so
the trend test has enough points for its autocorrelation-robust error."""

# ---- collapse detection (analysis.evidence.detect_collapse) -------------------------------------

COLLAPSE_MIN_POINTS = 12
"""The fewest points collapse detection runs on: a stretch before the drop and at least
:data:`MIN_TREND_POINTS` after it to show it was not recovered."""

COLLAPSE_PENALTY = 3.0
"""PELT penalty per change point in units of ``sigma^2 ln n`` (sigma the point-to-point noise):
BIC-like, above BIC's 2 (a location and a new mean) so autocorrelated noise is not cut up."""

COLLAPSE_MIN_SEGMENT = 3
"""The shortest segment PELT may cut: a collapse is a sustained change of level, not an outlier."""

COLLAPSE_SEGMENT_DIVISOR = 25
"""Segments are also at least ``n // 25`` points long, so long noisy curves are not over-cut."""

COLLAPSE_JUMP_DIVISOR = 200
"""The pure-Python PELT (a range millions of times the noise) considers a change point every
``n // 200`` points, bounding its cost on long curves; the compiled one considers every point."""

COLLAPSE_MIN_DROP_FRACTION = 0.2
"""A collapse falls by at least this share of the curve's range: smaller dips are RL noise."""

COLLAPSE_Z = 4.0
"""A collapse falls by at least this many standard errors of the two segment means: strict,
because the segmentation tries many change points."""

COLLAPSE_MIN_LEVEL = 5
"""The fewest points the level before a collapse holds: fewer are a spike, not a level."""

COLLAPSE_ROBUST_Z = 3.0
"""A collapse's medians before and after differ by at least this many robust deviations (the
median absolute deviation of the points about them): heavy-tailed returns spike and fall back
far more often than a level collapses. Measured on the public curves of
``benchmarks/bench_accuracy.py``: it keeps every canonical collapse and 44 of the 181 detected
there (docs/measurements.md has how often each kind paid the next doubling)."""

COLLAPSE_DROP_SHARE = 0.5
"""Half the drop: the level before it must be within this share of the drop of the best so far,
and the curve after it must stay below the level before by at least this share (not recovered)."""

# ---- long curves (analysis.evidence.thin, analysis.quantities.noise_range) ----------------------

MAX_ANALYSED_POINTS = 16_384
"""Curves with more points are thinned before the trend test, collapse detection and the fit.
Far above the longest real curve tested (about 8,700 points): no measured accuracy depends on it."""

NOISE_RANGE_SIM_POINTS = 16_384
""":func:`~saturate.measure.quantities.noise_range` simulates at most this many points; longer
curves scale it by ``sqrt(window ratio)`` (smoothed noise's range tends to a multiple of
``sigma / sqrt(w)``)."""
