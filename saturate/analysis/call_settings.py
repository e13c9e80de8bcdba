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
from saturate.results import jsonable

__all__ = ["DecisionSettings", "GroupPrior", "PopulationPrior"]


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


@dataclass(frozen=True)
class DecisionSettings:
    """Probability levels of the call (see the module docstring); ``pool``: combine a curve with
    its siblings' prior when one is given; ``population``: the prior above the groups
    (:class:`~saturate.analysis.pooling.PopulationPrior`; None: none); ``innovation``: the
    standard deviation of what the next doubling does beyond any estimate, in units of the
    geometric mean of the curve's pace and noise (0: none)."""

    stop_below: float = 0.6
    go_above: float = 0.6
    pool: bool = True
    population: PopulationPrior | None = None
    innovation: float = 1.0

    def __post_init__(self) -> None:
        if not (isinstance(self.innovation, (int, float)) and 0.0 <= self.innovation < math.inf):
            raise SettingsError(f"innovation must be a number >= 0, got {self.innovation!r}")
        for name in ("stop_below", "go_above"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 < float(v) < 1.0):
                raise SettingsError(f"{name} must be a probability in (0, 1), got {v!r}")
        if self.stop_below > self.go_above:
            raise SettingsError(
                f"stop_below ({self.stop_below!r}) must not exceed go_above ({self.go_above!r})"
            )
