"""Figures of analysed curves and diagnostics as matplotlib ``Figure`` objects, for files
(``saturate plot``, ``--log-back``) and :meth:`saturate.api.Analysis.plot`; the HTML report and the
Jupyter views draw inline SVG instead (:mod:`saturate.report.svg`). Never pyplot, except for
:meth:`~saturate.api.Analysis.plot`'s figure (see :func:`.style.pyplot_figure`): no window opens,
no global figure registry to leak; files render with Agg.

* :mod:`.curves`: :func:`plot_curve` (points, fit, forecast band, asymptote, knee, stop point),
  :func:`plot_gain` (marginal gain per doubling), :func:`curve_figure`, :func:`plot_analysis`,
  :func:`sparkline_figure`.
* :mod:`.diagnostics`: :func:`plot_divergence`, :func:`plot_sharpening`, :func:`plot_recipe`
  (the diagnostics a picture explains best; :func:`diagnostic_figure` picks one by kind).
* :mod:`.files`: :func:`figure_bytes`, :func:`save_curve_figures`, :func:`save_diagnostic_figures`.
* :mod:`.style`: colours, sizes and the numbers a figure reads from a curve, shared by the above.

Every ``plot_*`` function takes ``ax=None`` (a new figure) or an Axes to draw on, and returns what
it drew on.
"""

from __future__ import annotations

from saturate.lazy import lazy_exports

# Loaded on first use (:mod:`saturate.lazy`): the SVG reports read :mod:`.style` and
# :mod:`.curves`' numbers without importing matplotlib.
_EXPORTS = {
    "MAX_CURVES_PER_FIGURE": "curves", "curve_figure": "curves", "plot_analysis": "curves",
    "plot_curve": "curves", "plot_gain": "curves", "sparkline_figure": "curves",
    "DIAGNOSTIC_PLOTS": "diagnostics", "diagnostic_figure": "diagnostics",
    "plot_divergence": "diagnostics", "plot_recipe": "diagnostics",
    "plot_sharpening": "diagnostics", "figure_bytes": "files", "save_curve_figures": "files",
    "save_diagnostic_figures": "files", "VERDICT_COLORS": "style",
}  # fmt: skip

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "VERDICT_COLORS",
    "plot_curve",
    "plot_gain",
    "plot_analysis",
    "curve_figure",
    "save_curve_figures",
    "figure_bytes",
    "sparkline_figure",
    "MAX_CURVES_PER_FIGURE",
    "DIAGNOSTIC_PLOTS",
    "plot_divergence",
    "plot_sharpening",
    "plot_recipe",
    "diagnostic_figure",
    "save_diagnostic_figures",
]
