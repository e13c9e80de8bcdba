"""Charts as inline SVG for the HTML report and Jupyter: :mod:`.chart` (:class:`Chart` and its
ticks), :mod:`.draw` (:func:`chart_svg`), :mod:`.curves` (one curve's charts) and
:mod:`.diagnostics` (:func:`diagnostic_svg`). Files are drawn by matplotlib
(:mod:`saturate.report.plots`).
"""

from __future__ import annotations

from saturate.report.svg.chart import Chart
from saturate.report.svg.curves import curve_svg, sparkline_svg, thumbnail_svg
from saturate.report.svg.diagnostics import diagnostic_svg
from saturate.report.svg.draw import chart_svg

__all__ = ["Chart", "chart_svg", "curve_svg", "thumbnail_svg", "sparkline_svg", "diagnostic_svg"]
