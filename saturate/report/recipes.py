"""``saturate compare`` faces: recipes side by side as terminal tables, Markdown, and JSON. Names
from the data go through :func:`~saturate.report.text.for_terminal` (as :class:`rich.text.Text`)
or :func:`~saturate.report.markdown.escape_md`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from saturate.diagnostics import RecipeComparison
from saturate.report.markdown import escape_md
from saturate.report.rows import prob
from saturate.report.terminal_layout import cell, print_fitted
from saturate.results import format_estimate

COMPARE_COLUMNS = ("recipe", "seeds", "A (asymptote)", "B (efficiency)", "last value", "verdict",
                   "P(pays)")


def _cells(comp: RecipeComparison) -> list[list[str]]:
    return [[r.label, str(r.n_seeds), format_estimate(r.A), format_estimate(r.B),
             f"{r.value_last:.4g} at {r.compute_last:.4g}", r.verdict, prob(r.p_pays)]
            for r in comp.recipes]


def render_comparisons(comparisons: Sequence[RecipeComparison], console: Console) -> None:
    """One table per metric (the recipes' A, B, last value, verdict and P(pays)), then P(beats)
    per pair."""
    for comp in comparisons:
        table = Table(title=cell(f"{comp.metric}: recipes by {comp.group_by}"))
        for col in COMPARE_COLUMNS:
            table.add_column(col, justify="left" if col in ("recipe", "verdict") else "right")
        rows = _cells(comp)
        for row in rows:
            table.add_row(*(cell(x) for x in row))
        print_fitted(console, table, rows, COMPARE_COLUMNS)
        for p in comp.pairs:
            console.print(cell(f"  {p.first} vs {p.second}: {p.summary()}"))


def comparisons_markdown(comparisons: Sequence[RecipeComparison]) -> str:
    """A Markdown section per metric: the recipes' table and P(beats) per pair."""
    lines: list[str] = []
    for comp in comparisons:
        lines += [f"## {escape_md(comp.metric)}: recipes by {escape_md(comp.group_by)}", "",
                  "| " + " | ".join(COMPARE_COLUMNS) + " |", "|---|---:|---:|---:|---:|---|---:|"]
        lines += ["| " + " | ".join(escape_md(x) for x in row) + " |" for row in _cells(comp)]
        lines.append("")
        lines += [escape_md(f"- {p.first} vs {p.second}: {p.summary()}") for p in comp.pairs]
        lines.append("")
    return "\n".join(lines)


def comparisons_json(comparisons: Sequence[RecipeComparison], group_by: str) -> str:
    """``{"group_by": ..., "comparisons": [...]}`` as indented JSON."""
    doc = {"group_by": group_by, "comparisons": [c.to_dict() for c in comparisons]}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"
