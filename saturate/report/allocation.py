"""``saturate allocate`` faces: a terminal table per metric, plain text, and JSON.

Names from the data go in as :class:`rich.text.Text`, so a run called ``[bold]x`` shows literally.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from saturate.diagnostics import Allocation
from saturate.results import format_estimate
from saturate.text import for_terminal

__all__ = ["render_allocations", "allocations_text", "allocations_json"]


def render_allocations(
    allocations: Sequence[Allocation], console: Console, *, gpu_hour_cost: float | None = None
) -> None:
    """One table per metric: runs ranked by UCB gain per GPU-hour, the plan, and the cost per
    point of metric when the price of a GPU-hour is known; then the runs skipped."""
    for a in allocations:
        title = f"{a.budget:g} GPU-hours on {a.metric}: ranked by UCB gain per GPU-hour"
        table = Table(title=Text(for_terminal(title)))
        cols = ["rank", "run", "gain if given all", "UCB / GPU-hour", "plan (GPU-h)",
                "planned gain"]
        if gpu_hour_cost is not None:
            cols.append("cost per point")
        for col in cols:
            table.add_column(col, justify="left" if col == "run" else "right")
        for i, c in enumerate(a.choices, 1):
            row = [str(i), Text(for_terminal(c.run)), format_estimate(c.gain),
                   f"{c.ucb_per_gpu_hour:.3g}", f"{c.planned_hours:g}",
                   format_estimate(c.planned_gain)]
            if gpu_hour_cost is not None:
                row.append(format_estimate(c.cost_per_point))
            table.add_row(*row)
        console.print(table)
        for s in a.skipped:
            console.print(Text(for_terminal(f"  skipped {s}")))


def allocations_text(allocations: Sequence[Allocation]) -> str:
    """Each allocation's plain-text summary, a blank line between metrics."""
    return "\n\n".join(a.summary() for a in allocations) + "\n"


def allocations_json(allocations: Sequence[Allocation], budget: float) -> str:
    """``{"budget": ..., "allocations": [...]}`` as indented JSON."""
    doc = {"budget": budget, "allocations": [a.to_dict() for a in allocations]}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"
