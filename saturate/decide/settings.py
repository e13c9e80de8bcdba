"""How a curve's probability of paying becomes its call (:class:`DecisionSettings`), and the prior
its siblings give it (:class:`GroupPrior`): small frozen types with no maths, so that
:class:`~saturate.analysis.AnalysisSettings` can hold them without importing the decision.

The defaults are what leave-one-source-out on public RL curves picks
(``benchmarks/bench_accuracy.py``; docs/measurements.md has the figures).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from saturate.errors import SettingsError
from saturate.results.codec import Coded


@dataclass(frozen=True)
class GroupPrior(Coded):
    """What a curve's siblings (the other seeds of its configuration) say about its gain per
    doubling, in units of what each curve's threshold is a share of (its observed range, as a
    rule): ``mean`` and ``var`` of the prior
    (``tau2 + var_mean``), ``tau2`` the spread of the true gains across the group, ``n`` the
    siblings it rests on and ``runs`` their names."""

    mean: float
    var: float
    tau2: float
    n: int
    runs: tuple[str, ...] = ()


def call_levels(stop_cost: float, abstain_cost: float) -> tuple[float, float]:
    """The levels ``(stop_below, go_above)`` of P(pays) that minimise the call's expected loss
    (Chow's rule with a reject option): a wrong "pays" costs 1, a wrong "does not pay"
    ``stop_cost``, an inconclusive call ``abstain_cost``."""
    even = 1.0 / (1.0 + stop_cost)
    return min(abstain_cost / stop_cost, even), max(1.0 - abstain_cost, even)


@dataclass(frozen=True)
class DecisionSettings:
    """How P(pays) is made and becomes the call (:mod:`saturate.decide.decision`).

    ``stop_cost`` / ``abstain_cost``: the cost of a wrong "does not pay" and of an inconclusive
    call, in units of a wrong "pays"; they set :attr:`stop_below` and :attr:`go_above`.
    ``innovation``: what a doubling does beyond any estimate, before the curve's own past is
    seen, as a multiple of its current point-to-point noise; ``history``: how many earlier
    doublings of evidence that multiple counts as (the curve's own backtest outweighs it as it
    grows). ``pool``: lean on the siblings' prior; ``heterogeneity``: the z beyond which a curve
    that disagrees with its siblings keeps its own evidence. ``lean``: the mean of what a doubling
    does beyond any estimate, in units of its spread (RL curves take off more often than they
    fall)."""

    stop_cost: float = 1.0
    abstain_cost: float = 0.45
    innovation: float = 2.0
    history: float = 1.0
    pool: bool = True
    heterogeneity: float = 2.576
    lean: float = 0.0

    def __post_init__(self) -> None:
        for name in ("stop_cost", "abstain_cost", "innovation", "history", "heterogeneity"):
            v = getattr(self, name)
            low_ok = float(v) >= 0.0 if name == "innovation" else float(v) > 0.0
            if not (isinstance(v, (int, float)) and low_ok and math.isfinite(float(v))):
                raise SettingsError(f"{name} must be a finite number > 0, got {v!r}")
        if not (isinstance(self.lean, (int, float)) and math.isfinite(float(self.lean))):
            raise SettingsError(f"lean must be a finite number, got {self.lean!r}")

    def with_band(self, low: float, high: float) -> DecisionSettings:
        """These settings with the loss whose levels are ``(low, high)``, ``0 < low <= high < 1``
        (Chow's rule inverted: abstaining costs ``1 - high``, a wrong stop ``(1 - high) / low``)."""
        abstain = 1.0 - high
        return dataclasses.replace(self, stop_cost=abstain / low, abstain_cost=abstain)

    @property
    def stop_below(self) -> float:
        """"Does not pay" when P(pays) is below this (:func:`call_levels`)."""
        return call_levels(self.stop_cost, self.abstain_cost)[0]

    @property
    def go_above(self) -> float:
        """"Pays" when P(pays) is at least this (:func:`call_levels`)."""
        return call_levels(self.stop_cost, self.abstain_cost)[1]
