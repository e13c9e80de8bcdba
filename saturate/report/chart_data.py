"""The numbers the pages' interactive charts draw, as plain JSON-able data: per curve its points
(step, compute, value), its fit over the observed range and its forecast as reported; per metric
of a source its runs and each recipe's pooled curve. The page script (``assets/page.js``) draws
the runs explorer from them, and shows the values on hover.

Only what is drawn: a curve of more than :data:`MAX_POINTS` points (fewer when the page holds many
curves, :data:`TOTAL_POINTS`) is thinned for display (evenly, the last kept), values keep :data:`DIGITS` significant digits, and names are shown as
every face shows them (control and bidi characters escaped, :func:`~saturate.report.text.
for_terminal`). The analysis itself, its numbers and verdicts, never reads any of this.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from saturate.report.html_assets import BADGE_COLORS, run_url
from saturate.report.plots.overlay import PALETTE, fit_line, pooled_curve, recipes
from saturate.report.plots.style import forecast_grid, forecast_path
from saturate.report.rows import interval, prob
from saturate.report.text import for_terminal
from saturate.results import CurveAnalysis

MAX_POINTS = 600
"""Points of a curve the page draws at most (the chart is about 700 px wide)."""
TOTAL_POINTS = 150_000
"""Points the page holds at most over all its curves (a report of thousands of curves stays a
page a browser opens): each curve then keeps its share, never fewer than :data:`MIN_POINTS`."""
MIN_POINTS = 60
DIGITS = 5
"""Significant digits of the numbers the page holds (the hover shows them)."""
FIT_POINTS = 48
FORECAST_POINTS = 16
PAGE_RUNS = 12
"""Runs the explorer draws at once by default (its pages): more cannot be told apart."""


def _nums(values: np.ndarray | Sequence[float]) -> list[float | None]:
    """Rounded to :data:`DIGITS` significant digits; ``None`` (a gap) where not finite."""
    return [float(f"{v:.{DIGITS}g}") if math.isfinite(v) else None
            for v in np.asarray(values, dtype=float).tolist()]


def _points(curve: CurveAnalysis, cap: int = MAX_POINTS
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(step, compute, value) of the curve's finite points in the order they were logged,
    thinned to ``cap`` (evenly, the first and the last kept)."""
    pts = curve.points
    if pts is None or len(pts) == 0:
        return np.empty(0), np.empty(0), np.empty(0)
    cols = [c for c in ("step", "compute") if c in pts.columns]
    pts = pts.sort_values(cols, kind="stable") if cols else pts
    y = pts["value"].to_numpy(float)
    c = pts["compute"].to_numpy(float) if "compute" in pts.columns else np.full(y.size, np.nan)
    s = pts["step"].to_numpy(float) if "step" in pts.columns else c
    keep = np.isfinite(y)
    s, c, y = s[keep], c[keep], y[keep]
    if y.size > cap:
        idx = np.unique(np.linspace(0, y.size - 1, cap).round().astype(int))
        s, c, y = s[idx], c[idx], y[idx]
    return s, c, y


def _as_steps(grid: np.ndarray, c: np.ndarray, s: np.ndarray) -> list[float | None]:
    """The steps at the computes of ``grid``, read off the curve's own (compute, step) pairs on a
    log scale (a fit is a function of compute; on the step axis it is drawn where the run was)."""
    ok = np.isfinite(c) & np.isfinite(s) & (c > 0)
    if ok.sum() < 2:
        return [None] * grid.size
    order = np.argsort(c[ok], kind="stable")
    cc, ss = c[ok][order], s[ok][order]
    inside = (grid >= cc[0]) & (grid <= cc[-1])
    out = np.where(inside, np.interp(np.log(grid), np.log(cc), ss), np.nan)
    return _nums(out)


def curve_data(i: int, curve: CurveAnalysis, confidence: float,
               cap: int = MAX_POINTS) -> dict[str, Any]:  # fmt: skip
    """What the explorer draws of curve ``i`` (its row in the table, ``#c{i}`` its section), its
    points thinned to ``cap``."""
    s, c, y = _points(curve, cap)
    out: dict[str, Any] = {
        "i": i, "run": for_terminal(curve.run), "metric": for_terminal(curve.metric),
        "verdict": curve.verdict, "p": prob(curve.p_pays), "gain": interval(curve.gain_per_doubling),
        "dir": curve.direction, "url": run_url(curve), "s": _nums(s), "x": _nums(c), "y": _nums(y)}
    line = fit_line(curve, FIT_POINTS)
    if line is not None:
        out.update(fx=_nums(line[0]), fs=_as_steps(line[0], c, s), fy=_nums(line[1]))
    last = curve.compute_last
    if curve.fit is not None and isinstance(last, float) and math.isfinite(last) and last > 0:
        grid = forecast_grid(curve, last, FORECAST_POINTS)
        path = forecast_path(curve, grid, confidence)
        if path is not None:
            value, lo, hi = path
            out.update(ax=_nums(grid), ay=_nums(value), alo=_nums(lo), ahi=_nums(hi))
    return out


def _x_name(curve: CurveAnalysis) -> str:
    unit = getattr(curve, "compute_unit", None)
    return for_terminal(f"{curve.compute_name} ({unit})" if unit else curve.compute_name)


def group_data(curves: Sequence[CurveAnalysis]) -> list[dict[str, Any]]:
    """Every metric of a source, its runs in name order (indices into ``curves``), each recipe's
    pooled curve (the mean of its seeds' fits) when it has two runs or more; the groups with the
    most runs first."""
    by: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(curves):
        by.setdefault((c.source, c.metric), []).append(i)
    out = []
    for (source, metric), idx in by.items():
        idx = sorted(idx, key=lambda i: (curves[i].run, curves[i].run_id))
        members = [curves[i] for i in idx]
        pooled = []
        if len(idx) >= 2:
            for recipe, which in recipes(members):
                line = pooled_curve([members[k] for k in which], FIT_POINTS)
                if line is not None:
                    pooled.append({"label": for_terminal(recipe), "runs": [idx[k] for k in which],
                                   "x": _nums(line[0]), "y": _nums(line[1])})
        name = Path(source).name or source
        out.append({"metric": for_terminal(metric), "source": for_terminal(name),
                    "label": for_terminal(f"{metric} · {name} ({len(idx)} "
                                          f"run{'' if len(idx) == 1 else 's'})"),
                    "xname": _x_name(members[0]), "curves": idx, "pooled": pooled})
    out.sort(key=lambda g: -len(g["curves"]))
    return out


def page_data(curves: Sequence[CurveAnalysis], confidence: float, *,
              sections: bool = True) -> dict[str, Any]:  # fmt: skip
    """Everything the page script draws: the curves, the groups, the colours; ``sections``: the
    page has a section per curve (``#c{i}``) a run's name links to."""
    cap = max(MIN_POINTS, min(MAX_POINTS, TOTAL_POINTS // max(len(curves), 1)))
    return {"curves": [curve_data(i, c, confidence, cap) for i, c in enumerate(curves)],
            "groups": group_data(curves), "palette": list(PALETTE), "verdicts": BADGE_COLORS,
            "page": PAGE_RUNS, "sections": sections}
