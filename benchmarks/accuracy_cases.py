"""Cases of the accuracy benchmark: real curves cut in time, with what they did next.

A curve is cut at ``frac`` (1/8, 1/4, 1/2) of its last compute ``X``: the analysis sees only the
points with compute <= ``c = frac * X`` ("the observed part"), the rest is the truth.

**Does the next doubling pay?** The tool's question, with the tool's own threshold ``T``
(:func:`saturate.measure.quantities.threshold_for` on the observed part with the default
``min_gain="3%"``: 3% of its smoothed range ``R``, or of its level or domain when it has not
moved beyond its noise), written ``t = T / R``. What the run did in the next doubling of
compute is

    g = (mean y over [1.6 c, 2 c] - mean y over [0.8 c, c]) / R

(window means, so one noisy evaluation does not decide; the two windows are one doubling apart).
The label is **pays** when ``g > 2t`` (6% of the range by default) and **does not pay** when
``g < t``; a realised gain between ``t`` and ``2t`` is too close to the threshold to say which
side the run was on (the window means are themselves noisy) and the case is not scored. Cases
whose curve ends before ``2c`` have no label.

**2x / 4x forecasts** are judged against the mean of the real curve over ``[0.9 k C, 1.1 k C]``
(``C`` the last observed compute, ``k`` 2 or 4): error ``|forecast - truth| / R``, capped at
:data:`ERROR_CAP` (a missing forecast counts the cap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from saturate.analysis import AnalysisSettings
from saturate.measure.quantities import smoothed_range, threshold_for

CUTS = (1 / 8, 1 / 4, 1 / 2)
THRESHOLD = 0.03  # the tool's default min_gain ("3%"), as a share of the range
MIN_OBSERVED = 8
ERROR_CAP = 10.0


@dataclass(frozen=True)
class Case:
    """One cut of one real curve with its truth (see the module docstring)."""

    source: str
    name: str
    group: str
    kind: str
    frac: float
    cut: float
    compute: np.ndarray = field(repr=False)
    value: np.ndarray = field(repr=False)
    scale: float
    g: float
    truth: dict[int, float]
    domain: tuple[float, float] | None = None
    metric: str = "return"
    t: float = THRESHOLD
    """The tool's threshold over the observed range ``R``."""

    @property
    def key(self) -> str:
        return f"{self.source}|{self.name}|{self.frac:.4f}"

    @property
    def label(self) -> bool | None:
        """True: pays; False: does not pay; None: not scored (between T and 2T, or no future)."""
        if not (math.isfinite(self.g) and math.isfinite(self.t)):
            return None
        if self.g > 2.0 * self.t:
            return True
        if self.g < self.t:
            return False
        return None


def make_cases(curves) -> list[Case]:
    """Cut every curve at :data:`CUTS` and label the future (module docstring)."""
    cases = []
    for cur in curves:
        x, y = cur.compute, cur.value
        for frac in CUTS:
            cut = frac * float(x[-1])
            obs = x <= cut
            if obs.sum() < MIN_OBSERVED:
                continue
            scale = smoothed_range(y[obs])
            if not scale > 0:
                continue
            now = (x >= 0.8 * cut) & (x <= cut)
            later = (x >= 1.6 * cut) & (x <= 2.0 * cut)
            g = math.nan
            if now.any() and later.any():
                g = (float(y[later].mean()) - float(y[now].mean())) / scale
            last = float(x[obs][-1])
            truth = {}
            for k in (2, 4):
                w = (x >= 0.9 * k * last) & (x <= 1.1 * k * last)
                if w.any():
                    truth[k] = float(y[w].mean())
            settings = AnalysisSettings(domains={cur.metric: cur.domain} if cur.domain else {})
            t = threshold_for(cur.metric, y[obs], settings).value / scale
            cases.append(Case(
                cur.source, cur.name, cur.group, cur.kind, frac, cut, x[obs], y[obs], scale, g,
                truth, cur.domain, cur.metric, t,
            ))
    return cases


def forecast_error(case: Case, k: int, forecast: float | None) -> float:
    """``|forecast - truth| / R`` capped at :data:`ERROR_CAP`; NaN without a truth at ``k``x."""
    if k not in case.truth:
        return math.nan
    if forecast is None or not math.isfinite(forecast):
        return ERROR_CAP
    return min(ERROR_CAP, abs(forecast - case.truth[k]) / case.scale)
