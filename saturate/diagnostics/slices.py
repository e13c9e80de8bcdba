"""Slices: metrics per data stratum or benchmark subset (``eval/<slice>/score``) side by side, so
the long tail shows: which slices still scale (per-curve verdicts) and which have saturated. A
family with a slice saturated or regressing is ``slice_saturated`` (warning), else ``slices``.
"""

from __future__ import annotations

from collections.abc import Sequence

from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings, by_run
from saturate.diagnostics.registry import EST, STR, array, fields, kind, mapping, register
from saturate.results import PASSING_VERDICTS, VERDICTS
from saturate.vocabulary.roles import slice_families

_STOPPED = frozenset({"saturated", "regressing"})


def slice_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None
) -> list[Diagnostic]:
    """One diagnostic per slice family of each run (needs the per-curve analyses)."""
    out = []
    for curves in by_run(refs).values():
        for family, members in slice_families(list(curves)).items():
            rows = [(s, curves[m]) for s, m in members if curves[m].analysis is not None]
            if len(rows) < 2:
                continue
            verdicts = {s: ref.analysed.verdict for s, ref in rows}
            scaling = [s for s, v in verdicts.items() if v in PASSING_VERDICTS]
            stopped = [s for s, v in verdicts.items() if v in _STOPPED]
            other = [s for s, v in verdicts.items() if v not in PASSING_VERDICTS | _STOPPED]
            first = rows[0][1]
            gains = {s: ref.analysed.gain_per_doubling.to_dict() for s, ref in rows}
            parts = []
            if scaling:
                parts.append(f"still scaling: {', '.join(scaling)}")
            if stopped:
                parts.append("saturated or regressing: "
                             + ", ".join(f"{s} ({verdicts[s]})" for s in stopped))
            if other:
                parts.append(f"inconclusive: {', '.join(other)}")
            since = [ref.analysed.trend.compute_from for s, ref in rows
                     if s in stopped and ref.analysed.trend is not None]
            out.append(Diagnostic(
                kind="slice_saturated" if stopped else "slices",
                severity="warning" if stopped else "info",
                run=first.run, run_id=first.run_id, source=first.source,
                metrics=tuple(ref.metric for _, ref in rows),
                message=f"{family}: {len(rows)} slices; " + "; ".join(parts),
                compute=min(since) if since else None,
                details={"family": family, "verdicts": verdicts, "scaling": scaling,
                         "stopped": stopped, "inconclusive": other, "gain_per_doubling": gains},
            ))
    return out


_DETAILS = fields(family=STR, verdicts=mapping({"enum": list(VERDICTS)}), scaling=array(STR),
                  stopped=array(STR), inconclusive=array(STR), gain_per_doubling=mapping(EST))
register(
    lambda given: slice_diagnostics(given.refs, given.settings),
    kind("slice_saturated", "warning",
         "some slices of a family saturated or regress while others still scale", _DETAILS),
    kind("slices", "info", "the slices of a family side by side, none saturated", _DETAILS),
    order=30,
)
