"""The call on one curve, in one place: its evidence -> P(the next doubling pays) -> the call ->
the verdict -> the reasons.

**P(pays).** The gain ``G`` of the next doubling is normal around the curve's own estimate
(:attr:`~saturate.measure.evidence.Evidence.own`, the fit and the recent trend weighed by their
precision), pooled with its siblings' prior (:mod:`saturate.decide.siblings`) unless the two
disagree beyond their spread; after an unrecovered collapse, or on a curve that has not moved
beyond its noise, weighed against a prior that the level stays (a normal at no gain with about
the threshold for its spread), so a short noisy run is not sure of a chance drift. Its variance adds three parts, each the curve's own: what the data
leave unknown (the estimate's standard error), the noise of the next window, and what a doubling
does beyond any estimate: ``innovation`` times today's noise before the curve's past is seen,
then the multiple its own backtest measured (a geometric mean, the prior counting as ``history``
doublings); that part leans upward by ``lean`` of its spread (RL curves take off more often
than they fall). Censored to the metric's domain, ``P(pays) = P(G >= threshold)``.

**The call** follows P and the band (Chow's rule for the stated loss, :mod:`.settings`): "pays"
from ``go_above``, "does not pay" below ``stop_below``, inconclusive between, except that an
unrecovered collapse tips an open call toward "does not pay" while P < 1/2.

**The verdict.** "Pays" is ``scaling`` while the gain per doubling holds (the next doubling's
expected gain is at least ``KNEE_ROI`` of what the last one gained: the ROI) and ``slowing``
once it shrinks; "does not pay" is ``regressing`` after an unrecovered collapse or a
significant fall, ``saturated`` otherwise; no call is ``inconclusive``. The knee, the ROI stage
and the stop point shown are the ones that agree with the verdict.

**The reasons** are sentences made from these fields, in the order a reader needs them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import ClassVar

from scipy.special import ndtr, ndtri

from saturate.decide.settings import DecisionSettings, GroupPrior
from saturate.decide.siblings import disagreement, posterior
from saturate.measure.constants import KNEE_ROI
from saturate.measure.evidence import Evidence, combine, precision_share
from saturate.measure.quantities import roi_stage
from saturate.results import Estimate, Stage, Verdict, format_estimate
from saturate.results.codec import Coded


@dataclass(frozen=True)
class Decision(Coded):
    """The call on one curve (module docstring).

    ``p_pays``: P(G >= threshold), G as the next window's mean will measure it; ``call``: True
    pays, False does not, None inconclusive; ``gain``: what the next doubling gains (median and
    interval: the estimate's error and what a doubling does beyond it; the windows' noise only
    enters P), ``expected``: the estimate of its mean alone, ``own``: the curve's
    own estimate before pooling; ``sd_*``: the parts of G's spread; ``prior``: the siblings'
    prior, ``pooled``: whether it was used, ``disagreement``: the curve's distance from it in
    standard deviations; ``roi``: the next doubling's expected gain over the last one's;
    ``knee`` / ``stop_point``: the ones that agree with the verdict."""

    _json_def: ClassVar[str] = "decision"

    verdict: Verdict
    p_pays: float = math.nan
    call: bool | None = None
    gain: Estimate = field(default_factory=lambda: Estimate(math.nan, identified=False))
    expected: Estimate = field(default_factory=lambda: Estimate(math.nan, identified=False))
    own: Estimate = field(default_factory=lambda: Estimate(math.nan, identified=False))
    sd_estimate: float = math.nan
    sd_innovation: float = math.nan
    sd_window: float = math.nan
    prior: GroupPrior | None = field(default=None, compare=False)
    pooled: bool = False
    disagreement: float = math.nan
    roi: float = math.nan
    stage: Stage = "unknown"
    knee: float | None = None
    stop_point: Estimate | None = None
    reasons: tuple[str, ...] = ()


# ---- P(pays) -------------------------------------------------------------------------------------


def p_pays(mean: float, sd: float, threshold: float, lower: float = -math.inf,
           upper: float = math.inf) -> float:
    """``P(G >= threshold)`` for ``G ~ N(mean, sd^2)`` censored (not truncated) to
    ``[lower, upper]``: the mass beyond a bound sits at the bound, so the domain never moves
    probability across the threshold."""
    if not (math.isfinite(mean) and math.isfinite(sd) and sd >= 0):
        return math.nan
    if threshold > upper:
        return 0.0
    if lower >= threshold:
        return 1.0
    if sd == 0:
        return 1.0 if mean >= threshold else 0.0
    return float(ndtr((mean - threshold) / sd))


def distribution(mean: float, sd: float, lower: float, upper: float, confidence: float
                 ) -> Estimate:
    """Median and equal-tailed interval of ``N(mean, sd^2)`` censored to ``[lower, upper]``."""
    if not (math.isfinite(mean) and math.isfinite(sd)):
        return Estimate(mean, identified=False)
    z = float(ndtri(0.5 + confidence / 2.0))

    def held(v: float) -> float:
        return min(max(v, lower), upper)

    return Estimate(held(mean), held(mean - z * sd), held(mean + z * sd))


def innovation_sd(ev: Evidence, settings: DecisionSettings) -> float:
    """What the next doubling does beyond any estimate (module docstring): today's noise times
    the square root of the geometric mean of ``innovation^2`` (counted ``history`` times) and
    the excess the curve's own backtested doublings showed (counted once each); 0 without a
    noise."""
    if not (math.isfinite(ev.noise) and ev.noise > 0) or settings.innovation == 0:
        return 0.0
    log_multiple = settings.history * math.log(settings.innovation**2)
    n = ev.history_n if math.isfinite(ev.history_excess) and ev.history_excess > 0 else 0
    if n:
        log_multiple += n * math.log(ev.history_excess)
    return ev.noise * math.exp(0.5 * log_multiple / (settings.history + n))


def stage_of(verdict: Verdict, roi: float) -> Stage:
    """The ROI stage shown beside a verdict, never one that contradicts it."""
    stage = roi_stage(roi)
    if verdict == "scaling":
        return stage if stage in ("initial", "transition") else "transition"
    if verdict == "slowing":
        return stage if stage in ("knee", "plateau") else "knee"
    if verdict == "regressing":
        return "negative"  # the metric fell
    if verdict == "saturated":
        return "negative" if stage == "negative" else "plateau"
    return "unknown"


# ---- the decision --------------------------------------------------------------------------------


def decide(ev: Evidence, prior: GroupPrior | None = None,
           settings: DecisionSettings = DecisionSettings(),  # noqa: B008 - frozen, safe
           confidence: float = 0.9) -> Decision:
    """The call on one curve from its evidence and (optionally) its siblings' prior."""
    if ev.why:
        return Decision("inconclusive", reasons=(ev.why, *ev.notes))
    z = float(ndtri(0.5 + confidence / 2.0))
    own_m, own_s = ev.own
    own = Estimate(own_m, own_m - z * own_s, own_m + z * own_s,
                   identified=math.isfinite(own_s)) if math.isfinite(own_m) else Estimate(
                       math.nan, identified=False)
    if not math.isfinite(own_m):
        return Decision("inconclusive", own=own,
                        reasons=("no law could be fitted and too few recent points for a trend",
                                 *ev.notes))
    dist = disagreement(ev, prior) if prior is not None else math.nan
    pooled = (prior is not None and settings.pool and math.isfinite(dist)
              and abs(dist) <= settings.heterogeneity)
    estimate, sd_est = posterior(ev, prior if pooled else None)
    prior_mean, prior_sd = _stays(ev)
    if math.isfinite(prior_sd):  # what the curve's history says before its gain is read
        estimate, sd_est = combine(((estimate, sd_est), (prior_mean, prior_sd)), ev.threshold)
    sd_inn, sd_win = innovation_sd(ev, settings), ev.window_sd
    mean = estimate + settings.lean * sd_inn
    sd = math.hypot(sd_est, sd_inn, sd_win)  # hypot: no square overflows at 1e300
    p = p_pays(mean, sd, ev.threshold, ev.lower, ev.upper)
    call = None if not math.isfinite(p) else (
        False if p < settings.stop_below else True if p >= settings.go_above else None)
    if call is None and ev.collapse is not None and p < 0.5:
        call = False  # an unrecovered collapse: an open call that leans "does not pay" says so
    roi = _roi(ev, mean)
    verdict = _verdict(call, roi, mean, ev)
    d = Decision(
        verdict=verdict, p_pays=p, call=call,
        gain=distribution(mean, math.hypot(sd_est, sd_inn), ev.lower, ev.upper, confidence),
        expected=distribution(estimate, sd_est, ev.lower, ev.upper, confidence), own=own,
        sd_estimate=sd_est, sd_innovation=sd_inn, sd_window=sd_win, prior=prior,
        pooled=pooled, disagreement=dist, roi=roi, stage=stage_of(verdict, roi),
        knee=_knee(verdict, ev), stop_point=_stop(verdict, ev),
    )
    return _with_reasons(d, ev, settings, confidence)


