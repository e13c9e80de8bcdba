"""Result objects of an analysis: frozen dataclasses with ``to_dict()``, ``from_dict()`` and
``summary()``, their JSON made from the fields by :mod:`saturate.results.codec`.

They only hold numbers; formatting lives in :mod:`saturate.report`. This module imports neither
:mod:`saturate.analysis` nor :mod:`saturate.fit`.
"""

from __future__ import annotations

import html
import importlib
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from saturate.results.codec import Coded, meta, num, to_dict

if TYPE_CHECKING:
    import pandas as pd

    from saturate.decide.decision import Decision
    from saturate.fit.result import CurveFit
    from saturate.measure.evidence import Evidence


# Jupyter views (``_repr_html_``) and figures: results sit below the reports, so _PROVIDER
# registers them here when imported, by name on first need.
_RENDERERS: dict[str, Callable[[Any], str]] = {}
_FIGURES: dict[str, Callable[[Any], Any]] = {}
_PROVIDER = "saturate.report.notebook"


def _provided(registry: Mapping[str, Any], kind: str) -> Any:
    importlib.import_module(_PROVIDER)
    return registry.get(kind)


def register_html(kind: str, render: Callable[[Any], str]) -> None:
    """Make ``render(obj)`` the HTML of the objects of ``kind`` (``"curve"``, ``"fit"``)."""
    _RENDERERS[kind] = render


def html_of(obj: Any, kind: str) -> str:
    """The HTML of ``obj`` by the renderer registered for ``kind``, else its summary as text."""
    render = _RENDERERS.get(kind) or _provided(_RENDERERS, kind)
    if render is None:
        return f"<pre>{html.escape(obj.summary())}</pre>"
    return render(obj)


def register_figure(kind: str, draw: Callable[[Any], Any]) -> None:
    """Make ``draw(obj)`` the matplotlib Figure of the objects of ``kind`` (``"suite"``)."""
    _FIGURES[kind] = draw


def figure_of(obj: Any, kind: str) -> Any:
    """The Figure of ``obj`` by the drawer registered for ``kind``."""
    draw = _FIGURES.get(kind) or _provided(_FIGURES, kind)
    if draw is None:
        raise RuntimeError(f"no figure registered for {kind!r}: import saturate.report.notebook")
    return draw(obj)


Verdict = Literal["scaling", "slowing", "saturated", "regressing", "inconclusive"]
Direction = Literal["higher", "lower"]
Stage = Literal["initial", "transition", "knee", "plateau", "negative", "unknown"]

VERDICTS: tuple[Verdict, ...] = ("scaling", "slowing", "saturated", "regressing", "inconclusive")
PASSING_VERDICTS: frozenset[str] = frozenset({"scaling", "slowing"})


_NAN = math.nan


def _has_interval(entry: Mapping[str, Any]) -> bool:
    return math.isfinite(num(entry.get("lo")))


@dataclass(frozen=True)
class Estimate(Coded):
    """A point estimate with its interval; ``identified`` is False when the data cannot pin it down.

    Read from an entry, a missing number is NaN (None or ``{}``: missing, unidentified); without
    ``identified`` (the gain's entries) it is identified when it has an interval."""

    _json_def: ClassVar[str] = "estimate"

    value: float = field(metadata=meta(required=True, missing=_NAN))
    lo: float = field(default=_NAN, metadata=meta(
        "Lower bound of the interval at the report's confidence.", required=True))
    hi: float = field(default=_NAN, metadata=meta(required=True))
    identified: bool = field(default=True, metadata=meta(
        "False when the data cannot pin the value down.", required=True,
        missing_from=_has_interval))

    def __str__(self) -> str:
        return format_estimate(self)


