"""The gate's JUnit XML: one test case per curve, per suite group and per failing diagnostic."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from saturate.gate.decide import GateResult, SuiteOutcome
from saturate.report.text import for_document

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: Any) -> str:
    """Text XML 1.0 can hold: control and bidirectional characters shown escaped
    (:func:`~saturate.report.text.for_document`), what XML cannot hold removed; ElementTree escapes the
    rest."""
    return _XML_BAD.sub("", for_document(text))


def junit_xml(result: GateResult, *, suite: str = "saturate gate") -> str:
    """JUnit XML: one ``<testcase>`` per suite group (class = ``suite <key>``, name = group), per
    curve (class = run, name = metric) and per failing diagnostic (class = run, name =
    ``<kind>: <metrics>``); failures carry the reasons, warned ones are ``<skipped>``."""
    bad_d = result.failed_diagnostics
    n_fail = len(result.failures) + len(bad_d) + len(result.failed_groups)
    n_skip = len(result.warnings) + len(result.warned_groups)
    n_tests = len(result.outcomes) + len(bad_d) + len(result.suite)
    attrs = {"name": _x(suite), "tests": str(n_tests),
             "failures": str(n_fail), "errors": "0", "skipped": str(n_skip), "time": "0"}
    root = ET.Element("testsuites", attrs)
    ts = ET.SubElement(root, "testsuite", attrs)
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", {"name": "fail_on", "value": ",".join(result.fail_on)})
    for g in result.suite:
        _suite_case(ts, g)
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


def _suite_case(ts: ET.Element, o: SuiteOutcome) -> None:
    """The test case of one suite group's aggregate."""
    tc = ET.SubElement(ts, "testcase", {"classname": _x(f"suite {o.suite}"),
                                       "name": _x(o.group.group), "time": "0"})
    if o.status == "fail":
        el = ET.SubElement(tc, "failure", {"message": _x(o.message), "type": _x(o.group.verdict)})
        el.text = _x("\n".join(o.group.analysis.reasons))
    elif o.status == "warn":
        ET.SubElement(tc, "skipped", {"message": _x(o.message)})
    out = ET.SubElement(tc, "system-out")
    out.text = _x(o.message)


def write_junit(result: GateResult, path: str | os.PathLike) -> Path:
    """Write :func:`junit_xml` to ``path`` (parent folders created), all at once or not at all."""
    from saturate.report.output import write_atomic

    return write_atomic(path, junit_xml(result), what="--junit")
