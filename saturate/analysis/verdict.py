"""The verdict rules: from the evidence about one curve to a verdict and its reasons in words.

:data:`VERDICT_RULES` lists the rules in the order they are tried, following the README's
"Verdicts" section; each returns ``(verdict, reasons)`` when it applies, else None, and the first
that applies decides (so a rule may take for granted that the rules before it did not apply).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from saturate.fit.scaling import pow2_scale
from saturate.measure.constants import COIN_FLIP, KNEE_ROI, SOLE_SHARE
from saturate.measure.quantities import roi_stage
from saturate.results import Collapse, Estimate, Trend, Verdict, format_estimate

Outcome = tuple[Verdict, tuple[str, ...]]
"""A verdict and its reasons, in the order a reader needs them."""

Rule = Callable[["Evidence"], "Outcome | None"]
"""A verdict rule: the outcome when the rule applies to the evidence, else None."""


@dataclass(frozen=True)
class Evidence:
    """What the verdict rests on (larger-is-better scale, metric units per doubling).

    ``fit_recent``: the fit's own slope per doubling over the trend's window (outside the trend's
    interval, the fit is not trusted); ``scale``: the smoothed observed range; ``p_above``: the
    share of bootstrap draws clearing the threshold; ``level_above_start``: ``f(C) - R0``;
    ``noise_range``: the range pure noise would show (a smaller ``scale`` has not moved).
    """

    threshold: float
    threshold_text: str
    gain: Estimate | None
    trend: Trend | None
    collapse: Collapse | None
    roi: float
    scale: float
    fit_recent: float | None = None
    confidence: float = 0.9
    p_above: float | None = None
    noise: float = math.nan
    level_above_start: float = math.nan
    noise_range: float = math.nan


_fmt = partial(format_estimate, missing=None, unidentified="")
"""Estimates in the reasons: ``0.05 [0.03, 0.07]``, the interval only when it is known."""


def fit_matches_trend(ev: Evidence) -> bool | None:
    """Whether the fit's recent slope lies inside the trend's interval (None: none to compare)."""
    if ev.fit_recent is None or ev.trend is None or not math.isfinite(ev.fit_recent):
        return None
    s = ev.trend.slope_per_doubling
    return bool(s.lo <= ev.fit_recent <= s.hi)


def decide_verdict(ev: Evidence) -> Outcome:
    """The verdict and its reasons: the first of :data:`VERDICT_RULES` that applies."""
    for rule in VERDICT_RULES:
        outcome = rule(ev)
        if outcome is not None:
            return outcome
    raise AssertionError("the verdict rules cover every case; none applied")  # pragma: no cover


# ---- what the rules read off the evidence -------------------------------------------------------


def _slope(ev: Evidence) -> Estimate | None:
    """The recent trend's slope per doubling, None without a trend test."""
    return ev.trend.slope_per_doubling if ev.trend is not None else None


def _pct(ev: Evidence) -> str:
    return f"{int(round(ev.confidence * 100))}%"


def _thr(ev: Evidence) -> str:
    return f"the threshold {ev.threshold_text}"


def _trend_txt(ev: Evidence) -> str:
    s, tr = _slope(ev), ev.trend
    if s is None or tr is None:
        return "no trend test (too few recent points)"
    return f"recent trend per doubling {_fmt(s)} (p={tr.p_value:.2g}, {tr.n_points} points)"


def _gain_txt(ev: Evidence) -> str:
    return f"fitted gain per doubling {_fmt(ev.gain)}" if ev.gain is not None else "no fitted gain"


def _collapse_txt(col: Collapse) -> str:
    return (f"collapse at compute {col.compute:.4g}: fell by {col.drop:.3g} "
            f"({col.drop_fraction:.0%} of the range) and has not recovered")


def _straddles(e: Estimate, t: float) -> bool:
    """Neither clearly above nor clearly below ``t`` (an unknown end counts as straddling)."""
    return not (e.lo > t or e.hi < t)


