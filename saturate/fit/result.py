"""What a curve fit returns: per-law fits and the model-averaged curve with its bootstrap draws.

Parameters are kept in the fitting coordinates (see :class:`saturate.fit.prep.Normalisation`);
everything a method returns (predictions, intervals, forecasts, parameter estimates) is in the
user's units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from saturate.errors import SettingsError
from saturate.fit.laws import LAWS, Law
from saturate.fit.prep import Normalisation, pow2_scale
from saturate.results import (
    Direction,
    Estimate,
    ForecastPoint,
    LawSummary,
    format_estimate,
    html_of,
)
from saturate.results.codec import Written, derived, meta
from saturate.settings.checks import check_confidence, resolve_at

Array = NDArray[np.float64]
_DEFAULT_AT: tuple[str, ...] = ("2x", "4x")


@dataclass(frozen=True, eq=False)
class LawFit(Written):
    """One law fitted to one curve.

    ``theta`` and ``theta_boot`` (n_boot, k) are in the fitting coordinates; ``params`` holds the
    same parameters in the user's units with bootstrap intervals. ``rss`` is in value units
    squared, ``cv_error`` the RMS rolling-origin forecast error in value units. ``to_dict()`` is
    the reported law (:meth:`summary_row`) plus its formula, RSS and flags; no ``from_dict``
    (``to_dict`` lacks ``theta``): :meth:`saturate.results.LawSummary.from_dict` reads it back.
    """

    _json_order: ClassVar[tuple[str, ...]] = (
        "name", "params", "weight", "aicc", "cv_error", "converged", "formula")

    name: str
    theta: Array = field(compare=False)  # compare=False: not written (eq=False: never compared)
    params: dict[str, Estimate]
    rss: float
    aicc: float
    cv_error: float
    weight: float
    converged: bool
    theta_boot: Array = field(repr=False, compare=False)
    flags: tuple[str, ...] = ()
    user_law: Law | None = field(default=None, repr=False, compare=False)  # bound to the curve

    @property
    def law(self) -> Law:
        return LAWS[self.name] if self.user_law is None else self.user_law

    @derived(key="formula")
    def _formula(self) -> str:
        return self.law.formula

    @property
    def fitted(self) -> bool:
        return bool(np.all(np.isfinite(self.theta)))

    @property
    def identified(self) -> bool:
        """True when every parameter is pinned down by the data."""
        return self.fitted and all(e.identified for e in self.params.values())

    def summary_row(self) -> LawSummary:
        """What the report shows of this law."""
        return LawSummary(name=self.name, params=dict(self.params), weight=self.weight,
                          aicc=self.aicc, cv_error=self.cv_error, converged=self.converged)


def _backtest_entries(rows: tuple[tuple[float, float, float], ...]) -> list[dict[str, float]]:
    return [{"compute": at, "doublings": h, "error_per_doubling": e} for at, h, e in rows]


@dataclass(frozen=True, eq=False)
class CurveFit(Written):
    """All laws fitted to one curve, their weights, and the model-averaged forecast.

    Bootstrap draw ``i`` of the averaged curve is draw ``i`` of law ``laws[draw_law[i]]`` (draws
    allotted in proportion to weight), so intervals carry both each law's parameter uncertainty
    and the laws' disagreement. ``gain_backtest``: ``(compute at origin, horizon in doublings,
    error per doubling)`` of the rolling-origin gain forecasts. Derived values are cached; no
    ``from_dict`` (``to_dict`` lacks the fitted parameters: refit instead).
    """

    _json_order: ClassVar[tuple[str, ...]] = (
        "direction", "confidence", "n_points", "compute_first", "compute_last", "asymptote",
        "start_level", "laws", "forecast", "flags", "noise", "ar_order", "extrapolation_se",
        "gain_backtest", "n_boot")

    laws: tuple[LawFit, ...]
    flags: tuple[str, ...]
    direction: Direction
    confidence: float
    n_points: int
    compute_first: float
    compute_last: float
    norm: Normalisation = field(metadata=meta(key="normalisation"))
    draw_law: NDArray[np.intp] = field(repr=False, compare=False)  # not written (eq=False)
    asymptote: Estimate
    noise: float = math.nan
    ar_order: int = 0
    gain_backtest: tuple[tuple[float, float, float], ...] = field(
        default=(), metadata=meta(encode=_backtest_entries))

    @derived(cached=True)
    def start_level(self) -> Estimate:
        """The averaged curve at the first compute, with its bootstrap interval: ``R0``."""
        value = float(self.predict(self.compute_first)[0])
        lo, hi = _holding(value, *self.interval(self.compute_first))
        return Estimate(value, float(lo[0]), float(hi[0]), identified=True)

    @derived(cached=True)
    def extrapolation_se(self) -> float:
        """RMS error per doubling of the rolling-origin gain forecasts (``gain_backtest``): how far
        an extrapolated gain can miss on this curve. NaN without a backtest."""
        errs = np.array([e for _, _, e in self.gain_backtest], dtype=float)
        errs = errs[np.isfinite(errs)]
        s = pow2_scale(errs)
        return float(np.sqrt(np.mean((errs / s) ** 2))) * s if errs.size else math.nan

    # ---- evaluation -------------------------------------------------------------------------
    def weights(self) -> dict[str, float]:
        return {lf.name: lf.weight for lf in self.laws}

    def law_fit(self, name: str) -> LawFit:
        for lf in self.laws:
            if lf.name == name:
                return lf
        raise SettingsError(f"law: {name!r} was not fitted; fitted: {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(lf.name for lf in self.laws)

    def _x(self, compute: ArrayLike) -> Array:
        return self.norm.x(np.atleast_1d(np.asarray(compute, dtype=float)))

    def predict(self, compute: ArrayLike) -> Array:
        """Model-averaged point prediction at ``compute`` (user's units)."""
        x = self._x(compute)
        y = np.zeros(x.shape)
        with np.errstate(all="ignore"):
            for lf in self.laws:
                if lf.weight > 0:
                    y += lf.weight * lf.law(x, lf.theta)
        return self.norm.value(y)

    def predict_law(self, name: str, compute: ArrayLike) -> Array:
        """Prediction of one law at ``compute`` (user's units)."""
        lf = self.law_fit(name)
        with np.errstate(all="ignore"):
            return self.norm.value(lf.law(self._x(compute), lf.theta))

    def predict_samples(self, compute: ArrayLike) -> Array:
        """Bootstrap draws of the averaged curve, (n_boot, n), user's units."""
        x = self._x(compute)
        out = np.full((self.draw_law.shape[0], x.shape[0]), np.nan)
        with np.errstate(all="ignore"):
            for i, lf in enumerate(self.laws):
                rows = np.flatnonzero(self.draw_law == i)
                if rows.size:
                    out[rows] = lf.law(x, lf.theta_boot[rows])
        return self.norm.value(out)

    def interval(self, compute: ArrayLike, confidence: float | None = None) -> tuple[Array, Array]:
        """Equal-tailed bootstrap interval (lo, hi) of the averaged curve at ``compute``."""
        conf = self._confidence(confidence)
        samples = self.predict_samples(compute)
        if samples.shape[0] == 0:
            nan = np.full(samples.shape[1], np.nan)
            return nan, nan.copy()
        q = [(1 - conf) / 2, (1 + conf) / 2]
        gaps = np.isnan(samples).any(axis=0)
        # nanquantile goes column by column (slow on a chart's grid); columns without a gap
        # get the same numbers from quantile, at once.
        out = np.quantile(samples, q, axis=0)
        if gaps.any():
            out[:, gaps] = np.nanquantile(samples[:, gaps], q, axis=0)
        return out[0], out[1]

    def forecast(
        self, at: Sequence[str | float] | str | float = _DEFAULT_AT,
        confidence: float | None = None,
    ) -> tuple[ForecastPoint, ...]:
        """Forecasts at multiples of the last compute (``"2x"``) or at absolute compute values;
        beyond the data identified only when :attr:`identified_share` >= 0.5 and the interval is
        finite."""
        if isinstance(at, tuple) and at == _DEFAULT_AT and confidence is None:
            return self._default_forecast
        return self._forecast(at, confidence)

    @cached_property
    def _default_forecast(self) -> tuple[ForecastPoint, ...]:
        """The forecast at 2x and 4x the last compute (``to_dict`` and ``summary`` show it)."""
        return self._forecast(_DEFAULT_AT, None)

    def _forecast(
        self, at: Sequence[str | float] | str | float, confidence: float | None
    ) -> tuple[ForecastPoint, ...]:
        if isinstance(at, (str, float, int)):
            at = [at]
        computes = np.array([parse_at(a, self.compute_last) for a in at], dtype=float)
        value = self.predict(computes)
        lo, hi = _holding(value, *self.interval(computes, confidence))
        trusted = self.identified_share >= 0.5
        points = []
        for i, a in enumerate(at):
            inside = computes[i] <= self.compute_last
            ok = bool(inside or (trusted and math.isfinite(lo[i]) and math.isfinite(hi[i])))
            points.append(ForecastPoint(at=a, compute=float(computes[i]), value=float(value[i]),
                                        lo=float(lo[i]), hi=float(hi[i]), identified=ok))
        return tuple(points)

    @cached_property
    def identified_share(self) -> float:
        """Total weight of laws whose parameters are all identified."""
        return float(sum(lf.weight for lf in self.laws if lf.identified))

    def _confidence(self, confidence: float | None) -> float:
        return self.confidence if confidence is None else check_confidence(confidence)

    # ---- reporting --------------------------------------------------------------------------
    def law_summaries(self) -> tuple[LawSummary, ...]:
        return tuple(lf.summary_row() for lf in self.laws)

    @derived(key="forecast")
    def _default_forecast_entries(self) -> tuple[ForecastPoint, ...]:
        return self.forecast()

    @derived(key="n_boot")
    def _n_boot(self) -> int:
        return int(self.draw_law.shape[0])

    def _repr_html_(self) -> str:
        """Jupyter: the fitted curve with its band, the laws and their weights, the forecasts."""
        return html_of(self, "fit")

    def summary(self) -> str:
        """A statsmodels-like text table."""
        pct = f"{self.confidence:.0%}"
        lines = [
            "Curve fit".center(78, "="),
            f"points: {self.n_points}   compute: {self.compute_first:.4g} .. "
            f"{self.compute_last:.4g}   direction: {self.direction} is better",
            f"asymptote: {format_estimate(self.asymptote)}   start level: "
            f"{format_estimate(self.start_level)}",
            f"noise (sd): {self.noise:.3g}   bootstrap: {self.draw_law.shape[0]} draws, "
            f"AR({self.ar_order}) residual noise",
            f"extrapolation error per doubling (rolling-origin backtest): "
            f"{self.extrapolation_se:.3g}",
            "-" * 78,
            f"{'law':<14}{'weight':>8}{'AICc':>11}{'CV rmse':>11}  converged",
        ]
        for lf in sorted(self.laws, key=lambda lf: -lf.weight):
            lines.append(
                f"{lf.name:<14}{lf.weight:>8.3f}{lf.aicc:>11.4g}{lf.cv_error:>11.3g}  "
                f"{'yes' if lf.converged else 'no'}"
            )
        for lf in sorted(self.laws, key=lambda lf: -lf.weight):
            lines += ["-" * 78, f"{lf.name}: {lf.law.formula}   ({pct} intervals)"]
            for name, est in lf.params.items():
                lines.append(f"    {name:<8} {format_estimate(est, 4)}")
            if lf.flags:
                lines.append(f"    flags: {', '.join(lf.flags)}")
        lines.append("-" * 78)
        for f in self.forecast():
            mark = "" if f.identified else "  (not identified)"
            lines.append(
                f"forecast {f.at} (compute {f.compute:.4g}): {f.value:.4g} "
                f"[{f.lo:.4g}, {f.hi:.4g}]{mark}"
            )
        if self.flags:
            lines.append(f"flags: {', '.join(self.flags)}")
        lines.append("=" * 78)
        return "\n".join(lines)


def _holding(value: ArrayLike, lo: Array, hi: Array) -> tuple[Array, Array]:
    """The interval widened where needed to hold the point estimate (the laws' weighted mean can
    fall outside their pooled draws' quantiles); NaN ends stay NaN."""
    v = np.asarray(value, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(lo), np.fmin(lo, v), lo), np.where(np.isfinite(hi),
                                                                       np.fmax(hi, v), hi)


def parse_at(at: str | float, compute_last: float) -> float:
    """``"2x"`` -> 2 * compute_last; a compute value > 0 -> that compute (see
    :func:`saturate.settings.checks.resolve_at`)."""
    return resolve_at(at, compute_last, "forecast_at")
