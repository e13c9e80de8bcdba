"""Recipe comparison in the ScaleRL manner (Khatri et al. 2025): per recipe (seeds pooled by
``--group-by``), the sigmoid's asymptote ``A`` and efficiency ``B`` with intervals; ``P(X beats
Y at C)`` over all pairs of independent bootstrap draws; and where the forecasts cross: the last
change of order on a log grid up to ``64x`` the larger last compute (after it the leader stays
ahead), with an interval from paired draws and the share of draws that cross at all.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings
from saturate.diagnostics.registry import (
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
from saturate.fit.domain import FORECAST_HORIZON
from saturate.results import VERDICTS, Estimate, format_estimate
from saturate.results.codec import Coded, meta
from saturate.settings.checks import resolve_at
from saturate.vocabulary.names import signed

_NAN = Estimate(math.nan, identified=False)


@dataclass(frozen=True)
class RecipeSummary(Coded):
    """One recipe on one metric: its sigmoid A and B, the averaged asymptote, where it stands."""

    label: str
    run_id: str
    n_seeds: int
    compute_last: float
    value_last: float
    A: Estimate
    B: Estimate
    asymptote: Estimate
    verdict: str
    p_pays: float | None = None


@dataclass(frozen=True)
class RecipePair(Coded):
    """X vs Y: the probability X is better at each compute, and where the forecasts cross."""

    first: str
    second: str
    prob_first_better: dict[float, float] = field(metadata=meta(encode=lambda probs: [
        {"compute": c, "prob": p} for c, p in probs.items()]))
    crossing: Estimate | None
    crossing_share: float
    leader_at_horizon: str | None

    def summary(self) -> str:
        probs = "; ".join(f"P({self.first} beats {self.second} at {c:.4g}) = {p:.2f}"
                          for c, p in self.prob_first_better.items())
        cross = (f"forecasts cross at compute {format_estimate(self.crossing)} "
                 f"({self.crossing_share:.0%} of draws cross)" if self.crossing is not None
                 else f"forecasts do not cross ({self.crossing_share:.0%} of draws do)")
        lead = f"; {self.leader_at_horizon} leads at the horizon" if self.leader_at_horizon else ""
        return f"{probs}; {cross}{lead}"


@dataclass(frozen=True)
class RecipeComparison(Coded):
    """All recipes of one metric, and every pair of them."""

    metric: str
    group_by: str | None
    recipes: tuple[RecipeSummary, ...]
    pairs: tuple[RecipePair, ...]

    def summary(self) -> str:
        lines = [f"{self.metric}: {len(self.recipes)} recipes"
                 + (f" by {self.group_by}" if self.group_by else "")]
        for r in self.recipes:
            lines.append(f"  {r.label} ({r.n_seeds} seed{'s' if r.n_seeds != 1 else ''}): "
                         f"A {format_estimate(r.A)}, B {format_estimate(r.B)}, "
                         f"last {r.value_last:.4g} at {r.compute_last:.4g} ({r.verdict}"
                         + ("" if r.p_pays is None else f", P(pays) {r.p_pays:.2f}") + ")")
        lines += [f"  {p.first} vs {p.second}: {p.summary()}" for p in self.pairs]
        return "\n".join(lines)


def prob_better(a: np.ndarray, b: np.ndarray) -> float:
    """P(A > B) over all pairs of independent draws (ties count half); larger is better."""
    a = np.sort(np.asarray(a, dtype=float)[np.isfinite(a)])
    b = np.sort(np.asarray(b, dtype=float)[np.isfinite(b)])
    if a.size == 0 or b.size == 0:
        return math.nan
    below = np.searchsorted(b, a, side="left")
    at_or_below = np.searchsorted(b, a, side="right")
    return float(np.mean((below + at_or_below) / 2.0) / b.size)


def _last_change(diff: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per row, the grid compute just after the last change of sign (NaN when none)."""
    s = np.sign(diff)
    change = (s[..., 1:] * s[..., :-1]) < 0
    any_change = change.any(axis=-1)
    last = change.shape[-1] - 1 - np.argmax(change[..., ::-1], axis=-1)
    return np.where(any_change, grid[last + 1], np.nan)


def forecast_crossing(
    f1: np.ndarray, f2: np.ndarray, s1: np.ndarray | None, s2: np.ndarray | None,
    grid: np.ndarray, confidence: float = 0.9,
) -> tuple[Estimate | None, float]:
    """Where the forecasts ``f1``/``f2`` on ``grid`` last change order; draws give the interval."""
    point = float(_last_change(np.asarray(f1) - np.asarray(f2), grid))
    share, lo, hi = 0.0, math.nan, math.nan
    if s1 is not None and s2 is not None:
        k = min(s1.shape[0], s2.shape[0])
        if k >= 2:
            cross = _last_change(s1[:k] - s2[:k], grid)
            share = float(np.mean(np.isfinite(cross)))
            if share > 0:
                q = (1.0 - confidence) / 2.0
                lo, hi = (float(v) for v in np.nanquantile(cross, [q, 1.0 - q]))
    if not math.isfinite(point):
        return None, share
    return Estimate(point, lo, hi, identified=math.isfinite(lo) and share >= 0.5), share