class _Decider(NamedTuple):
    """The estimate that decides whether the next doubling pays, its name in the reasons, the
    reasons that come with it, and the share of bootstrap draws clearing the threshold."""

    est: Estimate
    name: str
    reasons: tuple[str, ...]
    prob: float | None
    is_fit: bool

    def above(self, t: float) -> bool:
        """More likely above ``t`` than not."""
        return self.est.value > t if self.prob is None else self.prob > 0.5

    def chance(self) -> str:
        return "" if self.prob is None else f" ({self.prob:.0%} of the bootstrap draws clear it)"


def _decider(ev: Evidence) -> _Decider | None:
    """The fit's gain when it has an interval, else the recent trend, else the fit's bare gain;
    None when there is neither. Its reasons say what the other evidence shows."""
    g, s = ev.gain, _slope(ev)
    reasons: list[str] = []
    if ev.collapse is not None:
        reasons.append(_collapse_txt(ev.collapse) + ", but the curve has gained since")
    if g is not None and g.identified:
        reasons.insert(0, _trend_txt(ev))
        if fit_matches_trend(ev) is False:
            reasons.append(f"caution: the fit's own slope over the recent stretch, "
                           f"{ev.fit_recent:.3g} per doubling, is outside the trend's interval")
        return _Decider(g, "fitted gain per doubling", tuple(reasons), ev.p_above, True)
    if s is not None:
        reasons.insert(0, f"{_gain_txt(ev)} has no interval; the recent trend decides")
        return _Decider(s, "recent trend per doubling", tuple(reasons), None, False)
    if g is not None:
        return _Decider(g, "fitted gain per doubling", tuple(reasons), ev.p_above, True)
    return None


def _straddling(ev: Evidence) -> _Decider | None:
    """The deciding estimate when it straddles the threshold, else None."""
    d = _decider(ev)
    return d if d is not None and _straddles(d.est, ev.threshold) else None


class _Pair(NamedTuple):
    """The fit's straddling gain and the recent trend: two noisy estimates of the next doubling's
    gain; ``share`` is the fit's share of their combined precision."""

    fit: _Decider
    trend: Estimate
    share: float
    fit_above: bool
    trend_above: bool
    head: str


def _pair(ev: Evidence) -> _Pair | None:
    d, s = _straddling(ev), _slope(ev)
    if d is None or s is None or not d.is_fit:
        return None
    t = ev.threshold
    head = f"{d.name} {_fmt(d.est)} straddles {_thr(ev)}{d.chance()}"
    return _Pair(d, s, _precision_share(d.est, s), d.above(t), s.value > t, head)


def _precision_share(fit: Estimate, trend: Estimate) -> float:
    """The fit's share of the combined precision, from the widths of the two intervals (over
    :func:`~saturate.fit.scaling.pow2_scale`: their squares may overflow)."""
    wf, wt = fit.hi - fit.lo, trend.hi - trend.lo
    if not (math.isfinite(wf) and math.isfinite(wt)):
        return 1.0 if math.isfinite(wf) else 0.0
    if wf <= 0 or wt <= 0:
        return 1.0 if wf <= 0 < wt else (0.0 if wt <= 0 < wf else 0.5)
    s = pow2_scale(wf, wt)
    wf, wt = wf / s, wt / s  # the larger is now in [1, 2): no division by an underflowed zero
    return wt * wt / (wf * wf + wt * wt)


def _trend_roi(ev: Evidence) -> float:
    """ROI implied by the recent trend: ``(slope per doubling / ln 2) / (f(C) - R0)``."""
    if ev.trend is None or not (ev.level_above_start > 0):
        return math.nan
    return ev.trend.slope_per_doubling.value / math.log(2.0) / ev.level_above_start


