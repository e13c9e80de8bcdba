"""Training instability read from the health metrics of one run.

* entropy collapse: the end level at most ``entropy_collapse_fraction`` of the start (Cui et al.
  2025: such runs stop improving); KL blow-up: the smoothed KL multiplies by ``kl_blowup_factor``
  in one doubling and stays up (a healthy KL about doubles); length runaway: the length at least
  doubles, still grows, and the reward stalls or the growth accelerates (convex in compute);
  gradient conflict: sibling task metrics significantly gain and lose at once.
"""


from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from saturate.diagnostics.base import (
    CurveRef,
    Diagnostic,
    DiagnosticSettings,
    Severity,
    by_run,
    edge_level,
    recent_trend,
    threshold,
)
from saturate.diagnostics.registry import BOOL, EST, NUM, STR, fields, kind, mapping, register
from saturate.measure.trend import hac_slope, recent_window, trend_test
from saturate.results import PASSING_VERDICTS, Trend, format_estimate
from saturate.vocabulary.roles import (
    is_entropy,
    is_kl,
    is_length,
    is_reward,
    reward_rank,
    subtask_families,
)

MIN_POINTS = 12


def _positive(y: np.ndarray) -> np.ndarray:
    """Health metrics logged as negatives (an entropy bonus as a loss) read as magnitudes."""
    return -y if np.median(y) < 0 else y


