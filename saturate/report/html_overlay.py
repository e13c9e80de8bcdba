"""The HTML report's "Runs on one chart" section: per metric of a source with two runs or more
(the seeds of a recipe, the recipes of a sweep), the runs drawn together
(:func:`saturate.report.svg.overlay.overlay_svg`), with a legend that names each run and its
verdict and whose checkbox shows or hides it; above them, a filter by verdict and by run name
that also hides the summary table's rows that do not match. The page's one script does both
(:data:`saturate.report.html_assets.SORT_SCRIPT`); without it every run stays drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from saturate.report.html_assets import esc
from saturate.report.plots.overlay import MAX_RUNS_PER_OVERLAY, overlay_groups
from saturate.report.svg.overlay import overlay_svg, run_color
from saturate.results import VERDICTS, CurveAnalysis

__all__ = ["overlay_section"]


def _legend(curves: Sequence[CurveAnalysis]) -> str:
    labels = []
    for i, c in enumerate(curves[:MAX_RUNS_PER_OVERLAY]):
        labels.append(
            f'<label data-i="{i}" data-run="{esc(c.run)}" data-verdict="{esc(c.verdict)}">'
            f'<input type="checkbox" checked> <span class="ov-swatch" '
            f'style="background:{run_color(i)}"></span> {esc(c.run)} ({esc(c.verdict)})</label>')
    return f'<div class="ov-legend">{"".join(labels)}</div>'


def overlay_section(curves: Sequence[CurveAnalysis], confidence: float) -> str:
    """The section (empty when no metric of a source has two runs)."""
    groups = overlay_groups(curves)
    if not groups:
        return ""
    options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in VERDICTS)
    parts = [
        '<h2 id="overlays">Runs on one chart</h2>',
        "<p class='muted'>Per metric, the runs of a source together: each run's fit and band in its "
        "colour (its points are in its own chart below), and each recipe's pooled curve (dashed: "
        "the mean of its seeds' fits "
        "where they all have data). A run's checkbox shows or hides it; the filters below also "
        "hide the summary table's rows that do not match.</p>",
        '<p><label>verdict <select id="ov-verdict"><option value="">all</option>'
        f'{options}</select></label> <label>run <input id="ov-run" type="search" '
        'placeholder="part of a run name"></label></p>',
    ]
    for (source, metric), group in groups.items():
        more = (f" (the first {MAX_RUNS_PER_OVERLAY} of {len(group)})"
                if len(group) > MAX_RUNS_PER_OVERLAY else "")
        parts.append(f'<section class="ov-group"><h3>{esc(metric)} · {esc(Path(source).name)}: '
                     f"{len(group)} runs{more}</h3>{overlay_svg(group, confidence=confidence)}"
                     f"{_legend(group)}</section>")
    return "".join(parts)
