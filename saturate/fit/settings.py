"""How curves are fitted: :class:`FitSettings`. Values that come from
:class:`~saturate.settings.Settings` were checked there; the fit's own tuning is checked here."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from saturate.errors import SettingsError
from saturate.fit.laws import LAWS
from saturate.fit.model import Model
from saturate.fit.solver import LOSSES
from saturate.settings import Settings
from saturate.settings.checks import check_choice, check_domain, check_int, check_number
from saturate.settings.fields import OPTIONS_BY_NAME

DEFAULT_LAW_PRIOR: tuple[tuple[str, float], ...] = ()
"""Prior odds of each law against a law not listed (odds 1)."""


def check_law_prior(prior: tuple[tuple[str, float], ...] | Mapping[str, float],
                    known: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """The prior as ``((law, odds), ...)``; a SettingsError naming the bad entry otherwise."""
    items = tuple(prior.items()) if isinstance(prior, Mapping) else tuple(prior)
    out = []
    for item in items:
        try:
            name, odds = item
            odds = float(odds)
        except (TypeError, ValueError):
            raise SettingsError(f"law_prior: expected (law, odds) pairs, got {item!r}") from None
        if name not in known:
            raise SettingsError(f"law_prior: unknown law {name!r}; choose from {', '.join(known)}")
        if not (math.isfinite(odds) and odds > 0):
            raise SettingsError(f"law_prior: odds must be > 0, got {odds!r} for {name!r}")
        out.append((str(name), odds))
    return tuple(out)


def prior_penalty(names: tuple[str, ...], prior: tuple[tuple[str, float], ...]) -> np.ndarray:
    """``-2 log pi_k`` per law in ``names`` (laws not in ``prior`` have odds 1)."""
    odds = dict(prior)
    return np.array([-2.0 * math.log(odds.get(n, 1.0)) for n in names])


def with_prior(scores, prior: tuple[tuple[str, float], ...]):
    """The :class:`~saturate.fit.weights.Scores` with each law's prior penalty added to its
    parameter penalty."""
    if not prior:
        return scores
    return dataclasses.replace(scores, penalty=scores.penalty + prior_penalty(scores.names, prior))


_DEFAULTS = Settings()


@dataclass(frozen=True)
class FitSettings:
    """How curves are fitted. Defaults suit RL reward and loss curves of 5 to 10,000 points.

    ``f_scale``: the robust loss's scale in units of the point-to-point noise. ``cv_origins``:
    rolling origins as fractions of the last compute. ``cv_weight`` scales the predictive score
    against AICc. ``max_points``: bins used for long curves. ``boot_min_weight``: laws with less
    weight get none. ``domain``: ``(lo, hi)`` of the values in user units, or None
    (:mod:`saturate.fit.domain`). ``law_prior``: ``((law, odds), ...)``
    (:mod:`saturate.fit.settings`).
    """

    laws: tuple[str | Model, ...] = tuple(LAWS)  # names of built-in laws, users' Models
    n_boot: int = _DEFAULTS.n_boot
    confidence: float = _DEFAULTS.confidence
    seed: int = _DEFAULTS.seed
    loss: str = "soft_l1"
    f_scale: float = 2.0
    n_starts: int = 4
    cv_origins: tuple[float, ...] = (0.5, 0.65, 0.8)
    cv_weight: float = 1.0
    max_ar_order: int = 5
    max_points: int = 128
    max_iter: int = 50
    boot_max_iter: int = 20
    boot_min_weight: float = 0.01
    polish: bool = True  # scipy least_squares on a whole-curve fit the batch left unconverged
    law_prior: tuple[tuple[str, float], ...] = DEFAULT_LAW_PRIOR
    forecast_at: tuple[str | float, ...] = field(default=_DEFAULTS.forecast_at)
    domain: tuple[float, float] | None = None

    @classmethod
    def checked(cls, **given: Any) -> FitSettings:
        """Settings given by hand: each value of an option (``laws``, ``n_boot``...) checked and
        converted by its declaration, as :class:`~saturate.settings.Settings` would."""
        options = {k: v if v is None or k not in OPTIONS_BY_NAME
                   else OPTIONS_BY_NAME[k].checked(v, k) for k, v in given.items()}
        if options.get("domain") is not None:
            options["domain"] = check_domain(options["domain"], "domain")
        return cls(**options)

    def __post_init__(self) -> None:
        object.__setattr__(self, "law_prior", check_law_prior(self.law_prior, tuple(LAWS)))
        check_choice(self.loss, "loss", LOSSES)
        check_number(self.f_scale, "f_scale", 0, math.inf, closed="neither")
        check_int(self.n_starts, "n_starts", 1)
        for origin in self.cv_origins:
            check_number(origin, "cv_origins", 0, 1, closed="neither")
        check_number(self.cv_weight, "cv_weight", 0, math.inf)
        check_int(self.max_ar_order, "max_ar_order", 0)
        check_int(self.max_points, "max_points", 8)
        check_int(self.max_iter, "max_iter", 1)
        check_int(self.boot_max_iter, "boot_max_iter", 1)
        check_number(self.boot_min_weight, "boot_min_weight", 0, 1, closed="left")
