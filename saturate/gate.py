"""The CI gate: which curves and diagnostics fail, and the outputs CI systems read.

:func:`decide` is a pure function of the analysed curves, the diagnostics and the ``fail_on``
kinds. A kind is a verdict (``saturated``, ``regressing``, ``inconclusive``, even ``slowing``), a
registered per-curve check (``collapse``, or any added with :func:`register_fail_kind`), or a
diagnostic kind (``divergence``, ``sharpening``, ``entropy_collapse``, ...; read from
:mod:`saturate.diagnostics.registry`): a diagnostic fails the gate when its kind is named. The
default fails saturated and regressing curves only. The outputs: GitHub Actions workflow commands
(``::error``/``::warning``, within GitHub's per-step limits), the step summary, and JUnit XML with
one test case per curve and one per failing diagnostic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree as ET

from saturate.diagnostics.base import Diagnostic
from saturate.diagnostics.registry import kind_specs
from saturate.diagnostics.registry import kinds as diagnostic_kinds
from saturate.errors import InputError
from saturate.results import VERDICTS, CurveAnalysis, jsonable, verdict_counts
from saturate.text import for_annotation, for_terminal
from saturate.validation import check_choices

__all__ = [
    "DEFAULT_FAIL_ON",
    "FAIL_CHECKS",
    "register_fail_kind",
    "fail_kinds",
    "fail_on_help",
    "parse_fail_on",
    "CurveOutcome",
    "DiagnosticOutcome",
    "GateResult",
    "gate_markdown",
    "decide",
    "escape_data",
    "escape_property",
    "github_annotations",
    "append_step_summary",
    "junit_xml",
    "write_junit",
    "MAX_ANNOTATIONS",
    "STEP_SUMMARY_LIMIT",
]

DEFAULT_FAIL_ON: tuple[str, ...] = ("saturated", "regressing")
# GitHub shows at most 10 error and 10 warning annotations per step (and 50 per job).
MAX_ANNOTATIONS = 10
# GitHub refuses a step summary above 1 MiB.
STEP_SUMMARY_LIMIT = 1024 * 1024

Check = Callable[[CurveAnalysis], str | None]


def _collapse(curve: CurveAnalysis) -> str | None:
    col = curve.collapse
    if col is None and "collapse" not in curve.flags:
        return None
    if col is None:
        return "collapse detected"
    return f"collapse at {curve.compute_name} {col.compute:.4g} (drop {col.drop:.3g})"


# Kinds beyond the verdicts: name -> check returning why the curve fails, or None.
FAIL_CHECKS: dict[str, Check] = {"collapse": _collapse}


def register_fail_kind(name: str, check: Check) -> None:
    """Make ``--fail-on NAME`` available: ``check(curve)`` returns a reason to fail, or None."""
    key = name.strip().lower()
    if not key or key in VERDICTS or key in diagnostic_kinds():
        raise ValueError(f"fail-on kind {name!r} is empty, a verdict or a diagnostic kind")
    FAIL_CHECKS[key] = check


def fail_kinds() -> tuple[str, ...]:
    """Every kind ``--fail-on`` accepts: verdicts, per-curve checks, diagnostic kinds."""
    return tuple(dict.fromkeys((*VERDICTS, *FAIL_CHECKS, *diagnostic_kinds())))


def fail_on_help() -> str:
    """The help of ``--fail-on``, naming every kind it accepts beyond the defaults (``scaling``,
    accepted too, is left out: failing on it makes no sense)."""
    verdicts = [v for v in VERDICTS if v not in (*DEFAULT_FAIL_ON, "scaling")]
    specs = kind_specs()
    warns = [k.name for k in specs if k.severities != ("info",)]
    infos = [k.name for k in specs if k.severities == ("info",)]
    return (
        f"Also fail on these kinds (comma list or repeatable): verdicts ({', '.join(verdicts)}), "
        f"per-curve checks ({', '.join(FAIL_CHECKS)}), or diagnostics ({', '.join(warns)}; "
        f"information only: {', '.join(infos)}). "
        f"{' and '.join(DEFAULT_FAIL_ON).capitalize()} always fail."
    )


def parse_fail_on(values: Iterable[str] | str | None, *, extend: bool = True) -> tuple[str, ...]:
    """``--fail-on`` values (comma lists, repeatable) checked against :func:`fail_kinds`.

    With ``extend`` the kinds add to :data:`DEFAULT_FAIL_ON` (``--fail-on inconclusive`` still fails
    saturated curves); without it they replace it.
    """
    if isinstance(values, str):
        values = [values]
    kinds = check_choices(values or (), "--fail-on", fail_kinds())
    return tuple(dict.fromkeys((*DEFAULT_FAIL_ON, *kinds))) if extend else kinds


Status = Literal["pass", "fail", "warn"]


@dataclass(frozen=True)
class CurveOutcome:
    """What the gate says about one curve: ``fail``, ``warn`` (inconclusive, not failing) or ``pass``."""

    curve: CurveAnalysis
    status: Status
    kinds: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.curve.run} / {self.curve.metric}"

    @property
    def message(self) -> str:
        """``<verdict>: <first reason>`` plus the reasons of any non-verdict kinds."""
        head = self.curve.verdict
        parts = [r for r in self.reasons if r]
        return f"{head}: " + "; ".join(parts) if parts else head

    def to_dict(self) -> dict[str, Any]:
        return jsonable({
            "run": self.curve.run, "run_id": self.curve.run_id, "metric": self.curve.metric,
            "verdict": self.curve.verdict, "status": self.status, "kinds": list(self.kinds),
            "reasons": list(self.reasons),
        })


@dataclass(frozen=True)
class DiagnosticOutcome:
    """What the gate says about one diagnostic: ``fail`` (its kind is in ``fail_on``) or ``warn``
    (a warning or error the gate was not asked to fail on, shown so that it is not missed)."""

    diagnostic: Diagnostic
    status: Literal["fail", "warn"]

    @property
    def name(self) -> str:
        """``<run> / <metrics>``: where the finding is."""
        d = self.diagnostic
        return f"{d.run} / {', '.join(d.metrics)}" if d.metrics else d.run

    @property
    def label(self) -> str:
        """``FAIL`` when it fails the gate, else its severity: ``ERROR`` or ``WARN``."""
        if self.status == "fail":
            return "FAIL"
        return "ERROR" if self.diagnostic.severity == "error" else "WARN"

    @property
    def message(self) -> str:
        """``<kind>: <message>``, and how to make it fail the gate when it does not."""
        d = self.diagnostic
        text = d.message if d.message.startswith(f"{d.kind}:") else f"{d.kind}: {d.message}"
        if self.status == "fail":
            return text
        return f"{text} (does not fail the gate; --fail-on {d.kind} would)"

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"status": self.status, **self.diagnostic.to_dict()})


@dataclass(frozen=True)
class GateResult:
    """The gate's decision over all curves and diagnostics."""

    outcomes: tuple[CurveOutcome, ...]
    fail_on: tuple[str, ...]
    diagnostics: tuple[DiagnosticOutcome, ...] = ()

    @property
    def failures(self) -> tuple[CurveOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "fail")

    @property
    def warnings(self) -> tuple[CurveOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "warn")

    @property
    def failed_diagnostics(self) -> tuple[DiagnosticOutcome, ...]:
        return tuple(o for o in self.diagnostics if o.status == "fail")

    @property
    def warned_diagnostics(self) -> tuple[DiagnosticOutcome, ...]:
        return tuple(o for o in self.diagnostics if o.status == "warn")

    @property
    def passed(self) -> bool:
        return not self.failures and not self.failed_diagnostics

    @property
    def exit_code(self) -> int:
        """0 when everything passes, 1 when any curve or diagnostic fails (2 is the CLI's)."""
        return 0 if self.passed else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "exit_code": self.exit_code,
            "fail_on": list(self.fail_on),
            "summary": verdict_counts([o.curve for o in self.outcomes]),
            "curves": [o.to_dict() for o in self.outcomes],
            "diagnostics": [o.to_dict() for o in self.diagnostics],
        }

    def summary(self) -> str:
        """What a CI log shows: PASS/FAIL, the counts, then each failing and warned curve and
        diagnostic, one line each (names shown escaped by :func:`saturate.text.for_terminal`)."""
        n = len(self.outcomes)
        counts = verdict_counts([o.curve for o in self.outcomes])
        bad_d = self.failed_diagnostics
        if self.passed:
            head = f"PASS: all {n} curve(s) still gain enough per doubling ({counts})"
        else:
            parts = []
            if self.failures or not bad_d:
                parts.append(f"{len(self.failures)} of {n} curve(s) failed")
            if bad_d:
                parts.append(f"{len(bad_d)} diagnostic(s) failed")
            head = f"FAIL: {', '.join(parts)} (fail on: {', '.join(self.fail_on)}; {counts})"
        lines = [head]
        lines += [f"  FAIL {o.name}: {o.message}" for o in self.failures]
        lines += [f"  FAIL {o.name}: {o.message}" for o in bad_d]
        lines += [f"  WARN {o.name}: {o.message}" for o in self.warnings]
        warned = sorted(self.warned_diagnostics, key=lambda o: o.label != "ERROR")
        lines += [f"  {o.label} {o.name}: {o.message}" for o in warned]
        # The plain-CI-line boundary: a name holding a newline or an escape stays on its line.
        return "\n".join(for_terminal(line) for line in lines)


