"""The settings of the call on a curve (:class:`DecisionSettings`) and the priors it weighs
(:class:`GroupPrior`, :class:`PopulationPrior`): small frozen types with no maths, so that
:class:`~saturate.analysis.AnalysisSettings` can hold them without importing the analysis.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from saturate.errors import SettingsError


@dataclass(frozen=True)
class GroupPrior:
    """The siblings' view of a member's relative gain per doubling (gain / the curve's range):
    prior ``mean`` and ``var`` (``tau2 + var_mean``), ``tau2`` the spread of the true relative
    gains across the group, ``n`` the siblings it rests on."""

    mean: float
    var: float
    tau2: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        from saturate.results.codec import jsonable  # numpy: not for the settings' import

        return jsonable(self.__dict__)

    def summary(self) -> str:
        if self.n == 0:
            return (f"without siblings, the population prior: curves gain {self.mean:.3g} of "
                    f"their range per doubling (sd {math.sqrt(self.var):.2g})")
        return (f"{self.n} sibling curves gain {self.mean:.3g} of their range per doubling "
                f"(sd {math.sqrt(self.var):.2g}, spread across them {math.sqrt(self.tau2):.2g})")


@dataclass(frozen=True)
class PopulationPrior:
    """What learning curves in general gain per doubling relative to their observed range,
    ``N(mean, sd^2)``: a group's mean is shrunk toward it, a curve without siblings takes it."""

    mean: float
    sd: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mean) and math.isfinite(self.sd) and self.sd > 0):
            raise SettingsError(f"population prior: expected a finite mean and sd > 0, got "
                                f"({self.mean!r}, {self.sd!r})")

    def as_prior(self) -> GroupPrior:
        """The prior of a curve without siblings."""
        v = self.sd**2
        return GroupPrior(mean=self.mean, var=v, tau2=v, n=0)


def call_levels(stop_cost: float, abstain_cost: float) -> tuple[float, float]:
    """The probability levels ``(stop_below, go_above)`` that minimise the call's expected loss
    (Chow's rule with a reject option): a wrong "pays" costs 1, a wrong "does not pay"
    ``stop_cost``, an inconclusive call ``abstain_cost``."""
    even = 1.0 / (1.0 + stop_cost)
    return min(abstain_cost / stop_cost, even), max(1.0 - abstain_cost, even)


EVIDENCE_FEATURES: tuple[str, ...] = ("model", "fit_z", "trend_z", "recent_gain", "recent_change",
                                       "drawdown", "doublings", "noise", "prior")
"""The evidence an :class:`EvidenceMap` weighs, each scale-free and held to a bounded range
(:func:`saturate.analysis.decision.evidence_features` says what each is)."""


@dataclass(frozen=True)
class EvidenceMap:
    """The logistic map from a curve's evidence to the reported P(pays):
    ``logit p = intercept + sum(weight * feature)`` over :data:`EVIDENCE_FEATURES`.
    ``EvidenceMap()`` is the identity; the weight on ``"model"`` (the model's own logit) must be
    positive, so a model that says "more likely to pay" is never reported less likely."""

    intercept: float = 0.0
    weights: tuple[tuple[str, float], ...] = (("model", 1.0),)

    def __post_init__(self) -> None:
        names = [w[0] for w in self.weights] if isinstance(self.weights, tuple) else []
        ok = (isinstance(self.intercept, (int, float)) and math.isfinite(self.intercept)
              and isinstance(self.weights, tuple) and len(set(names)) == len(names)
              and all(isinstance(w, tuple) and len(w) == 2 and w[0] in EVIDENCE_FEATURES
                      and isinstance(w[1], (int, float)) and math.isfinite(w[1])
                      for w in self.weights)
              and dict(self.weights).get("model", 0.0) > 0)
        if not ok:
            raise SettingsError(
                f"calibration must be an intercept and (feature, weight) pairs over "
                f"{', '.join(EVIDENCE_FEATURES)} with a positive weight on 'model', got "
                f"{self.intercept!r}, {self.weights!r}")

    @property
    def identity(self) -> bool:
        """True when the map reports the model's probability unchanged."""
        return self.intercept == 0.0 and self.weights == (("model", 1.0),)

    def probability(self, p_model: float, features: dict[str, float]) -> float:
        """The reported P(pays) for the model's ``p_model`` and the curve's ``features``."""
        if self.identity or not math.isfinite(p_model):
            return p_model
        z = self.intercept + math.fsum(w * features[name] for name, w in self.weights)
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "weights": dict(self.weights)}


@dataclass(frozen=True)
class DecisionSettings:
    """How the probability that the next doubling pays becomes the call (see
    :mod:`saturate.analysis.decision`).

    ``stop_cost`` / ``abstain_cost``: the cost of a wrong "does not pay" / an inconclusive call in
    units of a wrong "pays"; they set :attr:`stop_below` and :attr:`go_above`. ``calibration``:
    the :class:`EvidenceMap` to the reported P(pays). ``pool``: use the siblings' prior;
    ``population``: the prior above the groups (None: none); ``innovation``: the sd of what the
    next doubling does beyond any estimate, in units of the geometric mean of pace and noise.
    The defaults are measured in docs/measurements.md."""

    stop_cost: float = 1.0
    abstain_cost: float = 0.4
    calibration: EvidenceMap = EvidenceMap()
    pool: bool = True
    population: PopulationPrior | None = None
    innovation: float = 2.0

    def __post_init__(self) -> None:
        if not (isinstance(self.innovation, (int, float)) and 0.0 <= self.innovation < math.inf):
            raise SettingsError(f"innovation must be a number >= 0, got {self.innovation!r}")
        for name in ("stop_cost", "abstain_cost"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 < float(v) < math.inf):
                raise SettingsError(f"{name} must be a finite number > 0, got {v!r}")
        if not isinstance(self.calibration, EvidenceMap):
            raise SettingsError(f"calibration must be an EvidenceMap, got {self.calibration!r}")

    def with_band(self, low: float, high: float) -> DecisionSettings:
        """These settings with the loss whose levels are ``(low, high)``, ``0 < low <= high < 1``
        (Chow's rule inverted: abstaining costs ``1 - high``, a wrong stop ``(1 - high) / low``)."""
        abstain = 1.0 - high
        return dataclasses.replace(self, stop_cost=abstain / low, abstain_cost=abstain)

    @property
    def stop_below(self) -> float:
        """"Does not pay" when the probability of paying is below this (:func:`call_levels`)."""
        return call_levels(self.stop_cost, self.abstain_cost)[0]

    @property
    def go_above(self) -> float:
        """"Pays" when the probability of paying is at least this (:func:`call_levels`)."""
        return call_levels(self.stop_cost, self.abstain_cost)[1]
