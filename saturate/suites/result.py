"""What a suite analysis returns: frozen dataclasses with ``to_dict()``, ``from_dict()`` and
``summary()``; :class:`SuiteAnalysis` also shows itself in Jupyter (``_repr_html_``).

Formatting beyond the plain-text summary lives in :mod:`saturate.report.suite` and
:mod:`saturate.report.suite_html`; the HTML and the figure are asked of the renderers the report
registers with :mod:`saturate.results` (a result does not import the report).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from saturate.errors import miss_text, shorten
from saturate.results import (
    PASSING_VERDICTS,
    CurveAnalysis,
    Estimate,
    Verdict,
    figure_of,
    format_estimate,
    html_of,
)
from saturate.results.codec import Coded, derived, meta
from saturate.suites.normalize import Normalization

__all__ = ["AggregateCurve", "TaskResult", "SuiteGroup", "GroupComparison", "SuiteAnalysis"]

_PROB = {"minimum": 0, "maximum": 1}
_BAND_FIELDS = ("iqm", "iqm_lo", "iqm_hi", "mean", "mean_lo", "mean_hi", "value_se", "doubling_se")


@dataclass(frozen=True)
class AggregateCurve(Coded):
    """A group's aggregate curves on the shared compute grid, with pointwise bootstrap bands.

    ``n_tasks[g]`` counts the tasks covering grid point ``g`` (``n_scores[g]`` their seeds);
    ``analysed`` is the ``[start, stop)`` range covered by enough tasks. ``value_se`` and
    ``doubling_se``: bootstrap standard errors of the analysed statistic and of its gain over the
    doubling ending at each point, whose bootstrap curves ``replicates`` holds (not serialised).
    """

    _json_def: ClassVar[str] = "aggregate"

    compute: tuple[float, ...]
    iqm: tuple[float, ...]
    iqm_lo: tuple[float, ...]
    iqm_hi: tuple[float, ...]
    mean: tuple[float, ...]
    mean_lo: tuple[float, ...]
    mean_hi: tuple[float, ...]
    value_se: tuple[float, ...]
    doubling_se: tuple[float, ...]
    n_tasks: tuple[int, ...]
    n_scores: tuple[int, ...]
    analysed: tuple[int, int]
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        start, stop = self.analysed
        return (f"AggregateCurve({len(self.compute)} points, analysed {start}..{stop - 1}, "
                f"iqm {self.iqm[stop - 1]:.4g} at {self.compute[stop - 1]:.4g})"
                if stop > start else f"AggregateCurve({len(self.compute)} points)")

    def frame(self) -> pd.DataFrame:
        """One row per grid point: compute, the two statistics with their bands, the counts."""
        cols = {"compute": self.compute, **{k: getattr(self, k) for k in _BAND_FIELDS},
                "n_tasks": self.n_tasks, "n_scores": self.n_scores}
        df = pd.DataFrame(cols)
        idx = np.arange(len(self.compute))
        df["analysed"] = (idx >= self.analysed[0]) & (idx < self.analysed[1])
        return df


@dataclass(frozen=True)
class TaskResult(Coded):
    """The verdict on one task of a group: its seeds pooled, its scores normalised."""

    _json_def: ClassVar[str] = "task"

    task: str
    n_seeds: int = field(metadata=meta(schema={"minimum": 1}))
    verdict: Verdict
    gain_per_doubling: Estimate
    threshold: float
    knee: float | None
    stop_point: Estimate | None
    compute_last: float
    value_last: float
    reasons: tuple[str, ...] = field(default=(), metadata=meta(required=True))
    curve: CurveAnalysis | None = field(default=None, repr=False, compare=False)

    @property
    def passes(self) -> bool:
        """True when the next doubling still pays on this task (scaling or slowing)."""
        return self.verdict in PASSING_VERDICTS

    @property
    def saturation_compute(self) -> float | None:
        """Where the task stopped paying: its stop point, else its knee (None when neither)."""
        if self.stop_point is not None and math.isfinite(self.stop_point.value):
            return float(self.stop_point.value)
        return self.knee

    @classmethod
    def from_curve(cls, task: str, n_seeds: int, c: CurveAnalysis) -> TaskResult:
        return cls(task, n_seeds, c.verdict, c.gain_per_doubling, c.threshold, c.knee,
                   c.stop_point, c.compute_last, c.value_last, c.reasons, curve=c)


@dataclass(frozen=True)
class SuiteGroup(Coded):
    """One agent (or recipe) over the suite: its aggregate curve analysed, its tasks summarised."""

    _json_order: ClassVar[tuple[str, ...]] = (
        "group", "verdict", "tasks", "n_seeds", "p_pays", "p_next_doubling_pays", "tasks_paying",
        "tasks_regressing", "saturated_first", "task_verdicts")

    group: str
    tasks: tuple[str, ...]
    n_seeds: dict[str, int]
    aggregate: AggregateCurve
    analysis: CurveAnalysis
    p_next_doubling_pays: float | None = field(metadata=meta(missing=None))
    task_results: tuple[TaskResult, ...] = ()
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        paying = (f", {len(self.paying)}/{len(self.task_results)} paying"
                  if self.task_results else "")
        return f"SuiteGroup({self.group!r}: {self.verdict}, {len(self.tasks)} tasks{paying})"

    @derived()
    def verdict(self) -> str:
        return self.analysis.verdict

    @derived()
    def p_pays(self) -> float | None:
        """P(pays) of the aggregate: the probability, behind its verdict, that the next doubling
        of compute gains at least the threshold (the call's, as for a single curve)."""
        return self.analysis.p_pays

    @property
    def passes(self) -> bool:
        """True when the suite aggregate still gains the threshold per doubling."""
        return self.analysis.passes

    @property
    def paying(self) -> tuple[str, ...]:
        """The tasks on which the next doubling still pays."""
        return tuple(t.task for t in self.task_results if t.passes)

    @property
    def regressing(self) -> tuple[str, ...]:
        return tuple(t.task for t in self.task_results if t.verdict == "regressing")

    @property
    def saturated_first(self) -> TaskResult | None:
        """The saturated task that stopped paying at the least compute (None if none did)."""
        done = [(c, t) for t in self.task_results
                if t.verdict == "saturated" and (c := t.saturation_compute) is not None]
        return min(done, key=lambda d: d[0])[1] if done else None

    def task_counts(self) -> dict[str, int]:
        """``{verdict: number of tasks}`` in verdict order."""
        out: dict[str, int] = {}
        for t in self.task_results:
            out[t.verdict] = out.get(t.verdict, 0) + 1
        return out

    @derived(key="tasks_paying")
    def _paying(self) -> tuple[str, ...]:
        return self.paying

    @derived(key="tasks_regressing")
    def _regressing(self) -> tuple[str, ...]:
        return self.regressing

    @derived(key="saturated_first")
    def _saturated_first(self) -> dict[str, Any] | None:
        first = self.saturated_first
        return None if first is None else {"task": first.task, "compute": first.saturation_compute}

    @derived(key="task_verdicts")
    def _task_verdicts(self) -> dict[str, int]:
        return self.task_counts()


@dataclass(frozen=True)
class GroupComparison(Coded):
    """Two groups' aggregates: who is ahead at the last shared compute and at twice it, and
    where their fitted curves cross (``crossing`` beyond the data, None when they do not within
    the horizon). Probabilities are that ``a`` is ahead of ``b``."""

    _json_def: ClassVar[str] = "comparison"

    a: str
    b: str
    compute: float
    p_a_ahead: float | None = field(metadata=meta(schema=_PROB))
    compute_2x: float
    p_a_ahead_2x: float | None = field(metadata=meta(schema=_PROB))
    crossing: Estimate | None = field(default=None, metadata=meta(required=True))
    leader_after: str | None = field(default=None, metadata=meta(required=True))
    notes: tuple[str, ...] = field(default=(), metadata=meta(required=True))

    def summary(self) -> str:
        def p(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.2f}"

        cross = ("their fitted curves do not cross within 64x" if self.crossing is None else
                 f"fitted curves cross at {format_estimate(self.crossing)}, "
                 f"{self.leader_after} ahead after")
        return (f"{self.a} vs {self.b}: P({self.a} ahead) {p(self.p_a_ahead)} at "
                f"{self.compute:.4g}, {p(self.p_a_ahead_2x)} at {self.compute_2x:.4g}; {cross}")


@dataclass(frozen=True)
class SuiteAnalysis(Coded):
    """Is each agent, as a whole, still scaling over the suite, and which tasks hold it back?

    One :class:`SuiteGroup` per value of ``group_by`` (one group ``"all"`` without it), and a
    :class:`GroupComparison` per pair of groups. ``statistic`` names the aggregate analysed
    (``iqm`` or ``mean``); the bands are ``confidence`` intervals from ``n_boot`` stratified
    bootstrap replicates (seeds resampled within tasks; tasks too when ``task_bootstrap``).
    """

    suite: str
    suite_column: str
    metric: str
    group_by: str | None = field(metadata=meta(missing=None))
    statistic: str
    normalization: Normalization
    confidence: float
    n_boot: int
    seed: int
    task_bootstrap: bool
    min_coverage: float
    compute_name: str
    groups: tuple[SuiteGroup, ...]
    comparisons: tuple[GroupComparison, ...] = ()
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        groups = ", ".join(f"{g.group} {g.verdict}" for g in self.groups)
        return (f"SuiteAnalysis(suite={self.suite!r}, metric={self.metric!r}, "
                f"statistic={self.statistic!r}, groups: {groups})")

    def __getitem__(self, group: str) -> SuiteGroup:
        for g in self.groups:
            if g.group == group:
                return g
        raise KeyError(miss_text(f"no group {shorten(repr(group))}", [group],
                                 [g.group for g in self.groups], "groups"))

    @property
    def passes(self) -> bool:
        """True when every group's aggregate still pays for the next doubling (for a gate)."""
        return all(g.passes for g in self.groups)

    def method(self) -> str:
        """How the aggregate and its intervals were made, in one sentence."""
        what = "tasks and seeds" if self.task_bootstrap else "seeds within each task"
        stat = "interquartile mean" if self.statistic == "iqm" else "mean of task means"
        return (f"{stat} over tasks and seeds of {self.metric} ({self.normalization.describe()}); "
                f"{self.confidence:.0%} intervals from a stratified bootstrap over {what} "
                f"({self.n_boot} replicates, seed {self.seed})")

    @derived("statistic", key="method")
    def _method(self) -> str:
        return self.method()

    def to_frame(self) -> pd.DataFrame:
        """One row per group: verdict, last aggregate, gain per doubling, P(next doubling pays),
        task counts."""
        rows = []
        for g in self.groups:
            a = g.analysis
            first = g.saturated_first
            rows.append({
                "group": g.group, "verdict": g.verdict, "n_tasks": len(g.tasks),
                "compute_last": a.compute_last, "value_last": a.value_last,
                "gain_per_doubling": a.gain_per_doubling.value,
                "gain_lo": a.gain_per_doubling.lo, "gain_hi": a.gain_per_doubling.hi,
                "threshold": a.threshold, "p_pays": g.p_pays,
                "p_next_doubling_pays": g.p_next_doubling_pays,
                "tasks_paying": len(g.paying) if g.task_results else None,
                "tasks_regressing": len(g.regressing) if g.task_results else None,
                "saturated_first": None if first is None else first.task,
            })
        return pd.DataFrame(rows)

    def tasks_frame(self) -> pd.DataFrame:
        """The per-task verdicts as a (task x group) table."""
        rows = {(t.task, g.group): t.verdict for g in self.groups for t in g.task_results}
        if not rows:
            return pd.DataFrame()
        return pd.Series(rows).unstack().reindex(columns=[g.group for g in self.groups])

    def summary(self) -> str:
        """A plain-text report: method, each group's verdict and tasks, the comparisons."""
        lines = [f"Suite {self.suite} ({len({t for g in self.groups for t in g.tasks})} tasks): "
                 f"{self.method()}"]
        for g in self.groups:
            a = g.analysis
            p = "n/a" if g.p_next_doubling_pays is None else f"{g.p_next_doubling_pays:.2f}"
            lines.append(
                f"{g.group}: {g.verdict.upper()}"
                f"{'' if g.p_pays is None else f' at P(pays) {g.p_pays:.2f}'}: "
                f"{self.statistic} {a.value_last:.3g} at "
                f"{a.compute_last:.4g}; gain per doubling {format_estimate(a.gain_per_doubling)} "
                f"(threshold {a.threshold:.3g}); P(next doubling pays) {p} (suite bootstrap)")
            if g.task_results:
                first = g.saturated_first
                where = ("" if first is None else
                         f"; saturated first: {first.task} (at {first.saturation_compute:.4g})")
                regress = f"; regressing: {', '.join(g.regressing)}" if g.regressing else ""
                lines.append(f"  tasks: {len(g.paying)}/{len(g.task_results)} still pay{where}"
                             f"{regress}")
            lines += [f"  - {r}" for r in a.reasons]
            lines += [f"  note: {n}" for n in g.notes]
        lines += [c.summary() for c in self.comparisons]
        lines += [f"note: {n}" for n in (*self.normalization.notes, *self.notes)]
        return "\n".join(lines)

    def plot(self):  # noqa: ANN201
        """A matplotlib Figure of every group's aggregate with its band and forecast. In Jupyter
        it shows once, inline, as the cell's value (made through pyplot and closed there)."""
        return figure_of(self, "suite")

    def _repr_html_(self) -> str:
        return html_of(self, "suite")