def _stays(ev: Evidence) -> tuple[float, float]:
    """A prior on the next doubling's gain (mean, sd) where the curve's history gives one.
    After an unrecovered collapse: the level stays (mean 0, sd the threshold). On a curve that
    has not moved beyond its noise: a gain at the threshold itself, neither pays nor fails to
    (sd the threshold over the weight its level or domain carries in it, so the prior fades as
    the curve moves) — a short noisy curve's P then sits near a coin flip instead of leaning on
    a few points. (NaN, NaN) elsewhere."""
    if ev.collapse is not None:
        return 0.0, ev.threshold
    if ev.basis in ("level", "domain") and ev.anchor > 0 and ev.reference > 0:
        return ev.threshold, ev.threshold * (ev.anchor / ev.reference)  # no 1e-300^2
    return math.nan, math.nan


def _roi(ev: Evidence, mean: float) -> float:
    """The next doubling's expected gain over the last one's (the fitted laws' share of the
    estimate says how much of a bend it sees); NaN after a doubling that gained nothing. Not the
    fitted laws' ratio alone: averaged over saturating laws, it reads a steady log-linear climb
    as shrinking (sample_runs' 20x scale-up: 0.73 where the truth is 1.0)."""
    if not (ev.last_gain > 0 and math.isfinite(mean)):
        return math.nan
    return mean / ev.last_gain


