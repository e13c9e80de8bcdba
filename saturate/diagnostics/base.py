"""What every diagnostic shares: the :class:`Diagnostic` record, the settings, and curve access.

A diagnostic is a finding that spans metrics or runs (a benchmark that stopped following the
reward, a collapsing entropy, a recipe that wins). ``kind`` is the word ``gate --fail-on`` matches;
the kinds are declared in :mod:`saturate.diagnostics.registry`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from saturate.analysis.settings import AnalysisSettings
from saturate.measure.trend import MIN_TREND_POINTS, trend_test
from saturate.results import CurveAnalysis, Direction, Trend
from saturate.results.codec import Coded
from saturate.settings.checks import check_number, check_pairs
from saturate.settings.fields import OPTIONS_BY_NAME
from saturate.table.curves import iter_curves
from saturate.table.table import Table
from saturate.vocabulary.names import metric_direction, signed
from saturate.vocabulary.roles import Role, classify

if TYPE_CHECKING:
    from saturate.settings import Settings

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[str, ...] = ("info", "warning", "error")


@dataclass(frozen=True)
class Diagnostic(Coded):
    """One finding across metrics or runs.

    ``metrics`` names the curves involved (the reward first, then the benchmark, ...), ``compute``
    is where the finding starts on the x axis (``None`` when it has no start), ``message`` says it
    in words with the numbers, ``details`` holds the numbers themselves (JSON-safe).
    """

    _json_order: ClassVar[tuple[str, ...]] = ("kind", "severity", "source", "run", "run_id",
                                              "metrics", "compute", "message", "details")

    kind: str
    severity: Severity
    run: str
    run_id: str
    metrics: tuple[str, ...]
    message: str
    compute: float | None = None
    source: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    def summary(self) -> str:
        """``[warning] divergence run-1: <message>``."""
        return f"[{self.severity}] {self.kind} {self.run}: {self.message}"


@dataclass(frozen=True)
class DiagnosticSettings:
    """Options of the diagnostics; defaults are documented where they are used.

    ``pairs``: (reward glob, benchmark glob) pairs, from ``pairs`` in ``[tool.saturate]``; empty
    means the naming conventions decide. ``targets``: metric glob -> value to reach.
    ``compare_at``: where recipes are compared (``"Nx"`` of the largest observed compute, or a
    compute value). ``budget`` (GPU-hours) turns on the allocation diagnostic.
    """

    pairs: tuple[tuple[str, str], ...] = ()
    targets: Mapping[str, float] = field(default_factory=dict)
    confidence: float = 0.9
    seed: int = 0
    compare_at: tuple[str | float, ...] = ("1x", "4x")
    budget: float | None = None
    gpu_hours: str | None = None
    gpu_hour_cost: float | None = None
    pretrain_compute: float | None = None
    entropy_collapse_fraction: float = 0.15
    kl_blowup_factor: float = 10.0
    length_runaway_factor: float = 2.0
    lower_is_better: tuple[str, ...] = ()
    higher_is_better: tuple[str, ...] = ()
    objective: tuple[str, ...] = ()
    diagnostic: tuple[str, ...] = ()
    gpus: float | str | None = None
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)
    """The settings the curves were judged with: the threshold rule of a curve the diagnostics
    read without an analysis (``--min-gain``, the per-metric thresholds)."""

    def __post_init__(self) -> None:
        """The diagnostics' own limits (options were checked by Settings or :meth:`checked`)."""
        check_number(self.entropy_collapse_fraction, "entropy_collapse_fraction", 0, 1,
                     closed="neither")
        check_number(self.kl_blowup_factor, "kl_blowup_factor", 1, math.inf, closed="neither")
        check_number(self.length_runaway_factor, "length_runaway_factor", 1, math.inf,
                     closed="neither")

    @classmethod
    def checked(cls, **given: Any) -> DiagnosticSettings:
        """Settings given by hand: each option checked and converted by its declaration, as
        :class:`~saturate.settings.Settings` would."""
        return cls(**{k: v if v is None or k not in OPTIONS_BY_NAME
                      else OPTIONS_BY_NAME[k].checked(v, k) for k, v in given.items()})

    @classmethod
    def from_settings(cls, s: Settings) -> DiagnosticSettings:
        """The diagnostics' settings under ``s``, with the analysis's confidence, seed and
        direction rules so that both judge a metric the same way."""
        return cls(
            pairs=s.pairs, targets=dict(s.targets), confidence=s.confidence, seed=s.seed,
            compare_at=s.compare_at, budget=s.budget, gpu_hours=s.gpu_hours,
            gpu_hour_cost=s.gpu_hour_cost, pretrain_compute=s.pretrain_compute,
            lower_is_better=s.lower_is_better, higher_is_better=s.higher_is_better,
            objective=s.objective, diagnostic=s.diagnostic, gpus=s.gpus,
            analysis=AnalysisSettings.from_settings(s),
        )

    def direction(self, metric: str) -> Direction:
        return metric_direction(metric, self.lower_is_better, self.higher_is_better)

    def role(self, metric: str, run_metrics: Sequence[str] = ()) -> Role:
        """The metric's role under these settings' overrides (``roles.classify``)."""
        return classify(metric, objective=self.objective, diagnostic=self.diagnostic,
                        run_metrics=run_metrics).role


def parse_pairs(value: Any) -> tuple[tuple[str, str], ...]:
    """Reward/benchmark glob pairs, in any spelling ``check_pairs`` reads."""
    return check_pairs(value, "pairs")


