"""Draw a :class:`~saturate.report.svg.chart.Chart` as one ``<svg>`` element: frame, grid, ticks,
axis names, the layers clipped to the plot, notes, and the legend in rows below the axis name."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable

import numpy as np

from saturate.report.svg.chart import (
    CHAR,
    FONT,
    Chart,
    _Item,
    linear_ticks,
    log_ticks,
    tag,
    tick_label,
)

Scale = Callable[[np.ndarray], np.ndarray]
_ROW = 15.0  # height of a legend row


def _f(v: float) -> str:
    """A coordinate rounded to 0.1 px, without a trailing ``.0``."""
    s = f"{v:.1f}"
    s = s[:-2] if s.endswith(".0") else s
    return "0" if s == "-0" else s


def _thin(px: np.ndarray, py: np.ndarray, eps: float = 0.35) -> np.ndarray:
    """Indices of the points to keep so that the polyline moves less than ``eps`` px
    (Ramer-Douglas-Peucker)."""
    n = px.size
    if n <= 2:
        return np.arange(n)
    keep = np.zeros(n, dtype=bool)
    keep[[0, -1]] = True
    stack = [(0, n - 1)]
    while stack:
        i, j = stack.pop()
        if j <= i + 1:
            continue
        dx, dy = px[j] - px[i], py[j] - py[i]
        norm = math.hypot(dx, dy) or 1.0
        seg = slice(i + 1, j)
        d = np.abs(dy * (px[seg] - px[i]) - dx * (py[seg] - py[i])) / norm
        k = int(np.argmax(d))
        if d[k] > eps:
            keep[i + 1 + k] = True
            stack += [(i, i + 1 + k), (i + 1 + k, j)]
    return np.flatnonzero(keep)


def polyline(px: np.ndarray, py: np.ndarray) -> str:
    """Path data through the finite points, a new subpath after each gap, thinned."""
    ok = np.append(np.isfinite(px) & np.isfinite(py), False)
    out = []
    start = None
    for i, good in enumerate(ok):
        if good:
            start = i if start is None else start
            continue
        if start is not None:
            xs, ys = px[start:i], py[start:i]
            pts = [f"{_f(xs[k])} {_f(ys[k])}" for k in _thin(xs, ys)]
            out.append(f"M{pts[0]}" + (f"L{' '.join(pts[1:])}" if len(pts) > 1 else "h0"))
            start = None
    return "".join(out)


def _x_scale(chart: Chart, x0: float, x1: float) -> tuple[Scale, list[float], float, float]:
    xs = np.concatenate(chart._xs) if chart._xs else np.array([1.0, 10.0])
    lo, hi = chart.xlim or (float(xs.min()), float(xs.max()))
    if chart.xlog:
        lo, hi = (lo / 1.12, hi * 1.3) if hi > lo else (lo / 2, hi * 2)
        a, b = math.log(lo), math.log(hi)
        ticks = _base2_ticks(lo, hi) if chart.xbase2 else log_ticks(lo, hi)

        def sx(v: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return x0 + (np.log(np.where(v > 0, v, np.nan)) - a) / (b - a) * (x1 - x0)
    else:
        pad = (hi - lo) * 0.04 if hi > lo else 1.0
        lo, hi = lo - pad, hi + pad
        ticks = linear_ticks(lo, hi, 6)

        def sx(v: np.ndarray) -> np.ndarray:
            return x0 + (v - lo) / (hi - lo) * (x1 - x0)
    return sx, ticks, lo, hi


def _base2_ticks(lo: float, hi: float) -> list[float]:
    return [2.0**k for k in range(math.ceil(math.log2(lo)), math.floor(math.log2(hi)) + 1)]


def _legend_rows(items: Iterable[_Item], width: float) -> list[list[tuple[_Item, float]]]:
    rows: list[list[tuple[_Item, float]]] = [[]]
    used = 0.0
    seen = set()
    for item in items:
        if not item.label or item.label in seen:
            continue
        seen.add(item.label)
        w = 26 + len(item.label) * CHAR + 14
        if rows[-1] and used + w > width:
            rows.append([])
            used = 0.0
        rows[-1].append((item, used))
        used += w
    return [r for r in rows if r]


def _swatch(item: _Item, x: float, y: float) -> str:
    if item.kind in ("band", "vspan", "hspan"):
        return (f'<rect x="{_f(x)}" y="{_f(y - 5)}" width="20" height="10" fill="{item.color}" '
                f'fill-opacity="{max(item.opacity, 0.25):.2f}"/>')
    if item.kind == "dots":
        return (f'<path d="M{_f(x + 10)} {_f(y)}h0" stroke="{item.color}" stroke-width="5" '
                'stroke-linecap="round"/>')
    if item.kind == "marker":
        return _diamond(x + 10, y, item.color)
    dash = f' stroke-dasharray="{item.dash}"' if item.dash else ""
    return (f'<path d="M{_f(x)} {_f(y)}h20" stroke="{item.color}" stroke-width="2"{dash}/>')


def _diamond(x: float, y: float, color: str, r: float = 4.0) -> str:
    return (f'<path d="M{_f(x)} {_f(y - r)}l{r} {r}l{-r} {r}l{-r} {-r}z" fill="{color}" '
            'stroke="white" stroke-width=".6"/>')


def _layer(item: _Item, sx: Scale, sy: Scale, box: tuple[float, float, float, float]) -> str:
    x0, y0, x1, y1 = box
    c = item.color
    dash = f' stroke-dasharray="{item.dash}"' if item.dash else ""
    if item.kind == "line":
        op = f' stroke-opacity="{item.opacity:.2f}"' if item.opacity < 1 else ""
        return (f'<path d="{polyline(sx(item.x), sy(item.y))}" fill="none" stroke="{c}" '
                f'stroke-width="{item.width:g}"{dash}{op} stroke-linejoin="round"/>')
    if item.kind == "band":
        assert item.y2 is not None  # a band always has its upper edge
        ok = np.isfinite(item.x) & np.isfinite(item.y) & np.isfinite(item.y2)
        px, lo, hi = sx(item.x[ok]), sy(item.y[ok]), sy(item.y2[ok])
        ok2 = np.isfinite(px)
        px, lo, hi = px[ok2], lo[ok2], hi[ok2]
        if px.size < 2:
            return ""
        top = polyline(px, np.clip(hi, y0 - 50, y1 + 50))
        bottom = polyline(px[::-1], np.clip(lo[::-1], y0 - 50, y1 + 50))
        return (f'<path d="{top}L{bottom[1:]}Z" fill="{c}" fill-opacity="{item.opacity:.2f}" '
                'stroke="none"/>')
    if item.kind == "dots":
        px, py = sx(item.x), sy(item.y)
        ok = np.isfinite(px) & np.isfinite(py)
        d = "".join(f"M{_f(a)} {_f(b)}h0" for a, b in zip(px[ok], py[ok], strict=True))
        return (f'<path d="{d}" stroke="{c}" stroke-width="{item.width:g}" stroke-linecap="round" '
                f'stroke-opacity="{item.opacity:.2f}"/>')
    if item.kind == "marker":
        (px,), (py,) = sx(item.x), sy(item.y)
        assert item.y2 is not None  # a marker always has its error bar
        bar_lo, bar_hi = sy(item.y2)
        if not (np.isfinite(px) and np.isfinite(py)):
            return ""
        bar = ""
        if np.isfinite(bar_lo) and np.isfinite(bar_hi):
            b0, b1 = float(np.clip(bar_lo, y0, y1)), float(np.clip(bar_hi, y0, y1))
            bar = (f'<path d="M{_f(px)} {_f(b0)}V{_f(b1)}M{_f(px - 3)} {_f(b0)}h6M{_f(px - 3)} '
                   f'{_f(b1)}h6" stroke="{c}" stroke-width="1.3"/>')
        text = (tag("text", item.text, x=_f(px + 6), y=_f(py - 6), fill=c, font_size="10")
                if item.text else "")
        return bar + _diamond(px, py, c) + text
    if item.kind in ("vline", "vspan"):
        xs = sx(item.x)
        if not np.isfinite(xs).all():
            return ""
        if item.kind == "vspan":
            a, b = sorted(np.clip(xs, x0, x1))
            return (f'<rect x="{_f(a)}" y="{_f(y0)}" width="{_f(b - a)}" height="{_f(y1 - y0)}" '
                    f'fill="{c}" fill-opacity="{item.opacity:.2f}"/>')
        return (f'<path d="M{_f(xs[0])} {_f(y0)}V{_f(y1)}" stroke="{c}" stroke-width="1.3"'
                f'{dash}/>')
    ys = sy(item.y)
    if not np.isfinite(ys).all():
        return ""
    if item.kind == "hspan":
        a, b = sorted(np.clip(ys, y0, y1))
        return (f'<rect x="{_f(x0)}" y="{_f(a)}" width="{_f(x1 - x0)}" height="{_f(b - a)}" '
                f'fill="{c}" fill-opacity="{item.opacity:.2f}"/>')
    return f'<path d="M{_f(x0)} {_f(ys[0])}H{_f(x1)}" stroke="{c}" stroke-width="1.2"{dash}/>'


def _y_scale(chart: Chart, y0: float, y1: float) -> tuple[Scale, list[float]]:
    rng = chart.y_range() or (0.0, 1.0)
    lo, hi = rng

    def sy(v: np.ndarray) -> np.ndarray:
        return y1 - (np.asarray(v, dtype=float) - lo) / (hi - lo) * (y1 - y0)

    return sy, linear_ticks(lo, hi, chart.yticks)


def chart_svg(chart: Chart, *, legend: bool = True, axes: bool = True, title: str = "",
              css_class: str = "chart", font: float = FONT) -> str:
    """The chart as one ``<svg>`` element that scales to its container. ``axes=False`` draws a
    bare sparkline: no frame, ticks, names or legend. ``title`` becomes the accessible name."""
    w, h = chart.width, chart.height
    char = CHAR * font / FONT
    if axes:
        _, yt = _y_scale(chart, 0.0, 1.0)
        left = chart.left or (6 + max(len(tick_label(t)) for t in yt) * char
                              + (16 if chart.ylabel else 0))
        box_w = w - left - 10
        rows = _legend_rows(chart.items, box_w) if legend else []
        bottom = font + 7 + (16 if chart.xlabel else 0) + len(rows) * _ROW + (4 if rows else 0)
        box = (left, 6.0, w - 8, h - bottom)
    else:
        rows, box = [], (1.0, 1.0, w - 1, h - 1)
    x0, y0, x1, y1 = box
    sx, xticks, _, _ = _x_scale(chart, x0, x1)
    sy, yticks = _y_scale(chart, y0, y1)
    body = "".join(_layer(item, sx, sy, box) for item in chart.items)
    uid = "k" + hashlib.md5(body.encode(), usedforsecurity=False).hexdigest()[:10]
    parts = [f'<clipPath id="{uid}"><rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" '
             f'height="{_f(y1 - y0)}"/></clipPath>']
    if axes:
        parts.append(_axes(chart, sx, sy, xticks, yticks, box, char))
    parts.append(f'<g clip-path="url(#{uid})">{body}</g>')
    for i, note in enumerate(chart.notes):
        parts.append(tag("text", note, x=_f(x0 + 4), y=_f(y0 + 12 + 12 * i), font_size="10",
                         fill_opacity=".75"))
    top = y1 + 18 + (16 if chart.xlabel else 0) + 4
    for r, row in enumerate(rows):
        y = top + r * _ROW + _ROW / 2
        for item, dx in row:
            parts.append(_swatch(item, x0 + dx, y))
            parts.append(tag("text", item.label, x=_f(x0 + dx + 26), y=_f(y + 4)))
    label = tag("title", title) if title else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" viewBox="0 0 {_f(w)} '
            f'{_f(h)}" width="{_f(w)}" height="{_f(h)}" role="img" font-size="{font:g}" '
            f'fill="currentColor">{label}{"".join(parts)}</svg>')


def _axes(chart: Chart, sx: Scale, sy: Scale, xticks: list[float], yticks: list[float],
          box: tuple[float, float, float, float], char: float) -> str:
    x0, y0, x1, y1 = box
    grid, labels = [], []
    free = -math.inf  # where the last x tick label ends: a label that would overlap it is left out
    for t in xticks:
        (px,) = sx(np.array([t]))
        if np.isfinite(px) and x0 - 0.5 <= px <= x1 + 0.5:
            grid.append(f"M{_f(px)} {_f(y0)}V{_f(y1)}")
            text = tick_label(t)
            half = len(text) * char / 2
            if px - half > free + 4:
                labels.append(tag("text", text, x=_f(px), y=_f(y1 + char * 2 + 1),
                                  text_anchor="middle"))
                free = px + half
    for t in yticks:
        (py,) = sy(np.array([t]))
        if y0 - 0.5 <= py <= y1 + 0.5:
            grid.append(f"M{_f(x0)} {_f(py)}H{_f(x1)}")
            labels.append(tag("text", tick_label(t), x=_f(x0 - 4), y=_f(py + 3.5), text_anchor="end"))
    out = [f'<path d="{"".join(grid)}" stroke="currentColor" stroke-opacity=".12"/>',
           f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" '
           'fill="none" stroke="currentColor" stroke-opacity=".35"/>', *labels]
    if chart.xlabel:
        out.append(tag("text", chart.xlabel, x=_f((x0 + x1) / 2), y=_f(y1 + 29),
                       text_anchor="middle"))
    if chart.ylabel:
        out.append(tag("text", chart.ylabel, transform=f"translate(11 {_f((y0 + y1) / 2)}) rotate(-90)",
                       text_anchor="middle"))
    return "".join(out)
