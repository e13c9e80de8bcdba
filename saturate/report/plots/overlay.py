"""Runs on one chart: per metric of a source, every run (the seeds of a recipe, the recipes of a
sweep) with its points, fit and band in its own colour, and each recipe's pooled curve (the mean
of its seeds' fits where they all have data). The seeds of a recipe are the runs whose names
differ only in a trailing ``seed0``, ``s1``, ``rep2``, ``trial3``; with no such pair all the runs
are pooled. :func:`save_overlay_figures` writes them (``saturate plot --overlay``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from saturate.errors import InputError
from saturate.report.plots.files import _check_formats, _make_folder, _save, _slug, _unique
from saturate.report.plots.style import (
    confidence_of,
    curves_of,
    interval,
    new_figure,
    observed,
    predict,
    short,
)
from saturate.report.rows import Analysed
from saturate.results import CurveAnalysis
from saturate.vocabulary.names import axis_label

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure

#: More runs than this on one chart cannot be told apart: the first ones by name are drawn.
MAX_RUNS_PER_OVERLAY = 12
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
            "#8c8c8c", "#ccb974", "#64b5cd", "#1f77b4", "#2ca02c")
_POOLED = "#111111"
_SEED = re.compile(r"[-_.]?(?:seed|s|rep|replicate|trial|run)[-_]?\d+$", re.IGNORECASE)


def recipe_of(run: str) -> str:
    """The recipe a run is a seed of: its name less a trailing seed token (``a-seed1`` -> ``a``)."""
    return _SEED.sub("", run) or run


def recipes(curves: Sequence[CurveAnalysis]) -> list[tuple[str, list[int]]]:
    """``(recipe, indices of its runs)`` for each recipe with two seeds or more; all the runs as
    one when there is none."""
    by: dict[str, list[int]] = {}
    for i, c in enumerate(curves):
        by.setdefault(recipe_of(c.run), []).append(i)
    found = [(r, idx) for r, idx in by.items() if len(idx) >= 2]
    return found or [("all runs", list(range(len(curves))))]


def overlay_groups(curves: Iterable[CurveAnalysis]) -> dict[tuple[str, str], list[CurveAnalysis]]:
    """``{(source, metric): its curves}`` for every metric of a source that two runs or more
    logged, the runs in name order."""
    groups: dict[tuple[str, str], list[CurveAnalysis]] = {}
    for c in curves:
        groups.setdefault((c.source, c.metric), []).append(c)
    return {k: sorted(v, key=lambda c: (c.run, c.run_id)) for k, v in groups.items()
            if len({c.run_id for c in v}) >= 2}


def fit_line(curve: CurveAnalysis, n: int = 120) -> tuple[np.ndarray, np.ndarray] | None:
    """The run's fit on ``n`` points over its observed range (None: no fit to draw)."""
    c, _ = observed(curve)
    if not c.size or curve.fit is None:
        return None
    grid = np.geomspace(c[0], c[-1], n) if c[-1] > c[0] else c[-1:]
    p = predict(curve.fit, grid)
    return None if p is None else (grid, p)


def pooled_curve(curves: Sequence[CurveAnalysis], n: int = 120
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """The mean of the runs' fitted values over the compute range every fitted run covers, on
    ``n`` points (None when fewer than two runs have a fit, or their ranges do not overlap)."""
    lines = [line for line in (fit_line(c, n) for c in curves) if line is not None]
    if len(lines) < 2:
        return None
    lo = max(g[0] for g, _ in lines)
    hi = min(g[-1] for g, _ in lines)
    if not hi > lo > 0:
        return None
    grid = np.geomspace(lo, hi, n)
    values = np.vstack([np.interp(np.log(grid), np.log(g), p) for g, p in lines])
    return grid, values.mean(axis=0)


def overlay_figure(curves: Sequence[CurveAnalysis], *, confidence: float = 0.9) -> Figure:
    """One chart of the ``curves`` of one metric (see the module docstring)."""
    if not curves:
        raise InputError("an overlay chart needs at least one curve")
    shown = list(curves)[:MAX_RUNS_PER_OVERLAY]
    fig = new_figure((7.6, 4.4))
    ax = fig.add_subplot()
    for i, curve in enumerate(shown):
        color = PALETTE[i % len(PALETTE)]
        c, y = observed(curve)
        ax.plot(c, y, "o", ms=2.2, alpha=0.35, color=color, zorder=2)
        line = fit_line(curve)
        if line is not None:
            band = interval(curve.fit, line[0], confidence)
            if band is not None:
                ax.fill_between(line[0], band[0], band[1], color=color, alpha=0.12, lw=0)
            ax.plot(*line, "-", color=color, lw=1.6, zorder=3,
                    label=f"{short(curve.run, 40)} ({curve.verdict})")
        else:
            ax.plot([], [], "o", color=color, label=f"{short(curve.run, 40)} ({curve.verdict})")
    found = recipes(shown)
    for recipe, idx in found:
        pooled = pooled_curve([shown[i] for i in idx])
        if pooled is not None:
            color = _POOLED if len(found) == 1 else PALETTE[idx[0] % len(PALETTE)]
            ax.plot(*pooled, "--", color=color, lw=2.4, zorder=4,
                    label=f"pooled {short(recipe, 30)}: mean of {len(idx)} fits")
    if all(observed(c)[0].size for c in shown):
        ax.set_xscale("log")
    first = shown[0]
    ax.set_xlabel(axis_label(first.compute_name))
    ax.set_ylabel(short(first.metric, 50))
    more = f" (first {len(shown)} of {len(curves)} runs)" if len(curves) > len(shown) else ""
    ax.set_title(f"{short(first.metric, 50)}: {len(shown)} runs{more}", fontsize=10)
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(fontsize=7, loc="best", frameon=False)
    return fig


def save_overlay_figures(analysis: Analysed, out_dir: str | Path, formats: Iterable[str] = ("png",),
                         *, dpi: int = 120) -> list[Path]:  # fmt: skip
    """Write one overlay chart per :func:`overlay_groups` group to ``out_dir`` as
    ``overlay__<source>__<metric>.<fmt>``; an error when no metric has two runs."""
    formats = _check_formats(formats)
    groups = overlay_groups(curves_of(analysis))
    if not groups:
        raise InputError("--overlay draws the runs of a metric together: no metric of a source "
                         "has two runs or more")
    out = Path(out_dir)
    _make_folder(out)
    confidence = confidence_of(analysis)
    used: set[str] = set()
    written: list[Path] = []
    for (source, metric), curves in groups.items():
        name = _unique(f"overlay__{_slug(Path(source).stem or source)}__{_slug(metric)}", used)
        written += _save(overlay_figure(curves, confidence=confidence), out, name, formats, dpi)
    return written