def format_estimate(
    e: Estimate | None, digits: int = 3, *, missing: str | None = "n/a",
    unidentified: str = " (not identified)", open_interval: bool = False,
) -> str:
    """``0.12 [0.08, 0.15]``: the value to ``digits`` significant digits and its interval.

    ``missing``: the text for an absent or non-finite value (``None``: format it as is).
    ``unidentified``: appended to a value the data cannot pin down. ``open_interval``: show
    ``[lo, ∞)`` when only the lower end is known.
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


#: The metadata of a number an entry may leave out (read as NaN) but always writes. (A field
#: written ``field(metadata=...)`` in place, so that a type checker sees a field without default.)
_INTERVAL = meta(missing=_NAN, required=True)


@dataclass(frozen=True)
class ForecastPoint(Coded):
    """The model-averaged forecast at one compute, with its interval."""

    at: str | float = field(metadata=meta("The request echoed: '2x' or a compute value."))
    compute: float
    value: float = field(metadata=_INTERVAL)
    lo: float = field(metadata=_INTERVAL)
    hi: float = field(metadata=_INTERVAL)
    identified: bool = True


@dataclass(frozen=True)
class LawSummary(Coded):
    """One fitted law as reported: parameters with intervals and the weight it got."""

    name: str
    params: dict[str, Estimate] = field(metadata=meta(missing={}, required=True))
    weight: float = field(metadata=_INTERVAL)
    aicc: float = _NAN
    cv_error: float = _NAN
    converged: bool = True


@dataclass(frozen=True)
class Trend(Coded):
    """Slope of the recent stretch per doubling of compute, from a test robust to autocorrelation."""

    slope_per_doubling: Estimate
    p_value: float = field(metadata=_INTERVAL)
    method: str = field(metadata=meta(missing="", required=True))
    compute_from: float = field(metadata=meta(missing=_NAN))
    compute_to: float = field(metadata=meta(missing=_NAN))
    n_points: int = field(metadata=meta(missing=0))


@dataclass(frozen=True)
class Collapse(Coded):
    """A sudden drop after a good stretch: where it happened and how far it fell."""

    compute: float
    step: int = field(metadata=meta(required=False))
    level_before: float = field(metadata=meta(missing=_NAN))
    level_after: float = field(metadata=meta(missing=_NAN))
    drop: float = field(metadata=_INTERVAL)
    drop_fraction: float = field(metadata=meta(missing=_NAN))


@dataclass(frozen=True)
class Pooling(Coded):
    """The sibling runs (seeds of one configuration) a curve's call leaned on, or did not."""

    runs: tuple[str, ...] = field(metadata=meta("The sibling runs whose evidence made the prior."))
    n: int = field(metadata=meta("How many siblings the prior rests on."))
    pooled: bool = field(metadata=meta(
        "Whether the call used the prior: false when the curve's own estimate disagrees with its "
        "siblings' beyond their spread (it keeps its own evidence), or pooling is off."))
    mean: float = field(metadata=meta(
        "The siblings' gain per doubling in units of what each curve's threshold is a share of "
        "(its observed range, as a rule).", missing=_NAN))
    sd: float = field(metadata=meta("Standard deviation of the prior (same units).",
                                    missing=_NAN))
    spread: float = field(metadata=meta("The spread of the true gains across the siblings.",
                                        missing=_NAN))
    disagreement: float = field(metadata=meta(
        "The curve's own estimate's distance from the prior, in standard deviations.",
        missing=_NAN))


def _gain_entry(e: Estimate) -> dict[str, Any]:
    """The gain per doubling's entry: its ``identified`` is whether it has an interval."""
    return {k: v for k, v in to_dict(e).items() if k != "identified"}


def _domain_entry(d: tuple[float, float] | None) -> dict[str, float] | None:
    return None if d is None else {"lo": d[0], "hi": d[1]}


def _domain_of(d: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """A curve's domain from its JSON entry (a missing end is infinite)."""
    if not d:
        return None
    lo, hi = d.get("lo"), d.get("hi")
    return (-math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))


_GAIN_SCHEMA = {"type": "object", "required": ["value", "lo", "hi"], "additionalProperties": False,
                "properties": {"value": {"$ref": "#/$defs/num", "description": "f(2C) - f(C) at "
                                         "the last compute C, better-is-positive."},
                               "lo": {"$ref": "#/$defs/num"}, "hi": {"$ref": "#/$defs/num"}}}
_DOMAIN_SCHEMA = {"oneOf": [{"type": "null"}, {
    "type": "object", "required": ["lo", "hi"], "additionalProperties": False,
    "properties": {"lo": {"$ref": "#/$defs/num"}, "hi": {"$ref": "#/$defs/num"}}}]}


