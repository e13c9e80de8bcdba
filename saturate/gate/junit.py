"""The gate's JUnit XML: one test case per curve, per suite group and per failing diagnostic."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from saturate.gate.decide import GateResult
from saturate.report.text import for_document

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: Any) -> str:
    """Text XML 1.0 can hold: control and bidi characters escaped (:func:`for_document`), what XML
    cannot hold removed; ElementTree escapes the rest."""
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
    for s in result.suite:
        g = s.group
        _case(ts, f"suite {s.suite}", g.group, s.status, s.message, g.verdict,
              "\n".join(g.analysis.reasons), s.message)
    for o in result.outcomes:
        c = o.curve
        _case(ts, c.run, c.metric, o.status, o.message, ",".join(o.kinds), "\n".join(c.reasons),
              c.summary())
    for f in bad_d:
        d = f.diagnostic
        _case(ts, d.run, f"{d.kind}: {', '.join(d.metrics)}", "fail", f.message, d.kind,
              d.message, d.summary())
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(ts: ET.Element, classname: str, name: str, status: str, message: str, kind: str,
          detail: str, out: str) -> None:
    """One test case: a ``<failure>`` (``kind``, ``detail``) or ``<skipped>`` by ``status``."""
    tc = ET.SubElement(ts, "testcase", {"classname": _x(classname), "name": _x(name), "time": "0"})
    if status == "fail":
        ET.SubElement(tc, "failure", {"message": _x(message), "type": _x(kind)}).text = _x(detail)
    elif status == "warn":
        ET.SubElement(tc, "skipped", {"message": _x(message)})
    ET.SubElement(tc, "system-out").text = _x(out)


def write_junit(result: GateResult, path: str | os.PathLike) -> Path:
    """Write :func:`junit_xml` to ``path`` (parent folders created), all at once or not at all."""
    from saturate.report.output import write_atomic

    return write_atomic(path, junit_xml(result), what="--junit")
