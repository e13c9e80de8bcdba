"""The JSON report (:func:`render_json`: one document, ``schema_version`` 1) and its JSON Schema:
the committed ``schema.json`` with its ``estimate``, ``curve`` and ``diagnostic_metric`` parts written from the result classes' fields, its diagnostics part from
the registry (so a diagnostic registered at run time is in it) and its suite part from
``suite_schema.json``. After changing any of these, rewrite the file with
``python -m saturate.report.schema`` (a test checks that it is up to date).
"""

from __future__ import annotations

import copy
import functools
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from saturate.report.rows import Analysed, curves_and_settings
from saturate.report.text import for_json
from saturate.results import verdict_counts
from saturate.results.codec import jsonable

SCHEMA_VERSION = 1


def document(analysis: Analysed) -> dict[str, Any]:
    """The document as Python data: the Analysis's own ``to_dict()``, or one built from curves."""
    if hasattr(analysis, "to_dict") and hasattr(analysis, "curves"):
        return jsonable(analysis.to_dict())
    curves, settings = curves_and_settings(analysis)
    return jsonable({"schema_version": SCHEMA_VERSION, "settings": settings,
                     "summary": verdict_counts(curves), "curves": [c.to_dict() for c in curves],
                     "diagnostics": []})


def render_json(analysis: Analysed, *, indent: int | None = 2) -> str:
    """The document as JSON text (strict: no NaN, which many parsers reject; missing is null)."""
    text = json.dumps(document(analysis), indent=indent, allow_nan=False, ensure_ascii=False)
    return for_json(text) + "\n"  # bidi and line separators escaped


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the document, as a fresh dict: ``schema.json`` with the
    diagnostic kinds of the registry (see :mod:`saturate.report.schema`)."""
    return build_schema()


__all__ = ["SCHEMA_VERSION", "build_schema", "document", "render_json", "render_schema", "schema",
           "write_schema"]

WIDTH = 100


@functools.cache
def _committed_text() -> str:
    return resources.files("saturate.report").joinpath("schema.json").read_text(encoding="utf-8")


def build_schema(base: dict[str, Any] | None = None) -> dict[str, Any]:
    """``base`` (default: the committed ``schema.json``) with its diagnostics part rebuilt from
    the registry; a fresh dict."""
    from saturate.analysis.diagnostic_metrics import DiagnosticMetric  # scipy: on first use
    from saturate.diagnostics.registry import kind_specs
    from saturate.results import CurveAnalysis, Estimate
    from saturate.results.codec import schema_of

    doc = copy.deepcopy(base) if base is not None else json.loads(_committed_text())
    for cls in (Estimate, CurveAnalysis, DiagnosticMetric):
        doc["$defs"][cls._json_def] = schema_of(cls)
    _add_suite(doc)
    diagnostic = doc["$defs"]["diagnostic"]
    specs = kind_specs()
    diagnostic["properties"]["kind"]["enum"] = [k.name for k in specs]
    diagnostic["allOf"] = [
        {
            "if": {"properties": {"kind": {"const": k.name}}, "required": ["kind"]},
            "then": {
                "description": k.help,
                "properties": {"severity": {"enum": list(k.severities)},
                               "details": copy.deepcopy(dict(k.details))},
            },
        }
        for k in specs
    ]
    return doc


def _add_suite(doc: dict[str, Any]) -> None:
    """Lay the suite section's schema into ``doc``: ``properties.suite`` and its ``$defs`` (named
    ``suite_<name>`` unless the report defines the same schema under that name)."""
    from saturate.report.suite import suite_schema

    part = suite_schema()
    own = part.pop("$defs")
    defs = doc["$defs"]
    names = {n: n if defs.get(n) == d else f"suite_{n}" for n, d in own.items()}
    old = [n for n in defs if n == "suite" or n.startswith("suite_")]
    for n in old:
        del defs[n]

    def relink(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: (f"#/$defs/{names[v.removeprefix('#/$defs/')]}"
                        if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/")
                        else relink(v)) for k, v in x.items()}
        return [relink(v) for v in x] if isinstance(x, list) else x

    for n, d in own.items():
        if names[n] != n:
            defs[names[n]] = relink(d)
    group = defs[names["group"]]["properties"]
    group["analysis"] = {"description": "The aggregate curve analysed (a curve entry).",
                         "$ref": "#/$defs/curve"}
    defs["suite"] = relink({k: v for k, v in part.items() if k not in ("$schema", "$id")})
    doc["properties"]["suite"] = {
        "$ref": "#/$defs/suite",
        "description": "With a suite key (--suite): one verdict per group on its aggregate over "
                       "the suite's tasks, and the per-task verdicts."}


def render_schema(doc: dict[str, Any], width: int = WIDTH) -> str:
    """``doc`` as JSON text: objects and arrays that fit in ``width`` columns on one line, lists of
    words filled line by line."""
    return _dump(doc, 0, 0, width) + "\n"


def _dump(x: Any, indent: int, column: int, width: int) -> str:
    flat = json.dumps(x, ensure_ascii=False)
    if not isinstance(x, (dict, list)) or not x or column + len(flat) < width:
        return flat
    pad = " " * (indent + 2)
    if isinstance(x, dict):
        items = []
        for k, v in x.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(pad + key + _dump(v, indent + 2, indent + 2 + len(key), width))
    elif all(not isinstance(v, (dict, list)) for v in x):
        # A list of words: as many to a line as fit.
        lines = [pad]
        for word in (json.dumps(v, ensure_ascii=False) for v in x):
            if lines[-1] != pad and len(lines[-1]) + len(word) + 2 > width:
                lines.append(pad)
            lines[-1] += word + ", "
        return "[\n" + "\n".join(ln.rstrip() for ln in lines)[:-1] + "\n" + " " * indent + "]"
    else:
        items = [pad + _dump(v, indent + 2, indent + 2, width) for v in x]
    brackets = "{}" if isinstance(x, dict) else "[]"
    return brackets[0] + "\n" + ",\n".join(items) + "\n" + " " * indent + brackets[1]


def write_schema(path: str | Path | None = None) -> Path:
    """Write :func:`build_schema` over the committed file to ``path`` (default: that file)."""
    target = Path(path) if path is not None else Path(__file__).with_name("schema.json")
    target.write_text(render_schema(build_schema()), encoding="utf-8")
    return target


def main(argv: list[str]) -> int:
    """``python -m saturate.report.schema [PATH] [--check]``: write the schema, or check it."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m saturate.report.schema",
                                     description="Write the JSON report's schema.")
    parser.add_argument("path", nargs="?", help="where to write (default: the committed file)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when the committed file is out of date; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        committed = Path(__file__).with_name("schema.json").read_text(encoding="utf-8")
        if committed != render_schema(build_schema()):
            print("saturate/report/schema.json is out of date: run python -m saturate.report.schema")
            return 1
        print("saturate/report/schema.json is up to date")
        return 0
    print(f"wrote {write_schema(args.path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
