"""The CI gate: which curves, suite groups and diagnostics fail, and the outputs CI systems read.

:mod:`.decide` holds the decision (what ``--fail-on`` accepts and :func:`decide`), :mod:`.github`
the workflow commands and step summary, :mod:`.junit` the JUnit XML.
"""

from __future__ import annotations

from saturate.gate.decide import (
    DEFAULT_FAIL_ON,
    FAIL_CHECKS,
    CurveOutcome,
    DiagnosticOutcome,
    GateResult,
    SuiteOutcome,
    decide,
    fail_kinds,
    fail_on_help,
    gate_markdown,
    parse_fail_on,
    register_fail_kind,
)
from saturate.gate.github import (
    MAX_ANNOTATIONS,
    STEP_SUMMARY_LIMIT,
    append_step_summary,
    github_annotations,
)
from saturate.gate.junit import junit_xml, write_junit
from saturate.report.text import escape_data, escape_property

__all__ = [
    "DEFAULT_FAIL_ON", "FAIL_CHECKS", "register_fail_kind", "fail_kinds", "fail_on_help",
    "parse_fail_on", "CurveOutcome", "DiagnosticOutcome", "SuiteOutcome", "GateResult",
    "gate_markdown", "decide", "escape_data", "escape_property", "github_annotations",
    "append_step_summary", "junit_xml", "write_junit", "MAX_ANNOTATIONS", "STEP_SUMMARY_LIMIT",
]
