"""Thinning very long curves, so the analysis' memory and time are bounded whatever their length.

A curve of more than :data:`~saturate.analysis.constants.MAX_ANALYSED_POINTS` points is read, for the
trend test, collapse detection and the fit, through a subset of its points: on a grid of that
many positions equally spaced in log compute (the axis every law and test works on), the first
point at or after each position, plus the last point. Where points are sparse on that axis (early
in training) every one is kept; where they are dense (late), an evenly spread subset. Kept points
are logged points, not averages, so their noise is the curve's own and every noise-based rule
means what it means on a shorter curve. The threshold (the range of the smoothed curve), the noise
level and the point counts are still read off every point.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saturate.analysis.constants import MAX_ANALYSED_POINTS


def thin(compute: NDArray[np.float64], max_points: int = MAX_ANALYSED_POINTS) -> NDArray[np.intp]:
    """Indices (sorted, unique, first and last included) of the points kept from a curve whose
    ``compute`` is sorted ascending; all of them when there are at most ``max_points``."""
    c = np.asarray(compute, dtype=float)
    n = c.shape[0]
    if n <= max_points:
        return np.arange(n)
    if c[0] <= 0:  # shifted off zero by the smallest gap, as the fit does (fit.prep.normalisation)
        gaps = np.diff(c)
        gaps = gaps[gaps > 0]
        with np.errstate(over="ignore", invalid="ignore"):
            c = c - c[0] + (float(gaps.min()) if gaps.size else 1.0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        u = np.log(c)
    if not (np.isfinite(u[0]) and np.isfinite(u[-1]) and u[-1] > u[0]):  # no usable log axis
        return np.unique(np.linspace(0, n - 1, max_points).astype(np.intp))
    grid = np.linspace(u[0], u[-1], max_points - 1)
    idx = np.searchsorted(u, grid, side="left")
    return np.unique(np.r_[idx, n - 1]).astype(np.intp)