def _smooth(y: np.ndarray) -> np.ndarray:
    """Rolling median over a 25th of the points (at least 3): it removes single spikes of a health
    signal and keeps a jump sharp, where the wider rolling mean of
    :func:`~saturate.measure.quantities.smoothing_window` would smear it."""
    w = max(3, y.size // 25)
    return pd.Series(y).rolling(w, center=True, min_periods=1).median().to_numpy(float)


def _diag(ref: CurveRef, kind: str, severity: Severity, message: str, compute: float | None,
          details: dict, metrics: tuple[str, ...] | None = None) -> Diagnostic:
    return Diagnostic(kind=kind, severity=severity, run=ref.run, run_id=ref.run_id,
                      source=ref.source, metrics=metrics or (ref.metric,), message=message,
                      compute=compute, details=details)


def entropy_collapse(ref: CurveRef, settings: DiagnosticSettings) -> Diagnostic | None:
    """The entropy-collapse diagnostic of one entropy curve, or ``None``."""
    y = _positive(ref.value)
    if y.size < MIN_POINTS:
        return None
    start, end = edge_level(y, 0.05, 3, end=False), edge_level(y, 0.1, 3, end=True)
    if not start > 0:
        return None
    ratio = end / start
    frac = settings.entropy_collapse_fraction
    if ratio > frac:
        return None
    below = np.nonzero(_smooth(y) <= frac * start)[0]
    at = float(ref.compute[below[0]]) if below.size else float(ref.compute[-1])
    message = (f"entropy collapse: {ref.metric} fell from {start:.3g} to {end:.3g} "
               f"({ratio:.0%} of its start), below {frac:.0%} of it from compute {at:.4g}; "
               "the policy has stopped exploring")
    return _diag(ref, "entropy_collapse", "error" if ratio <= frac / 3 else "warning", message,
                 at, {"start": start, "end": end, "ratio": ratio, "fraction": frac})


def kl_blowup(ref: CurveRef, settings: DiagnosticSettings) -> Diagnostic | None:
    """The KL blow-up diagnostic of one KL curve, or ``None``."""
    c, y = ref.compute, np.abs(ref.value)
    n = y.size
    if n < MIN_POINTS or not (c > 0).all():
        return None
    factor = settings.kl_blowup_factor
    floor = 1e-3 * float(np.max(y)) + 1e-12
    sm = _smooth(y)
    for j in range(max(n // 4, 4), n):
        if c[j] / 2.0 < c[0]:
            continue
        base = max(float(np.interp(c[j] / 2.0, c, sm)), floor)
        if sm[j] > factor * base:
            end = edge_level(y, 0.1, 3, end=True)
            if end < factor / 2 * base:
                return None  # a spike it came back from
            message = (f"KL blow-up: {ref.metric} multiplied by {sm[j] / base:.3g} over one "
                       f"doubling of compute (from {base:.3g} at {c[j] / 2:.4g} to {sm[j]:.3g} at "
                       f"{c[j]:.4g}; more than {factor:g}x) and ends at {end:.3g}")
            return _diag(ref, "kl_blowup", "error" if end >= factor * base else "warning",
                         message, float(c[j]),
                         {"base": base, "jump_to": float(sm[j]), "end": end, "factor": factor})
    return None



def _log_trend(c: np.ndarray, y: np.ndarray, conf: float) -> Trend | None:
    pos = (c > 0) & (y > 0)
    if pos.sum() < 6:
        return None
    return trend_test(c[pos], np.log(y[pos]), confidence=conf, min_points=int(pos.sum()))


def _linear_slope(c: np.ndarray, y: np.ndarray, conf: float) -> tuple[float, float, float]:
    """Slope per unit of compute with a Newey-West interval: (value, lo, hi)."""
    if c.size < 6 or np.ptp(c) == 0:
        return math.nan, math.nan, math.nan
    return hac_slope(c, y, conf)


def length_runaway(
    ref: CurveRef, reward: CurveRef | None, settings: DiagnosticSettings
) -> Diagnostic | None:
    """The length-runaway diagnostic of one response-length curve, or ``None``."""
    c, y = ref.compute, _positive(ref.value)
    if y.size < MIN_POINTS:
        return None
    start, end = edge_level(y, 0.1, 3, end=False), edge_level(y, 0.1, 3, end=True)
    if not (start > 0 and end / start >= settings.length_runaway_factor):
        return None
    conf = settings.confidence
    recent = recent_window(c, 8)
    now = _log_trend(c[recent], y[recent], conf)
    if now is None or not now.slope_per_doubling.lo > 0:
        return None
    # Accelerating: more tokens per unit of compute now than before (convex in compute), which
    # a steady linear growth is not, however it looks on a log-compute axis.
    before = _linear_slope(c[~recent], y[~recent], conf)
    after = _linear_slope(c[recent], y[recent], conf)
    accelerating = math.isfinite(before[2]) and after[1] > before[2] and after[0] > 0
    reward_stalled = falls = False
    if reward is not None:
        rt = recent_trend(reward, conf)
        if rt is not None:
            reward_stalled = not rt.slope_per_doubling.lo > threshold(reward, settings)
            falls = rt.slope_per_doubling.hi < 0
        if reward.analysis is not None:
            reward_stalled = reward_stalled or reward.analysis.verdict not in PASSING_VERDICTS
    if not (accelerating or reward_stalled):
        return None
    why = []
    if accelerating:
        why.append(f"growth is accelerating ({after[0]:.3g} [{after[1]:.3g}, {after[2]:.3g}] per "
                   f"unit of compute now vs {before[0]:.3g} [{before[1]:.3g}, {before[2]:.3g}] "
                   "before)")
    if reward_stalled and reward is not None:
        why.append(f"{reward.metric} has stopped scaling" + (" and falls" if falls else ""))
    message = (f"length runaway: {ref.metric} grew {end / start:.2g}x ({start:.4g} -> {end:.4g}) "
               "and still grows; " + "; ".join(why))
    metrics = (ref.metric,) if reward is None else (ref.metric, reward.metric)
    return _diag(ref, "length_runaway", "error" if falls else "warning", message,
                 now.compute_from,
                 {"start": start, "end": end, "ratio": end / start, "accelerating": accelerating,
                  "reward_stalled": reward_stalled,
                  "log_growth_per_doubling": now.slope_per_doubling.to_dict()},
                 metrics)


def gradient_conflict(
    curves: dict[str, CurveRef], settings: DiagnosticSettings
) -> list[Diagnostic]:
    """Task metrics of one run that move in opposite directions, one diagnostic per family."""
    out = []
    for family, members in subtask_families(list(curves)).items():
        up, down = [], []
        for _, metric in members:
            ref = curves[metric]
            tr = recent_trend(ref, settings.confidence)
            if tr is None:
                continue
            s, t = tr.slope_per_doubling, threshold(ref, settings)
            if s.lo > t:
                up.append((ref, tr))
            elif s.hi < -t:
                down.append((ref, tr))
        if not (up and down):
            continue
        first = up[0][0]
        since = max(tr.compute_from for _, tr in down)
        def slope(t: Trend) -> str:
            return format_estimate(t.slope_per_doubling, missing=None, unidentified="")

        gains = ", ".join(f"{r.metric} gains {slope(t)}" for r, t in up)
        losses = ", ".join(f"{r.metric} loses {slope(t)}" for r, t in down)
        message = (f"{family}: tasks move in opposite directions: {gains} per doubling while "
                   f"{losses} (recent stretch from compute {since:.4g})")
        out.append(_diag(
            first, "gradient_conflict", "warning", message, since,
            {"family": family,
             "improving": {r.metric: t.slope_per_doubling.to_dict() for r, t in up},
             "degrading": {r.metric: t.slope_per_doubling.to_dict() for r, t in down}},
            tuple(r.metric for r, _ in up + down),
        ))
    return out


def instability_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None
) -> list[Diagnostic]:
    """Entropy collapse, KL blow-up, length runaway and gradient conflict for every run."""
    settings = settings or DiagnosticSettings()
    out: list[Diagnostic] = []
    for curves in by_run(refs).values():
        rewards = sorted((m for m in curves if is_reward(m)), key=reward_rank)
        reward = curves[rewards[0]] if rewards else None
        for metric, ref in curves.items():
            d = None
            if is_entropy(metric):
                d = entropy_collapse(ref, settings)
            elif is_kl(metric):
                d = kl_blowup(ref, settings)
            elif is_length(metric):
                d = length_runaway(ref, reward, settings)
            if d is not None:
                out.append(d)
        out += gradient_conflict(curves, settings)
    return out


register(
    lambda given: instability_diagnostics(given.refs, given.settings),
    kind("entropy_collapse", ("warning", "error"),
         "the policy entropy fell to a small share of its start: the policy stopped exploring",
         fields(start=NUM, end=NUM, ratio=NUM, fraction=NUM)),
    kind("kl_blowup", ("warning", "error"),
         "the KL to the reference multiplied within one doubling of compute and stayed up",
         fields(base=NUM, jump_to=NUM, end=NUM, factor=NUM)),
    kind("length_runaway", ("warning", "error"),
         "the response length keeps growing while the reward stalls, or ever faster",
         fields(start=NUM, end=NUM, ratio=NUM, accelerating=BOOL, reward_stalled=BOOL,
                log_growth_per_doubling=EST)),
    kind("gradient_conflict", "warning",
         "task metrics that should move together move in opposite directions",
         fields(family=STR, improving=mapping(EST), degrading=mapping(EST))),
    order=40,
)
