"""How the estimates of one curve evolved as the run grew.

:func:`refit_timeline` re-analyses the curve truncated at log-spaced points of its own history;
:func:`history_timeline` reads the analyses ``saturate watch`` recorded. Both give a
:class:`Timeline`, which answers "when did we first see saturation?" (:meth:`Timeline.first_seen`,
:meth:`Timeline.since`) and "was the asymptote estimate stable?" (:meth:`Timeline.asymptote_stability`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from saturate.errors import InputError, SettingsError
from saturate.results import CurveAnalysis, Estimate, ForecastPoint, format_estimate, jsonable
from saturate.text import for_terminal

__all__ = [
    "TimelinePoint",
    "Timeline",
    "cutoffs",
    "refit_timeline",
    "history_timeline",
    "plot_timeline",
    "curve_timeline",
    "ORIGINS",
]


@dataclass(frozen=True)
class TimelinePoint:
    """The analysis of the curve as it stood at ``compute`` (``n_points`` points seen)."""

    compute: float
    n_points: int
    verdict: str
    asymptote: Estimate
    gain_per_doubling: Estimate
    forecast: ForecastPoint | None = None
    knee: float | None = None
    stop_point: Estimate | None = None
    time: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return jsonable({
            "compute": self.compute, "n_points": self.n_points, "verdict": self.verdict,
            "asymptote": self.asymptote.to_dict(),
            "gain_per_doubling": self.gain_per_doubling.to_dict(),
            "forecast": None if self.forecast is None else self.forecast.to_dict(),
            "knee": self.knee,
            "stop_point": None if self.stop_point is None else self.stop_point.to_dict(),
            "time": self.time,
        })  # fmt: skip


@dataclass(frozen=True)
class Stability:
    """Whether the asymptote settled: the later estimates all fall in the final interval."""

    stable: bool | None
    drift: float
    n_compared: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self.__dict__)


@dataclass(frozen=True)
class Timeline:
    """One curve's estimates through its history; ``origin`` is ``refit`` or ``history``."""

    source: str
    run_id: str
    run: str
    metric: str
    compute_name: str
    origin: str
    target: float | None
    points: tuple[TimelinePoint, ...]

    def first_seen(self, verdict: str) -> float | None:
        """The first compute at which the verdict was ``verdict`` (None: never)."""
        return next((p.compute for p in self.points if p.verdict == verdict), None)

    def since(self, verdict: str) -> float | None:
        """The compute since which the verdict has been ``verdict`` without a break (None: not now)."""
        start = None
        for p in self.points:
            if p.verdict != verdict:
                start = None
            elif start is None:
                start = p.compute
        return start

    def asymptote_stability(self) -> Stability:
        """Compare the estimates of the later half of the history with the final one.

        Stable when each identified later estimate lies inside the final estimate's interval;
        ``drift`` is their spread relative to the final value's magnitude.
        """
        ident = [p for p in self.points if p.asymptote.identified and math.isfinite(p.asymptote.value)]
        if len(ident) < 2 or not self.points[-1].asymptote.identified:
            return Stability(None, math.nan, len(ident),
                             "fewer than two identified asymptote estimates, or none at the end")
        final = ident[-1].asymptote
        later = ident[len(ident) // 2:]
        values = np.array([p.asymptote.value for p in later])
        scale = max(abs(final.value), 1e-12)
        drift = float(np.ptp(values) / scale)
        if not (math.isfinite(final.lo) and math.isfinite(final.hi)):
            return Stability(None, drift, len(later), "the final asymptote has no interval")
        inside = bool(np.all((values >= final.lo) & (values <= final.hi)))
        why = (f"the last {len(later)} estimates all lie in the final interval "
               f"[{final.lo:.4g}, {final.hi:.4g}]" if inside else
               f"some of the last {len(later)} estimates fall outside the final interval "
               f"[{final.lo:.4g}, {final.hi:.4g}]")  # fmt: skip
        return Stability(inside, drift, len(later), why)

    def to_dict(self) -> dict[str, Any]:
        return jsonable({
            "source": self.source, "run_id": self.run_id, "run": self.run, "metric": self.metric,
            "compute_name": self.compute_name, "origin": self.origin, "target": self.target,
            "first_saturated": self.first_seen("saturated"),
            "saturated_since": self.since("saturated"),
            "asymptote_stability": self.asymptote_stability().to_dict(),
            "points": [p.to_dict() for p in self.points],
        })  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """One row per point with the estimates flattened."""
        rows = []
        for p in self.points:
            row: dict[str, Any] = {"compute": p.compute, "n_points": p.n_points,
                                   "verdict": p.verdict}
            for name, e in (("asymptote", p.asymptote), ("gain_per_doubling", p.gain_per_doubling),
                            ("stop_point", p.stop_point)):  # fmt: skip
                row[name] = None if e is None else e.value
                row[f"{name}_lo"] = None if e is None else e.lo
                row[f"{name}_hi"] = None if e is None else e.hi
            f = p.forecast
            row["forecast"] = None if f is None else f.value
            row["forecast_lo"] = None if f is None else f.lo
            row["forecast_hi"] = None if f is None else f.hi
            row["knee"] = p.knee
            rows.append(row)
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """A plain-text table of the history and the two answers, one line per analysis."""
        first = self.first_seen("saturated")
        since = self.since("saturated")
        stab = self.asymptote_stability()
        target = "" if self.target is None else f" (forecast at {self.target:.4g})"
        lines = [f"{self.run} / {self.metric}: {len(self.points)} analyses from {self.origin}"
                 f"{target}"]
        for p in self.points:
            fc = "" if p.forecast is None else (
                f"  forecast {p.forecast.value:.4g} [{p.forecast.lo:.4g}, {p.forecast.hi:.4g}]")
            lines.append(
                f"  {self.compute_name} {p.compute:<10.4g} {p.verdict:<12} asymptote "
                f"{format_estimate(p.asymptote)}  gain/doubling "
                f"{format_estimate(p.gain_per_doubling)}{fc}"
            )
        lines.append("  first seen saturated: " + ("never" if first is None else f"{first:.4g}")
                     + ("" if since is None else f"; saturated since {since:.4g}"))
        label = {True: "stable", False: "not stable", None: "unknown"}[stab.stable]
        lines.append(f"  asymptote {label}: {stab.reason}")
        return "\n".join(for_terminal(line) for line in lines)  # names cannot break a line


def cutoffs(compute: np.ndarray, n: int, min_points: int) -> list[int]:
    """Numbers of points to keep: at ``n`` log-spaced compute values from the ``min_points``-th
    positive point to the last (always including the whole curve)."""
    c = np.sort(np.asarray(compute, dtype=float))
    total = len(c)
    pos = c[c > 0]
    if total == 0:
        return []
    if len(pos) < min_points or n < 2:
        return [total]
    first = pos[min_points - 1]
    grid = np.geomspace(first, pos[-1], n) if pos[-1] > first else np.array([pos[-1]])
    counts = np.searchsorted(c, grid * (1 + 1e-12), side="right")
    return sorted({int(k) for k in counts if k >= min_points} | {total})


def refit_timeline(
    points: pd.DataFrame,
    settings: Any = None,
    *,
    n: int = 8,
    target: float | None = None,
    analyze: Callable[[pd.DataFrame, Any], CurveAnalysis] | None = None,
) -> Timeline:
    """Re-analyse ONE curve (its tidy rows) truncated at ``n`` log-spaced points of its history.

    ``target`` is the compute to forecast at every step (default: twice the final compute), so
    forecasts made at different times are comparable.
    """
    from saturate.analysis import AnalysisSettings, analyze_curve

    if points.empty:
        raise InputError("timeline: the curve has no points")
    keys = points[["source", "run_id", "metric"]].drop_duplicates()
    if len(keys) != 1:
        raise InputError(f"timeline: expected one curve, got {len(keys)} (narrow --run/--metric)")
    if n < 2:
        raise SettingsError(f"--points must be >= 2, got {n}")
    settings = settings or AnalysisSettings()
    analyze = analyze or analyze_curve
    pts = points.sort_values(["compute", "step"], kind="stable").reset_index(drop=True)
    pts.attrs = dict(points.attrs)
    final = float(pts["compute"].iloc[-1])
    if target is None:
        target = 2.0 * final if final > 0 else None
    if target is not None:
        if not math.isfinite(target) or target <= 0:
            raise SettingsError(f"--at must be a positive compute, got {target!r}")
        settings = dataclasses.replace(settings, forecast_at=(float(target),))
    out = []
    for k in cutoffs(pts["compute"].to_numpy(float), n, int(getattr(settings, "min_points", 6))):
        part = pts.iloc[:k].copy()
        part.attrs = dict(pts.attrs)
        a = analyze(part, settings)
        out.append(_point(a, target))
    first = pts.iloc[0]
    return Timeline(str(first["source"]), str(first["run_id"]), str(first["run"]),
                    str(first["metric"]), str(pts.attrs.get("compute_name", "step")), "refit",
                    target, tuple(out))  # fmt: skip


def _point(a: CurveAnalysis, target: float | None, time: float | None = None) -> TimelinePoint:
    fc = None
    for f in a.forecast:
        if target is not None and math.isclose(f.compute, target, rel_tol=1e-9):
            fc = f
    return TimelinePoint(a.compute_last, a.n_points, a.verdict, a.asymptote, a.gain_per_doubling,
                         fc, a.knee, a.stop_point, time)  # fmt: skip


def history_timeline(store: Any, run: str, metric: str, *, source: str | None = None,
                     target: float | None = None) -> Timeline:
    """The timeline of one curve from the analyses ``saturate watch`` recorded in ``store``.

    Forecasts appear only where a recorded forecast was made at ``target``; the watcher's
    forecasts are relative to each pass (``2x``), so ``--at`` usually needs a re-fit instead.
    """
    import json

    from saturate.tracker.state import curve_from_dict

    rows = store.analyses(run=run, metric=metric, source=source)
    if rows.empty:
        raise InputError(f"the watch history holds no analysis of run {run!r}, metric {metric!r}")
    curves = rows.groupby(["source", "run_id"]).size()
    if len(curves) > 1:
        raise InputError(f"run {run!r} matches {len(curves)} curves in the history; name its id "
                         "or pass the source")
    out = [_point(curve_from_dict(json.loads(r.payload)), target, float(r.time))
           for r in rows.itertuples()]  # fmt: skip
    last = rows.iloc[-1]
    return Timeline(str(last["source"]), str(last["run_id"]), str(last["run"]),
                    str(last["metric"]), str(last["compute_name"]), "history", target,
                    tuple(out))  # fmt: skip


def plot_timeline(timeline: Timeline, ax: Any = None) -> Any:
    """The asymptote estimate and its band (and the forecast at the target) against compute.

    Verdict changes are marked with a vertical line and the new verdict. Returns the Axes.
    """
    from matplotlib.figure import Figure

    if ax is None:
        ax = Figure(figsize=(7.5, 4.0), layout="constrained").subplots()
    c = np.array([p.compute for p in timeline.points], dtype=float)

    def series(get: Callable[[TimelinePoint], Any]) -> tuple[np.ndarray, ...]:
        vals = [get(p) for p in timeline.points]
        return tuple(np.array([math.nan if v is None else getattr(v, a) for v in vals], dtype=float)
                     for a in ("value", "lo", "hi"))  # fmt: skip

    av, alo, ahi = series(lambda p: p.asymptote if p.asymptote.identified else None)
    ax.plot(c, av, "o-", color="C0", label="asymptote")
    ax.fill_between(c, alo, ahi, color="C0", alpha=0.2, linewidth=0)
    if any(p.forecast is not None for p in timeline.points):
        fv, flo, fhi = series(lambda p: p.forecast)
        at = "" if timeline.target is None else f" at {timeline.target:.3g}"
        ax.plot(c, fv, "s--", color="C1", label=f"forecast{at}")
        ax.fill_between(c, flo, fhi, color="C1", alpha=0.15, linewidth=0)
    prev = None
    for p in timeline.points:
        if p.verdict != prev:
            ax.axvline(p.compute, color="0.6", lw=0.8, ls=":")
            ax.annotate(p.verdict, (p.compute, 1.0), xycoords=("data", "axes fraction"),
                        rotation=90, va="top", ha="right", fontsize=7, color="0.35")
            prev = p.verdict
    if np.all(c > 0):
        ax.set_xscale("log")
    ax.set_xlabel(timeline.compute_name)
    ax.set_ylabel(timeline.metric)
    ax.set_title(f"{timeline.run} / {timeline.metric}: estimates as the run grew", fontsize=10,
                 loc="left")
    ax.legend(fontsize=8, loc="best")
    return ax


ORIGINS = ("auto", "refit", "history")


def curve_timeline(
    source: Any,
    run: str,
    metric: str,
    *,
    settings: Any = None,
    origin: str = "auto",
    state: Any = None,
    points: int = 8,
    at: float | None = None,
    fast: bool = True,
) -> Timeline:
    """The timeline of one curve: from the watch history in ``state`` or re-fitted from ``source``.

    ``origin``: ``history`` reads the history only; ``refit`` re-fits only; ``auto`` uses the
    history when it holds at least two analyses of the curve, else re-fits. ``settings`` is a
    :class:`saturate.settings.Settings` (its selection and analysis settings; ``run`` and
    ``metric`` name the curve). ``points`` and ``at`` as in :func:`refit_timeline`.
    """
    from saturate.settings import Settings
    from saturate.tracker.state import DEFAULT_STATE, HistoryStore
    from saturate.validation import check_choice

    origin = check_choice(origin, "origin", ORIGINS)
    state = DEFAULT_STATE if state is None else state
    if origin == "history" or (origin == "auto" and Path(state).is_file()):
        with HistoryStore(state, readonly=True) as store:
            try:
                found = history_timeline(store, run, metric, target=at)
            except InputError:
                if origin == "history":
                    raise
                found = None
        if found is not None and (origin == "history" or len(found.points) >= 2):
            return found
    return _refit_from_source(source, run, metric, settings or Settings(), points, at, fast)


def _refit_from_source(source: Any, run: str, metric: str, settings: Any, points: int,
                       at: float | None, fast: bool) -> Timeline:
    """Read the one curve ``run`` / ``metric`` names and re-fit it along its history."""
    from saturate import curves
    from saturate.ingest import load

    df = load(source, **{**settings.selection(), "metric": [metric], "run": [run]}, fast=fast)
    keys = df[["source", "run_id"]].drop_duplicates()
    if len(keys) > 1:
        names = ", ".join(sorted(set(df["run"]) | set(df["run_id"]))[:6])
        raise InputError(f"run {run!r} matches {len(keys)} runs ({names}); name one run id")
    (_, pts), = list(curves.iter_curves(df))
    pts = pts.copy()
    pts.attrs = dict(df.attrs)
    return refit_timeline(pts, settings.analysis(), n=points, target=at)
