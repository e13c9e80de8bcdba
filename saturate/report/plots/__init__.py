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

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Loaded on first use (:func:`saturate.lazy_exports`): the SVG reports read :mod:`.style` and
# :mod:`.curves`' numbers without importing matplotlib.
if TYPE_CHECKING:  # the exports, each imported on first use (saturate.lazy_exports)
    from saturate.report.plots.curves import (
        MAX_CURVES_PER_FIGURE,
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