def _passes(ev: Evidence, head: str, reasons: Sequence[str], roi: float | None = None) -> Outcome:
    """``scaling`` before the knee (ROI >= :data:`KNEE_ROI`), else ``slowing``."""
    source = "implied by the recent trend" if roi is not None and math.isfinite(roi) else ""
    r = roi if roi is not None and math.isfinite(roi) else ev.roi
    stage = roi_stage(r)
    label = f"ROI {r:.2f}{' ' + source if source else ''} ({stage})"
    if math.isfinite(r) and r >= KNEE_ROI:
        return "scaling", (head, f"{label}: before the knee", *reasons)
    roi_txt = label if math.isfinite(r) else "ROI unknown"
    return "slowing", (head, f"{roi_txt}: past the knee (ROI < {KNEE_ROI})", *reasons)


# ---- the rules, in the order they are tried -----------------------------------------------------


def unrecovered_collapse(ev: Evidence) -> Outcome | None:
    """``regressing``: a collapse that neither the fit nor the recent trend has made up for (both
    gain less than the threshold, or are missing)."""
    g, s, t = ev.gain, _slope(ev), ev.threshold
    if ev.collapse is None or not ((g is None or g.value < t) and (s is None or s.value < t)):
        return None
    return "regressing", (_collapse_txt(ev.collapse), _gain_txt(ev), _trend_txt(ev))


def falling_trend(ev: Evidence) -> Outcome | None:
    """``regressing``: the recent trend is below zero at the chosen confidence and falls by more
    than the threshold per doubling, and the fit does not gain the threshold."""
    g, s, t = ev.gain, _slope(ev), ev.threshold
    if s is None or not (s.hi < 0 and s.value < -t and (g is None or g.value < t)):
        return None
    return "regressing", (f"{_trend_txt(ev)} is below zero at {_pct(ev)} confidence and falls by "
                          f"more than {_thr(ev)}", _gain_txt(ev))


def nothing_to_go_on(ev: Evidence) -> Outcome | None:
    """``inconclusive``: no law could be fitted and too few recent points for a trend."""
    if _decider(ev) is not None:
        return None
    return "inconclusive", ("no law could be fitted and too few recent points for a trend",)


def clears_threshold(ev: Evidence) -> Outcome | None:
    """Passes: the deciding estimate's interval is above the threshold."""
    d = _decider(ev)
    if d is None or not d.est.lo > ev.threshold:
        return None
    head = f"{d.name} {_fmt(d.est)} is above {_thr(ev)} at {_pct(ev)} confidence"
    return _passes(ev, head, d.reasons)


def below_threshold(ev: Evidence) -> Outcome | None:
    """``saturated``: the deciding estimate's interval is below the threshold."""
    d = _decider(ev)
    if d is None or not d.est.hi < ev.threshold:
        return None
    head = f"{d.name} {_fmt(d.est)} is below {_thr(ev)} at {_pct(ev)} confidence"
    return "saturated", (head, *d.reasons)


def coin_flip_wider_than_range(ev: Evidence) -> Outcome | None:
    """``inconclusive``: without a trend, the fit's gain straddles the threshold with an interval
    wider than the curve's observed range, and its draws clear it about half the time."""
    d = _straddling(ev)
    if d is None or _slope(ev) is not None or d.prob is None:
        return None
    width = d.est.hi - d.est.lo
    if not (abs(d.prob - 0.5) <= COIN_FLIP and math.isfinite(width) and width > ev.scale):
        return None
    return "inconclusive", (
        f"{d.name} {_fmt(d.est)} is too uncertain to say: its {_pct(ev)} interval straddles "
        f"{_thr(ev)}, is wider than the curve's whole observed range {ev.scale:.3g}, and "
        f"{d.prob:.0%} of the bootstrap draws clear the threshold",
        *d.reasons,
    )


