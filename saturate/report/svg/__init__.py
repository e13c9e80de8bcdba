"""Charts as inline SVG built from the data, for the HTML report and Jupyter: small, vector,
fast, and drawn in the page's text colour so that they read in light and dark themes.

* :mod:`.chart`: :class:`Chart` (the layers of one plot) and the ticks of its axes;
* :mod:`.draw`: :func:`chart_svg`, the ``<svg>`` element of a chart;
* :mod:`.curves`: the charts of one curve (:func:`curve_svg`, :func:`thumbnail_svg`,
  :func:`sparkline_svg`);
* :mod:`.diagnostics`: the figures of the diagnostics (:func:`diagnostic_svg`).

Files (``saturate plot``) are drawn by matplotlib in :mod:`saturate.report.plots`.
"""

from __future__ import annotations

from saturate.report.svg.chart import Chart
from saturate.report.svg.curves import curve_svg, sparkline_svg, thumbnail_svg
from saturate.report.svg.diagnostics import diagnostic_svg
from saturate.report.svg.draw import chart_svg

__all__ = ["Chart", "chart_svg", "curve_svg", "thumbnail_svg", "sparkline_svg", "diagnostic_svg"]
