"""From a curve's analysis to its final call: outlook, group prior, decision, verdict and reasons.

:func:`refine` is a pure function of (one curve's analysis, its group prior, settings), so a
distributed analysis runs analyse, group priors, refine as map, reduce, map. "Pays" is
``scaling`` before the knee and ``slowing`` past it; "does not pay" is ``regressing`` after a
collapse or a significant fall, ``saturated`` otherwise; no call is ``inconclusive``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from saturate.analysis.decision import Decision, DecisionSettings, decide, innovation_sd
from saturate.analysis.outlook import Outlook, bounded_by, outlook_of
from saturate.analysis.pooling import GroupPrior, leave_one_out_priors
from saturate.analysis.projection import Shape, project
from saturate.measure.constants import KNEE_ROI, SOLE_SHARE
from saturate.measure.quantities import roi_stage, stop_point_note
from saturate.results import CurveAnalysis, ForecastPoint, Stage, Verdict, format_estimate

_KEEP = ("caution:", "spread across seeds", "the run is still RUNNING", "no law could be fitted")
"""Base reasons that stay true whatever the call (they describe the data, not a conclusion)."""


_fmt = partial(format_estimate, missing=None, unidentified="")
"""``0.05 [0.03, 0.07]``, the interval only when it is known."""


def _roi(analysis: CurveAnalysis, o: Outlook, gain: float) -> tuple[float, str]:
    """The ROI that places a passing curve before or past the knee, and where it comes from: the
    fit's when the fit holds :data:`SOLE_SHARE` of the precision, else the one the call's gain
    implies, ``(gain / ln 2) / (f(C) - R0)``."""
    share = _precision_share(o)
    fit = analysis.fit
    fit_alone = math.isfinite(o.fit_se) and not math.isfinite(o.trend_se)
    fit_roi = o.fit_roi if not math.isnan(o.fit_roi) else analysis.roi
    if fit is None or fit_alone or (share is not None and share >= SOLE_SHARE):
        return fit_roi, ""
    r0 = getattr(getattr(fit, "start_level", None), "value", math.nan)
    sign = 1.0 if analysis.direction == "higher" else -1.0
    above = sign * (o.level - r0)
    if not (math.isfinite(above) and above > 0 and math.isfinite(gain)):
        return fit_roi, ""
    return gain / math.log(2.0) / above, " implied by the gain per doubling"


def verdict_of(analysis: CurveAnalysis, decision: Decision, outlook: Outlook | None = None
               ) -> Verdict:
    """The verdict word for a call (see the module docstring)."""
    if decision.call is None:
        return "inconclusive"
    if decision.call:
        roi = analysis.roi if outlook is None else _roi(analysis, outlook, decision.gain.value)[0]
        return "scaling" if math.isfinite(roi) and roi >= KNEE_ROI else "slowing"
    tr = analysis.trend
    falling = (tr is not None and tr.slope_per_doubling.hi < 0
               and tr.slope_per_doubling.value < -analysis.threshold)
    # "regressing" says the metric got worse: a collapse, or a fall the call's own gain shares
    down = decision.gain.value < 0
    return "regressing" if analysis.collapse is not None or (falling and down) else "saturated"


def stage_of(verdict: Verdict, roi: float) -> Stage:
    """The ROI stage shown beside a verdict, never one that contradicts it: ``initial`` or
    ``transition`` for scaling, ``knee`` for slowing, ``plateau`` (or ``negative``) for a curve
    that does not pay, ``unknown`` for inconclusive."""
    stage = roi_stage(roi)
    if verdict == "scaling":
        return stage if stage in ("initial", "transition") else "transition"
    if verdict == "slowing":
        return "knee"
    if verdict in ("saturated", "regressing"):
        return "negative" if stage == "negative" else "plateau"
    return "unknown"


def _precision_share(o: Outlook) -> float | None:
    """The fit's share of the combined precision of the fit and the trend (None: only one)."""
    if not (math.isfinite(o.fit_se) and math.isfinite(o.trend_se)):
        return None
    floor = 1e-9 * o.scale  # as in saturate.analysis.outlook.combine
    ratio = max(o.fit_se, floor) / max(o.trend_se, floor)
    return 1.0 / (1.0 + ratio * ratio)  # a product, not **: 1e200**2 raises OverflowError


