"""The verdict rules: from the evidence about one curve to a verdict and its reasons in words."""

from __future__ import annotations

import math
from dataclasses import dataclass

from saturate.analysis.quantities import KNEE_ROI, roi_stage
from saturate.results import (
    Collapse,
    Estimate,
    Trend,
    Verdict,
)

COIN_FLIP = 0.1
"""A straddling gain whose chance of clearing the threshold is within 0.5 +- this is a coin flip."""


# ---------------------------------------------------------------------------------------------
# Verdict


@dataclass(frozen=True)
class Evidence:
    """What the verdict rests on (larger-is-better scale, metric units per doubling).

    ``fit_recent`` is the fitted curve's own slope per doubling over the trend test's window: when
    it falls outside the trend's interval the fit does not describe the recent data and its
    extrapolation is not trusted. ``scale`` is the observed (smoothed) range of the curve.
    ``p_above`` is the share of the fit's bootstrap draws whose gain exceeds the threshold.
    ``noise`` is the point-to-point noise of the curve (:func:`saturate.analysis.evidence.noise_sd`) and
    ``level_above_start`` the fitted level at the last compute minus the starting level ``R0``
    (for the ROI implied by the trend when the trend decides). ``noise_range`` is the range a
    curve of pure noise would show (:func:`noise_range`): a curve whose ``scale`` is below it has
    not moved beyond its noise.
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


def _fmt(e: Estimate) -> str:
    if math.isfinite(e.lo) and math.isfinite(e.hi):
        return f"{e.value:.3g} [{e.lo:.3g}, {e.hi:.3g}]"
    return f"{e.value:.3g}"


def fit_matches_trend(ev: Evidence) -> bool | None:
    """Whether the fit's recent slope lies inside the trend's interval (None: nothing to compare)."""
    if ev.fit_recent is None or ev.trend is None or not math.isfinite(ev.fit_recent):
        return None
    s = ev.trend.slope_per_doubling
    return bool(s.lo <= ev.fit_recent <= s.hi)


def decide_verdict(ev: Evidence) -> tuple[Verdict, tuple[str, ...]]:
    """The verdict and its reasons from the evidence.

    1. ``regressing``: a collapse that neither the fit nor the recent trend has made up for, or a
       recent trend below zero at the chosen confidence by more than the threshold.
    2. The fit's gain per doubling (its interval carries the bootstrap AND the fit's own
       rolling-origin extrapolation error, see :func:`analyze_curve`) decides when its interval
       clears the threshold on either side; the recent trend stands in when no law gave an
       interval.
    3. When it straddles the threshold, the fit and the recent trend are two noisy estimates of
       the next doubling's gain. The one holding :data:`SOLE_SHARE` of their combined precision
       decides alone (the trend's implied ROI then sets the stage); otherwise the next doubling
       pays only when both say so (the trend ignores the slowdown ahead, the fit can bend into
       a plateau too early, so agreement is required before calling it worth paying for).
    4. ``inconclusive`` when there is nothing to go on, when both estimates straddle and the
       curve has not moved beyond what its noise alone shows (:func:`noise_range`), or, without a
       trend, when the fit's interval is wider than the curve's range and a coin flip.
    Passing curves are ``scaling`` before the knee (ROI >= 0.8), else ``slowing``.
    """
    t = ev.threshold
    pct = f"{int(round(ev.confidence * 100))}%"
    g, tr, col = ev.gain, ev.trend, ev.collapse
    s = tr.slope_per_doubling if tr is not None else None
    trend_txt = (
        f"recent trend per doubling {_fmt(s)} (p={tr.p_value:.2g}, {tr.n_points} points)"
        if s is not None
        else "no trend test (too few recent points)"
    )
    gain_txt = f"fitted gain per doubling {_fmt(g)}" if g is not None else "no fitted gain"
    thr = f"the threshold {ev.threshold_text}"

    if col is not None:
        col_txt = (
            f"collapse at compute {col.compute:.4g}: fell by {col.drop:.3g} "
            f"({col.drop_fraction:.0%} of the range) and has not recovered"
        )
        if (g is None or g.value < t) and (s is None or s.value < t):
            return "regressing", (col_txt, gain_txt, trend_txt)
    if s is not None and s.hi < 0 and s.value < -t and (g is None or g.value < t):
        return "regressing", (
            f"{trend_txt} is below zero at {pct} confidence and falls by more than {thr}",
            gain_txt,
        )

    reasons: list[str] = []
    if col is not None:
        reasons.append(col_txt + ", but the curve has gained since")
    if g is not None and g.identified:
        est, name = g, "fitted gain per doubling"
        reasons.insert(0, trend_txt)
        if fit_matches_trend(ev) is False:
            reasons.append(
                f"caution: the fit's own slope over the recent stretch, {ev.fit_recent:.3g} per "
                "doubling, is outside the trend's interval"
            )
    elif s is not None:
        est, name = s, "recent trend per doubling"
        reasons.insert(0, f"{gain_txt} has no interval; the recent trend decides")
    elif g is not None:
        est, name = g, "fitted gain per doubling"
    else:
        return "inconclusive", ("no law could be fitted and too few recent points for a trend",)

    prob = ev.p_above if est is g and ev.p_above is not None else None
    straddles = not (est.lo > t or est.hi < t)
    if est.lo > t:
        return _passes(ev, f"{name} {_fmt(est)} is above {thr} at {pct} confidence", reasons)
    if est.hi < t:
        return "saturated", (f"{name} {_fmt(est)} is below {thr} at {pct} confidence", *reasons)

    # The estimate straddles the threshold.
    width = est.hi - est.lo
    trend_straddles = s is None or not (s.lo > t or s.hi < t)
    if (
        s is None
        and prob is not None
        and abs(prob - 0.5) <= COIN_FLIP
        and math.isfinite(width)
        and width > ev.scale
    ):
        return "inconclusive", (
            f"{name} {_fmt(est)} is too uncertain to say: its {pct} interval straddles {thr}, "
            f"is wider than the curve's whole observed range {ev.scale:.3g}, and "
            f"{prob:.0%} of the bootstrap draws clear the threshold",
            *reasons,
        )
    if straddles and trend_straddles and ev.scale < ev.noise_range:
        return "inconclusive", (
            f"too noisy to say: the curve's observed range {ev.scale:.3g} is within what its "
            f"point-to-point noise {ev.noise:.3g} alone would show ({ev.noise_range:.3g}), and "
            f"both the {name} {_fmt(est)} and the recent trend straddle {thr}",
            *reasons,
        )
    fit_above = est.value > t if prob is None else prob > 0.5
    chance = "" if prob is None else f" ({prob:.0%} of the bootstrap draws clear it)"
    if est is not g or s is None:
        side = "above" if fit_above else "below"
        head = f"{name} {_fmt(est)} is more likely {side} {thr} than not{chance}"
        return _passes(ev, head, reasons) if fit_above else ("saturated", (head, *reasons))

    # Two noisy estimates of the next doubling's gain: the fit's extrapolation and the recent
    # trend (persistence). The more precise decides alone when the other is uninformative;
    # otherwise the next doubling pays only when both say it does (each errs on the generous
    # side in its own way: the trend ignores the slowdown ahead, the fit can miss a plateau).
    share = _precision_share(est, s)
    trend_above = s.value > t
    gain_head = f"{name} {_fmt(est)} straddles {thr}{chance}"
    if share >= SOLE_SHARE:
        side = "above" if fit_above else "below"
        head = (
            f"{gain_head}; the recent trend is far less precise ({1 - share:.0%} of the combined "
            f"precision), so the fit decides: more likely {side} than not"
        )
        return _passes(ev, head, reasons) if fit_above else ("saturated", (head, *reasons))
    if share <= 1.0 - SOLE_SHARE:
        side = "above" if trend_above else "below"
        head = (
            f"{gain_head}, but the fit's extrapolation is far less precise than the recent trend "
            f"(which holds {1 - share:.0%} of the combined precision) and the trend decides: it "
            f"is {side} the threshold"
        )
        if not trend_above:
            return "saturated", (head, *reasons)
        return _passes(ev, head, reasons, roi=_trend_roi(ev))
    if fit_above and trend_above:
        head = f"{gain_head}, and the recent trend agrees: both are above the threshold"
        return _passes(ev, head, reasons)
    if not fit_above and not trend_above:
        head = f"{gain_head}, and the recent trend agrees: both are below the threshold"
    else:
        which = "the fit" if trend_above else "the recent trend"
        other = "the recent trend" if trend_above else "the fit"
        head = (
            f"{gain_head}; {other} is above the threshold but {which} is not, and neither is "
            "precise enough to overrule the other: the next doubling is not shown to pay"
        )
    return "saturated", (head, *reasons)


SOLE_SHARE = 0.9
"""An estimate holding this share of the combined precision (inverse variance) of the fit and the
trend, i.e. a standard error three times smaller than the other's, decides alone."""


def _precision_share(fit: Estimate, trend: Estimate) -> float:
    """The fit's share of the combined precision, from the widths of the two intervals."""
    wf, wt = fit.hi - fit.lo, trend.hi - trend.lo
    if not (math.isfinite(wf) and math.isfinite(wt)):
        return 1.0 if math.isfinite(wf) else 0.0
    if wf <= 0 or wt <= 0:
        return 1.0 if wf <= 0 < wt else (0.0 if wt <= 0 < wf else 0.5)
    pf, pt = 1.0 / wf**2, 1.0 / wt**2
    return pf / (pf + pt)


def _trend_roi(ev: Evidence) -> float:
    """ROI implied by the recent trend: ``(slope per doubling / ln 2) / (f(C) - R0)``."""
    if ev.trend is None or not (ev.level_above_start > 0):
        return math.nan
    return ev.trend.slope_per_doubling.value / math.log(2.0) / ev.level_above_start


def _passes(
    ev: Evidence, head: str, reasons: list[str], roi: float | None = None
) -> tuple[Verdict, tuple[str, ...]]:
    """``scaling`` before the knee (ROI >= 0.8), else ``slowing``."""
    source = "implied by the recent trend" if roi is not None and math.isfinite(roi) else ""
    r = roi if roi is not None and math.isfinite(roi) else ev.roi
    stage = roi_stage(r)
    label = f"ROI {r:.2f}{' ' + source if source else ''} ({stage})"
    if math.isfinite(r) and r >= KNEE_ROI:
        return "scaling", (head, f"{label}: before the knee", *reasons)
    roi_txt = label if math.isfinite(r) else "ROI unknown"
    return "slowing", (head, f"{roi_txt}: past the knee (ROI < {KNEE_ROI})", *reasons)


