"""The invariants of one coherent story per curve (issue 13), as checks on a :class:`CurveAnalysis`.

Each check returns ``""`` when the curve keeps the invariant and a short reason when it breaks
it, so a test (or ``benchmarks/check_coherence.py`` over the shared real curves) can name every
curve that breaks one. Used on generated curves (``tests/test_properties.py``), on sample_runs
and the vendored real curves (``tests/test_coherence_real.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from saturate.decide import DecisionSettings
from saturate.decide.decision import stage_of
from saturate.measure.constants import KNEE_ROI
from saturate.measure.quantities import roi_stage
from saturate.results import CurveAnalysis, Estimate

VERDICTS = ("scaling", "slowing", "saturated", "regressing", "inconclusive")
Check = Callable[[CurveAnalysis], str]


def inside(e: Estimate | None) -> bool:
    """The estimate lies in its own interval (an interval that is not finite holds anything)."""
    if e is None or not (math.isfinite(e.lo) and math.isfinite(e.hi)):
        return True
    tol = 1e-9 * max(abs(e.value), abs(e.lo), abs(e.hi))
    return e.lo - tol <= e.value <= e.hi + tol


def estimates_inside_intervals(c: CurveAnalysis) -> str:
    named = {"gain": c.gain_per_doubling, "asymptote": c.asymptote, "headroom": c.headroom,
             "stop point": c.stop_point}
    named |= {f"forecast {f.at}": Estimate(f.value, f.lo, f.hi) for f in c.forecast}
    named |= {f"{law.name}.{p}": e for law in c.laws for p, e in law.params.items()}
    return ", ".join(f"{k} {e}" for k, e in named.items() if not inside(e))


def domain_holds(c: CurveAnalysis) -> str:
    """Forecasts, bands (to 64x the last compute), fitted values and the asymptote stay in the
    metric's domain."""
    if c.domain is None:
        return ""
    lo, hi = c.domain
    values = [("asymptote", x) for x in (c.asymptote.value, c.asymptote.lo, c.asymptote.hi)]
    values += [(f"forecast {f.at}", x) for f in c.forecast for x in (f.value, f.lo, f.hi)]
    if c.fit is not None:
        first = c.compute_first if c.compute_first > 0 else c.compute_last / 1e3
        grid = np.geomspace(first, 64 * c.compute_last, 50)
        band_lo, band_hi = c.fit.interval(grid)
        values += [("band", x) for x in (*band_lo, *band_hi, *c.fit.predict(grid))]
    return ", ".join(f"{k} {x:.4g}" for k, x in values if math.isfinite(x) and not lo <= x <= hi)


def verdict_follows_the_rule(c: CurveAnalysis) -> str:
    """README: words never stronger than, nor against, the numbers: a gain interval above the
    threshold is never called "does not pay" (saturated, regressing), one below it never "pays"
    (scaling, slowing); a curve that pays is scaling while its gain per doubling holds (ROI, the
    next doubling's gain over the last one's, >= 0.8, or a gain after a flat doubling) and
    slowing once it shrinks."""
    g, t = c.gain_per_doubling, c.threshold
    if not (math.isfinite(g.lo) and math.isfinite(g.hi)):
        return ""
    if g.lo > t and c.verdict in ("saturated", "regressing"):
        return f"gain {g} > {t:.3g}: {c.verdict}"
    if g.hi < t and c.verdict in ("scaling", "slowing"):
        return f"gain {g} < {t:.3g} but {c.verdict}"
    if c.verdict in ("scaling", "slowing") and c.evidence is not None:
        holds = (c.roi >= KNEE_ROI) if math.isfinite(c.roi) else not c.evidence.last_gain > 0
        want = "scaling" if holds else "slowing"
        return "" if c.verdict == want else f"gain {g} > {t:.3g}, ROI {c.roi:.3g}: {c.verdict}"
    return ""


def regressing_only_when_falling(c: CurveAnalysis) -> str:
    """``regressing`` says the metric got worse: only beside a falling gain estimate or a
    collapse (a level that fell and has not recovered)."""
    g = c.gain_per_doubling.value
    if c.verdict != "regressing" or g < 0 or c.collapse is not None:
        return ""
    return f"regressing beside a gain of {g:.4g} and no collapse"


def stage_follows_the_verdict(c: CurveAnalysis) -> str:
    """One vocabulary: the ROI stage tells the verdict's story (``decide.decision.stage_of``)."""
    if c.decision is None:
        return ""
    want = stage_of(c.verdict, c.roi)
    return "" if c.roi_stage == want else f"stage {c.roi_stage} beside {c.verdict} (want {want})"


