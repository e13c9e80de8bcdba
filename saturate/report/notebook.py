"""What Jupyter shows for an :class:`~saturate.api.Analysis`, a
:class:`~saturate.results.CurveAnalysis` and a :class:`~saturate.fit.result.CurveFit`: HTML
fragments with a small stylesheet scoped to ``.saturate-nb`` (light and dark themes) and inline
SVG charts. Importing it registers the HTML and figure makers with :mod:`saturate.results`.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from saturate.report.html_assets import NOTEBOOK_CSS, environment, run_url
from saturate.report.rows import (
    Analysed,
    confidence_level,
    curves_and_settings,
    diagnostics_of,
    forecast_cell,
    headline,
    interval,
    num,
    prob,
    short_reason,
)
from saturate.results import CurveAnalysis, register_figure, register_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from saturate.api import Analysis
    from saturate.fit.result import CurveFit
    from saturate.suites import SuiteAnalysis


@functools.cache
def _views() -> Any:
    """``templates/notebook.html`` as a module of macros, made once."""
    return environment().get_template("notebook.html").make_module({"css": Markup(NOTEBOOK_CSS)})


def _view(name: str, /, *args: Any) -> str:
    """The macro ``name`` of ``templates/notebook.html`` called with ``args`` (autoescaped)."""
    return str(getattr(_views(), name)(*args))


def notebook_html(analysis: Analysed, *, max_plots: int = 50) -> str:
    """The headline, the suite (when there is one), then one row per curve with a small chart of
    it (the first ``max_plots``), then the diagnostics."""
    from saturate.report.svg import thumbnail_svg

    curves, settings = curves_and_settings(analysis)
    confidence = confidence_level(settings)
    at = next((str(c.forecast[0].at) for c in curves if c.forecast), "")
    heads = ("run", "metric", "verdict", "P(pays)", "gain / doubling", "why",
             f"forecast {at}".strip(), "last value", "curve")
    rows = [{"run": c.run, "url": run_url(c), "metric": c.metric, "verdict": c.verdict,
             "p": prob(c.p_pays), "gain": interval(c.gain_per_doubling), "why": short_reason(c),
             "forecast": forecast_cell(c), "last": num(c.value_last, 4),
             "thumb": Markup(thumbnail_svg(c, confidence=confidence)) if i < max_plots else ""}
            for i, c in enumerate(curves)]
    more = (f"charts for the first {max_plots} of {len(curves)} curves"
            if len(curves) > max_plots else "")
    suite = getattr(analysis, "suite", None)  # the suite first: it is the answer asked for
    return _view("analysis", headline(curves), Markup(_suite_html(suite)) if suite is not None else "",
                 heads, rows, more, diagnostics_of(analysis))


def curve_html(curve: CurveAnalysis, *, confidence: float | None = None) -> str:
    """One curve: its verdict and why, its chart and gain chart, the numbers and the reasons."""
    from saturate.report.svg import chart_svg
    from saturate.report.svg.curves import curve_chart, gain_chart

    conf = confidence or (curve.fit.confidence if curve.fit is not None else 0.9)
    charts = (chart_svg(curve_chart(curve, confidence=conf, width=600, height=280))
              + chart_svg(gain_chart(curve, width=600, height=200)))
    facts = [
        ("points", f"{curve.n_points} ({curve.compute_name} {num(curve.compute_first)} – "
                   f"{num(curve.compute_last)})"),
        ("last value", f"{num(curve.value_last, 4)} ({curve.direction} is better)"),
        ("P(pays)", prob(curve.p_pays)),
        ("gain per doubling", f"{interval(curve.gain_per_doubling)} (threshold "
                              f"{num(curve.threshold)})"),
        ("asymptote", interval(curve.asymptote)),
        ("ROI", f"{num(curve.roi, 2)} ({curve.roi_stage})"),
        ("knee", num(curve.knee)),
        ("stop point", interval(curve.stop_point) if curve.stop_point else "none in range"),
        *((f"forecast {f.at}", forecast_cell(curve, i)) for i, f in enumerate(curve.forecast)),
    ]
    return _view("curve", curve.run, curve.metric, curve.verdict, short_reason(curve),
                 Markup(charts), facts, list(curve.reasons))


def _fit_chart(fit: CurveFit) -> str:
    """The averaged fit from the first compute to four times the last, with its band."""
    import numpy as np

    from saturate.report.svg import Chart, chart_svg

    if not (fit.compute_first > 0 and fit.compute_last > 0):
        return ""
    grid = np.geomspace(fit.compute_first, 4 * fit.compute_last, 120)
    chart = Chart(600, 220, xlabel="compute, log scale", ylabel=f"fit ({fit.direction} is better)")
    lo, hi = fit.interval(grid)
    chart.band(grid, lo, hi, "#4c72b0", label=f"{fit.confidence:.0%} interval")
    inside = grid <= fit.compute_last
    chart.line(grid[inside], fit.predict(grid[inside]), "currentColor", width=1.9,
               label="fit over the data")
    chart.line(grid[~inside], fit.predict(grid[~inside]), "currentColor", dash="6 4",
               label="beyond the data")
    return chart_svg(chart)


def fit_html(fit: CurveFit) -> str:
    """A curve fit: its chart, the laws with their weights and parameters, the forecasts."""
    laws = [{"name": lf.name, "weight": num(lf.weight, 3), "aicc": num(lf.aicc, 4),
             "cv": num(lf.cv_error, 3), "converged": "yes" if lf.converged else "no",
             "params": ", ".join(f"{k} = {interval(v)}" for k, v in lf.params.items())}
            for lf in sorted(fit.laws, key=lambda lf: -lf.weight if math.isfinite(lf.weight) else 0)]
    forecasts = [f"forecast {f.at} (compute {num(f.compute)}): {num(f.value, 4)} "
                 f"[{num(f.lo, 4)}, {num(f.hi, 4)}]{'' if f.identified else ', not identified'}"
                 for f in fit.forecast()]
    head = (f"{fit.n_points} points, compute {num(fit.compute_first)} – {num(fit.compute_last)}, "
            f"{fit.direction} is better; asymptote {interval(fit.asymptote)}")
    return _view("fit", head, Markup(_fit_chart(fit)), laws, forecasts)


def _suite_html(suite: SuiteAnalysis) -> str:
    from saturate.report.suite_html import suite_html  # matplotlib: on first use

    return suite_html(suite, plots=True, width=560)


def _suite_figure(suite: SuiteAnalysis) -> Figure:
    """The suite's chart, made through pyplot so Jupyter shows it once (see ``pyplot_figure``)."""
    from saturate.report.plots.style import pyplot_figure
    from saturate.report.suite_html import plot_suite

    fig = pyplot_figure((7.0, 4.0))
    plot_suite(suite, ax=fig.add_subplot())
    return fig


