"""A small chart built from the data (lines, bands, dots, marks) and the ticks of its axes;
:func:`saturate.report.svg.draw.chart_svg` draws it as SVG, the legend below the plot.

Not matplotlib: it took about a second per chart (the HTML report of the 53 sample curves took
minutes and weighed 6 MB as PNG); these are text built in milliseconds, vector, and drawn in
``currentColor`` for light and dark themes. Coordinates are rounded to 0.1 px and runs of points
closer than half a pixel are thinned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
from markupsafe import Markup

from saturate.report.text import for_terminal

#: What a layer takes for its coordinates: a sequence of numbers or a numpy array of them.
Values: TypeAlias = Sequence[float] | np.ndarray

FONT = 11.0
CHAR = 6.1  # average advance of a character at FONT px, for laying out legends and labels


def tag(name: str, /, *content: object, **attrs: object) -> str:
    """One SVG element, ``attrs`` written ``text_anchor`` -> ``text-anchor``. markupsafe escapes the
    content and every attribute value (text from the data first shows its control and bidi
    characters escaped, as the templates' ``finalize`` does); content given as ``Markup`` (a
    nested element) is kept as it is."""
    def shown(v: object) -> str:
        return v if isinstance(v, Markup) else for_terminal(str(v))

    attr = Markup("").join(Markup(' {}="{}"').format(k.replace("_", "-"), shown(v))
                           for k, v in attrs.items())
    return str(Markup("<{0}{1}>{2}</{0}>").format(Markup(name), attr,
                                                  Markup("").join(shown(c) for c in content)))


def tick_label(v: float) -> str:
    """``0.05``, ``2``, ``150``, ``1k``, ``20k``, ``3M``, ``1e+10``: short and exact enough."""
    if v == 0:
        return "0"
    a = abs(v)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if 1e3 * scale > a >= scale:
            return f"{v / scale:.3g}{suffix}"
    if a >= 1e12 or a < 1e-3:
        return f"{v:.2g}"
    return f"{v:.3g}"


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks of a log axis: the powers of ten in range, with 2 and 5 between them when the range
    spans fewer than three decades (1 and 3 when even that gives fewer than three ticks)."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for mantissas in ((1,), (1, 2, 5), (1, 2, 3, 5, 7)):
        if len(mantissas) == 1 and b - a < 3:
            continue
        ticks = [m * 10.0**k for k in range(a, b + 1) for m in mantissas]
        ticks = [t for t in ticks if lo <= t * (1 + 1e-9) and t <= hi * (1 + 1e-9)]
        if len(ticks) >= 3:
            return ticks
    return [lo, math.sqrt(lo * hi), hi]


def linear_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` ticks at round numbers (1, 2, 2.5 or 5 times a power of ten)."""
    span = hi - lo
    if not span > 0:
        return [lo]
    raw = span / n
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    return [round(first + i * step, 12) for i in range(int((hi - first) / step + 1e-9) + 1)]


@dataclass
class _Item:
    kind: str  # line, band, dots, vline, hline, vspan, hspan, marker
    x: np.ndarray
    y: np.ndarray
    y2: np.ndarray | None = None
    color: str = "currentColor"
    label: str = ""
    dash: str = ""
    width: float = 1.5
    opacity: float = 1.0
    text: str = ""


@dataclass
class Chart:
    """One plot: add layers (drawn in order), then draw it with ``chart_svg``. The y range comes
    from the layers added with ``scale=True`` (the data), never from bands, so an interval that
    runs off to infinity does not squash the curve; whatever leaves the range is clipped."""

    width: float = 640.0
    height: float = 260.0
    xlabel: str = ""
    ylabel: str = ""
    xlog: bool = True
    xbase2: bool = False
    yticks: int = 5
    xlim: tuple[float, float] | None = None
    left: float | None = None  # the plot's left edge, to line up charts stacked on one x axis
    items: list[_Item] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _xs: list[np.ndarray] = field(default_factory=list)
    _ys: list[np.ndarray] = field(default_factory=list)

    # ---- layers ---------------------------------------------------------------------------------
    def _add(self, item: _Item, scale_x: bool, scale_y: bool) -> None:
        ok = np.isfinite(item.x) & (item.x > 0 if self.xlog else True)
        if scale_x and ok.any():
            self._xs.append(item.x[ok])
        if scale_y:
            y = item.y[ok & np.isfinite(item.y)] if item.y.size == item.x.size else item.y
            if y.size:
                self._ys.append(y[np.isfinite(y)])
        self.items.append(item)

    def line(self, x: Values, y: Values, color: str, *, label: str = "",
             dash: str = "", width: float = 1.6, scale: bool = True, opacity: float = 1.0) -> None:
        """A polyline through the points (gaps where a value is not finite)."""
        self._add(_Item("line", _arr(x), _arr(y), color=color, label=label, dash=dash,
                        width=width, opacity=opacity), scale, scale)

    def band(self, x: Values, lo: Values, hi: Values, color: str, *,
             label: str = "", opacity: float = 0.18) -> None:
        """A shaded band between ``lo`` and ``hi``; it never sets the y range."""
        self._add(_Item("band", _arr(x), _arr(lo), _arr(hi), color=color, label=label,
                        opacity=opacity), True, False)

    def dots(self, x: Values, y: Values, color: str, *, label: str = "",
             size: float = 3.5, opacity: float = 0.75) -> None:
        self._add(_Item("dots", _arr(x), _arr(y), color=color, label=label, width=size,
                        opacity=opacity), True, True)

    def marker(self, x: float, y: float, lo: float, hi: float, color: str, *, label: str = "",
               text: str = "", scale: bool = True) -> None:
        """A diamond at (x, y) with an error bar from ``lo`` to ``hi`` and a note beside it."""
        self._add(_Item("marker", _arr([x]), _arr([y]), _arr([lo, hi]), color=color,
                        label=label, text=text), True, scale)

    def vline(self, x: float, color: str, *, label: str = "", dash: str = "4 3") -> None:
        self._add(_Item("vline", _arr([x]), _arr([]), color=color, label=label, dash=dash),
                  True, False)

    def hline(self, y: float, color: str, *, label: str = "", dash: str = "5 3",
              scale: bool = False) -> None:
        self._add(_Item("hline", _arr([]), _arr([y]), color=color, label=label, dash=dash),
                  False, scale)

    def vspan(self, x0: float, x1: float, color: str, opacity: float = 0.08) -> None:
        self._add(_Item("vspan", _arr([x0, x1]), _arr([]), color=color, opacity=opacity),
                  False, False)

    def hspan(self, y0: float, y1: float, color: str, opacity: float = 0.08) -> None:
        self._add(_Item("hspan", _arr([]), _arr([y0, y1]), color=color, opacity=opacity),
                  False, False)

    def note(self, text: str) -> None:
        """A line of text in the plot's top-left corner (e.g. a mark that is off scale)."""
        self.notes.append(text)

    def restrict_y(self, y: Values) -> None:
        """Take the y range from ``y`` alone (e.g. the observed points of a thumbnail)."""
        y = _arr(y)
        self._ys = [y[np.isfinite(y)]]

    def y_range(self) -> tuple[float, float] | None:
        """The y range the data set (5% padding), None when there is no data."""
        ys = np.concatenate(self._ys) if self._ys else np.empty(0)
        if not ys.size:
            return None
        lo, hi = float(ys.min()), float(ys.max())
        pad = (hi - lo) * 0.05 if hi > lo else max(abs(hi) * 0.05, 1e-9)
        return lo - pad, hi + pad


def _arr(values: Values) -> np.ndarray:
    return np.asarray(values, dtype=float).reshape(-1)
