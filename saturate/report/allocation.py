"""``saturate allocate`` faces: the plan as a terminal table, plain text, and JSON. Names from the
data go in as :class:`rich.text.Text`, so a run called ``[bold]x`` shows literally.
"""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from saturate.diagnostics import Allocation
from saturate.report.rows import prob
from saturate.report.terminal_layout import cell, print_fitted
from saturate.results import format_estimate


def render_allocation(
    allocation: Allocation, console: Console, *, gpu_hour_cost: float | None = None
) -> None:
    """The plan's headline and objective, the runs that pay ranked by UCB gain per GPU-hour with
    their share (and cost per point when a GPU-hour's price is known), then the runs not funded."""
    a, unit = allocation, allocation.unit
    console.print(cell(a.headline, "bold"))
    console.print(cell(f"objective: {a.metric} ({a.chosen})" if a.chosen
                       else f"objective: {a.metric}"))
    if a.choices:
        table = Table(title=Text(f"runs that pay, ranked by UCB gain per {a.per_unit}"),
                      title_justify="left", header_style="bold")
        cols = ["rank", "run", "P(pays)", f"gain if given all {a.budget:g} {unit}",
                f"UCB per {a.per_unit}", f"plan ({unit})", "planned gain"]
        if gpu_hour_cost is not None:
            cols.append("cost per point")
        for col in cols:
            table.add_column(col, justify="left" if col == "run" else "right")
        rows = []
        for i, c in enumerate(a.choices, 1):
            row = [str(i), c.run, prob(c.p_pays), format_estimate(c.gain),
                   f"{c.ucb_per_gpu_hour:.3g}", f"{c.planned_hours:g}",
                   format_estimate(c.planned_gain)]
            if gpu_hour_cost is not None:
                row.append(format_estimate(c.cost_per_point))
            table.add_row(*(cell(x) for x in row))
            rows.append([f"{i}. {c.run}", *row[2:]])
        print_fitted(console, table, rows, ["run", *cols[2:]])
    for s in a.skipped:
        console.print(cell(f"  not funded: {s}"))


def allocation_text(allocation: Allocation) -> str:
    """The plan's plain-text summary."""
    return allocation.summary() + "\n"


def allocation_json(allocation: Allocation) -> str:
    """The plan (:meth:`Allocation.to_dict`) as indented JSON."""
    return json.dumps(allocation.to_dict(), indent=2, allow_nan=False) + "\n"
