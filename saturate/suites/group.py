"""One group of a suite: its aggregate curve with bootstrap bands and its analysis, P(the next
doubling pays), and the verdict on each of its tasks."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from saturate.analysis import AnalysisSettings, analyze_curve
from saturate.analysis.seed_mean import pool_seeds
from saturate.errors import InputError
from saturate.measure.evidence import precision_share
from saturate.measure.quantities import share_above
from saturate.results import CurveAnalysis
from saturate.suites.aggregate import STATISTICS, aggregate, stratified_bootstrap
from saturate.suites.frame import SuiteRows
from saturate.suites.grid import ScoreTensor
from saturate.suites.result import AggregateCurve, SuiteGroup, TaskResult


def analyze_group(
    name: str,
    rows: pd.DataFrame,
    tensor: ScoreTensor,
    grid: np.ndarray,
    sr: SuiteRows,
    settings: AnalysisSettings,
    *,
    statistic: str,
    n_boot: int,
    rng: np.random.Generator,
    task_bootstrap: bool,
    min_coverage: float,
    per_task: bool,
    compute_name: str,
    tick: Callable[[], None],
) -> SuiteGroup:
    """The :class:`SuiteGroup` of one group's rows (with ``_task``, ``_run``, ``_score``)."""
    point = aggregate(tensor.scores)
    reps = stratified_bootstrap(tensor.scores, tensor.n_seeds, n_boot=n_boot, rng=rng,
                                task_bootstrap=task_bootstrap)
    curve = aggregate_curve(grid, tensor, point, reps, statistic, settings.confidence,
                            min_coverage)
    start, stop = curve.analysed
    if stop - start < 1:
        raise InputError(
            f"suite group {name!r}: no compute is covered by {min_coverage:.0%} of its "
            f"{len(tensor.tasks)} tasks; lower min_coverage or check the tasks' compute ranges")
    analysis = _aggregate_analysis(name, curve, sr, settings, statistic, compute_name, tensor)
    tick()
    tasks = _task_results(name, rows, tensor, settings, compute_name, tick) if per_task else ()
    return SuiteGroup(
        group=name, tasks=tensor.tasks,
        n_seeds={t: int(n) for t, n in zip(tensor.tasks, tensor.n_seeds, strict=True)},
        aggregate=curve, analysis=analysis,
        p_next_doubling_pays=p_next_doubling_pays(analysis, curve, settings.confidence),
        task_results=tasks, notes=_notes(tensor, curve, task_bootstrap),
    )


