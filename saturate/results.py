"""Result objects of an analysis: frozen dataclasses with ``to_dict()`` (JSON-safe),
``from_dict()`` (its inverse) and ``summary()``.

Formatting lives in :mod:`saturate.report`; these classes only hold numbers and say what they mean.
This module imports neither :mod:`saturate.analysis` nor :mod:`saturate.fit` (the fit's type is
named for type checkers only).
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from saturate.errors import InputError

if TYPE_CHECKING:
    from saturate.fit.result import CurveFit


# ---- how results show themselves in Jupyter (``_repr_html_``) ----
# The results sit below the reports, so they cannot import the renderer:
# :mod:`saturate.report.notebook` registers it here when imported (``import saturate`` does).
# Until then an object shows its plain ``summary()``.
_RENDERERS: dict[str, Callable[[Any], str]] = {}


def register_html(kind: str, render: Callable[[Any], str]) -> None:
    """Make ``render(obj)`` the HTML of the objects of ``kind`` (``"curve"``, ``"fit"``)."""
    _RENDERERS[kind] = render


def html_of(obj: Any, kind: str) -> str:
    """The HTML of ``obj`` by the renderer registered for ``kind``, else its summary as text."""
    render = _RENDERERS.get(kind)
    if render is None:
        return f"<pre>{html.escape(obj.summary())}</pre>"
    return render(obj)


Verdict = Literal["scaling", "slowing", "saturated", "regressing", "inconclusive"]
Direction = Literal["higher", "lower"]
Stage = Literal["initial", "transition", "knee", "plateau", "negative", "unknown"]

VERDICTS: tuple[str, ...] = ("scaling", "slowing", "saturated", "regressing", "inconclusive")
PASSING_VERDICTS: frozenset[str] = frozenset({"scaling", "slowing"})


def _num(x: Any) -> float:
    """A float from JSON, where None stands for NaN (see :func:`jsonable`)."""
    return math.nan if x is None else float(x)


def _required(d: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in d:
        raise InputError(f"{what}.from_dict: the entry has no {key!r} (keys: {sorted(d)})")
    return d[key]


def jsonable(x: Any) -> Any:
    """Plain, JSON-safe Python: numpy scalars converted, NaN/inf as None, tuples as lists."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        return f if math.isfinite(f) else None
    if hasattr(x, "to_dict") and not isinstance(x, pd.DataFrame):
        return x.to_dict()
    return x


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval; ``identified`` is False when the data cannot pin it down."""

    value: float
    lo: float = math.nan
    hi: float = math.nan
    identified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {"value": self.value, "lo": self.lo, "hi": self.hi, "identified": self.identified}
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Estimate:
        """The estimate of a :meth:`to_dict` entry (None or ``{}``: a missing, unidentified one)."""
        if not d:
            return cls(math.nan, identified=False)
        return cls(
            _num(d.get("value")), _num(d.get("lo")), _num(d.get("hi")),
            bool(d.get("identified", True)),
        )

    def __str__(self) -> str:
        return format_estimate(self)


def format_estimate(
    e: Estimate | None,
    digits: int = 3,
    *,
    missing: str | None = "n/a",
    unidentified: str = " (not identified)",
    open_interval: bool = False,
) -> str:
    """``0.12 [0.08, 0.15]``: the value with ``digits`` significant digits and its interval when
    both ends are known; the one estimate formatter of saturate, its variants set by keywords.

    ``missing``: the text for an absent estimate or a non-finite value (``None``: format the value
    as it is, ``nan``). ``unidentified``: appended to a value the data cannot pin down (``""`` for
    nothing). ``open_interval``: show ``[lo, ∞)`` when only the lower end is known.
    """
    if e is None or e.value is None or (missing is not None and not math.isfinite(e.value)):
        return "n/a" if missing is None else missing
    text = f"{e.value:.{digits}g}"
    if math.isfinite(e.lo) and math.isfinite(e.hi):
        text += f" [{e.lo:.{digits}g}, {e.hi:.{digits}g}]"
    elif open_interval and math.isfinite(e.lo):
        text += f" [{e.lo:.{digits}g}, ∞)"
    if not e.identified:
        text += unidentified
    return text


@dataclass(frozen=True)
class ForecastPoint:
    """The model-averaged forecast at one compute, with its interval."""

    at: str | float
    compute: float
    value: float
    lo: float
    hi: float
    identified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "at": self.at,
                "compute": self.compute,
                "value": self.value,
                "lo": self.lo,
                "hi": self.hi,
                "identified": self.identified,
            }
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ForecastPoint:
        """The forecast point of a :meth:`to_dict` entry."""
        return cls(
            at=_required(d, "at", "ForecastPoint"),
            compute=_num(_required(d, "compute", "ForecastPoint")),
            value=_num(d.get("value")),
            lo=_num(d.get("lo")),
            hi=_num(d.get("hi")),
            identified=bool(d.get("identified", True)),
        )


@dataclass(frozen=True)
class LawSummary:
    """One fitted law as reported: parameters with intervals and the weight it got."""

    name: str
    params: dict[str, Estimate]
    weight: float
    aicc: float = math.nan
    cv_error: float = math.nan
    converged: bool = True

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "name": self.name,
                "params": {k: v.to_dict() for k, v in self.params.items()},
                "weight": self.weight,
                "aicc": self.aicc,
                "cv_error": self.cv_error,
                "converged": self.converged,
            }
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LawSummary:
        """The law of a :meth:`to_dict` entry (the extra keys of ``LawFit.to_dict`` are ignored)."""
        return cls(
            name=str(_required(d, "name", "LawSummary")),
            params={k: Estimate.from_dict(v) for k, v in (d.get("params") or {}).items()},
            weight=_num(d.get("weight")),
            aicc=_num(d.get("aicc")),
            cv_error=_num(d.get("cv_error")),
            converged=bool(d.get("converged", True)),
        )


@dataclass(frozen=True)
class Trend:
    """Slope of the recent stretch per doubling of compute, from a test robust to autocorrelation."""

    slope_per_doubling: Estimate
    p_value: float
    method: str
    compute_from: float
    compute_to: float
    n_points: int

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "slope_per_doubling": self.slope_per_doubling.to_dict(),
                "p_value": self.p_value,
                "method": self.method,
                "compute_from": self.compute_from,
                "compute_to": self.compute_to,
                "n_points": self.n_points,
            }
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trend:
        """The trend of a :meth:`to_dict` entry."""
        return cls(
            slope_per_doubling=Estimate.from_dict(_required(d, "slope_per_doubling", "Trend")),
            p_value=_num(d.get("p_value")),
            method=str(d.get("method", "")),
            compute_from=_num(d.get("compute_from")),
            compute_to=_num(d.get("compute_to")),
            n_points=int(d.get("n_points", 0)),
        )


@dataclass(frozen=True)
class Collapse:
    """A sudden drop after a good stretch: where it happened and how far it fell."""

    compute: float
    step: int
    level_before: float
    level_after: float
    drop: float
    drop_fraction: float

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Collapse:
        """The collapse of a :meth:`to_dict` entry."""
        return cls(
            compute=_num(_required(d, "compute", "Collapse")),
            step=int(_required(d, "step", "Collapse")),
            level_before=_num(d.get("level_before")),
            level_after=_num(d.get("level_after")),
            drop=_num(d.get("drop")),
            drop_fraction=_num(d.get("drop_fraction")),
        )


@dataclass(frozen=True)
class CurveAnalysis:
    """Everything saturate says about one (run, metric) curve.

    ``fit`` (the :class:`~saturate.fit.CurveFit` behind the numbers, None when no law could be
    fitted) and ``points`` (the curve's tidy rows) are kept for plots and diagnostics; they are
    not part of ``to_dict()`` and do not take part in comparisons.
    """

    source: str
    experiment: str
    run_id: str
    run: str
    metric: str
    direction: Direction
    n_points: int
    compute_first: float
    compute_last: float
    value_last: float
    threshold: float
    verdict: Verdict
    reasons: tuple[str, ...]
    gain_per_doubling: Estimate
    asymptote: Estimate
    headroom: Estimate
    roi: float
    roi_stage: Stage
    knee: float | None = None
    stop_point: Estimate | None = None
    forecast: tuple[ForecastPoint, ...] = ()
    laws: tuple[LawSummary, ...] = ()
    trend: Trend | None = None
    collapse: Collapse | None = None
    flags: tuple[str, ...] = ()
    run_status: str | None = None
    group: dict[str, Any] | None = None
    compute_name: str = "step"
    domain: tuple[float, float] | None = None
    fit: CurveFit | None = field(default=None, repr=False, compare=False)
    points: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    # the call behind the verdict (saturate.analysis.decision.Decision) and the curve's own
    # evidence (saturate.analysis.outlook.Outlook); None when the curve could not be judged
    decision: Any = field(default=None, repr=False, compare=False)
    outlook: Any = field(default=None, repr=False, compare=False)
    p_pays: float | None = None  # P(pays): the decision's, or read back from JSON; None: not judged

    def __post_init__(self) -> None:
        if self.decision is not None:  # P(pays) follows the call
            object.__setattr__(self, "p_pays", float(self.decision.p_pays))

    @property
    def passes(self) -> bool:
        """True when the curve still gains at least the threshold per doubling."""
        return self.verdict in PASSING_VERDICTS

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry for this curve (see ``saturate/report/schema.json``)."""
        return jsonable(
            {
                "source": self.source,
                "experiment": self.experiment,
                "run": self.run,
                "run_id": self.run_id,
                "metric": self.metric,
                "verdict": self.verdict,
                "p_pays": self.p_pays,
                "reasons": list(self.reasons),
                "n_points": self.n_points,
                "compute_name": self.compute_name,
                "compute_first": self.compute_first,
                "compute_last": self.compute_last,
                "value_last": self.value_last,
                "direction": self.direction,
                "threshold": self.threshold,
                "gain_per_doubling": {
                    k: v
                    for k, v in self.gain_per_doubling.to_dict().items()
                    if k != "identified"
                },
                "asymptote": self.asymptote.to_dict(),
                "headroom": self.headroom.to_dict(),
                "roi": {"value": self.roi, "stage": self.roi_stage},
                "knee": self.knee,
                "stop_point": None if self.stop_point is None else self.stop_point.to_dict(),
                "model": {"laws": [law.to_dict() for law in self.laws]},
                "forecast": [f.to_dict() for f in self.forecast],
                "trend": None if self.trend is None else self.trend.to_dict(),
                "collapse": None if self.collapse is None else self.collapse.to_dict(),
                "flags": list(self.flags),
                "run_status": self.run_status,
                "group": self.group,
                "domain": None if self.domain is None else {
                    "lo": self.domain[0], "hi": self.domain[1]
                },
            }
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CurveAnalysis:
        """Rebuild a curve's analysis from its :meth:`to_dict` entry, without ``fit`` and
        ``points`` (which the entry does not hold).

        The entry's gain per doubling has no ``identified`` key: it is identified exactly when it
        has an interval, as :func:`saturate.analysis.gain_per_doubling` sets it. Keys added after
        an entry was stored take their defaults; a missing identity key raises
        :class:`~saturate.errors.InputError`.
        """
        def req(key: str) -> Any:
            return _required(d, key, "CurveAnalysis")

        gain, roi = d.get("gain_per_doubling") or {}, d.get("roi") or {}
        stop, trend, collapse = d.get("stop_point"), d.get("trend"), d.get("collapse")
        return cls(
            source=str(req("source")),
            experiment=str(d.get("experiment", "")),
            run_id=str(req("run_id")),
            run=str(req("run")),
            metric=str(req("metric")),
            direction=d.get("direction", "higher"),
            n_points=int(req("n_points")),
            compute_first=_num(d.get("compute_first")),
            compute_last=_num(d.get("compute_last")),
            value_last=_num(d.get("value_last")),
            threshold=_num(d.get("threshold")),
            verdict=req("verdict"),
            p_pays=d.get("p_pays"),
            reasons=tuple(d.get("reasons", ())),
            gain_per_doubling=Estimate(
                _num(gain.get("value")), _num(gain.get("lo")), _num(gain.get("hi")),
                identified=gain.get("lo") is not None,
            ),
            asymptote=Estimate.from_dict(d.get("asymptote")),
            headroom=Estimate.from_dict(d.get("headroom")),
            roi=_num(roi.get("value")),
            roi_stage=roi.get("stage", "unknown"),
            knee=None if d.get("knee") is None else float(d["knee"]),
            stop_point=None if stop is None else Estimate.from_dict(stop),
            forecast=tuple(ForecastPoint.from_dict(f) for f in d.get("forecast", ())),
            laws=tuple(
                LawSummary.from_dict(law) for law in (d.get("model") or {}).get("laws", ())
            ),
            trend=None if not trend else Trend.from_dict(trend),
            collapse=None if not collapse else Collapse.from_dict(collapse),
            flags=tuple(d.get("flags", ())),
            run_status=d.get("run_status"),
            group=d.get("group"),
            compute_name=str(d.get("compute_name", "step")),
            domain=_domain_of(d.get("domain")),
        )

    def _repr_html_(self) -> str:
        """Jupyter: the verdict, its charts, numbers and reasons."""
        return html_of(self, "curve")

    def summary(self) -> str:
        """A short plain-text report of this curve."""
        lines = [
            f"{self.run} / {self.metric}: {self.verdict.upper()}"
            + ("" if self.p_pays is None else f"; P(pays) {self.p_pays:.2f}"),
            f"  points {self.n_points}, {self.compute_name} {self.compute_first:.4g} .. "
            f"{self.compute_last:.4g}, last value {self.value_last:.4g} ({self.direction} is better)",
            f"  gain per doubling {format_estimate(self.gain_per_doubling)} "
            f"(threshold {self.threshold:.3g})",
            f"  asymptote {format_estimate(self.asymptote)}; headroom {format_estimate(self.headroom)}",
            f"  ROI {self.roi:.3g} ({self.roi_stage}); knee "
            f"{'none' if self.knee is None else f'{self.knee:.4g}'}; stop point "
            f"{format_estimate(self.stop_point) if self.stop_point else 'none'}",
        ]
        for f in self.forecast:
            lines.append(
                f"  forecast at {f.at} ({f.compute:.4g}): {f.value:.4g} [{f.lo:.4g}, {f.hi:.4g}]"
            )
        if self.laws:
            weights = ", ".join(f"{law.name} {law.weight:.2f}" for law in self.laws)
            lines.append(f"  model weights: {weights}")
        lines += [f"  - {r}" for r in self.reasons]
        if self.flags:
            lines.append(f"  flags: {', '.join(self.flags)}")
        return "\n".join(lines)


def _domain_of(d: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """A curve's domain from its JSON entry (a missing end is infinite)."""
    if not d:
        return None
    lo, hi = d.get("lo"), d.get("hi")
    return (-math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))


def verdict_counts(curves: tuple[CurveAnalysis, ...] | list[CurveAnalysis]) -> str:
    """``12 curves: 7 scaling, 3 slowing, 1 saturated, 1 regressing``."""
    counts = Counter(c.verdict for c in curves)
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
    noun = "curve" if len(curves) == 1 else "curves"
    return f"{len(curves)} {noun}: " + (", ".join(parts) if parts else "none")