def within_noise(ev: Evidence) -> Outcome | None:
    """``inconclusive``: the deciding estimate and the recent trend (if any) straddle the
    threshold, and the curve has not moved beyond what its noise alone shows."""
    d, s = _straddling(ev), _slope(ev)
    if d is None or (s is not None and not _straddles(s, ev.threshold)):
        return None
    if not ev.scale < ev.noise_range:
        return None
    return "inconclusive", (
        f"too noisy to say: the curve's observed range {ev.scale:.3g} is within what its "
        f"point-to-point noise {ev.noise:.3g} alone would show ({ev.noise_range:.3g}), and "
        f"both the {d.name} {_fmt(d.est)} and the recent trend straddle {_thr(ev)}",
        *d.reasons,
    )


def one_estimate_leans(ev: Evidence) -> Outcome | None:
    """With one estimate to go on (the fit without a trend, or the trend when the fit's gain has
    no interval), the side of the threshold it more likely lies on decides."""
    d = _straddling(ev)
    if d is None or (d.is_fit and _slope(ev) is not None):
        return None
    above = d.above(ev.threshold)
    side = "above" if above else "below"
    head = f"{d.name} {_fmt(d.est)} is more likely {side} {_thr(ev)} than not{d.chance()}"
    return _passes(ev, head, d.reasons) if above else ("saturated", (head, *d.reasons))


def fit_decides_alone(ev: Evidence) -> Outcome | None:
    """The fit holds at least :data:`SOLE_SHARE` of the combined precision: the side of the
    threshold it more likely lies on decides."""
    p = _pair(ev)
    if p is None or not p.share >= SOLE_SHARE:
        return None
    side = "above" if p.fit_above else "below"
    head = (f"{p.head}; the recent trend is far less precise ({1 - p.share:.0%} of the combined "
            f"precision), so the fit decides: more likely {side} than not")
    if not p.fit_above:
        return "saturated", (head, *p.fit.reasons)
    return _passes(ev, head, p.fit.reasons)


def trend_decides_alone(ev: Evidence) -> Outcome | None:
    """The trend holds at least :data:`SOLE_SHARE` of the combined precision: its side of the
    threshold decides, and the stage comes from the ROI it implies."""
    p = _pair(ev)
    if p is None or not p.share <= 1.0 - SOLE_SHARE:
        return None
    side = "above" if p.trend_above else "below"
    head = (f"{p.head}, but the fit's extrapolation is far less precise than the recent trend "
            f"(which holds {1 - p.share:.0%} of the combined precision) and the trend decides: "
            f"it is {side} the threshold")
    if not p.trend_above:
        return "saturated", (head, *p.fit.reasons)
    return _passes(ev, head, p.fit.reasons, roi=_trend_roi(ev))


def both_above(ev: Evidence) -> Outcome | None:
    """Passes: neither is precise enough to decide alone, and both are above the threshold."""
    p = _pair(ev)
    if p is None or not (p.fit_above and p.trend_above):
        return None
    head = f"{p.head}, and the recent trend agrees: both are above the threshold"
    return _passes(ev, head, p.fit.reasons)


def not_shown_to_pay(ev: Evidence) -> Outcome | None:
    """``saturated``: neither is precise enough to decide alone, and they are not both above the
    threshold (each errs its own way, so paying needs both to agree)."""
    p = _pair(ev)
    if p is None:
        return None
    if not p.fit_above and not p.trend_above:
        head = f"{p.head}, and the recent trend agrees: both are below the threshold"
    else:
        which = "the fit" if p.trend_above else "the recent trend"
        other = "the recent trend" if p.trend_above else "the fit"
        head = (f"{p.head}; {other} is above the threshold but {which} is not, and neither is "
                "precise enough to overrule the other: the next doubling is not shown to pay")
    return "saturated", (head, *p.fit.reasons)


VERDICT_RULES: tuple[Rule, ...] = (
    unrecovered_collapse, falling_trend, nothing_to_go_on, clears_threshold, below_threshold,
    coin_flip_wider_than_range, within_noise, one_estimate_leans, fit_decides_alone,
    trend_decides_alone, both_above, not_shown_to_pay,
)
"""The verdict rules in the order they are tried; the first that applies decides."""
