"""The suite section of the reports as text: cells shared by every format, Markdown, and the
JSON schema fragment. One row per group, the per-task verdicts as a grid (tasks x groups), then
the comparisons between groups; the terminal and HTML faces are :mod:`.suite_table` and
:mod:`.suite_html`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from saturate.report.rows import VERDICT_ICONS, interval, num, prob
from saturate.report.text import for_markdown as escape_md
from saturate.results import Estimate, Verdict
from saturate.results.codec import schema_of
from saturate.suites.result import AggregateCurve, GroupComparison, TaskResult

# (key, header) of a group's row, in display order.
SUITE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("group", "group"), ("verdict", "suite verdict"), ("p_pays", "P(pays)"),
    ("gain", "gain / doubling"), ("paying", "tasks still paying"), ("first", "saturated first"),
    ("regressing", "regressing"), ("level", "aggregate at last compute"),
    ("forecast", "forecast 2x"), ("tasks", "tasks"), ("threshold", "threshold"))

if TYPE_CHECKING:  # types only: suites.result renders itself through this module
    from saturate.suites.result import SuiteAnalysis, SuiteGroup


def level_at_last(g: SuiteGroup, statistic: str) -> Estimate:
    """The analysed aggregate at its last compute, with its bootstrap band."""
    a = g.aggregate
    k = a.analysed[1] - 1
    value = getattr(a, statistic)[k]
    return Estimate(value, getattr(a, f"{statistic}_lo")[k], getattr(a, f"{statistic}_hi")[k])


def suite_group_row(suite: SuiteAnalysis, g: SuiteGroup) -> dict[str, str]:
    """The cells of :data:`SUITE_COLUMNS` for one group, as text."""
    a = g.analysis
    first = g.saturated_first
    two = next((f for f in a.forecast if str(f.at) == "2x"), None)
    per_task = bool(g.task_results)
    return {
        "group": g.group,
        "verdict": a.verdict,
        "tasks": f"{len(g.tasks)} x {_seeds(g)}",
        "level": f"{interval(level_at_last(g, suite.statistic))} at {num(a.compute_last)}",
        "gain": interval(a.gain_per_doubling),
        "threshold": num(a.threshold),
        "p_pays": prob(g.p_pays),
        "paying": f"{len(g.paying)}/{len(g.task_results)}" if per_task else "–",
        "first": "–" if first is None else f"{first.task} ({num(first.saturation_compute)})",
        "regressing": ", ".join(g.regressing) or ("none" if per_task else "–"),
        "forecast": "–" if two is None else f"{num(two.value)} [{num(two.lo)}, {num(two.hi)}]",
    }


def _seeds(g: SuiteGroup) -> str:
    counts = sorted(set(g.n_seeds.values()))
    return f"{counts[0]} seeds" if len(counts) == 1 else f"{counts[0]}-{counts[-1]} seeds"


def task_grid(suite: SuiteAnalysis,
              ) -> tuple[list[str], list[str], dict[tuple[str, str], Verdict]]:
    """``(tasks, groups, {(task, group): verdict})`` of the per-task verdicts (tasks sorted by how
    many groups still pay on them, the ones holding the suite back first)."""
    groups = [g.group for g in suite.groups]
    cells = {(t.task, g.group): t.verdict for g in suite.groups for t in g.task_results}
    tasks = sorted({t for t, _ in cells}, key=lambda t: (
        sum(cells.get((t, g)) in ("scaling", "slowing") for g in groups), t))
    return tasks, groups, cells


def comparison_text(c: Any) -> str:
    cross = ("fitted aggregates do not cross within 64x" if c.crossing is None else
             f"fitted aggregates cross at {interval(c.crossing)}, {c.leader_after} ahead after")
    return (f"{c.a} vs {c.b}: P({c.a} ahead) {prob(c.p_a_ahead)} at {num(c.compute)}, "
            f"{prob(c.p_a_ahead_2x)} at 2x ({num(c.compute_2x)}); {cross}")


def suite_notes(suite: SuiteAnalysis) -> list[str]:
    """Every note of the analysis: normalisation, suite, then each group's."""
    return [*suite.normalization.notes, *suite.notes,
            *(f"{g.group}: {n}" for g in suite.groups for n in g.notes)]


def _verdict_md(v: str) -> str:
    return f"{VERDICT_ICONS.get(v, '')} **{v}**".strip() if v else "–"


def suite_markdown(suite: SuiteAnalysis, *, reasons: bool = True) -> list[str]:
    """The ``### Suite`` section as Markdown lines (for a pull-request comment)."""
    out = [f"### Suite {escape_md(suite.suite)}", "", escape_md(f"Method: {suite.method()}"), ""]
    out.append("| " + " | ".join(h for _, h in SUITE_COLUMNS) + " |")
    out.append("|" + "|".join(":---" if k in ("group", "verdict", "first", "regressing")
                              else "---:" for k, _ in SUITE_COLUMNS) + "|")
    for g in suite.groups:
        row = suite_group_row(suite, g)
        out.append("| " + " | ".join(_verdict_md(g.verdict) if k == "verdict" else
                                     escape_md(row[k]) for k, _ in SUITE_COLUMNS) + " |")
    out.append("")
    tasks, groups, cells = task_grid(suite)
    if tasks:
        out += ["Per-task verdicts (seeds pooled):", ""]
        out.append("| task | " + " | ".join(escape_md(g) for g in groups) + " |")
        out.append("|:---|" + "|".join(":---" for _ in groups) + "|")
        for t in tasks:
            out.append(f"| {escape_md(t)} | "
                       + " | ".join(_verdict_md(cells.get((t, g), "")) for g in groups) + " |")
        out.append("")
    out += [f"- {escape_md(comparison_text(c))}" for c in suite.comparisons]
    if reasons:
        for g in suite.groups:
            out.append(f"- {_verdict_md(g.verdict)}: {escape_md(g.group)}")
            out += [f"  - {escape_md(r)}" for r in g.analysis.reasons]
    out += [f"- note: {escape_md(n)}" for n in suite_notes(suite)]
    out.append("")
    return out


@cache
def _schema_text() -> str:
    return resources.files("saturate.report").joinpath("suite_schema.json").read_text("utf-8")


def suite_schema() -> dict[str, Any]:
    """The JSON-schema fragment of the suite section: ``suite_schema.json`` with the parts of the
    result classes written from their fields (:func:`saturate.results.codec.schema_of`)."""
    doc = json.loads(_schema_text())
    for cls in (Estimate, AggregateCurve, TaskResult, GroupComparison):
        doc["$defs"][cls._json_def] = schema_of(cls)
    return doc