@dataclass(frozen=True, eq=False)
class CurveRef:
    """One curve as the diagnostics see it: points sorted by compute, its analysis (objectives
    only) and its ``role`` (:mod:`saturate.vocabulary.roles`)."""

    source: str
    run_id: str
    run: str
    metric: str
    compute: np.ndarray
    value: np.ndarray
    direction: Direction
    analysis: CurveAnalysis | None = None
    role: Role = "objective"

    @property
    def analysed(self) -> CurveAnalysis:
        """:attr:`analysis`, where only analysed curves come (an objective's, checked before)."""
        assert self.analysis is not None, f"{self.metric} of {self.run}: not analysed"
        return self.analysis

    @property
    def signed(self) -> np.ndarray:
        """Values on the larger-is-better scale."""
        return np.asarray(signed(self.value, self.direction), dtype=float)


def collect_curves(
    curves: Sequence[CurveAnalysis] = (),
    data: Table | None = None,
    settings: DiagnosticSettings | None = None,
) -> list[CurveRef]:
    """Every curve once: from the analyses (their points, objectives) and any curve of the Table
    ``data`` they lack (with its role by the name rules: diagnostics and axes have no analysis)."""
    settings = settings or DiagnosticSettings()
    grouped = any(ca.group and ca.group.get("by") for ca in curves)
    # the Table's points, when its curves are to be added (None: they are not)
    points = None if data is None or data.points.empty or grouped else data.points
    run_names: dict[tuple[str, str], set[str]] = {}
    for ca in curves:
        run_names.setdefault((ca.source, ca.run_id), set()).add(ca.metric)
    if points is not None:
        for key, names in points.groupby(["source", "run_id"], sort=False)["metric"].unique().items():
            run_names.setdefault(key, set()).update(map(str, names))
    out: list[CurveRef] = []
    seen: set[tuple[str, str, str]] = set()
    for ca in curves:
        key = (ca.source, ca.run_id, ca.metric)
        if ca.points is None or key in seen:
            continue
        pts = ca.points
        if not (pts["compute"].is_monotonic_increasing and pts["step"].is_monotonic_increasing):
            pts = pts.sort_values(["compute", "step"], kind="stable")
        out.append(
            CurveRef(ca.source, ca.run_id, ca.run, ca.metric, pts["compute"].to_numpy(float),
                     pts["value"].to_numpy(float), ca.direction, ca,
                     settings.role(ca.metric, sorted(run_names[key[:2]])))
        )
        seen.add(key)
    for key, pts in iter_curves(points) if points is not None else ():
        if key in seen:
            continue
        out.append(
            CurveRef(key[0], key[1], str(pts["run"].iloc[0]), key[2],
                     pts["compute"].to_numpy(float), pts["value"].to_numpy(float),
                     settings.direction(key[2]),
                     role=settings.role(key[2], sorted(run_names[key[:2]])))
        )
        seen.add(key)
    return out


def by_run(refs: Iterable[CurveRef]) -> dict[tuple[str, str], dict[str, CurveRef]]:
    """``{(source, run_id): {metric: curve}}`` in the order first seen."""
    out: dict[tuple[str, str], dict[str, CurveRef]] = {}
    for r in refs:
        out.setdefault((r.source, r.run_id), {})[r.metric] = r
    return out


def edge_level(values: np.ndarray, share: float = 0.1, minimum: int = 3, end: bool = True) -> float:
    """Median of the last (``end``) or first share of the points, at least ``minimum`` of them.

    A median of a few points, not one point, so that a single noisy evaluation does not decide.
    """
    y = np.asarray(values, dtype=float)
    if y.size == 0:
        return math.nan
    k = min(y.size, max(minimum, int(math.ceil(share * y.size))))
    return float(np.median(y[-k:] if end else y[:k]))


def window_trend(
    ref: CurveRef, lo: float, hi: float = math.inf, confidence: float = 0.9
) -> Trend | None:
    """Slope per doubling of ``ref`` (larger-is-better) over compute in ``[lo, hi]``, HAC interval:
    the per-curve trend test on a window the caller picks, to compare two metrics on one stretch."""
    c = ref.compute
    mask = (c >= lo) & (c <= hi) & (c > 0)
    n = int(mask.sum())
    if n < MIN_TREND_POINTS:
        return None
    return trend_test(c[mask], ref.signed[mask], confidence=confidence, min_points=n)


def recent_trend(ref: CurveRef, confidence: float) -> Trend | None:
    """The analysis's recent trend, else the same test on the curve's points (larger-is-better)."""
    if ref.analysis is not None and ref.analysis.trend is not None:
        return ref.analysis.trend
    return trend_test(ref.compute, ref.signed, confidence=confidence)


def threshold(ref: CurveRef, settings: DiagnosticSettings | None = None) -> float:
    """The curve's minimum gain per doubling: its analysis's, else ``settings.analysis``'s rule."""
    if ref.analysis is not None and math.isfinite(ref.analysis.threshold):
        return float(ref.analysis.threshold)
    from saturate.measure.quantities import threshold_for

    how = settings.analysis if settings is not None else AnalysisSettings()
    return float(threshold_for(ref.metric, ref.value, how)[0])


def curves_by_metric(
    refs: Iterable[CurveRef], *, skip: Collection[str | None] = (), fitted: bool = False
) -> dict[str, list[CurveRef]]:
    """``{metric: [curves]}`` of the objectives in the order first seen, less the ``skip``
    metrics; ``fitted`` keeps only the curves whose analysis has a fit."""
    out: dict[str, list[CurveRef]] = {}
    for r in refs:
        if r.role != "objective" or r.metric in skip:
            continue
        if fitted and (r.analysis is None or r.analysis.fit is None):
            continue
        out.setdefault(r.metric, []).append(r)
    return out
