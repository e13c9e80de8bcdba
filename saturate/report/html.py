"""The HTML report: one self-contained page that opens with the picture (every curve at its
P(pays), by metric, coloured by verdict), then the sortable table of the curves, the runs
explorer beside it (the runs of a metric on one chart: zoom, values on hover, log/linear,
step/compute, display smoothing), the diagnostics, the settings, and a section per curve with
its charts (closed until opened).

The page is the Jinja template ``templates/report.html`` (autoescape: every string from the data
is escaped by the template); its Content-Security-Policy
(:data:`~saturate.report.html_assets.CSP`) lets only its own script run and fetches nothing. This
module gathers what the template shows; the charts are inline SVG (:mod:`saturate.report.svg`)
and the explorer's numbers JSON (:mod:`saturate.report.chart_data`).

The page ``watch --html`` keeps (:func:`render_live_page`, ``templates/live.html``) is the same
picture, table and explorer for the curves followed, refreshing itself every ``refresh`` seconds;
the explorer keeps its view across the refreshes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import pandas as pd
from markupsafe import Markup

from saturate.report.html_assets import render_template, run_url
from saturate.report.rows import (
    DIAGNOSTIC_COLUMNS,
    DIAGNOSTIC_METRIC_COLUMNS,
    Analysed,
    axis_text,
    confidence_level,
    curves_and_settings,
    diagnostic_row,
    diagnostic_rows,
    diagnostics_of,
    forecast_cell,
    format_time,
    headline,
    interval,
    num,
    prob,
    settings_items,
    settings_source,
    short_reason,
)
from saturate.results import VERDICTS, CurveAnalysis


def _sort_value(x: float | None) -> str:
    return "" if x is None or not math.isfinite(x) else f"{x:.6g}"


def _row(i: int, c: CurveAnalysis, spark: str) -> dict[str, Any]:
    """The summary table's row of curve ``i``: the cells as text, their sort keys."""
    f = c.forecast[0].value if c.forecast else None
    return {"i": i, "run": c.run, "url": run_url(c), "metric": c.metric, "verdict": c.verdict,
            "order": {v: k for k, v in enumerate(VERDICTS)}.get(c.verdict, 9),
            "p": prob(c.p_pays), "p_key": _sort_value(c.p_pays),
            "gain": interval(c.gain_per_doubling), "gain_key": _sort_value(c.gain_per_doubling.value),
            "why": short_reason(c), "forecast": forecast_cell(c), "forecast_key": _sort_value(f),
            "last": num(c.value_last, 4), "last_key": _sort_value(c.value_last),
            "spark": Markup(spark)}


def _heads(curves: Sequence[CurveAnalysis]) -> list[tuple[str, str]]:
    at = next((str(c.forecast[0].at) for c in curves if c.forecast), "")
    return [("run", ""), ("metric", ""), ("verdict", ""), ("P(pays)", "n"),
            ("gain / doubling", "n"), ("why", ""), (f"forecast {at}".strip(), "n"),
            ("last value", "n"), ("curve", "nosort")]


def _facts(c: CurveAnalysis) -> list[tuple[str, str]]:
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
        items.append(("seeds averaged", str(c.group.get("n_seeds", ""))))
    if c.pooling is not None:
        p = c.pooling
        items.append(("pooled with" if p.pooled else "not pooled with",
                      f"{', '.join(p.runs)}" + ("" if p.pooled else
                                                f" (its own estimate lies {num(abs(p.disagreement), 2)} "
                                                "sd from theirs)")))
    if c.flags:
        items.append(("flags", ", ".join(c.flags)))
    return items


def _section(i: int, c: CurveAnalysis, charts: str) -> dict[str, Any]:
    """What the section of curve ``i`` shows: its charts, facts, reasons, forecasts and laws."""
    forecasts = [(f.at, num(f.compute), num(f.value, 4), num(f.lo, 4), num(f.hi, 4),
                  "" if f.identified else "not identified") for f in c.forecast]
    laws = [(law.name, num(law.weight, 2),
             ", ".join(f"{k} = {interval(v)}" for k, v in law.params.items()))
            for law in sorted(c.laws, key=lambda x: -x.weight if math.isfinite(x.weight) else 0)]
    return {"i": i, "run": c.run, "metric": c.metric, "verdict": c.verdict,
            "lead": short_reason(c), "charts": Markup(charts), "facts": _facts(c),
            "url": run_url(c), "reasons": c.reasons, "forecasts": forecasts, "laws": laws}


def _suite(analysis: Analysed, plots: bool) -> Markup:
    """The suite section (with a suite key), before the curves: it is the answer asked for."""
    suite = getattr(analysis, "suite", None)
    if suite is None:
        return Markup("")
    from saturate.report.suite_html import suite_html

    return Markup(suite_html(suite, plots=plots))