def _verdict(call: bool | None, roi: float, mean: float, ev: Evidence) -> Verdict:
    if call is None:
        return "inconclusive"
    if call:
        holds = (math.isfinite(roi) and roi >= KNEE_ROI) or (
            not math.isfinite(roi) and not ev.last_gain > 0)  # gains after a flat doubling
        return "scaling" if holds else "slowing"
    return "regressing" if ev.collapse is not None or (ev.falling and mean < 0) else "saturated"


def _knee(verdict: Verdict, ev: Evidence) -> float | None:
    """The fit's knee while the verdict says the gain per doubling shrinks (none on a scaling
    curve, nor on one that falls)."""
    if verdict in ("scaling", "regressing", "inconclusive") or not math.isfinite(ev.fit_knee):
        return None
    return ev.fit_knee


def _stop(verdict: Verdict, ev: Evidence) -> Estimate | None:
    """The stop point, except on a curve that falls (it speaks of a rising curve's returns)."""
    return None if verdict == "regressing" else ev.stop_point


# ---- the reasons ---------------------------------------------------------------------------------


def _fmt(e: Estimate) -> str:
    return format_estimate(e, missing=None, unidentified="")


def threshold_text(ev: Evidence) -> str:
    """``the threshold 0.015 (3% of the observed range 0.5)``, and so on for each basis."""
    t = f"the threshold {ev.threshold:.3g}"
    pct = f"{100.0 * ev.share:.3g}%"
    if ev.basis == "units":
        return f"{t} per doubling"
    if ev.basis == "range":
        return f"{t} ({pct} of the observed range {ev.reference:.3g})"
    what = "the width of the metric's domain" if ev.basis == "domain" else "its level"
    return (f"{t} ({pct} of {ev.reference:.3g}, from {what} {ev.anchor:.3g}: the curve has not "
            f"moved beyond its noise, so its range {ev.scale:.3g} is no measure of what a "
            "doubling should gain)")


def _head(d: Decision, ev: Evidence, s: DecisionSettings) -> str:
    prob = f"P(the next doubling gains at least {threshold_text(ev)}) = {d.p_pays:.2f}"
    if d.call is None:
        return (f"{prob}: between {s.stop_below:.2f} and {s.go_above:.2f}, the data cannot "
                f"decide")
    if d.call and d.p_pays >= s.go_above:
        return f"{prob}: at least {s.go_above:.2f}, the next doubling pays"
    if not d.call and d.p_pays < s.stop_below:
        return f"{prob}: below {s.stop_below:.2f}, the next doubling does not pay"
    return (f"{prob}: the band leaves it open, but the curve collapsed and has not recovered, "
            "and it is more likely not to pay than to pay")


def _fall(ev: Evidence) -> str:
    col, tr = ev.collapse, ev.trend
    if col is not None:
        return (f"collapse at compute {col.compute:.4g}: fell by {col.drop:.3g} "
                f"({col.drop_fraction:.0%} of its range, from {col.level_before:.4g} to "
                f"{col.level_after:.4g}) and has not recovered")
    assert tr is not None
    return (f"falling: the recent trend per doubling {_fmt(tr.slope_per_doubling)} is below "
            f"zero with confidence and falls by more than the threshold")


