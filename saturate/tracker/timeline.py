"""How the estimates of one curve evolved as the run grew: :func:`refit_timeline` re-analyses it
truncated at log-spaced points, :func:`history_timeline` reads what ``watch`` recorded. A
:class:`Timeline` answers "when did we first see saturation?" and "was the asymptote stable?".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from saturate.errors import InputError, SettingsError, no_match
from saturate.report.text import for_terminal
from saturate.results import CurveAnalysis, Estimate, ForecastPoint, format_estimate
from saturate.results.codec import Coded, derived
from saturate.table.table import Table


@dataclass(frozen=True)
class TimelinePoint(Coded):
    """The analysis of the curve as it stood at ``compute`` (``n_points`` points seen)."""

    _json_order: ClassVar[tuple[str, ...]] = ("compute", "n_points", "verdict", "p_pays")

    compute: float
    n_points: int
    verdict: str
    asymptote: Estimate
    gain_per_doubling: Estimate
    forecast: ForecastPoint | None = None
    knee: float | None = None
    stop_point: Estimate | None = None
    time: float | None = None
    p_pays: float | None = None


@dataclass(frozen=True)
class Stability(Coded):
    """Whether the asymptote settled: the later estimates all fall in the final interval."""

    stable: bool | None
    drift: float
    n_compared: int
    reason: str


@dataclass(frozen=True)
class Timeline(Coded):
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

    @derived("target", key="first_saturated")
    def _first_saturated(self) -> float | None:
        return self.first_seen("saturated")

    @derived("target", key="saturated_since")
    def _saturated_since(self) -> float | None:
        return self.since("saturated")

    @derived("target", key="asymptote_stability")
    def _stability(self) -> Stability:
        return self.asymptote_stability()

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
        """Stable when each identified estimate of the later half of the history lies inside the
        final one's interval; ``drift`` is their spread relative to the final value's magnitude."""
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


    def to_frame(self) -> pd.DataFrame:
        """One row per point with the estimates flattened."""
        rows = []
        for p in self.points:
            row: dict[str, Any] = {"compute": p.compute, "n_points": p.n_points,
                                   "verdict": p.verdict, "p_pays": p.p_pays}
            for name, e in (("asymptote", p.asymptote), ("gain_per_doubling", p.gain_per_doubling),
                            ("stop_point", p.stop_point), ("forecast", p.forecast)):  # fmt: skip
                row[name] = None if e is None else e.value
                row[f"{name}_lo"] = None if e is None else e.lo
                row[f"{name}_hi"] = None if e is None else e.hi
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
            pays = "P(pays) " + ("–   " if p.p_pays is None else f"{p.p_pays:.2f}")
            lines.append(
                f"  {self.compute_name} {p.compute:<10.4g} {p.verdict:<12} {pays}  asymptote "
                f"{format_estimate(p.asymptote)}  gain/doubling "
                f"{format_estimate(p.gain_per_doubling)}{fc}"
            )
        lines.append("  first seen saturated: " + ("never" if first is None else f"{first:.4g}")
                     + ("" if since is None else f"; saturated since {since:.4g}"))
        label = {True: "stable", False: "not stable", None: "unknown"}[stab.stable]
        lines.append(f"  asymptote {label}: {stab.reason}")
        return "\n".join(for_terminal(line) for line in lines)  # names cannot break a line


#: The most re-fits ``--points`` may ask for.
MAX_POINTS = 10_000


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
    table: Table,
    key: tuple[str, str, str],
    settings: Any = None,
    *,
    n: int = 8,
    target: float | None = None,
) -> Timeline:
    """Re-analyse the curve ``key`` (``(source, run_id, metric)``) of ``table`` truncated at
    ``n`` log-spaced points of its history.

    ``table`` (on its x axis) holds the curve and the runs it pools with; each cut applies to all
    of them and goes through :func:`saturate.api.analyze_read`, so the last point is what
    ``analyze`` says. ``target``: the compute forecast at every point (default: twice the last).
    """
    from saturate.analysis.settings import AnalysisSettings
    from saturate.settings import Settings

    settings = Settings() if settings is None else settings
    settings = dataclasses.replace(settings, suite=None)  # one curve: never a suite's groups
    if n < 2:
        raise SettingsError(f"--points must be >= 2, got {n}")
    if n > MAX_POINTS:  # each is a re-fit; a grid that large would not fit in memory either
        raise SettingsError(f"--points must be at most {MAX_POINTS}, got {n}")
    pts = table.points
    mine = pts.loc[(pts["source"] == key[0]).to_numpy() & (pts["run_id"] == key[1]).to_numpy()
                   & (pts["metric"] == key[2]).to_numpy()]
    if mine.empty:
        raise InputError("timeline: the curve has no points")
    if target is not None and (not math.isfinite(target) or target <= 0):
        raise SettingsError(f"--at must be a positive compute, got {target!r}")
    compute = np.sort(mine["compute"].to_numpy(float))
    counts = cutoffs(compute, n, int(AnalysisSettings.from_settings(settings).min_points))
    if target is None:
        target = 2.0 * float(compute[-1]) if compute[-1] > 0 else None
    if target is not None:
        settings = dataclasses.replace(settings, forecast_at=(float(target),))
    out = [_point(_analysed(table, key, settings, compute[k - 1] if k < len(compute) else None),
                  target) for k in counts]
    return Timeline(key[0], key[1], str(mine["run"].iloc[0]), key[2], table.axis.name, "refit",
                    target, tuple(out))



def _analysed(table: Table, key: tuple[str, str, str], settings: Any,
              cut: float | None) -> CurveAnalysis:
    """The analysis of curve ``key`` with every curve of ``table`` cut at compute ``cut``
    (None: whole), through the one verdict path."""
    from saturate.api import analyze_read

    points = table.points
    part = table if cut is None else table.with_points(points.loc[(points["compute"] <= cut).to_numpy()])
    found = analyze_read(part, settings, diagnostics=False)
    for c in found.curves:
        if (c.source, c.run_id, c.metric) == key:
            return c
    raise InputError(f"timeline: {key[2]!r} of run {key[1]!r} is not an objective (no verdict; "
                     "see --objective)")


def _point(a: CurveAnalysis, target: float | None, time: float | None = None) -> TimelinePoint:
    fc = next((f for f in reversed(a.forecast)
               if target is not None and math.isclose(f.compute, target, rel_tol=1e-9)), None)
    return TimelinePoint(a.compute_last, a.n_points, a.verdict, a.asymptote, a.gain_per_doubling,
                         fc, a.knee, a.stop_point, time, a.p_pays)  # fmt: skip


def history_timeline(store: Any, run: str, metric: str, *, source: str | None = None,
                     target: float | None = None) -> Timeline:
    """The timeline of one curve from the analyses ``watch`` recorded in ``store``; forecasts
    only where one was made at ``target`` (the watcher forecasts at ``2x`` of each pass)."""
    import json

    from saturate.tracker.state import curve_from_dict

    store.check_names(run, metric)
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
    """The asymptote estimate and its band (and the forecast at the target) against compute, with
    verdict changes marked; returns the Axes."""
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

    ``origin``: ``history``, ``refit``, or ``auto`` (the history when it holds two analyses of the
    curve, else a re-fit). ``points`` and ``at`` as in :func:`refit_timeline`.
    """
    from saturate.settings import Settings
    from saturate.settings.checks import check_choice
    from saturate.tracker.state import DEFAULT_STATE, HistoryStore

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
    """Read the curve ``run`` / ``metric`` names with the runs of that metric it pools with,
    and re-fit it along its history."""
    from saturate.analysis.analyse_table import sibling_runs
    from saturate.analysis.settings import AnalysisSettings
    from saturate.ingest.stream import read_tables
    from saturate.table.table import concat_tables

    sel = dataclasses.replace(settings, metric=(metric,), run=())
    tables = read_tables(source, sel, fast=fast)  # on GPU-hours from wall time with --gpus
    settings = dataclasses.replace(settings, gpus=None)
    read = concat_tables(list(tables))
    df = read.points
    named = (df["run"] == run).to_numpy() | (df["run_id"] == run).to_numpy()
    keys = df.loc[named & (df["metric"] == metric).to_numpy(), ["source", "run_id"]]
    keys = keys.drop_duplicates()
    if keys.empty:
        logging = sorted(set(df.loc[(df["metric"] == metric).to_numpy(), "run"].astype(str)))
        raise no_match("--run", run, logging, f"run that logs {metric!r}",
                       plural=f"runs that log {metric!r}")
    if len(keys) > 1:
        names = ", ".join(sorted(set(df.loc[named, "run"]) | set(df.loc[named, "run_id"]))[:6])
        raise InputError(f"run {run!r} matches {len(keys)} runs ({names}); name one run id")
    key = (str(keys["source"].iloc[0]), str(keys["run_id"].iloc[0]), metric)
    one = read.with_points(df.loc[(df["metric"] == metric).to_numpy()])
    runs = (sibling_runs(one, [key[:2]]) if AnalysisSettings.from_settings(settings).decision.pool
            else {key[:2]})
    pick = pd.Series(list(zip(df["source"], df["run_id"], strict=True))).isin(runs).to_numpy()
    table = read.with_points(df.loc[pick].reset_index(drop=True), tables.axis)
    return refit_timeline(table, key, settings, n=points, target=at)