def knee_and_stop_where_the_fit_rises(c: CurveAnalysis) -> str:
    """A knee or a stop point marks shrinking returns on a curve that still rises there, and
    a curve that regresses has neither."""
    if c.decision is None:
        return ""
    if c.verdict == "regressing" and (c.knee is not None or c.stop_point is not None):
        return "a knee or stop point on a regressing curve"
    if c.fit is None:
        return ""
    sign = 1.0 if c.direction == "higher" else -1.0
    out = []
    for name, at in (("knee", c.knee), ("stop point", getattr(c.stop_point, "value", None))):
        if at is None or not (math.isfinite(at) and at > 0):
            continue
        p = np.asarray(c.fit.predict(np.array([at / 1.05, at * 1.05])), dtype=float)
        if np.all(np.isfinite(p)) and sign * (p[1] - p[0]) < 0:
            out.append(f"{name} at {at:.4g} where the fit falls")
    return ", ".join(out)


def forecasts_follow_the_call(c: CurveAnalysis) -> str:
    """A curve that pays is never forecast below its current level."""
    o = c.evidence
    if o is None or c.verdict not in ("scaling", "slowing"):
        return ""
    sign = 1.0 if c.direction == "higher" else -1.0
    low = [f.at for f in c.forecast
           if f.compute > c.compute_last and sign * (f.value - o.level) < -1e-12 * abs(o.level)]
    return f"pays, but forecast below the level {o.level:.4g} at {', '.join(low)}" if low else ""


def verdict_follows_the_call(c: CurveAnalysis) -> str:
    """README: "does not pay" (saturated, regressing) below the lower level of the stated loss,
    "pays" (scaling, slowing) from the upper one, inconclusive between (the default levels: the
    checks run on default settings), except that an unrecovered collapse tips an open call that
    leans "does not pay" (P < 1/2) to it."""
    d = c.decision
    if d is None or not math.isfinite(d.p_pays):
        return ""
    levels = DecisionSettings()
    lo, hi = levels.stop_below, levels.go_above
    if c.verdict == "inconclusive":
        ok = lo <= d.p_pays < hi and not (c.collapse is not None and d.p_pays < 0.5)
    elif c.verdict in ("scaling", "slowing"):
        ok = d.p_pays >= hi
    else:
        ok = d.p_pays < lo or (c.collapse is not None and d.p_pays < 0.5)
    return "" if ok else f"p={d.p_pays:.3f}, levels {lo:.3f}/{hi:.3f}: {c.verdict}"


def stop_point_agrees(c: CurveAnalysis) -> str:
    """A stop point before the last compute goes with a verdict that no longer pays, or a reason
    that says why the curve still does."""
    s = c.stop_point
    if s is None or s.value >= c.compute_last or not c.passes:
        return ""
    if any(r.startswith("stop point:") for r in c.reasons):
        return ""
    return f"{c.verdict} with a stop point at {s.value:.4g} < {c.compute_last:.4g}"


def knee_after_initial_stage(c: CurveAnalysis) -> str:
    if c.knee is None:
        return ""
    if c.roi_stage in ("initial", "transition") or not c.knee <= c.compute_last * (1 + 1e-9):
        return f"knee {c.knee:.4g} on a curve in stage {c.roi_stage} (ROI {c.roi:.3g})"
    return ""


def stage_is_no_verdict_word(c: CurveAnalysis) -> str:
    return f"stage {c.roi_stage!r}" if c.roi_stage[:5] in {v[:5] for v in VERDICTS} else ""


def gain_is_forecast_difference(c: CurveAnalysis) -> str:
    """The gain per doubling equals forecast(2C) - forecast(C) (signed by the direction) when
    both forecasts are reported."""
    at = {f.at: f.value for f in c.forecast}
    if c.fit is None or not {"1x", "2x"} <= set(at):
        return ""
    sign = -1.0 if c.direction == "lower" else 1.0
    diff = sign * (at["2x"] - at["1x"])
    g = c.gain_per_doubling.value
    if math.isclose(g, diff, rel_tol=1e-9, abs_tol=1e-12 * max(abs(at["1x"]), 1e-300)):
        return ""
    return f"gain {g:.6g} vs forecast(2C) - forecast(C) = {diff:.6g}"


CHECKS: dict[str, Check] = {
    "estimate inside its interval": estimates_inside_intervals,
    "inside the metric's domain": domain_holds,
    "verdict follows the README rule": verdict_follows_the_rule,
    "verdict follows the call's levels": verdict_follows_the_call,
    "stop point agrees with the verdict": stop_point_agrees,
    "knee after the initial stage": knee_after_initial_stage,
    "stage names are no verdict words": stage_is_no_verdict_word,
    "gain = forecast(2C) - forecast(C)": gain_is_forecast_difference,
    "regressing only when the gain falls": regressing_only_when_falling,
    "the ROI stage follows the verdict": stage_follows_the_verdict,
    "knee and stop point where the fit rises": knee_and_stop_where_the_fit_rises,
    "a curve that pays is not forecast to fall": forecasts_follow_the_call,
}


def broken(curves: dict[str, CurveAnalysis], check: Check) -> list[str]:
    """``"<key>: <why>"`` for every curve that breaks ``check``."""
    return [f"{key}: {why}" for key, c in curves.items() if (why := check(c))]


def all_stage_names() -> set[str]:
    """Every ROI stage name the analysis can print."""
    return {roi_stage(r) for r in (-1.0, 0.0, 0.1, 0.5, 1.0, 2.0, math.nan)}