def _gain_line(d: Decision, ev: Evidence, pct: str) -> str:
    out = f"the next doubling gains {_fmt(d.gain)} ({pct})"
    if math.isfinite(ev.last_gain):
        out += f"; the last doubling gained {ev.last_gain:.3g}"
        if math.isfinite(d.roi) and d.verdict in ("scaling", "slowing"):
            holds = ("the gain per doubling holds" if d.roi >= KNEE_ROI
                     else f"the gain per doubling shrinks: past the knee (ROI < {KNEE_ROI})")
            out += f" (ROI {d.roi:.2f}, {d.stage}: {holds})"
        elif d.verdict == "scaling":
            out += " (the gain per doubling grows from a flat doubling)"
    return out


def _own_line(d: Decision, ev: Evidence) -> str:
    own = []
    if math.isfinite(ev.fit_se):
        own.append(f"the fitted laws' gain {ev.fit_gain:.3g} (standard error {ev.fit_se:.2g})")
    tr = ev.trend
    if tr is not None and math.isfinite(ev.trend_se):
        own.append(f"the recent trend {ev.trend_gain:.3g} (standard error {ev.trend_se:.2g}; "
                   f"p={tr.p_value:.2g}, {tr.n_points} points)")
    if len(own) == 2:
        weigh = f"weighed by their precision (the fit {precision_share(ev.fit_se, ev.trend_se):.0%})"
    else:
        weigh = "alone"
    return f"its own evidence: {' and '.join(own)}, {weigh}: {_fmt(d.own)}"


def _spread_line(d: Decision, ev: Evidence, s: DecisionSettings) -> str:
    if ev.history_n:
        how = (f"{s.innovation:g}x today's noise {ev.noise:.3g} before its past is seen, "
               f"weighed with the {math.sqrt(ev.history_excess):.2g}x its earlier doublings "
               "showed beyond the fitted shape")
    else:
        how = f"{s.innovation:g}x today's noise {ev.noise:.3g}; no earlier doubling to test"
    return (f"spread of the next doubling's gain (standard deviations): the estimate "
            f"{d.sd_estimate:.2g}, what a doubling does beyond any estimate {d.sd_innovation:.2g} "
            f"({how}), the noise of the next window's mean {d.sd_window:.2g}")


def _pool_line(d: Decision, s: DecisionSettings) -> str | None:
    p = d.prior
    if p is None:
        return None
    who = f"{p.n} sibling run(s) ({', '.join(p.runs)})" if p.runs else f"{p.n} sibling run(s)"
    said = (f"{who} gain {p.mean:.3g} of their range per doubling (sd {math.sqrt(p.var):.2g}, "
            f"spread across them {math.sqrt(p.tau2):.2g})")
    if d.pooled:
        return f"pooled with its siblings: {said}"
    if not s.pool:
        return f"not pooled (pooling is off): {said}"
    return (f"not pooled: its own estimate lies {abs(d.disagreement):.1f} standard deviations "
            f"from its siblings' (more than {s.heterogeneity:g}), so it keeps its own evidence; "
            f"{said}")


def _with_reasons(d: Decision, ev: Evidence, s: DecisionSettings, confidence: float
                  ) -> Decision:
    pct = f"{int(round(confidence * 100))}%"
    out = [_head(d, ev, s)]
    if d.verdict == "regressing":
        out.append(_fall(ev))
    elif ev.collapse is not None:
        out.append(_fall(ev) + " at that level, but the evidence since does not say it stays")
    out += [_gain_line(d, ev, pct), _own_line(d, ev), _spread_line(d, ev, s)]
    pool = _pool_line(d, s)
    if pool:
        out.append(pool)
    bounded = math.isfinite(ev.lower) or math.isfinite(ev.upper)
    if bounded and (d.gain.lo <= ev.lower or d.gain.hi >= ev.upper):
        out.append(f"the metric's domain bounds the gain to [{ev.lower:.3g}, {ev.upper:.3g}]")
    if d.verdict == "scaling" and math.isfinite(ev.fit_knee):
        out.append(f"the fit's knee at compute {ev.fit_knee:.4g} is not borne out: the gain per "
                   "doubling the call expects holds")
    stop = d.stop_point
    if stop is not None and d.verdict in ("scaling", "slowing") and stop.value < ev.compute_last:
        at = f"the fitted gain per doubling fell below the threshold at compute {stop.value:.4g}"
        out.append(f"stop point: {at}; the call rests on all the evidence above, not on the "
                   "fit alone")
    out += list(ev.notes)
    if d.verdict == "inconclusive":
        out.append(f"inconclusive at P(pays) {d.p_pays:.2f}: keep running and look again at 2x "
                   f"the compute ({2.0 * ev.compute_last:.4g}), or pool more seeds of this run "
                   "to narrow it")
    return dataclasses.replace(d, reasons=tuple(out))