def decide(
    curves: Sequence[CurveAnalysis],
    fail_on: Iterable[str] = DEFAULT_FAIL_ON,
    diagnostics: Sequence[Diagnostic] = (),
) -> GateResult:
    """Fail every curve whose verdict, or any registered check, is among ``fail_on``, and every
    diagnostic whose kind is.

    Inconclusive curves that do not fail are warnings, and so are diagnostics of severity warning
    or error whose kind is not named. An empty list of curves is an :class:`InputError`: a gate
    that checked nothing must not pass.
    """
    kinds = check_choices(fail_on, "--fail-on", fail_kinds())
    if not curves:
        raise InputError("the gate has no curves to check (the selection matched none)")
    outcomes = []
    for c in curves:
        hit: list[str] = []
        why: list[str] = []
        if c.verdict in kinds:
            hit.append(c.verdict)
            why.append(c.reasons[0] if c.reasons else "")
        for kind in kinds:
            check = FAIL_CHECKS.get(kind)
            reason = check(c) if check is not None else None
            if reason:
                hit.append(kind)
                why.append(reason)
        if hit:
            outcomes.append(CurveOutcome(c, "fail", tuple(hit), tuple(why)))
        elif c.verdict == "inconclusive":
            outcomes.append(CurveOutcome(c, "warn", (), c.reasons[:1]))
        else:
            outcomes.append(CurveOutcome(c, "pass", (), c.reasons[:1]))
    judged = []
    for d in diagnostics:
        if d.kind in kinds:
            judged.append(DiagnosticOutcome(d, "fail"))
        elif d.severity != "info":
            judged.append(DiagnosticOutcome(d, "warn"))
    return GateResult(tuple(outcomes), kinds, tuple(judged))