@dataclass(frozen=True, kw_only=True)
class CurveAnalysis(Coded):
    """Everything saturate says about one (run, metric) curve.

    ``fit`` (None when no law could be fitted) and ``points`` are kept for plots and diagnostics,
    outside ``to_dict()`` and comparisons. Fields are declared in the JSON entry's order.
    """

    _json_def: ClassVar[str] = "curve"

    source: str
    experiment: str = field(metadata=meta(missing=""))
    run: str
    run_id: str
    metric: str
    verdict: Verdict
    # P(pays): the decision's, or read back from JSON; None: not judged
    p_pays: float | None = field(default=None, metadata=meta(
        "P(pays): the probability that the next doubling of compute gains at least the threshold"
        " (the calibrated probability the verdict follows); null when the curve could not be "
        "judged.", schema={"minimum": 0, "maximum": 1}, required=True))
    reasons: tuple[str, ...] = field(metadata=meta("Why, in words.", missing=(), required=True))
    n_points: int = field(metadata=meta(schema={"minimum": 0}))
    compute_name: str = "step"
    compute_first: float = field(metadata=meta(missing=_NAN))
    compute_last: float = field(metadata=_INTERVAL)
    value_last: float = field(metadata=_INTERVAL)
    direction: Direction = field(metadata=meta("Which way is better.", missing="higher",
                                               required=True))
    threshold: float = field(metadata=meta("The min gain per doubling in metric units.",
                                           missing=_NAN))
    gain_per_doubling: Estimate = field(metadata=meta(
        missing=Estimate(_NAN, identified=False), required=True, encode=_gain_entry,
        decode=Estimate.from_dict, schema=_GAIN_SCHEMA))
    asymptote: Estimate = field(metadata=meta(missing=Estimate.from_dict(None), required=True))
    headroom: Estimate = field(metadata=meta(missing=Estimate.from_dict(None)))
    roi: float = field(metadata=meta(
        "The next doubling's expected gain over the last doubling's gain (1: the gain per "
        "doubling holds; below 0.8: past the knee).", key="roi.value", missing=_NAN,
        required=True))
    roi_stage: Stage = field(metadata=meta(key="roi.stage", missing="unknown", required=True))
    knee: float | None = field(default=None, metadata=meta(
        "Compute where the fitted curve's gain per doubling fell below 0.8 of the doubling "
        "before's for good (the stretch below it reaches the last compute); null if none, or "
        "when the verdict says the gain per doubling holds.",
        required=True))
    stop_point: Estimate | None = field(default=None, metadata=meta(
        "Compute where the gain per doubling falls below the threshold; null if not within the "
        "horizon.", required=True))
    laws: tuple[LawSummary, ...] = field(default=(), metadata=meta(key="model.laws",
                                                                   required=True))
    forecast: tuple[ForecastPoint, ...] = field(default=(), metadata=meta(required=True))
    trend: Trend | None = None
    collapse: Collapse | None = None
    flags: tuple[str, ...] = ()
    run_status: str | None = None
    run_url: str | None = field(default=None, metadata=meta(
        "The run's page in its tracker's web UI (an MLflow tracking server's run page, a W&B "
        "run's), credentials left out; null when the source has no web UI or does not say "
        "where it is."))
    group: dict[str, Any] | None = field(default=None, metadata=meta(
        "The seeds averaged into this curve by --group-by (n_seeds, runs, by, value); null when "
        "it is one run."))
    pooling: Pooling | None = field(default=None, metadata=meta(
        "The sibling runs whose prior the call weighed, and whether it used it; null when the "
        "run has no siblings."))
    domain: tuple[float, float] | None = field(default=None, metadata=meta(
        "The range the metric's values live in (rates and accuracies [0, 1], their percentages "
        "[0, 100], or --domain), which the fit, forecasts, bands and asymptote respect; a null "
        "end is unbounded; null when none.", encode=_domain_entry, decode=_domain_of,
        schema=_DOMAIN_SCHEMA))
    fit: CurveFit | None = field(default=None, repr=False, compare=False)
    points: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    # the call behind the verdict and the curve's own evidence (None: read back from JSON, or
    # not judged)
    decision: Decision | None = field(default=None, repr=False, compare=False)
    evidence: Evidence | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.decision is not None:  # P(pays) follows the call
            p = float(self.decision.p_pays)
            object.__setattr__(self, "p_pays", p if math.isfinite(p) else None)

    @property
    def passes(self) -> bool:
        """True when the curve still gains at least the threshold per doubling."""
        return self.verdict in PASSING_VERDICTS

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


def verdict_counts(curves: tuple[CurveAnalysis, ...] | list[CurveAnalysis]) -> str:
    """``12 curves: 7 scaling, 3 slowing, 1 saturated, 1 regressing``."""
    counts = Counter(c.verdict for c in curves)
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
    noun = "curve" if len(curves) == 1 else "curves"
    return f"{len(curves)} {noun}: " + (", ".join(parts) if parts else "none")
