"""The CI gate: which curves, suite groups and diagnostics fail, and the outputs CI systems read.

* :mod:`.kinds`: what ``--fail-on`` accepts. A kind is a verdict (``saturated``, ``regressing``,
  ``inconclusive``, even ``slowing``), a registered per-curve check (``collapse``, or any added
  with :func:`register_fail_kind`), or a diagnostic kind (``divergence``, ``sharpening``,
  ``entropy_collapse``, ...; read from :mod:`saturate.diagnostics.registry`): a diagnostic fails
  the gate when its kind is named. The default fails saturated and regressing curves only.
* :mod:`.decide`: :func:`decide`, a pure function of the analysed curves, the diagnostics, the
  suite and the kinds. With a suite (``--suite``) the gate is on each group's aggregate over the
  suite's tasks: a group fails when its verdict is among the kinds (saturated or regressing by
  default), and the curves then fail only on kinds named in ``--fail-on`` (their other verdicts
  that do not pay only warn).
* :mod:`.github`: GitHub Actions workflow commands (``::error``/``::warning``, within GitHub's
  per-step limits) and the step summary; :mod:`.junit`: JUnit XML with one test case per curve,
  per suite group and per failing diagnostic.
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
    escape_data,
    escape_property,
    github_annotations,
)
from saturate.gate.junit import junit_xml, write_junit

__all__ = [
    "DEFAULT_FAIL_ON",
    "FAIL_CHECKS",
    "register_fail_kind",
    "fail_kinds",
    "fail_on_help",
    "parse_fail_on",
    "CurveOutcome",
    "DiagnosticOutcome",
    "SuiteOutcome",
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