register_html("curve", curve_html)
register_html("fit", fit_html)
register_html("suite", _suite_html)
register_figure("suite", _suite_figure)


class OverlayView:
    """What :meth:`saturate.api.Analysis.overlay` returns: per metric of a source with two runs or
    more, the runs on one chart (a chart per page of runs when there are many, :meth:`pages`).
    Jupyter shows it as inline SVG (no script: a notebook's output may not run one);
    :meth:`figures` gives the same charts as matplotlib figures."""

    def __init__(self, curves: tuple[CurveAnalysis, ...], confidence: float) -> None:
        from saturate.report.plots.overlay import overlay_groups

        self.groups = overlay_groups(curves)
        self.confidence = confidence

    def __len__(self) -> int:
        return len(self.groups)

    def __repr__(self) -> str:
        if not self.groups:
            return "no metric of a source has two runs or more to draw together"
        return "\n".join(f"{metric} · {source}: {len(g)} runs ({', '.join(c.run for c in g)})"
                         for (source, metric), g in self.groups.items())

    def pages(self) -> list[tuple[str, str, list[CurveAnalysis], str]]:
        """(source, metric, runs, which) of every chart: a metric of more runs than one chart
        tells apart (``MAX_RUNS_PER_OVERLAY``) gets a chart per page, ``which`` says the page
        (``"runs 13–24 of 48"``), so every run is drawn."""
        from saturate.report.plots.overlay import MAX_RUNS_PER_OVERLAY as n

        out = []
        for (source, metric), group in self.groups.items():
            for k in range(0, len(group), n):
                which = (f"{len(group)} runs" if len(group) <= n else
                         f"runs {k + 1}–{min(k + n, len(group))} of {len(group)}")
                out.append((source, metric, group[k:k + n], which))
        return out

    def figures(self) -> list[Any]:
        """One matplotlib Figure per chart, in the order of :meth:`pages`."""
        from saturate.report.plots.overlay import overlay_figure

        return [overlay_figure(runs, confidence=self.confidence) for *_, runs, _ in self.pages()]

    def _repr_html_(self) -> str:
        from saturate.report.svg.overlay import overlay_svg, run_color

        charts = [{"metric": metric, "source": source, "which": which,
                   "svg": Markup(overlay_svg(runs, confidence=self.confidence)),
                   "runs": [{"color": run_color(i), "name": c.run, "verdict": c.verdict,
                             "p": prob(c.p_pays)} for i, c in enumerate(runs)]}
                  for source, metric, runs, which in self.pages()]
        return _view("overlays", "" if self.groups else repr(self), charts)


def overlay_view(analysis: Analysis, *, run: str | None = None,
                 metric: str | None = None) -> OverlayView:  # fmt: skip
    """The :class:`OverlayView` of the curves ``run`` and ``metric`` (globs) select."""
    curves, settings = curves_and_settings(analysis)
    if run is not None or metric is not None:
        curves = analysis.select(run=run, metric=metric)
    return OverlayView(tuple(curves), confidence_level(settings))
