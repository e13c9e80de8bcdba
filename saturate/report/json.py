"""The JSON report: one document (``schema_version`` 1) described by ``schema.json`` beside it."""

from __future__ import annotations

import json
from typing import Any

from saturate.report.rows import curves_and_settings
from saturate.report.schema import build_schema
from saturate.report.text import for_json
from saturate.results import verdict_counts
from saturate.results.codec import jsonable

__all__ = ["SCHEMA_VERSION", "document", "render_json", "schema"]

SCHEMA_VERSION = 1


def document(analysis: Any) -> dict[str, Any]:
    """The document as Python data: the Analysis's own ``to_dict()``, or one built from curves."""
    if hasattr(analysis, "to_dict") and hasattr(analysis, "curves"):
        return jsonable(analysis.to_dict())
    curves, settings = curves_and_settings(analysis)
    return jsonable({"schema_version": SCHEMA_VERSION, "settings": settings,
                     "summary": verdict_counts(curves), "curves": [c.to_dict() for c in curves],
                     "diagnostics": []})


def render_json(analysis: Any, *, indent: int | None = 2) -> str:
    """The document as JSON text (strict: no NaN, which many parsers reject; missing is null)."""
    text = json.dumps(document(analysis), indent=indent, allow_nan=False, ensure_ascii=False)
    return for_json(text) + "\n"  # bidi and line separators escaped


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the document, as a fresh dict: ``schema.json`` with the
    diagnostic kinds of the registry (see :mod:`saturate.report.schema`)."""
    return build_schema()