def _who_decides(o: Outlook) -> str:
    share = _precision_share(o)
    if share is None:
        return "the fit alone" if math.isfinite(o.fit_se) else "the recent trend alone"
    if share >= SOLE_SHARE:
        return (f"the fit decides: the recent trend is far less precise ({1 - share:.0%} of the "
                "combined precision)")
    if share <= 1.0 - SOLE_SHARE:
        return (f"the trend decides: the fit's extrapolation is far less precise ({share:.0%} "
                "of the combined precision)")
    return f"the fit and the recent trend weighed by their precision (the fit {share:.0%})"


def _head(analysis: CurveAnalysis, o: Outlook, d: Decision, verdict: Verdict,
          settings: DecisionSettings, pct: str) -> str:
    t = analysis.threshold
    thr = f"the threshold {t:.3g} ({100.0 * t / o.scale:.3g}% of the observed range {o.scale:.3g})"
    prob = f"P(the next doubling gains at least the threshold) = {d.p_pays:.2f}"
    if d.call is None and not o.moved:
        return (f"too noisy to say: the curve's observed range {o.scale:.3g} is within what its "
                f"point-to-point noise {o.noise:.3g} alone would show ({o.noise_range:.3g}), and "
                f"the gain per doubling {_fmt(d.gain)} straddles {thr}; {prob}")
    if verdict == "regressing":
        col, tr = analysis.collapse, analysis.trend
        if col is not None:
            return (f"collapse at compute {col.compute:.4g}: fell by {col.drop:.3g} "
                    f"({col.drop_fraction:.0%} of the range) and has not recovered (since the "
                    f"drop it gains {_fmt(d.gain)} per doubling); {prob}")
        assert tr is not None
        return (f"recent trend per doubling {_fmt(tr.slope_per_doubling)} is below zero at {pct} "
                f"confidence and falls by more than {thr}; {prob}")
    g = d.gain
    if g.lo > t or g.hi < t:
        side = f"{'above' if g.lo > t else 'below'} {thr} at {pct} confidence"
    else:
        side = (f"more likely {'above' if d.p_pays >= 0.5 else 'below'} {thr} than not (its "
                f"{pct} interval straddles it)")
    if d.call is None:
        said = (f"between {settings.stop_below:.2f} and {settings.go_above:.2f}: the data cannot "
                "decide")
    elif d.call:
        said = f"at least {settings.go_above:.2f}: the next doubling pays"
    else:
        said = f"below {settings.stop_below:.2f}: the next doubling does not pay"
    return f"gain per doubling {_fmt(g)} is {side}; {prob}, {said}; {_who_decides(o)}"


def _reasons(analysis: CurveAnalysis, o: Outlook, d: Decision, verdict: Verdict,
             settings: DecisionSettings, pct: str) -> tuple[str, ...]:
    out = [_head(analysis, o, d, verdict, settings, pct)]
    own = []
    if math.isfinite(o.fit_se):
        own.append(f"fitted gain per doubling {o.fit_gain:.3g} (standard error {o.fit_se:.2g})")
    if analysis.trend is not None:
        tr = analysis.trend
        own.append(f"recent trend per doubling {_fmt(tr.slope_per_doubling)} "
                   f"(p={tr.p_value:.2g}, {tr.n_points} points)")
    if own:
        out.append("its own evidence: " + "; ".join(own) + f"; combined {_fmt(d.own)}")
    else:
        out.append("no fitted gain and no recent trend of its own")
    if d.prior is not None:
        out.append(f"pooled with its group: {d.prior.summary()}")
    inno = innovation_sd(o, settings)
    if inno > 0:
        out.append(f"what a doubling does beyond any estimate adds {inno:.3g} (standard "
                   f"deviation: {settings.innovation:g}x the geometric mean of the curve's pace, "
                   f"its mean gain per doubling so far {o.pace:.3g}, and its noise {o.noise:.3g})")
    if d.bounded:
        out.append(f"the metric's domain bounds the gain to [{o.lower:.3g}, {o.upper:.3g}]")
    if verdict in ("scaling", "slowing"):
        r, source = _roi(analysis, o, d.gain.value)
        stage = stage_of(verdict, r)
        out.append(
            f"ROI {r:.2f}{source} ({stage}): before the knee" if verdict == "scaling" else
            (f"ROI {r:.2f}{source} ({stage}): past the knee (ROI < {KNEE_ROI})"
             if math.isfinite(r) else f"ROI unknown: past the knee (ROI < {KNEE_ROI}) not ruled out")
        )
    elif verdict == "regressing" and analysis.collapse is not None and analysis.trend is not None:
        s = analysis.trend.slope_per_doubling
        out.append(f"recent trend per doubling {_fmt(s)}")
    out += [r for r in analysis.reasons
            if r.startswith((*_KEEP, "the fit's knee at compute")) or _is_domain_note(r)]
    return tuple(out)


