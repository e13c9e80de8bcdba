"""Figures of analysed curves and diagnostics as matplotlib ``Figure`` objects, for files
(``saturate plot``) and :meth:`saturate.api.Analysis.plot`; the HTML report and Jupyter draw
inline SVG (:mod:`saturate.report.svg`). Never pyplot (but for ``Analysis.plot``'s figure): no
window opens and no figure leaks. Every ``plot_*`` takes ``ax=None`` (a new figure) or an Axes,
and returns what it drew on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Each export is imported on first use: the SVG reports read .style and .curves' numbers without
# importing matplotlib.
if TYPE_CHECKING:
    from saturate.report.plots.curves import (
        MAX_CURVES_PER_FIGURE,
        Figures,
        curve_figure,
        plot_analysis,
        plot_curve,
        plot_gain,
        sparkline_figure,
    )
    from saturate.report.plots.diagnostics import (
        DIAGNOSTIC_PLOTS,
        diagnostic_figure,
        plot_divergence,
        plot_recipe,
        plot_sharpening,
    )
    from saturate.report.plots.files import (
        figure_bytes,
        save_curve_figures,
        save_diagnostic_figures,
    )
    from saturate.report.plots.style import VERDICT_COLORS

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = [
    "VERDICT_COLORS", "plot_curve", "plot_gain", "plot_analysis", "curve_figure",
    "save_curve_figures", "figure_bytes", "sparkline_figure", "MAX_CURVES_PER_FIGURE", "Figures",
    "DIAGNOSTIC_PLOTS", "plot_divergence", "plot_sharpening", "plot_recipe", "diagnostic_figure",
    "save_diagnostic_figures",
]