def gate_markdown(result: GateResult) -> str:
    """The gate's decision in Markdown, for the top of the step summary: what failed and why."""
    from saturate.report.markdown import escape_md

    verdict = "passed" if result.passed else "failed"
    lines = [f"### Gate {verdict}", "",
             f"Fail on: {escape_md(', '.join(result.fail_on))}. Exit code {result.exit_code}.", ""]
    for o in result.failures:
        lines.append(f"- ❌ {escape_md(o.name)}: {escape_md(o.message)}")
    for o in result.failed_diagnostics:
        lines.append(f"- ❌ {escape_md(o.name)}: {escape_md(o.message)}")
    for o in result.warned_diagnostics:
        lines.append(f"- ⚠️ **{o.label}** {escape_md(o.name)}: {escape_md(o.message)}")
    return "\n".join(lines).rstrip() + "\n\n"


# ------------------------------------------------------------------------------------------------
# GitHub Actions


def escape_data(text: str) -> str:
    """A workflow-command message: ``%``, CR and LF percent-encoded (GitHub's toolkit rules)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow-command property value: also ``:`` and ``,`` encoded."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, title: str, message: str) -> str:
    """The annotation boundary: names in ``title`` and ``message`` cannot end the line or the
    command, nor carry terminal escapes (:func:`saturate.text.for_annotation`)."""
    return f"::{kind} title={for_annotation(title, prop=True)}::{for_annotation(message)}"


def _title(o: CurveOutcome | DiagnosticOutcome) -> str:
    if isinstance(o, DiagnosticOutcome):
        return f"saturate: {o.diagnostic.kind} in {o.diagnostic.run}"
    return f"saturate: {o.name} {o.curve.verdict}"


def _limited(
    kind: str, outcomes: Sequence[CurveOutcome | DiagnosticOutcome], limit: int
) -> list[str]:
    """At most ``limit`` annotations; past it the last one names how many more there are."""
    lines = []
    shown = outcomes if len(outcomes) <= limit else outcomes[: limit - 1]
    for o in shown:
        lines.append(_command(kind, _title(o), o.message))
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
    """``::error`` lines for failing curves and diagnostics, ``::warning`` lines for warned ones,
    each capped at ``limit`` (GitHub drops the rest) with the overflow summarised in the last
    line. Failing diagnostics come after failing curves, warned ones after inconclusive curves."""
    errors = [*result.failures, *result.failed_diagnostics]
    warns = [*result.warnings, *result.warned_diagnostics]
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


# ------------------------------------------------------------------------------------------------
# JUnit XML

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: Any) -> str:
    """Text XML 1.0 can hold (control characters removed; ElementTree escapes the rest)."""
    return _XML_BAD.sub("", str(text))


def junit_xml(result: GateResult, *, suite: str = "saturate gate") -> str:
    """JUnit XML: one ``<testcase>`` per curve (class = run, name = metric) and one per failing
    diagnostic (class = run, name = ``<kind>: <metrics>``); failures carry the reasons,
    inconclusive curves that do not fail are ``<skipped>``."""
    bad_d = result.failed_diagnostics
    n_fail, n_skip = len(result.failures) + len(bad_d), len(result.warnings)
    attrs = {"name": _x(suite), "tests": str(len(result.outcomes) + len(bad_d)),
             "failures": str(n_fail), "errors": "0", "skipped": str(n_skip), "time": "0"}
    root = ET.Element("testsuites", attrs)
    ts = ET.SubElement(root, "testsuite", attrs)
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", {"name": "fail_on", "value": ",".join(result.fail_on)})
    for o in result.outcomes:
        c = o.curve
        tc = ET.SubElement(ts, "testcase", {"classname": _x(c.run), "name": _x(c.metric),
                                           "time": "0"})
        if o.status == "fail":
            el = ET.SubElement(tc, "failure", {"message": _x(o.message),
                                               "type": _x(",".join(o.kinds))})
            el.text = _x("\n".join(c.reasons))
        elif o.status == "warn":
            ET.SubElement(tc, "skipped", {"message": _x(o.message)})
        out = ET.SubElement(tc, "system-out")
        out.text = _x(c.summary())
    for o in bad_d:
        d = o.diagnostic
        tc = ET.SubElement(ts, "testcase", {"classname": _x(d.run),
                                           "name": _x(f"{d.kind}: {', '.join(d.metrics)}"),
                                           "time": "0"})
        el = ET.SubElement(tc, "failure", {"message": _x(o.message), "type": _x(d.kind)})
        el.text = _x(d.message)
        out = ET.SubElement(tc, "system-out")
        out.text = _x(d.summary())
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: GateResult, path: str | os.PathLike) -> Path:
    """Write :func:`junit_xml` to ``path`` (parent folders created), all at once or not at all."""
    from saturate.report.output import write_atomic

    return write_atomic(path, junit_xml(result), what="--junit")
