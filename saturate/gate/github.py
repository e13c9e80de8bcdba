"""The gate's outputs for GitHub Actions: workflow commands (``::error``/``::warning``, within
GitHub's per-step limits) and the step summary."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from saturate.errors import InputError
from saturate.gate.decide import (
    CurveOutcome,
    DiagnosticOutcome,
    GateResult,
    Outcome,
    SuiteOutcome,
)
from saturate.report.text import for_annotation

# GitHub shows at most 10 error and 10 warning annotations per step (and 50 per job).
MAX_ANNOTATIONS = 10
# GitHub refuses a step summary above 1 MiB.
STEP_SUMMARY_LIMIT = 1024 * 1024


def _command(kind: str, title: str, message: str) -> str:
    """The annotation boundary: names in ``title`` and ``message`` cannot end the line or the
    command, nor carry terminal escapes (:func:`saturate.report.text.for_annotation`)."""
    return f"::{kind} title={for_annotation(title, prop=True)}::{for_annotation(message)}"


def _title(o: Outcome) -> str:
    if isinstance(o, DiagnosticOutcome):
        return f"saturate: {o.diagnostic.kind} in {o.diagnostic.run}"
    if isinstance(o, SuiteOutcome):
        return f"saturate: {o.name} {o.group.verdict}"
    return f"saturate: {o.name} {o.curve.verdict}"


def _limited(kind: str, outcomes: Sequence[Outcome], limit: int) -> list[str]:
    """At most ``limit`` annotations; past it the last one names how many more there are."""
    shown = outcomes if len(outcomes) <= limit else outcomes[: limit - 1]
    lines = [_command(kind, _title(o), o.message) for o in shown]
    rest = outcomes[len(shown):]
    if rest:
        names = ", ".join(o.name for o in rest[:20]) + (", ..." if len(rest) > 20 else "")
        noun = "curves" if all(isinstance(o, CurveOutcome) for o in rest) else "findings"
        what = "failed" if kind == "error" else (
            "are inconclusive" if noun == "curves" else "need a look")
        lines.append(_command(kind, f"saturate: {len(rest)} more {noun} {what}",
                              f"{len(rest)} more {noun} {what} (see the step summary): {names}"))
    return lines


def github_annotations(result: GateResult, limit: int = MAX_ANNOTATIONS) -> list[str]:
    """``::error`` lines for failing suite groups, curves and diagnostics, ``::warning`` lines for
    warned ones, each capped at ``limit`` (GitHub drops the rest) with the overflow summarised in
    the last line. Suite groups come first, then curves, then diagnostics."""
    errors: list[Outcome] = [*result.failed_groups, *result.failures, *result.failed_diagnostics]
    warns: list[Outcome] = [*result.warned_groups, *result.warnings, *result.warned_diagnostics]
    return _limited("error", errors, limit) + _limited("warning", warns, limit)


def append_step_summary(markdown: str, path: str | os.PathLike | None = None) -> Path | None:
    """Append ``markdown`` to ``path`` or ``$GITHUB_STEP_SUMMARY``; None when neither is set.

    Text beyond GitHub's 1 MiB limit is cut at a line with a note saying so.
    """
    target = path if path is not None else os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    p = Path(target)
    data = markdown if markdown.endswith("\n") else markdown + "\n"
    existing = p.stat().st_size if p.exists() else 0
    room = STEP_SUMMARY_LIMIT - existing - 200
    if len(data.encode("utf-8")) > room:
        cut = data.encode("utf-8")[: max(room, 0)].decode("utf-8", errors="ignore")
        cut = cut[: cut.rfind("\n") + 1]
        data = cut + "\n_(report truncated: GitHub step summaries hold at most 1 MiB)_\n"
    try:
        with p.open("a", encoding="utf-8") as fh:
            fh.write(data)
    except OSError as exc:
        raise InputError(f"$GITHUB_STEP_SUMMARY {p}: cannot write ({exc.strerror})") from None
    return p