def _is_domain_note(reason: str) -> bool:
    """A reason of :func:`~saturate.analysis.curve.domain_reasons`, not the call's own domain
    line (which a new call writes again)."""
    return "domain" in reason and not reason.startswith("the metric's domain bounds the gain")


def refine(
    analysis: CurveAnalysis, prior: GroupPrior | None = None,
    settings: DecisionSettings = DecisionSettings(),  # noqa: B008 - frozen, safe as a default
    domain: tuple[float, float] | None = None, confidence: float = 0.9, seed: int = 0,
) -> CurveAnalysis:
    """The analysis with its call (``decision``), verdict, reasons, and its gain per doubling and
    forecasts from the decision's gain distribution; unchanged without an outlook.

    Refining again starts from the stored outlook (the curve's own evidence, never the refined
    gain). Without ``domain`` the analysis's own metric domain bounds the gain."""
    if domain is None and analysis.domain is not None:
        domain = (float(analysis.domain[0]), float(analysis.domain[1]))
    if analysis.outlook is not None:
        o = bounded_by(analysis.outlook, domain)
    else:
        o = outlook_of(analysis, domain, confidence, seed)
    if o is None or (not o.informative and prior is None):
        return analysis
    d = decide(o, prior, settings, confidence)
    if not math.isfinite(d.p_pays):
        return analysis
    if d.call is None and analysis.collapse is not None and d.p_pays < settings.go_above:
        # an unrecovered collapse is evidence of its own: the run is not left open unless its
        # chance of paying reaches the upper level
        d = dataclasses.replace(d, call=False)
    verdict = verdict_of(analysis, d, o)
    pct = f"{int(round(confidence * 100))}%"
    reasons = _reasons(analysis, o, d, verdict, settings, pct)
    roi, knee = analysis.roi, None if math.isnan(o.fit_knee) else o.fit_knee
    stop = analysis.stop_point
    if verdict in ("scaling", "slowing"):
        roi = _roi(analysis, o, d.gain.value)[0]  # the ROI that placed the curve is the one shown
        if knee is not None and math.isfinite(roi) and roi >= KNEE_ROI:
            reasons += (f"the fit's knee at compute {knee:.4g} is not borne out: the ROI that "
                        f"places the curve is {roi:.2f}, before the knee",)
            knee = None
    elif verdict == "regressing":
        # knee and stop point speak of diminishing returns on a rising curve; this one falls
        knee, stop = None, None
    if knee is not None and not _rises_at(analysis, knee):
        knee = None
    if stop is not None and not _rises_at(analysis, stop.value):
        stop = None
    if verdict == "inconclusive" and math.isfinite(d.p_pays):
        reasons += (_what_to_do(analysis, d),)
    note = stop_point_note(verdict, stop, analysis.compute_last, d.gain, analysis.threshold)
    reasons += (note,) if note else ()
    return dataclasses.replace(
        analysis, verdict=verdict, reasons=reasons, roi=roi, roi_stage=stage_of(verdict, roi),
        knee=knee, stop_point=stop, gain_per_doubling=d.gain,
        forecast=project(o, d, analysis.forecast, analysis.compute_last, _fit_shape(analysis)),
        decision=d, outlook=o,
    )


def _rises_at(analysis: CurveAnalysis, compute: float) -> bool:
    """Whether the fitted curve still rises (in the good direction) at ``compute``: a knee or a
    stop point is where returns shrink, not where the curve falls. True without an answer."""
    fit = analysis.fit
    if fit is None or not (math.isfinite(compute) and compute > 0):
        return True
    sign = 1.0 if analysis.direction == "higher" else -1.0
    p = np.asarray(fit.predict(np.array([compute / 1.05, compute * 1.05])), dtype=float)
    return not (np.all(np.isfinite(p)) and sign * (p[1] - p[0]) < 0)


