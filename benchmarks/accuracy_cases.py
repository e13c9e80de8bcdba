"""Cases of the accuracy benchmark: real curves cut in time, with what they did next.

A curve is cut at ``frac`` (1/8, 1/4, 1/2) of its last compute ``X``: the analysis sees only the
points with compute <= ``c = frac * X`` ("the observed part"), the rest is the truth.

**Does the next doubling pay?** The tool's question, with the tool's own threshold:
``T = 3%`` of the smoothed range ``R`` of the observed part (:func:`saturate.analysis.smoothed_range`,
the ``min_gain="3%"`` default). What the run did in the next doubling of compute is

    g = (mean y over [1.6 c, 2 c] - mean y over [0.8 c, c]) / R

(window means, so one noisy evaluation does not decide; the two windows are one doubling apart).
The label is **pays** when ``g > 2T = 6%`` and **does not pay** when ``g < T = 3%``; a realised
gain between ``T`` and ``2T`` is too close to the threshold to say which side the run was on
(the window means are themselves noisy) and the case is not scored. Cases whose curve ends
before ``2c`` have no label.

**2x / 4x forecasts** are judged against the mean of the real curve over ``[0.9 k C, 1.1 k C]``
(``C`` the last observed compute, ``k`` 2 or 4): error ``|forecast - truth| / R``, capped at
:data:`ERROR_CAP` (a missing forecast counts the cap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from saturate.analysis import smoothed_range

CUTS = (1 / 8, 1 / 4, 1 / 2)
PAYS, FLAT = 0.06, 0.03
THRESHOLD = 0.03  # the tool's default min_gain ("3%" of the smoothed observed range)
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

    @property
    def key(self) -> str:
        return f"{self.source}|{self.name}|{self.frac:.4f}"

    @property
    def label(self) -> bool | None:
        """True: pays; False: does not pay; None: not scored (between T and 2T, or no future)."""
        if not math.isfinite(self.g):
            return None
        if self.g > PAYS:
            return True
        if self.g < FLAT:
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
            cases.append(Case(
                cur.source, cur.name, cur.group, cur.kind, frac, cut, x[obs], y[obs], scale, g,
                truth, cur.domain, cur.metric,
            ))
    return cases


def forecast_error(case: Case, k: int, forecast: float | None) -> float:
    """``|forecast - truth| / R`` capped at :data:`ERROR_CAP`; NaN without a truth at ``k``x."""
    if k not in case.truth:
        return math.nan
    if forecast is None or not math.isfinite(forecast):
        return ERROR_CAP
    return min(ERROR_CAP, abs(forecast - case.truth[k]) / case.scale)
