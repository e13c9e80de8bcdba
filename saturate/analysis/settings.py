"""How curves are judged: :class:`AnalysisSettings`, the analysis's view of
:class:`~saturate.settings.Settings` (:meth:`AnalysisSettings.from_settings`).

Small and picklable, so the per-curve analysis stays a pure function that can be shipped to
another process. The values were checked when the Settings were made, not again here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from saturate.decide.settings import DecisionSettings
from saturate.settings import Settings
from saturate.settings.checks import check_int, gain_parts
from saturate.settings.fields import OPTIONS_BY_NAME

if TYPE_CHECKING:
    from saturate.fit import FitSettings
    from saturate.fit.model import Model

_DEFAULTS = Settings()


@dataclass(frozen=True)
class AnalysisSettings:
    """How curves are judged.

    ``min_gain``: the smallest gain per doubling worth paying for, in metric units or ``"N%"`` of
    the curve's smoothed observed range (default ``"3%"``: less is, for RL runs, within the
    run-to-run noise). ``thresholds`` and ``domains`` map metric globs to their own ``min_gain``
    and ``(lo, hi)`` (:mod:`saturate.vocabulary.domains`). ``decision``: how P(pays) becomes the
    call (:class:`~saturate.decide.settings.DecisionSettings`). ``law_prior``: prior odds
    of the fitted laws (:mod:`saturate.fit.settings`; ``()``: equal odds).
    """

    min_gain: float | str = _DEFAULTS.min_gain
    confidence: float = _DEFAULTS.confidence
    forecast_at: tuple[str | float, ...] = _DEFAULTS.forecast_at
    lower_is_better: tuple[str, ...] = ()
    higher_is_better: tuple[str, ...] = ()
    thresholds: dict[str, float | str] = field(default_factory=dict)
    group_by: str | None = None
    n_boot: int = _DEFAULTS.n_boot
    seed: int = _DEFAULTS.seed
    laws: tuple[str | Model, ...] | None = None  # built-in law names and users' Model laws
    min_points: int = 6
    domains: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    decision: DecisionSettings = field(default_factory=DecisionSettings)
    law_prior: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        check_int(self.min_points, "min_points", 3)  # not a setting: set here only

    @classmethod
    def checked(cls, **given: Any) -> AnalysisSettings:
        """Settings given by hand rather than from :class:`~saturate.settings.Settings`: each
        value of an option checked and converted by its declaration, as the settings would."""
        return cls(**{k: v if v is None or k not in OPTIONS_BY_NAME
                      else OPTIONS_BY_NAME[k].checked(v, k) for k, v in given.items()})

    @classmethod
    def from_settings(cls, s: Settings) -> AnalysisSettings:
        """How each curve is judged under the settings ``s`` (already checked)."""
        return cls(
            min_gain=s.min_gain, confidence=s.confidence, forecast_at=s.forecast_at,
            lower_is_better=s.lower_is_better, higher_is_better=s.higher_is_better,
            thresholds=dict(s.thresholds), group_by=None if _no_pooling(s) else s.group_by,
            n_boot=s.n_boot, seed=s.seed, laws=s.laws, domains=dict(s.domains),
            decision=dataclasses.replace(
                DecisionSettings() if s.band is None else DecisionSettings().with_band(*s.band),
                pool=not _no_pooling(s)),
        )

    def fit_settings(self, domain: tuple[float, float] | None = None) -> FitSettings:
        """The fitting engine's settings for these: resamples, confidence, seed, laws, the
        forecast points and one curve's ``domain``."""
        from saturate.fit import FitSettings

        laws = FitSettings.laws if self.laws is None else tuple(self.laws)
        return FitSettings(n_boot=int(self.n_boot), confidence=self.confidence,
                           seed=int(self.seed), forecast_at=tuple(self.forecast_at),
                           domain=domain, law_prior=tuple(self.law_prior), laws=laws)


def _no_pooling(s: Settings) -> bool:
    """``--group-by none``: neither averaged nor pooled."""
    return s.group_by is not None and s.group_by.lower() == "none"


def parse_min_gain(spec: float | str, name: str = "min_gain") -> tuple[float, bool]:
    """``(value, is_percent)`` from ``0.01``, ``"0.01"`` or ``"3%"``; a SettingsError otherwise."""
    return gain_parts(spec, name)


def settings_used(s: Settings, compute_name: str) -> dict[str, Any]:
    """The ``settings`` block of a report: the x axis, the analysis settings, and the selection,
    diagnostics options and settings file when they are set."""
    used: dict[str, Any] = {"compute": compute_name,
                            **dataclasses.asdict(AnalysisSettings.from_settings(s))}
    if s.metric:
        used["metric"] = list(s.metric)
    for key in ("objective", "diagnostic"):
        if getattr(s, key):
            used[key] = list(getattr(s, key))
    if s.pairs:
        used["pairs"] = [list(p) for p in s.pairs]
    if s.targets:
        used["targets"] = dict(s.targets)
    for key in ("gpu_hour_cost", "pretrain_compute", "budget", "gpu_hours", "gpus"):
        if getattr(s, key) is not None:
            used[key] = getattr(s, key)
    if s.suite is not None:
        used["group_by"] = None  # the curves are not pooled: group_by names the suite's groups
        used["suite"] = {k: v for k, v in (s.suite_options() or {}).items() if k != "metric"}
    if s.config is not None:
        used["config"] = s.config
    return used