def diagnostics_html(analysis: Analysed, *, plots: bool = True) -> str:
    """The Diagnostics section: a table of every finding (errors first), then a figure for each
    divergence, sharpening and recipe comparison. Empty when there are no diagnostics."""
    from saturate.report.svg import diagnostic_svg

    found = diagnostics_of(analysis)
    if not found:
        return ""
    curves, _ = curves_and_settings(analysis)
    urls = {(c.source, c.run_id): run_url(c) for c in curves}
    rows = [{"i": i, "kind": d.kind, "run": d.run, "severity": d.severity, "message": d.message,
             "cells": list(diagnostic_row(d).items()), "url": urls.get((d.source, d.run_id)),
             "figure": Markup(diagnostic_svg(d, analysis)) if plots else ""}
            for i, d in enumerate(found)]
    return render_template("_diagnostics.html", rows=rows, columns=DIAGNOSTIC_COLUMNS)


def diagnostic_metrics_html(analysis: Analysed) -> str:
    """The "Diagnostic metrics" section: the metrics that get no verdict (empty when none)."""
    rows = diagnostic_rows(analysis)
    if not rows:
        return ""
    return render_template("_diagnostic_metrics.html", rows=rows,
                           columns=DIAGNOSTIC_METRIC_COLUMNS)


def call_band(settings: dict[str, Any]) -> tuple[float, float]:
    """The P(pays) below which a curve does not pay and from which it pays, as the analysis was
    set (``band``, else the levels of its decision's costs; 0.45 and 0.55 by default)."""
    band = settings.get("band")
    if isinstance(band, (list, tuple)) and len(band) == 2:
        return float(band[0]), float(band[1])
    from saturate.decide.settings import DecisionSettings, call_levels

    decision = settings.get("decision")
    if not isinstance(decision, dict):
        decision = {}
    default = DecisionSettings()
    return call_levels(float(decision.get("stop_cost", default.stop_cost)),
                       float(decision.get("abstain_cost", default.abstain_cost)))


def charts_context(curves: Sequence[CurveAnalysis], settings: dict[str, Any],
                   confidence: float, *, sections: bool = True) -> dict[str, Any]:  # fmt: skip
    """What the report and the watch page draw their pictures from: the overview, the explorer's
    groups and the page script's data (``sections``: the page has a section per curve, ``#c{i}``,
    to link a run to)."""
    from saturate.report.chart_data import page_data
    from saturate.report.svg.overview import overview_svg

    band = call_band(settings)
    data = page_data(curves, confidence, sections=sections)
    return {"overview": Markup(overview_svg(curves, band)), "data": data,
            "groups": data["groups"], "band_text": f"below {band[0]:g} does not pay, from "
                                                   f"{band[1]:g} pays",
            "axis_name": curves[0].compute_name if curves else "compute"}


def render_html(analysis: Analysed, *, title: str = "saturate report", plots: bool = True,
                progress: Progress | None = None, workers: int | None = None) -> str:
    """The whole report as one self-contained HTML page.

    ``progress(done, total)`` is called as the curves' sections are drawn; ``workers > 1`` draws
    them in that many processes (default: one per core where workers are forked, else one).
    ``plots=False`` leaves every chart out (the overview and the explorer too).
    """
    curves, settings = curves_and_settings(analysis)
    confidence = confidence_level(settings)
    pooled = any(len((c.group or {}).get("runs") or []) > 1 for c in curves)
    table = getattr(analysis, "data", None) if pooled else None  # rebuilt only to draw seeds
    if workers is None:
        from saturate.analysis.engine import forking
        from saturate.analysis.work import local_workers

        workers = local_workers() if forking() else 1
    built = render_sections(curves, None if table is None else table.points, confidence,
                            plots=plots, progress=progress, workers=workers)
    found = diagnostics_of(analysis)
    charts = (charts_context(curves, settings, confidence) if plots and curves else
              {"overview": "", "data": None, "groups": [], "band_text": "", "axis_name": ""})
    return render_template(
        "report.html", title=title, headline=headline(curves), axis=axis_text(analysis),
        source=settings_source(analysis),
        counted=[(v, n) for v in VERDICTS if (n := sum(c.verdict == v for c in curves))],
        n_findings=len(found), n_errors=sum(d.severity == "error" for d in found),
        suite=_suite(analysis, plots), confidence_text=f"{confidence:.0%}", verdicts=VERDICTS,
        heads=_heads(curves), rows=[_row(i, c, spark) for i, (c, (_, spark))
                                    in enumerate(zip(curves, built, strict=True))],
        diagnostic_metrics=Markup(diagnostic_metrics_html(analysis)),
        diagnostics=Markup(diagnostics_html(analysis, plots=plots)),
        settings=settings_items(settings),
        sections=[_section(i, c, charts_svg) for i, (c, (charts_svg, _))
                  in enumerate(zip(curves, built, strict=True))], **charts) + "\n"