def _sigmoid_params(ref: CurveRef) -> tuple[Estimate, Estimate]:
    ca = ref.analysis
    for law in () if ca is None else ca.laws:
        if law.name == "sigmoid":
            return law.params.get("A", _NAN), law.params.get("B", _NAN)
    return _NAN, _NAN


def _label(ref: CurveRef) -> tuple[str, int]:
    g = ref.analysis.group if ref.analysis is not None else None
    if g and g.get("by") is not None:
        return str(g.get("value")), int(g.get("n_seeds", 1))
    return ref.run, int(g.get("n_seeds", 1)) if g else 1



def compare_recipes(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None,
    group_by: str | None = None,
) -> RecipeComparison:
    """Compare the recipes (one analysed curve each, all of the same metric)."""
    settings = settings or DiagnosticSettings()
    analysed = [(r, r.analysis) for r in refs if r.analysis is not None]
    if not analysed:
        raise ValueError("compare_recipes needs analysed curves")
    metric = analysed[0][0].metric
    direction = analysed[0][0].direction
    recipes = []
    for r, ca in analysed:
        label, n = _label(r)
        a, b = _sigmoid_params(r)
        recipes.append(RecipeSummary(label, r.run_id, n, ca.compute_last, ca.value_last, a, b,
                                     ca.asymptote, ca.verdict, ca.p_pays))
    last = max(r.compute_last for r in recipes)
    at = sorted({resolve_at(s, last, "compare_at") for s in settings.compare_at})

    fitted = [(s, r, ca.fit) for s, (r, ca) in zip(recipes, analysed, strict=True)
              if ca.fit is not None]
    def on(f: Any, x: np.ndarray) -> np.ndarray:  # a fit's forecast, larger-is-better
        return signed(np.asarray(f(x), float), direction)

    pairs = []
    for (s1, r1, fit1), (s2, r2, fit2) in itertools.combinations(fitted, 2):
        x = np.asarray(at, dtype=float)
        d1, d2 = on(fit1.predict_samples, x), on(fit2.predict_samples, x)
        probs = {c: prob_better(d1[:, i], d2[:, i]) for i, c in enumerate(at)}
        start = max(float(r1.compute[r1.compute > 0][0]), float(r2.compute[r2.compute > 0][0]))
        grid = np.geomspace(start, FORECAST_HORIZON * last, 300)
        f1, f2 = on(fit1.predict, grid), on(fit2.predict, grid)
        cross, share = forecast_crossing(f1, f2, on(fit1.predict_samples, grid),
                                         on(fit2.predict_samples, grid), grid, settings.confidence)
        lead = None if f1[-1] == f2[-1] else (s1.label if f1[-1] > f2[-1] else s2.label)
        pairs.append(RecipePair(s1.label, s2.label, probs, cross, share, lead))
    return RecipeComparison(metric, group_by, tuple(recipes), tuple(pairs))


def recipe_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None
) -> list[Diagnostic]:
    """One ``recipe`` diagnostic per metric and pair of recipes, when the runs were grouped."""
    settings = settings or DiagnosticSettings()
    per_metric: dict[tuple[str, str], list[CurveRef]] = {}
    group_by = None
    for r in refs:
        g = r.analysis.group if r.analysis is not None else None
        if g and g.get("by") is not None:
            group_by = str(g["by"])
            per_metric.setdefault((r.source, r.metric), []).append(r)
    out = []
    for (source, metric), members in per_metric.items():
        if len(members) < 2:
            continue
        comp = compare_recipes(members, settings, group_by)
        by_label = {s.label: s for s in comp.recipes}
        for p in comp.pairs:
            a, b = by_label[p.first], by_label[p.second]
            message = (
                f"{metric}: {p.first} (A {format_estimate(a.A)}, B {format_estimate(a.B)}) vs "
                f"{p.second} (A {format_estimate(b.A)}, B {format_estimate(b.B)}): {p.summary()}"
            )
            out.append(Diagnostic(
                kind="recipe", severity="info", run=f"{p.first} vs {p.second}",
                run_id=f"{a.run_id} vs {b.run_id}", source=source, metrics=(metric,),
                message=message, compute=None if p.crossing is None else p.crossing.value,
                details={"group_by": group_by, "recipes": [a.to_dict(), b.to_dict()],
                         "pair": p.to_dict()},
            ))
    return out


_RECIPE = fields(label=STR, run_id=STR, n_seeds=INT, compute_last=NUM, value_last=NUM, A=EST,
                 B=EST, asymptote=EST, verdict={"enum": list(VERDICTS)}, p_pays=NUM)
_PAIR = fields(first=STR, second=STR, prob_first_better=array(fields(compute=NUM, prob=NUM)),
               crossing=nullable(EST), crossing_share=NUM, leader_at_horizon=nullable(STR))
register(
    lambda given: recipe_diagnostics(given.refs, given.settings),
    kind("recipe", "info",
         "two recipes compared: asymptote A, efficiency B, P(beats), where their forecasts cross",
         fields(group_by=STR, recipes=array(_RECIPE, minItems=2, maxItems=2), pair=_PAIR)),
    order=50,
)
