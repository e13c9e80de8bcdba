"""How curves are fitted: :class:`FitSettings`, validated when made."""

from __future__ import annotations

from dataclasses import dataclass, field

from saturate.errors import SettingsError
from saturate.fit.laws import LAWS
from saturate.fit.solver import LOSSES

__all__ = ["FitSettings"]


@dataclass(frozen=True)
class FitSettings:
    """How curves are fitted. Defaults suit RL reward and loss curves of 5 to 10,000 points.

    ``f_scale``: scale of the robust loss in units of the point-to-point noise (estimated from
    first differences). ``cv_origins``: rolling origins as fractions of the last compute (each
    prefix is fitted and scored on the rest). ``cv_weight`` scales the predictive score against
    AICc. ``max_ar_order``: highest AR order of the residual noise model (chosen by AIC).
    ``max_points``: bins used for long curves. ``boot_min_weight``: laws with
    less weight get none (they are not bootstrapped and their parameters get no interval).
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
    forecast_at: tuple[str | float, ...] = field(default=("2x", "4x"))

    def __post_init__(self) -> None:
        unknown = [n for n in self.laws if n not in LAWS]
        if unknown or not self.laws:
            raise SettingsError(
                f"laws: unknown {', '.join(map(repr, unknown)) or '(none given)'}; "
                f"choose from {', '.join(LAWS)}"
            )
        checks = [
            ("n_boot", self.n_boot >= 0, self.n_boot),
            ("confidence", 0 < self.confidence < 1, self.confidence),
            ("loss", self.loss in LOSSES, self.loss),
            ("f_scale", self.f_scale > 0, self.f_scale),
            ("n_starts", self.n_starts >= 1, self.n_starts),
            ("cv_origins", all(0 < f < 1 for f in self.cv_origins), self.cv_origins),
            ("cv_weight", self.cv_weight >= 0, self.cv_weight),
            ("max_ar_order", self.max_ar_order >= 0, self.max_ar_order),
            ("max_points", self.max_points >= 8, self.max_points),
            ("max_iter", self.max_iter >= 1, self.max_iter),
            ("boot_max_iter", self.boot_max_iter >= 1, self.boot_max_iter),
            ("boot_min_weight", 0 <= self.boot_min_weight < 1, self.boot_min_weight),
        ]
        for name, ok, got in checks:
            if not ok:
                raise SettingsError(f"{name}: invalid value {got!r}")