def draw_curve(i: int, c: CurveAnalysis, confidence: float, plots: bool,
               seeds: pd.DataFrame | None = None) -> tuple[str, str]:
    """The charts of curve ``i`` and its sparkline (inline SVG); ``seeds`` holds the rows of the
    runs pooled into it (``--group-by``), drawn behind the mean."""
    if not plots:
        return "", ""
    from saturate.report.svg import curve_svg, sparkline_svg

    return curve_svg(c, confidence=confidence, data=seeds), sparkline_svg(c)


def _seed_rows(curve: CurveAnalysis, data: pd.DataFrame | None) -> pd.DataFrame | None:
    """The table's rows of the runs pooled into ``curve`` (what its chart draws behind it)."""
    runs = (curve.group or {}).get("runs") or []
    if len(runs) < 2 or data is None or data.empty:
        return None
    rows = data[(data["metric"] == curve.metric) & data["run"].isin(runs)]
    return rows[[c for c in ("source", "run", "metric", "step", "compute", "value")
                 if c in rows.columns]]


def _draw(tasks: Sequence[tuple[Any, ...]]) -> list[tuple[int, tuple[str, str]]]:
    return [(t[0], draw_curve(*t)) for t in tasks]


def render_sections(curves: Sequence[CurveAnalysis], data: pd.DataFrame | None,
                    confidence: float, *, plots: bool = True, progress: Progress | None = None,
                    workers: int = 1) -> list[tuple[str, str]]:
    """(charts, sparkline) of every curve, in order. ``workers > 1`` draws them in that many
    processes (in chunks, each curve with only its own points and fit sent over)."""
    tasks = [(i, c, confidence, plots, _seed_rows(c, data)) for i, c in enumerate(curves)]
    total = len(tasks)
    out: list[tuple[str, str]] = [("", "")] * total
    done = 0
    if workers <= 1 or total < 4 * workers:
        for task in tasks:
            out[task[0]] = draw_curve(*task)
            done += 1
            if progress is not None:
                progress(done, total)
        return out
    size = max(1, min(8, total // (4 * workers)))
    chunks = [tasks[k:k + size] for k in range(0, total, size)]
    from saturate.analysis.engine import forked_pool, forking

    with forked_pool(workers) if forking() else ProcessPoolExecutor(max_workers=workers) as pool:
        for future in as_completed([pool.submit(_draw, chunk) for chunk in chunks]):
            for i, drawn in future.result():
                out[i] = drawn
                done += 1
            if progress is not None:
                progress(done, total)
    return out


# ---- the page `watch --html` keeps ------------------------------------------------------------

_LIVE_HEAD = (("run", ""), ("metric", ""), ("verdict", ""), ("P(pays)", "n"), ("gain / doubling", "n"),
         ("last compute", "n"), ("points", "n"), ("reason", ""), ("curve", "nosort"))


def _live_row(i: int, curve: CurveAnalysis, plots: bool) -> dict[str, Any]:
    from saturate.report.svg import sparkline_svg

    has_points = curve.points is not None and len(curve.points) > 0
    return {"i": i, "run": curve.run, "url": run_url(curve), "metric": curve.metric,
            "verdict": curve.verdict, "order": VERDICTS.index(curve.verdict)
            if curve.verdict in VERDICTS else 9, "p": prob(curve.p_pays), "p_key": _sort_value(curve.p_pays),
            "gain": interval(curve.gain_per_doubling),
            "gain_key": _sort_value(curve.gain_per_doubling.value), "compute": num(curve.compute_last),
            "compute_key": _sort_value(curve.compute_last), "points": curve.n_points,
            "why": short_reason(curve),
            "spark": Markup(sparkline_svg(curve)) if plots and has_points else ""}


def render_live_page(curves: Iterable[CurveAnalysis], *, source: str, updated: float,
                     refresh: int = 60, plots: bool = True) -> str:  # fmt: skip
    """The page of the current verdicts (``updated``: epoch seconds of the last pass);
    ``plots=False`` leaves the charts out."""

    rows = sorted(curves, key=lambda c: (c.run, c.metric, c.run_id))
    charts: dict[str, Any] = {"overview": "", "data": None, "groups": [], "band_text": "",
                              "axis_name": ""}
    if plots and rows:
        level = next((c.fit.confidence for c in rows if c.fit is not None), 0.9)
        charts = charts_context(rows, {}, level, sections=False)
    unseen = sum(c.points is None or len(c.points) == 0 for c in rows)
    return render_template(
        "live.html", source=source, updated=format_time(updated), every=max(int(refresh), 1),
        summary=headline(rows) if rows else "waiting for the first pass", heads=_LIVE_HEAD,
        rows=[_live_row(i, c, plots) for i, c in enumerate(rows)], verdicts=VERDICTS,
        unseen=unseen, **charts)


Progress = Callable[[int, int], None]
"""``progress(done, total)``, called as sections are drawn."""
