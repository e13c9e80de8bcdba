"""The summary row every tabular report shows for a curve, as plain text cells.

The terminal table, the Markdown and the HTML report all show the same columns with the same
number formatting; each renderer only escapes and styles the cells.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Mapping, Sequence
from typing import Any

from saturate.names import axis_label
from saturate.results import CurveAnalysis, Estimate, format_estimate

__all__ = [
    "COLUMNS",
    "DIAGNOSTIC_COLUMNS",
    "SEVERITY_ORDER",
    "summary_row",
    "diagnostic_row",
    "diagnostics_of",
    "num",
    "interval",
    "settings_items",
    "curves_and_settings",
    "DIAGNOSTIC_METRIC_COLUMNS",
    "diagnostic_metric_row",
    "diagnostic_rows",
    "axis_text",
]

# (key, header) in display order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "run"),
    ("metric", "metric"),
    ("points", "points"),
    ("compute_last", "last compute"),
    ("value_last", "last value"),
    ("verdict", "verdict"),
    ("gain", "gain / doubling"),
    ("threshold", "threshold"),
    ("asymptote", "asymptote"),
    ("roi", "ROI stage"),
    ("knee", "knee"),
    ("stop", "stop point"),
)


# (key, header) of the diagnostics section, in display order.
DIAGNOSTIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("severity", "severity"),
    ("kind", "kind"),
    ("run", "run"),
    ("metrics", "metrics"),
    ("compute", "from compute"),
    ("message", "message"),
)
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}

# (key, header) of the metrics without a verdict (diagnostics and axes), in display order.
DIAGNOSTIC_METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "run"),
    ("metric", "metric"),
    ("role", "role"),
    ("points", "points"),
    ("value", "first → last"),
    ("trend", "recent change / doubling"),
    ("rule", "why no verdict"),
)


def num(x: float | None, digits: int = 3) -> str:
    """``1.23e+06`` style with ``digits`` significant digits; an en dash for a missing value."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "–"
    return f"{x:.{digits}g}"


def interval(e: Estimate | None, digits: int = 3) -> str:
    """The reports' style of :func:`~saturate.results.format_estimate`: ``0.12 [0.08, 0.15]``,
    ``[lo, ∞)`` with only a lower end, ``?`` after a value the data cannot pin down, a dash when
    missing."""
    return format_estimate(e, digits, missing="–", unidentified=" ?", open_interval=True)


def summary_row(curve: CurveAnalysis) -> dict[str, str]:
    """The cells of :data:`COLUMNS` for one curve, as text."""
    roi = curve.roi_stage if not math.isfinite(curve.roi) else f"{curve.roi_stage} ({curve.roi:.2f})"
    return {
        "run": curve.run,
        "metric": curve.metric,
        "points": str(curve.n_points),
        "compute_last": num(curve.compute_last),
        "value_last": num(curve.value_last, 4),
        "verdict": curve.verdict,
        "gain": interval(curve.gain_per_doubling),
        "threshold": num(curve.threshold),
        "asymptote": interval(curve.asymptote),
        "roi": roi,
        "knee": num(curve.knee),
        "stop": interval(curve.stop_point) if curve.stop_point is not None else "–",
    }


def diagnostic_row(d: Any) -> dict[str, str]:
    """The cells of :data:`DIAGNOSTIC_COLUMNS` for one diagnostic, as text."""
    return {
        "severity": str(d.severity),
        "kind": str(d.kind),
        "run": str(d.run),
        "metrics": ", ".join(map(str, d.metrics)),
        "compute": num(d.compute, 4),
        "message": str(d.message),
    }


def diagnostics_of(analysis: Any) -> tuple[Any, ...]:
    """The diagnostics of an Analysis, or of a list of diagnostics (none for a list of curves),
    errors first (the order is otherwise kept)."""
    found = getattr(analysis, "diagnostics", None)
    if found is None and isinstance(analysis, Sequence) and not isinstance(analysis, str):
        found = [d for d in analysis if hasattr(d, "kind") and hasattr(d, "severity")]
    return tuple(sorted(found or (), key=lambda d: SEVERITY_ORDER.get(d.severity, 3)))


def curves_and_settings(analysis: Any) -> tuple[tuple[CurveAnalysis, ...], dict[str, Any]]:
    """The curves and settings of an :class:`~saturate.api.Analysis`, or of a bare list of curves."""
    if isinstance(analysis, CurveAnalysis):
        return (analysis,), {}
    curves = getattr(analysis, "curves", None)
    if curves is None:
        if isinstance(analysis, Sequence):
            return tuple(analysis), {}
        raise TypeError(f"expected an Analysis or a list of CurveAnalysis, got {type(analysis)}")
    settings = getattr(analysis, "settings", None)
    return tuple(curves), dict(settings) if isinstance(settings, Mapping) else {}


def settings_items(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The settings as (name, text) pairs, lists joined, empty ones left out."""
    out = []
    for key, value in settings.items():
        if value is None or value == [] or value == () or value == {}:
            continue
        if isinstance(value, Mapping):
            text = ", ".join(f"{k} = {v}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            # pairs are [reward, benchmark] lists: shown as on the command line, reward=benchmark
            text = ", ".join("=".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
                             for v in value)
        else:
            text = str(value)
        out.append((str(key), text))
    return out


def format_time(t: float) -> str:
    """Epoch seconds as ``2026-11-29T17:03:12Z`` (UTC)."""
    return _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(t))


def diagnostic_metric_row(m: Any) -> dict[str, str]:
    """The cells of :data:`DIAGNOSTIC_METRIC_COLUMNS` for one
    :class:`~saturate.analysis.diagnostic_metrics.DiagnosticMetric`, as text."""
    slope = "–" if m.trend is None else f"{m.movement} {interval(m.trend.slope_per_doubling)}"
    return {
        "run": str(m.run),
        "metric": str(m.metric),
        "role": str(m.role),
        "points": str(m.n_points),
        "value": f"{num(m.value_first, 4)} → {num(m.value_last, 4)}",
        "trend": slope,
        "rule": str(m.rule),
    }


def diagnostic_rows(analysis: Any) -> list[dict[str, str]]:
    """The rows of the "Diagnostic metrics" section of an Analysis: the metrics that get no
    verdict (none for a bare list of curves). Renderers place them after the diagnostics."""
    return [diagnostic_metric_row(m) for m in getattr(analysis, "diagnostic_metrics", ()) or ()]


def axis_text(analysis: Any) -> str:
    """``x axis: GPU-hours (compute/gpu_hours)``, with the axis's note when it has one (runs on
    their step, GPU-hours from wall time); from the curves' axis name for a bare list of curves."""
    axis = getattr(analysis, "axis", None)
    if axis is not None:
        return f"x axis: {axis.label}" + (f" ({axis.note})" if axis.note else "")
    curves, settings = curves_and_settings(analysis)
    name = settings.get("compute") or (curves[0].compute_name if curves else "compute")
    return f"x axis: {axis_label(name)}"