def _what_to_do(analysis: CurveAnalysis, d: Decision) -> str:
    """The one line an inconclusive call owes its reader: what to do next."""
    return (f"inconclusive at P(pays) {d.p_pays:.2f}: keep running and look again at 2x the "
            f"compute ({2.0 * analysis.compute_last:.4g}), or pool more seeds of this run "
            "(--group-by) to narrow it")


def projected_path(analysis: CurveAnalysis, computes: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The forecast the call reports (value, lo, hi) at each of ``computes`` (the current level
    up to the last compute), so a drawn line passes through the reported forecasts; None
    without a call."""
    o, d = analysis.outlook, analysis.decision
    if o is None or d is None:
        return None
    last = analysis.compute_last
    pts = tuple(ForecastPoint(float(c), float(c), o.level, o.level, o.level) for c in computes)
    out = project(o, d, pts, last, _path_shape(analysis, [p.compute for p in pts]))
    return tuple(np.array([getattr(f, k) for f in out], dtype=float)  # type: ignore[return-value]
                 for k in ("value", "lo", "hi"))


def _path_shape(analysis: CurveAnalysis, computes: list[float]) -> Shape | None:
    """:func:`_fit_shape` with its values at ``computes`` (and at one doubling) made in one
    prediction: a drawn path asks for dozens."""
    shape, fit, c = _fit_shape(analysis), analysis.fit, analysis.compute_last
    hs = [1.0, *(math.log2(x / c) for x in computes if x > c)]
    if shape is None or fit is None or len(hs) < 3:
        return shape
    sign = 1.0 if analysis.direction == "higher" else -1.0
    p = np.asarray(fit.predict(np.array([c, *(c * 2.0**h for h in hs)])), dtype=float)
    known = {h: float(sign * (v - p[0])) for h, v in zip(hs, p[1:], strict=True)}
    return lambda h: known[h] if h in known else shape(h)


def _fit_shape(analysis: CurveAnalysis) -> Shape | None:
    """``h -> f(2^h C) - f(C)`` of the fitted laws on the larger-is-better scale."""
    fit = analysis.fit
    if fit is None:
        return None
    c = analysis.compute_last
    sign = 1.0 if analysis.direction == "higher" else -1.0

    def shape(h: float) -> float:
        p = np.asarray(fit.predict(np.array([c, c * 2.0**h])), dtype=float)
        return float(sign * (p[1] - p[0]))

    return shape


_SEED_TOKEN = re.compile(r"(?i)[-_./ ]?seed[-_=]?\d+")
"""A seed in a run's name (``ppo-seed3``, ``run_seed=1``): removed, the rest names the config."""


def sibling_key(points: pd.DataFrame, params: Mapping[str, Any] | None = None) -> Hashable | None:
    """The group a curve pools with, the seeds of one configuration: same source, experiment,
    metric and ``params.*`` except those naming a seed; without a seed parameter, the run names
    must agree once a ``seed3`` token is removed. None when nothing says the run is one seed of
    several. ``params``: the run's facts (default: the columns of ``points``)."""
    first = points.iloc[0]
    facts = params if params is not None else {c: first[c] for c in points.columns}
    named = [(str(c), v) for c, v in facts.items() if str(c).startswith("params.") and pd.notna(v)]
    kept = tuple(sorted((c, str(v)) for c, v in named if "seed" not in c.lower()))
    stem = ""
    if not any("seed" in c.lower() for c, _ in named):
        run = str(first["run"]) if "run" in points.columns else ""
        stem = _SEED_TOKEN.sub("", run)
        if stem == run:
            return None
    return (str(first["source"]), str(first["experiment"]), str(first["metric"]), kept, stem)


def pool_analyses(analyses: Sequence[CurveAnalysis], keys: Sequence[Hashable | None], settings
                  ) -> list[CurveAnalysis]:
    """Every analysis refined with the leave-one-out prior of its group (``keys``, aligned with
    ``analyses``; None: alone), under the :class:`~saturate.analysis.AnalysisSettings`."""
    outlooks = [a.outlook for a in analyses]
    priors = leave_one_out_priors(outlooks, keys, settings.decision.population)
    return [refine(a, p, settings.decision, None, settings.confidence, settings.seed)
            if p is not None else a for a, p in zip(analyses, priors, strict=True)]
