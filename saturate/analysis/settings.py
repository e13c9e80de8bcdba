"""How curves are judged: :class:`AnalysisSettings`, validated by :mod:`saturate.validation`.

:func:`analyze_curve` takes only the points and these small settings, so that the per-curve
analysis stays a pure function that can be shipped to another process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from saturate.analysis.call_settings import DecisionSettings
from saturate.validation import (
    check_choices,
    check_confidence,
    check_domains,
    check_forecast_points,
    check_int,
    check_strings,
    check_text,
    check_thresholds,
    gain_parts,
)

if TYPE_CHECKING:
    from saturate.fit import FitSettings


@dataclass(frozen=True)
class AnalysisSettings:
    """How curves are judged.

    ``min_gain`` is the smallest gain per doubling of compute worth paying for: metric units, or
    ``"N%"`` of the curve's observed (smoothed) range. The default ``"3%"``: a doubling of compute
    that moves the metric by less than 3% of the ground it has covered is, for RL runs, within the
    run-to-run noise of most benchmarks and rarely worth twice the spend. ``thresholds`` maps
    metric globs to their own ``min_gain``; ``domains`` maps metric globs to the ``(lo, hi)``
    their values live in, or None for none (see :mod:`saturate.vocabulary.domains`: rates and
    accuracies get ``[0, 1]`` from their name).
    ``decision``: how the probability that the next
    doubling pays becomes the call, and whether sibling curves are pooled
    (:class:`saturate.analysis.call_settings.DecisionSettings`). ``law_prior``: prior odds of the
    fitted laws, e.g. ``(("sigmoid", 32.0),)`` to follow the ScaleRL sigmoid where the data
    cannot tell the laws apart (:mod:`saturate.fit.priors`; ``()``: equal odds).
    """

    min_gain: float | str = "3%"
    confidence: float = 0.9
    forecast_at: tuple[str | float, ...] = ("2x", "4x")
    lower_is_better: tuple[str, ...] = ()
    higher_is_better: tuple[str, ...] = ()
    thresholds: dict[str, float | str] = field(default_factory=dict)
    group_by: str | None = None
    n_boot: int = 200
    seed: int = 0
    laws: tuple[str, ...] | None = None
    min_points: int = 6
    domains: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    decision: DecisionSettings = field(default_factory=DecisionSettings)
    law_prior: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        check_confidence(self.confidence, "confidence")
        gain_parts(self.min_gain, "min_gain")
        check_thresholds(self.thresholds, "thresholds")
        check_forecast_points(self.forecast_at, "forecast_at")
        check_strings(self.lower_is_better, "lower_is_better")
        check_strings(self.higher_is_better, "higher_is_better")
        if self.group_by is not None:
            check_text(self.group_by, "group_by")
        check_int(self.n_boot, "n_boot", 0)
        check_int(self.seed, "seed", 0)
        check_int(self.min_points, "min_points", 3)
        check_domains(self.domains, "domains")
        if self.laws is not None:
            from saturate.fit.laws import LAWS

            check_choices(self.laws, "laws", tuple(LAWS), at_least_one=True)

    def fit_settings(self, domain: tuple[float, float] | None = None) -> FitSettings:
        """The fitting engine's settings for these: resamples, confidence, seed, laws, the
        forecast points and one curve's ``domain``."""
        from saturate.fit import FitSettings

        laws = {} if self.laws is None else {"laws": tuple(self.laws)}
        return FitSettings(n_boot=int(self.n_boot), confidence=self.confidence,
                           seed=int(self.seed), forecast_at=tuple(self.forecast_at),
                           domain=domain, law_prior=tuple(self.law_prior), **laws)


def parse_min_gain(spec: float | str, name: str = "min_gain") -> tuple[float, bool]:
    """``(value, is_percent)`` from ``0.01``, ``"0.01"`` or ``"3%"``; a SettingsError otherwise."""
    return gain_parts(spec, name)
