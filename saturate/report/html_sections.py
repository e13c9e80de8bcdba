"""The section of the HTML report for each curve (charts, facts, reasons, forecasts, laws) and
its sparkline, drawn in order, in one process or several (:func:`render_sections`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import pandas as pd

from saturate.report.html_assets import badge, esc
from saturate.report.rows import interval, num, prob, short_reason
from saturate.results import CurveAnalysis

__all__ = ["curve_section", "render_sections", "Progress"]

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called as sections are drawn."""


def _facts(c: CurveAnalysis) -> str:
    items = [
        ("points", f"{c.n_points} ({c.compute_name} {num(c.compute_first)} – {num(c.compute_last)})"),
        ("last value", f"{num(c.value_last, 4)} ({c.direction} is better)"),
        ("P(pays)", prob(c.p_pays)),
        ("gain per doubling", interval(c.gain_per_doubling)),
        ("threshold", num(c.threshold)),
        ("asymptote", interval(c.asymptote)),
        ("headroom", interval(c.headroom)),
        ("ROI", f"{num(c.roi, 2)} ({c.roi_stage})"),
        ("knee", num(c.knee)),
        ("stop point", interval(c.stop_point) if c.stop_point is not None else "none in range"),
    ]
    if c.trend is not None:
        items.append(("recent trend / doubling",
                      f"{interval(c.trend.slope_per_doubling)} (p={num(c.trend.p_value, 2)})"))
    if c.collapse is not None:
        items.append(("collapse", f"at {num(c.collapse.compute)}, drop {num(c.collapse.drop)}"))
    if c.run_status:
        items.append(("run status", c.run_status))
    if c.group:
        items.append(("pooled seeds", str(c.group.get("n_seeds", ""))))
    if c.flags:
        items.append(("flags", ", ".join(c.flags)))
    return '<div class="facts">' + "".join(
        f"<div><b>{esc(k)}:</b> {esc(v)}</div>" for k, v in items) + "</div>"


def _forecast_table(c: CurveAnalysis) -> str:
    if not c.forecast:
        return ""
    rows = "".join(
        f"<tr><td>{esc(f.at)}</td><td class='n'>{esc(num(f.compute))}</td>"
        f"<td class='n'>{esc(num(f.value, 4))}</td><td class='n'>{esc(num(f.lo, 4))}</td>"
        f"<td class='n'>{esc(num(f.hi, 4))}</td><td>{'' if f.identified else 'not identified'}"
        "</td></tr>" for f in c.forecast)
    return ("<table><thead><tr><th>forecast at</th><th class='n'>compute</th>"
            "<th class='n'>value</th><th class='n'>lo</th><th class='n'>hi</th><th></th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


def _laws(c: CurveAnalysis) -> str:
    if not c.laws:
        return ""
    rows = []
    for law in sorted(c.laws, key=lambda x: -x.weight if math.isfinite(x.weight) else 0):
        params = ", ".join(f"{k} = {interval(v)}" for k, v in law.params.items())
        rows.append(f"<tr><td>{esc(law.name)}</td><td class='n'>{esc(num(law.weight, 2))}</td>"
                    f"<td>{esc(params)}</td></tr>")
    return ("<details><summary>Fitted laws and weights</summary><table><thead><tr>"
            "<th>law</th><th class='n'>weight</th><th>parameters</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></details>")


def curve_section(i: int, c: CurveAnalysis, confidence: float, plots: bool,
                  seeds: pd.DataFrame | None = None) -> tuple[str, str]:
    """The section of curve ``i`` and its sparkline (both HTML); ``seeds`` holds the rows of the
    runs pooled into it (``--group-by``), drawn behind the mean."""
    from saturate.report.svg import curve_svg, sparkline_svg

    charts = curve_svg(c, confidence=confidence, data=seeds) if plots else ""
    reasons = "".join(f"<li>{esc(r)}</li>" for r in c.reasons)
    section = (
        f'<section class="curve" id="c{i}"><h2>{esc(c.run)} / {esc(c.metric)} '
        f"{badge(c.verdict)}</h2><p class='lead'>{esc(short_reason(c))}</p>{charts}{_facts(c)}"
        f"<ul class='reasons'>{''.join(reasons)}</ul>{_forecast_table(c)}{_laws(c)}</section>"
    )
    return section, sparkline_svg(c) if plots else ""


def _seed_rows(curve: CurveAnalysis, data: pd.DataFrame | None) -> pd.DataFrame | None:
    """The table's rows of the runs pooled into ``curve`` (what its chart draws behind it)."""
    runs = (curve.group or {}).get("runs") or []
    if len(runs) < 2 or data is None or data.empty:
        return None
    rows = data[(data["metric"] == curve.metric) & data["run"].isin(runs)]
    return rows[[c for c in ("source", "run", "metric", "step", "compute", "value")
                 if c in rows.columns]]


def _draw(tasks: Sequence[tuple[Any, ...]]) -> list[tuple[int, tuple[str, str]]]:
    return [(t[0], curve_section(*t)) for t in tasks]


def render_sections(curves: Sequence[CurveAnalysis], data: pd.DataFrame | None,
                    confidence: float, *, plots: bool = True, progress: Progress | None = None,
                    workers: int = 1) -> list[tuple[str, str]]:
    """(section, sparkline) of every curve, in order. ``workers > 1`` draws them in that many
    processes (in chunks, each curve with only its own points and fit sent over)."""
    tasks = [(i, c, confidence, plots, _seed_rows(c, data)) for i, c in enumerate(curves)]
    total = len(tasks)
    out: list[tuple[str, str]] = [("", "")] * total
    done = 0
    if workers <= 1 or total < 4 * workers:
        for task in tasks:
            out[task[0]] = curve_section(*task)
            done += 1
            if progress is not None:
                progress(done, total)
        return out
    size = max(1, min(8, total // (4 * workers)))
    chunks = [tasks[k:k + size] for k in range(0, total, size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for future in as_completed([pool.submit(_draw, chunk) for chunk in chunks]):
            for i, drawn in future.result():
                out[i] = drawn
                done += 1
            if progress is not None:
                progress(done, total)
    return out
