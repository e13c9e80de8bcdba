"""The page ``watch --html PATH`` keeps: the current verdict of every curve followed, refreshing
itself every ``refresh`` seconds. Self-contained (the report's Content-Security-Policy less the
script), every name escaped; the watch writes it atomically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from saturate.report.html_assets import PAGE_CSS, badge, breakable, esc
from saturate.report.rows import format_time, headline, interval, num, short_reason
from saturate.results import CurveAnalysis

LIVE_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
            "form-action 'none'")
_HEAD = ("run", "metric", "verdict", "P(pays)", "gain / doubling", "last compute", "points",
         "reason")


def _p_pays(curve: CurveAnalysis) -> str:
    p = getattr(curve.decision, "p_pays", None)
    return f"{p:.2f}" if isinstance(p, float) and math.isfinite(p) else "–"


def _row(curve: CurveAnalysis) -> str:
    cells = [breakable(curve.run), breakable(curve.metric), badge(curve.verdict),
             esc(_p_pays(curve)), esc(interval(curve.gain_per_doubling)),
             esc(num(curve.compute_last)), esc(curve.n_points), esc(short_reason(curve))]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def render_live_page(curves: Iterable[CurveAnalysis], *, source: str, updated: float,
                     refresh: int = 60) -> str:  # fmt: skip
    """The page of the current verdicts (``updated``: epoch seconds of the last pass)."""
    rows = sorted(curves, key=lambda c: (c.run, c.metric, c.run_id))
    body = "\n".join(_row(c) for c in rows) or (
        f'<tr><td colspan="{len(_HEAD)}">no curve analysed yet</td></tr>')
    head = "".join(f"<th>{esc(h)}</th>" for h in _HEAD)
    summary = esc(headline(rows)) if rows else "waiting for the first pass"
    every = max(int(refresh), 1)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(LIVE_CSP)}">
<meta http-equiv="refresh" content="{every}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>saturate watch · {esc(source)}</title>
<style>{PAGE_CSS}</style></head>
<body><main>
<h1>saturate watch</h1>
<p>{esc(source)} · last pass {esc(format_time(updated))} · refreshes every {every}s</p>
<p>{summary}</p>
<table><thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody></table>
</main></body></html>
"""
