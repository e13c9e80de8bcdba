"""The settings of the call on a curve (:class:`DecisionSettings`) and the priors it weighs
(:class:`GroupPrior` from a curve's siblings, :class:`PopulationPrior` above the groups).

Small frozen data types with no maths, so that :class:`~saturate.analysis.AnalysisSettings` can
hold them without importing the analysis (see :mod:`saturate.analysis.decision` and
:mod:`saturate.analysis.pooling` for what they mean).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from saturate.errors import SettingsError

__all__ = ["DecisionSettings", "GroupPrior", "PopulationPrior", "call_levels"]


@dataclass(frozen=True)
class GroupPrior:
    """The siblings' view of a member's relative gain per doubling (gain / the curve's range).

    ``mean`` and ``var`` are the prior mean and variance of a new member's relative gain
    (``var = tau2 + var_mean``); ``tau2`` is the spread of the true relative gains across the
    group; ``n`` the number of siblings it rests on.
    """

    mean: float
    var: float
    tau2: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        from saturate.results import jsonable  # numpy and pandas: not for the settings' import

        return jsonable(self.__dict__)

    def summary(self) -> str:
        if self.n == 0:
            return (
                f"without siblings, the population prior: curves gain {self.mean:.3g} of their "
                f"range per doubling (sd {math.sqrt(self.var):.2g})"
            )
        return (
            f"{self.n} sibling curves gain {self.mean:.3g} of their range per doubling "
            f"(sd {math.sqrt(self.var):.2g}, spread across them {math.sqrt(self.tau2):.2g})"
        )


@dataclass(frozen=True)
class PopulationPrior:
    """What learning curves in general gain per doubling relative to their observed range,
    ``N(mean, sd^2)``: the top of the hierarchy. A group's mean is shrunk toward it, and a curve
    without siblings takes it as its prior. Its values are settings, chosen on public curves."""

    mean: float
    sd: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mean) and math.isfinite(self.sd) and self.sd > 0):
            raise SettingsError(
                f"population prior: expected a finite mean and sd > 0, got ({self.mean!r}, "
                f"{self.sd!r})"
            )

    def as_prior(self) -> GroupPrior:
        """The prior of a curve without siblings."""
        v = self.sd**2
        return GroupPrior(mean=self.mean, var=v, tau2=v, n=0)


def call_levels(stop_cost: float, abstain_cost: float) -> tuple[float, float]:
    """The probability levels ``(stop_below, go_above)`` that minimise the expected loss of the
    call, with a wrong "pays" (a wasted doubling) costing 1, a wrong "does not pay" (a run
    stopped that would have paid) ``stop_cost`` and an inconclusive call ``abstain_cost``.

    With ``p`` the probability that the next doubling pays, saying "does not pay" costs
    ``p * stop_cost`` in expectation, "pays" ``1 - p`` and inconclusive ``abstain_cost``; the call
    with the least is made (Chow's rule with a reject option): "does not pay" below
    ``min(abstain_cost / stop_cost, 1 / (1 + stop_cost))``, "pays" above
    ``max(1 - abstain_cost, 1 / (1 + stop_cost))``, inconclusive between (an empty band when
    abstaining costs at least ``stop_cost / (1 + stop_cost)``: it never pays to abstain)."""
    even = 1.0 / (1.0 + stop_cost)
    return min(abstain_cost / stop_cost, even), max(1.0 - abstain_cost, even)


@dataclass(frozen=True)
class DecisionSettings:
    """How the probability that the next doubling pays becomes the call (see
    :mod:`saturate.analysis.decision`).

    ``stop_cost``: the cost of a wrong "does not pay" (a run stopped whose next doubling would
    have paid) in units of a wrong "pays" (a wasted doubling); ``abstain_cost``: the cost of an
    inconclusive call in the same units. They set the probability levels of the call
    (:func:`call_levels`, :attr:`stop_below` and :attr:`go_above`). ``calibration``: the
    intercept and slope of the logistic map from the model's probability to the reported one
    (``logit p = a + b logit p_model``; ``(0, 1)``: none). ``pool``: combine a curve with its
    siblings' prior when one is given; ``population``: the prior above the groups
    (:class:`~saturate.analysis.pooling.PopulationPrior`; None: none); ``innovation``: the
    standard deviation of what the next doubling does beyond any estimate, in units of the
    geometric mean of the curve's pace and noise (0: none).

    The defaults are what leave-one-source-out on public RL curves picks when run on all of
    them (``benchmarks/bench_accuracy.py``)."""

    stop_cost: float = 0.75
    abstain_cost: float = 1.0
    calibration: tuple[float, float] = (0.0, 1.0)
    pool: bool = True
    population: PopulationPrior | None = None
    innovation: float = 1.0

    def __post_init__(self) -> None:
        if not (isinstance(self.innovation, (int, float)) and 0.0 <= self.innovation < math.inf):
            raise SettingsError(f"innovation must be a number >= 0, got {self.innovation!r}")
        for name in ("stop_cost", "abstain_cost"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 < float(v) < math.inf):
                raise SettingsError(f"{name} must be a finite number > 0, got {v!r}")
        cal = self.calibration
        if not (isinstance(cal, tuple) and len(cal) == 2
                and all(isinstance(v, (int, float)) and math.isfinite(v) for v in cal)
                and cal[1] > 0):
            raise SettingsError(
                f"calibration must be (intercept, slope > 0), finite numbers, got {cal!r}"
            )

    @property
    def stop_below(self) -> float:
        """"Does not pay" when the probability of paying is below this (:func:`call_levels`)."""
        return call_levels(self.stop_cost, self.abstain_cost)[0]

    @property
    def go_above(self) -> float:
        """"Pays" when the probability of paying is at least this (:func:`call_levels`)."""
        return call_levels(self.stop_cost, self.abstain_cost)[1]

    def calibrated(self, p: float) -> float:
        """The reported probability of paying for the model's ``p`` (:attr:`calibration`)."""
        a, b = self.calibration
        if (a, b) == (0.0, 1.0) or not 0.0 < p < 1.0:
            return p
        z = a + b * math.log(p / (1.0 - p))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
