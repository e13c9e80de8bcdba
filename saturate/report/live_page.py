"""The page ``watch --html PATH`` keeps: the current verdict of every curve followed, the picture
of them all (P(pays) by metric), the table with a sparkline per curve and the runs explorer, the
same as the report's (:mod:`saturate.report.html`); it refreshes itself every ``refresh``
seconds and the explorer keeps its view across the refreshes. Self-contained, rendered from the
Jinja template ``templates/live.html`` (autoescape: every name escaped by the template), under
the report's Content-Security-Policy; the watch writes it atomically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from saturate.report.html_assets import render_template, run_url
from saturate.report.rows import format_time, headline, interval, num, prob, short_reason
from saturate.results import VERDICTS, CurveAnalysis

_HEAD = (("run", ""), ("metric", ""), ("verdict", ""), ("P(pays)", "n"), ("gain / doubling", "n"),
         ("last compute", "n"), ("points", "n"), ("reason", ""), ("curve", "nosort"))


def _key(x: float | None) -> str:
    return "" if x is None or not math.isfinite(x) else f"{x:.6g}"


def _row(i: int, curve: CurveAnalysis, plots: bool) -> dict[str, Any]:
    from saturate.report.svg import sparkline_svg

    has_points = curve.points is not None and len(curve.points) > 0
    return {"i": i, "run": curve.run, "url": run_url(curve), "metric": curve.metric,
            "verdict": curve.verdict, "order": VERDICTS.index(curve.verdict)
            if curve.verdict in VERDICTS else 9, "p": prob(curve.p_pays), "p_key": _key(curve.p_pays),
            "gain": interval(curve.gain_per_doubling),
            "gain_key": _key(curve.gain_per_doubling.value), "compute": num(curve.compute_last),
            "compute_key": _key(curve.compute_last), "points": curve.n_points,
            "why": short_reason(curve),
            "spark": Markup(sparkline_svg(curve)) if plots and has_points else ""}


def render_live_page(curves: Iterable[CurveAnalysis], *, source: str, updated: float,
                     refresh: int = 60, plots: bool = True) -> str:  # fmt: skip
    """The page of the current verdicts (``updated``: epoch seconds of the last pass);
    ``plots=False`` leaves the charts out."""
    from saturate.report.html import charts_context

    rows = sorted(curves, key=lambda c: (c.run, c.metric, c.run_id))
    charts: dict[str, Any] = {"overview": "", "data": None, "groups": [], "band_text": "",
                              "axis_name": ""}
    if plots and rows:
        level = next((c.fit.confidence for c in rows if c.fit is not None), 0.9)
        charts = charts_context(rows, {}, level, sections=False)
    unseen = sum(c.points is None or len(c.points) == 0 for c in rows)
    return render_template(
        "live.html", source=source, updated=format_time(updated), every=max(int(refresh), 1),
        summary=headline(rows) if rows else "waiting for the first pass", heads=_HEAD,
        rows=[_row(i, c, plots) for i, c in enumerate(rows)], verdicts=VERDICTS,
        unseen=unseen, **charts)
