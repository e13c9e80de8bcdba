"""How curves are judged: :class:`AnalysisSettings` and the threshold spelling ``0.01`` / ``"3%"``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from saturate.errors import SettingsError

_PCT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*%\s*$")


@dataclass(frozen=True)
class AnalysisSettings:
    """How curves are judged.

    ``min_gain`` is the smallest gain per doubling of compute worth paying for: metric units, or
    ``"N%"`` of the curve's observed (smoothed) range. The default ``"3%"``: a doubling of compute
    that moves the metric by less than 3% of the ground it has covered is, for RL runs, within the
    run-to-run noise of most benchmarks and rarely worth twice the spend. ``thresholds`` maps
    metric globs to their own ``min_gain``.
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

    def __post_init__(self) -> None:
        if not 0.5 <= self.confidence < 1.0:
            raise SettingsError(f"confidence must be in [0.5, 1), got {self.confidence!r}")
        parse_min_gain(self.min_gain, "min_gain")
        for pattern, spec in self.thresholds.items():
            parse_min_gain(spec, f"thresholds[{pattern!r}]")
        if int(self.n_boot) < 0:
            raise SettingsError(f"n_boot must be >= 0, got {self.n_boot!r}")
        if int(self.min_points) < 3:
            raise SettingsError(f"min_points must be >= 3, got {self.min_points!r}")


# ---------------------------------------------------------------------------------------------
# Threshold


def parse_min_gain(spec: float | str, name: str = "min_gain") -> tuple[float, bool]:
    """``(value, is_percent)`` from ``0.01``, ``"0.01"`` or ``"3%"``; a SettingsError otherwise."""
    if isinstance(spec, bool):
        raise SettingsError(f"{name} must be a number or 'N%', got {spec!r}")
    if isinstance(spec, (int, float)):
        value, pct = float(spec), False
    else:
        text = str(spec)
        m = _PCT.match(text)
        if m:
            value, pct = float(m.group(1)), True
        else:
            try:
                value, pct = float(text), False
            except ValueError:
                raise SettingsError(
                    f"{name} must be a number (metric units per doubling) or 'N%' "
                    f"(of the curve's range), got {spec!r}"
                ) from None
    if not math.isfinite(value) or value < 0:
        raise SettingsError(f"{name} must be a finite number >= 0, got {spec!r}")
    return value, pct


