"""The picture a report opens with: does the next doubling pay? Every judged curve is a dot at its
P(pays), one row per metric, coloured by its verdict, over the bands of the call (does not pay,
inconclusive, pays); dots of equal P stack (a beeswarm). Each dot links to its run in the runs
explorer (``#overlays``, ``data-show``: the curve's index) and names itself in a ``<title>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup

from saturate.report.html_assets import BADGE_COLORS
from saturate.report.plots.style import short
from saturate.report.rows import prob
from saturate.report.svg.chart import tag
from saturate.report.svg.draw import _f
from saturate.results import PASSING_VERDICTS, CurveAnalysis

WIDTH = 1100.0
LABELS = 270.0  # the metric names' column
NA = 40.0  # the lane of the curves without a P(pays)
RADIUS = 4.6
MAX_ROWS = 30
"""Metrics drawn at most (those with the most curves); the table holds the rest."""
_LEVELS = 5  # dots stacked at most this many either side of a row's middle, then they overlap


def _swarm(xs: list[float], r: float) -> list[float]:
    """The vertical offset of each dot at ``xs`` (pixels) so that dots do not overlap: the
    nearest free level to the row's middle, or the least crowded when none is free."""
    step = 2 * r * 0.92
    placed: list[tuple[float, float]] = []
    offsets = [0.0] * len(xs)
    levels = [0.0] + [s * k * step for k in range(1, _LEVELS + 1) for s in (1, -1)]
    for i in sorted(range(len(xs)), key=lambda i: xs[i]):
        best, room = 0.0, -1.0
        for dy in levels:
            near = min((math.hypot(xs[i] - x, dy - y) for x, y in placed
                        if abs(xs[i] - x) < 2 * r), default=math.inf)
            if near >= 2 * r * 0.95:
                best = dy
                break
            if near > room:
                best, room = dy, near
        offsets[i] = best
        placed.append((xs[i], best))
    return offsets


def _rows(curves: Sequence[CurveAnalysis]) -> tuple[list[tuple[str, list[int]]], int]:
    """(metric, indices of its curves) in the order the metrics first come, at most
    :data:`MAX_ROWS` (those with the most curves); and how many metrics there are."""
    by: dict[str, list[int]] = {}
    for i, c in enumerate(curves):
        by.setdefault(c.metric, []).append(i)
    rows = list(by.items())
    if len(rows) > MAX_ROWS:
        keep = {m for m, _ in sorted(rows, key=lambda r: -len(r[1]))[:MAX_ROWS]}
        rows = [r for r in rows if r[0] in keep]
    return rows, len(by)


def _background(x0: float, x1: float, top: float, bottom: float, band: tuple[float, float]
                ) -> list[str]:
    """The call's three bands with their names above them."""
    lo, hi = band
    sx = lambda p: x0 + p * (x1 - x0)  # noqa: E731
    spans = (("does not pay", 0.0, lo, "#cf222e", ".07"), ("inconclusive", lo, hi, "#8c959f", ".1"),
             ("pays", hi, 1.0, "#1a7f37", ".08"))
    out = []
    for name, a, b, color, op in spans:
        if b <= a:
            continue
        out.append(f'<rect x="{_f(sx(a))}" y="{_f(top)}" width="{_f(sx(b) - sx(a))}" '
                   f'height="{_f(bottom - top)}" fill="{color}" fill-opacity="{op}"/>')
        if sx(b) - sx(a) > len(name) * 6.5:
            out.append(f'<text x="{_f((sx(a) + sx(b)) / 2)}" y="{_f(top - 6)}" '
                       f'text-anchor="middle" fill-opacity=".8">{name}</text>')
    return out


def _axis(x0: float, x1: float, y: float, band: tuple[float, float]) -> list[str]:
    ticks = sorted({0.0, 0.25, 0.5, 0.75, 1.0, *band})
    out = [f'<path d="M{_f(x0)} {_f(y)}H{_f(x1)}" stroke="currentColor" stroke-opacity=".4"/>']
    last = -math.inf
    for t in ticks:
        px = x0 + t * (x1 - x0)
        out.append(f'<path d="M{_f(px)} {_f(y)}v4" stroke="currentColor" stroke-opacity=".5"/>')
        if px - last > 28:
            out.append(f'<text x="{_f(px)}" y="{_f(y + 16)}" text-anchor="middle">{t:g}</text>')
            last = px
    out.append(f'<text x="{_f((x0 + x1) / 2)}" y="{_f(y + 32)}" text-anchor="middle">'
               "P(the next doubling of compute pays)</text>")
    return out


def _dot(i: int, c: CurveAnalysis, x: float, y: float) -> str:
    p = prob(c.p_pays)
    name = f"{c.run} · {c.metric}: {c.verdict}, P(pays) {p}"
    color = BADGE_COLORS.get(c.verdict, "#656d76")
    circle = tag("circle", Markup(tag("title", name)), cx=_f(x), cy=_f(y), r=f"{RADIUS:g}",
                 fill=color)
    return tag("a", Markup(circle), href="#overlays", data_show=i, aria_label=name)


def overview_svg(curves: Sequence[CurveAnalysis], band: tuple[float, float] = (0.45, 0.55)) -> str:
    """The overview as one ``<svg class="overview">`` (empty without curves); ``band``: the
    P(pays) below which a curve does not pay and from which it pays."""
    rows, metrics = _rows(curves)
    if not rows:
        return ""
    x0, x1 = LABELS + NA, WIDTH - 16
    top = 22.0
    body, labels, y = [], [], top
    for metric, idx in rows:
        xs = [x0 + (curves[i].p_pays or 0.0) * (x1 - x0) if curves[i].p_pays is not None
              else LABELS + NA / 2 for i in idx]
        offsets = _swarm(xs, RADIUS)
        half = max((abs(o) for o in offsets), default=0.0) + RADIUS + 5
        mid = y + max(half, 12.0)
        body += [_dot(i, curves[i], x, mid + o) for i, x, o in zip(idx, xs, offsets, strict=True)]
        paying = sum(curves[i].verdict in PASSING_VERDICTS for i in idx)
        labels.append(tag("text", Markup(tag("title", metric)), f"{short(metric, 34)} ",
                          Markup(tag("tspan", f"{paying}/{len(idx)} pay", fill_opacity=".65")),
                          x=_f(LABELS - 8), y=_f(mid + 4), text_anchor="end"))
        y = mid + max(half, 12.0)
        body.append(f'<path d="M{_f(LABELS - 150)} {_f(y)}H{_f(x1)}" stroke="currentColor" '
                    'stroke-opacity=".08"/>')
    parts = [*_background(x0, x1, top, y, band), *_axis(x0, x1, y, band)]
    if any(c.p_pays is None for c in curves):
        parts.append(f'<text x="{_f(LABELS + NA / 2)}" y="{_f(top - 6)}" text-anchor="middle" '
                     'fill-opacity=".8">no P</text>')
    height = y + 40
    if metrics > len(rows):
        parts.append(f'<text x="4" y="{_f(y + 32)}" fill-opacity=".75">the {len(rows)} of '
                     f'{metrics} metrics with the most '
                     "curves; the table holds them all</text>")
    title = tag("title", f"P(pays) of {len(curves)} curves by metric, coloured by verdict")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="overview" viewBox="0 0 '
            f'{_f(WIDTH)} {_f(height)}" width="{_f(WIDTH)}" height="{_f(height)}" role="img" '
            f'font-size="12" fill="currentColor">{title}{"".join(parts)}'
            f'{"".join(labels)}{"".join(body)}</svg>')