def _longest_run(ok: np.ndarray) -> tuple[int, int]:
    """``[start, stop)`` of the longest stretch of True (``(0, 0)`` when there is none)."""
    best, start = (0, 0), None
    for i, flag in enumerate([*ok.tolist(), False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            if i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    return best


def doubling_se(grid: np.ndarray, reps: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Per grid point ``c``, the bootstrap standard error of ``A(c) - A(c / 2)`` (NaN where
    ``c / 2`` is before ``grid[start]``), each replicate read at ``c / 2`` on log compute."""
    out = np.full(grid.size, np.nan)
    if stop - start < 2:
        return out
    lg = np.log(grid[start:stop])
    sub = reps[:, start:stop]
    target = lg - math.log(2.0)
    ok = target >= lg[0]
    if not ok.any():
        return out
    j = np.clip(np.searchsorted(lg, target[ok], side="right") - 1, 0, lg.size - 2)
    w = (target[ok] - lg[j]) / (lg[j + 1] - lg[j])
    diff = sub[:, ok] - (sub[:, j] * (1.0 - w) + sub[:, j + 1] * w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        se = np.nanstd(diff, axis=0, ddof=1)
    out[start:stop][ok] = se
    return out


def aggregate_curve(
    grid: np.ndarray,
    tensor: ScoreTensor,
    point: dict[str, np.ndarray],
    reps: dict[str, np.ndarray],
    statistic: str,
    confidence: float,
    min_coverage: float,
) -> AggregateCurve:
    """Point estimates, pointwise percentile bands, counts and the analysed range."""
    covered = tensor.covered
    n_tasks = covered.sum(axis=0)
    n_scores = (covered * tensor.n_seeds[:, None]).sum(axis=0)
    a = (1.0 - confidence) / 2.0
    bands = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # points no task covers stay NaN
        for name in STATISTICS:
            bands[name] = np.nanquantile(reps[name], [a, 1.0 - a], axis=0)
        need = math.ceil(min_coverage * len(tensor.tasks) - 1e-9)
        start, stop = _longest_run(n_tasks >= need)
        value_se = np.full(grid.size, np.nan)
        if stop - start >= 1:
            value_se[start:stop] = np.nanstd(reps[statistic][:, start:stop], axis=0, ddof=1)
    def floats(a: np.ndarray) -> tuple[float, ...]:
        return tuple(map(float, a))

    return AggregateCurve(
        compute=floats(grid), iqm=floats(point["iqm"]), iqm_lo=floats(bands["iqm"][0]),
        iqm_hi=floats(bands["iqm"][1]), mean=floats(point["mean"]),
        mean_lo=floats(bands["mean"][0]), mean_hi=floats(bands["mean"][1]),
        n_tasks=tuple(map(int, n_tasks)), n_scores=tuple(map(int, n_scores)),
        value_se=floats(value_se), analysed=(int(start), int(stop)), replicates=reps[statistic],
        doubling_se=floats(doubling_se(grid, reps[statistic], start, stop)),
    )


def _normalised_settings(settings: AnalysisSettings, metric: str) -> AnalysisSettings:
    """Normalised scores are larger-is-better; per-metric thresholds (metric units) do not apply."""
    return dataclasses.replace(settings, lower_is_better=(), higher_is_better=(metric,),
                               thresholds={}, group_by=None)


def _aggregate_analysis(
    name: str,
    curve: AggregateCurve,
    sr: SuiteRows,
    settings: AnalysisSettings,
    statistic: str,
    compute_name: str,
    tensor: ScoreTensor,
) -> CurveAnalysis:
    """``analyze_curve`` on the analysed stretch of the aggregate, with its bootstrap spread."""
    start, stop = curve.analysed
    metric = f"{statistic.upper()}({sr.metric})"
    sources = "; ".join(map(str, pd.unique(sr.rows["source"])))
    pts = pd.DataFrame({
        "source": sources, "experiment": f"suite {sr.task_col}", "run_id": f"suite:{name}",
        "run": name, "metric": metric, "step": np.arange(start, stop, dtype="int64"),
        "compute": np.asarray(curve.compute[start:stop]),
        "value": np.asarray(getattr(curve, statistic)[start:stop]),
        "value_se": np.asarray(curve.value_se[start:stop]),
        "doubling_se": np.asarray(curve.doubling_se[start:stop]),
        "spread_of": "tasks and seeds (stratified bootstrap)",
    })
    result = analyze_curve(pts, _normalised_settings(settings, metric))
    result = dataclasses.replace(result, compute_name=compute_name)
    group: dict[str, Any] = {"by": sr.group_col, "value": name, "suite": sr.task_col,
             "n_tasks": len(tensor.tasks), "n_seeds": int(tensor.n_seeds.sum()), "runs": []}
    return dataclasses.replace(result, group=group)


def p_next_doubling_pays(
    curve: CurveAnalysis, agg: AggregateCurve, confidence: float
) -> float | None:
    """Probability that the aggregate gains at least the threshold over the next doubling.

    The fit's (share of draws whose ``f(2C) - f(C)`` clears it, widened by :func:`gain_se`) and
    the trend's (``P(slope > threshold)``, normal) are averaged by precision (inverse squared
    interval widths), as the verdict weighs them; ``confidence`` is the trend interval's level.
    None with neither.
    """
    p_fit = None
    if curve.fit is not None:
        p_fit = share_above(curve.fit.predict_samples, curve.compute_last, curve.threshold,
                            extra_se=gain_se(curve, agg))
    p_trend = None
    trend = curve.trend.slope_per_doubling if curve.trend is not None else None
    if trend is not None and math.isfinite(trend.lo) and math.isfinite(trend.hi):
        se = (trend.hi - trend.lo) / (2.0 * float(norm.ppf(0.5 + confidence / 2.0)))
        p_trend = float(norm.sf((curve.threshold - trend.value) / se)) if se > 0 else \
            float(trend.value > curve.threshold)
    if p_fit is None or p_trend is None:
        return p_fit if p_trend is None else p_trend
    assert trend is not None  # p_trend is the trend's
    g = curve.gain_per_doubling
    width = g.hi - g.lo
    if curve.evidence is not None and math.isfinite(curve.evidence.fit_se):  # the fit's own
        width = 2.0 * float(norm.ppf(0.5 + confidence / 2.0)) * curve.evidence.fit_se
    w = precision_share(width, trend.hi - trend.lo)
    return float(w * p_fit + (1.0 - w) * p_trend)


def gain_se(curve: CurveAnalysis, agg: AggregateCurve) -> float:
    """The standard error per doubling the fit's draws do not carry: the bootstrap spread of the
    aggregate's last-doubling gain and the fit's extrapolation error, in quadrature."""
    start, stop = agg.analysed
    d = np.asarray(agg.doubling_se[start:stop], dtype=float)
    d = d[np.isfinite(d)]
    spread = float(np.median(d[-3:])) if d.size else 0.0
    fit = curve.fit
    extrap = fit.extrapolation_se if fit is not None else math.nan
    return math.hypot(spread, extrap if math.isfinite(extrap) else 0.0)


def _task_results(
    name: str,
    rows: pd.DataFrame,
    tensor: ScoreTensor,
    settings: AnalysisSettings,
    compute_name: str,
    tick: Callable[[], None],
) -> tuple[TaskResult, ...]:
    """Each task's seeds pooled (mean curve with the seed spread) and analysed, normalised."""
    out = []
    for task, n in zip(tensor.tasks, tensor.n_seeds, strict=True):
        sub = rows[rows["_task"] == task]
        metric = f"normalised({sub['metric'].iloc[0]})"
        tidy = sub.assign(value=sub["_score"], metric=metric,
                          source="; ".join(map(str, pd.unique(sub["source"]))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeds without overlap were rejected before
            pooled = pool_seeds(tidy, "_task")
        label = f"{task} | {name}"
        pooled = pooled.assign(run=label, run_id=label)
        curve = analyze_curve(pooled, _normalised_settings(settings, metric))
        curve = dataclasses.replace(curve, group={"task": task, "group": name, "n_seeds": int(n)},
                                    compute_name=compute_name)
        out.append(TaskResult.from_curve(task, int(n), curve))
        tick()
    return tuple(out)


def _notes(tensor: ScoreTensor, curve: AggregateCurve, task_bootstrap: bool) -> tuple[str, ...]:
    notes = []
    most = int(tensor.n_seeds.max())
    fewer = [f"{t} ({n})" for t, n in zip(tensor.tasks, tensor.n_seeds, strict=True) if n < most]
    if fewer:
        notes.append(f"tasks with fewer than {most} seeds: {', '.join(fewer)}; each resamples "
                     "the seeds it has")
    if most == 1 and not task_bootstrap:
        notes.append("every task has one seed: resampling seeds within tasks has no spread; "
                     "task_bootstrap=True gives intervals over tasks")
    start, stop = curve.analysed
    covered = [i for i, n in enumerate(curve.n_tasks) if n > 0]
    if covered and (start > covered[0] or stop - 1 < covered[-1]):
        notes.append(f"the analysed curve spans compute {curve.compute[start]:.4g} to "
                     f"{curve.compute[stop - 1]:.4g}, where enough of the {len(tensor.tasks)} "
                     "tasks are present; the aggregate is shown wider, with fewer tasks")
    return tuple(notes)
