"""How curves are fitted: :class:`FitSettings`, validated when made (:mod:`saturate.validation`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from saturate.fit.laws import LAWS
from saturate.fit.priors import DEFAULT_LAW_PRIOR, check_law_prior
from saturate.fit.solver import LOSSES
from saturate.validation import (
    check_choice,
    check_choices,
    check_confidence,
    check_domain,
    check_forecast_points,
    check_int,
    check_number,
)


@dataclass(frozen=True)
class FitSettings:
    """How curves are fitted. Defaults suit RL reward and loss curves of 5 to 10,000 points.

    ``f_scale``: scale of the robust loss in units of the point-to-point noise (estimated from
    first differences). ``cv_origins``: rolling origins as fractions of the last compute (each
    prefix is fitted and scored on the rest). ``cv_weight`` scales the predictive score against
    AICc. ``max_ar_order``: highest AR order of the residual noise model (chosen by AIC).
    ``max_points``: bins used for long curves. ``boot_min_weight``: laws with
    less weight get none (they are not bootstrapped and their parameters get no interval).
    ``domain``: the ``(lo, hi)`` the metric's values live in (user units, an end may be infinite),
    or None; the fit stays inside it (see :mod:`saturate.fit.domain`).
    ``law_prior``: prior odds of laws in the average, ``((law, odds), ...)`` (see
    :mod:`saturate.fit.priors`; ``()`` for equal odds).
    """

    laws: tuple[str, ...] = tuple(LAWS)
    n_boot: int = 200
    confidence: float = 0.9
    seed: int = 0
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
    forecast_at: tuple[str | float, ...] = field(default=("2x", "4x"))
    domain: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "law_prior", check_law_prior(self.law_prior, tuple(LAWS)))
        check_choices(self.laws, "laws", tuple(LAWS), at_least_one=True)
        check_int(self.n_boot, "n_boot", 0)
        check_confidence(self.confidence, "confidence")
        check_int(self.seed, "seed", 0)
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
        check_forecast_points(self.forecast_at, "forecast_at")
        if self.domain is not None:
            check_domain(self.domain, "domain")
