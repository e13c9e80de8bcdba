"""pass@1 vs pass@k: "sharpening", where RL raises pass@1 but not what the model can solve at all
(Yue et al. 2025, "Does reinforcement learning really incentivize reasoning capacity...").

Per family of ``...pass@<k>...`` metrics, ``delta_k`` is the end level (median of the last 10%)
minus the first logged value, with a standard error from the point-to-point noise. Flagged when
pass@1 rose significantly and pass@k at the largest k gained less than a quarter of that and not
significantly more than zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings, by_run, edge_level
from saturate.diagnostics.registry import (
    BOOL,
    EST,
    INT,
    NUM,
    STR,
    array,
    fields,
    kind,
    nullable,
    register,
)
from saturate.measure.trend import noise_sd
from saturate.results import Estimate
from saturate.results.codec import Coded
from saturate.vocabulary.roles import pass_at_k

SHARE_OF_PASS1 = 0.25


@dataclass(frozen=True)
class PassKChange(Coded):
    """pass@k at the first checkpoint and at the end, and the change with its interval."""

    k: int
    metric: str
    first: float
    last: float
    delta: Estimate


def change_from_start(ref: CurveRef, k: int, confidence: float = 0.9) -> PassKChange | None:
    """``delta_k`` of one curve (larger-is-better scale) with a normal interval."""
    y = ref.signed
    if y.size < 4:
        return None
    m = min(y.size, max(3, math.ceil(0.1 * y.size)))
    first, last = float(y[0]), edge_level(y, 0.1, 3, end=True)
    sd = noise_sd(y)
    se = sd * math.sqrt(1.0 + 1.0 / m) if math.isfinite(sd) else math.nan
    z = float(ndtri(0.5 + confidence / 2.0))
    d = last - first
    est = Estimate(d, d - z * se, d + z * se, identified=math.isfinite(se))
    return PassKChange(k, ref.metric, float(ref.value[0]), float(np.median(ref.value[-m:])), est)


def crossover_k(changes: Sequence[PassKChange]) -> tuple[int | None, float | None]:
    """(smallest logged k whose change is below zero, the k where it crosses zero interpolated
    linearly in log2 k from the k before it)."""
    ch = sorted(changes, key=lambda c: c.k)
    for i, c in enumerate(ch):
        if c.delta.value < 0:
            if i == 0:
                return c.k, float(c.k)
            p = ch[i - 1]
            x0, x1 = math.log2(p.k), math.log2(c.k)
            d0, d1 = p.delta.value, c.delta.value
            x = x0 + (x1 - x0) * d0 / (d0 - d1) if d0 != d1 else x1
            return c.k, float(2.0**x)
    return None, None


def passk_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None
) -> list[Diagnostic]:
    """Sharpening diagnostics for every pass@k family of every run."""
    settings = settings or DiagnosticSettings()
    out = []
    for curves in by_run(refs).values():
        families: dict[str, dict[int, CurveRef]] = {}
        for metric, ref in curves.items():
            parsed = pass_at_k(metric)
            if parsed is not None:
                families.setdefault(parsed[0], {})[parsed[1]] = ref
        for family, members in families.items():
            if len(members) < 2:
                continue
            d = _family(family, members, settings)
            if d is not None:
                out.append(d)
    return out


def _family(
    family: str, members: dict[int, CurveRef], settings: DiagnosticSettings
) -> Diagnostic | None:
    changes = [c for k, ref in sorted(members.items())
               if (c := change_from_start(ref, k, settings.confidence)) is not None]
    if len(changes) < 2:
        return None
    low, high = changes[0], changes[-1]
    if not (low.delta.identified and low.delta.lo > 0):
        return None
    if not (high.delta.value < SHARE_OF_PASS1 * low.delta.value and high.delta.lo < 0):
        return None
    k_at, k_interp = crossover_k(changes)
    ref = members[low.k]
    falls = high.delta.hi < 0
    behind = (f"; it falls behind its first checkpoint from pass@{k_at} (about k={k_interp:.3g})"
              if k_at is not None else "; no logged k falls behind the first checkpoint")
    message = (f"sharpening: pass@{low.k} rose by {low.delta.value:.3g} "
               f"({low.first:.3g} -> {low.last:.3g}) while pass@{high.k} changed by "
               f"{high.delta.value:.3g} ({high.first:.3g} -> {high.last:.3g}){behind}. RL is "
               "concentrating on problems the model could already solve")
    return Diagnostic(
        kind="sharpening", severity="error" if falls else "warning", run=ref.run,
        run_id=ref.run_id, source=ref.source, metrics=tuple(c.metric for c in changes),
        message=message, compute=min(float(members[c.k].compute[0]) for c in changes),
        details={"family": family, "changes": [c.to_dict() for c in changes],
                 "crossover_k": k_at, "crossover_k_interpolated": k_interp,
                 "pass_k_falls": falls},
    )


register(
    lambda given: passk_diagnostics(given.refs, given.settings),
    kind("sharpening", ("warning", "error"),
         "pass@1 rises while pass@k at the largest k does not (error: it falls)",
         fields(family=STR,
                changes=array(fields(k=INT, metric=STR, first=NUM, last=NUM, delta=EST)),
                crossover_k=nullable(INT), crossover_k_interpolated=NUM, pass_k_falls=BOOL)),
    order=20,
)
