"""Rebuild the result objects a suite holds from their JSON form (``to_dict()`` output).

:class:`~saturate.results.CurveAnalysis` has a ``to_dict()`` but no inverse; a suite's aggregate is
a CurveAnalysis, so :func:`curve_from_dict` reads one back (without the fit object and the points,
which the JSON does not carry). JSON ``null`` becomes NaN where the field is a number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from saturate.results import Collapse, CurveAnalysis, Estimate, ForecastPoint, LawSummary, Trend

__all__ = ["curve_from_dict", "estimate_from_dict", "num"]


def num(x: Any) -> float:
    """A float from JSON: ``None`` is NaN."""
    return math.nan if x is None else float(x)


def estimate_from_dict(d: Mapping[str, Any] | None) -> Estimate | None:
    """An :class:`Estimate` from ``{"value", "lo", "hi"[, "identified"]}``; None stays None."""
    if d is None:
        return None
    lo, hi = num(d.get("lo")), num(d.get("hi"))
    identified = d.get("identified")
    if identified is None:  # the gain's JSON leaves it out: identified when it has an interval
        identified = math.isfinite(lo)
    return Estimate(num(d.get("value")), lo, hi, identified=bool(identified))


def _trend(d: Mapping[str, Any] | None) -> Trend | None:
    if d is None:
        return None
    return Trend(
        slope_per_doubling=estimate_from_dict(d["slope_per_doubling"]),
        p_value=num(d["p_value"]),
        method=str(d["method"]),
        compute_from=num(d["compute_from"]),
        compute_to=num(d["compute_to"]),
        n_points=int(d["n_points"]),
    )


def _collapse(d: Mapping[str, Any] | None) -> Collapse | None:
    if d is None:
        return None
    return Collapse(
        compute=num(d["compute"]), step=int(d["step"]), level_before=num(d["level_before"]),
        level_after=num(d["level_after"]), drop=num(d["drop"]),
        drop_fraction=num(d["drop_fraction"]),
    )


def _law(d: Mapping[str, Any]) -> LawSummary:
    return LawSummary(
        name=str(d["name"]),
        params={k: estimate_from_dict(v) for k, v in d.get("params", {}).items()},
        weight=num(d.get("weight")),
        aicc=num(d.get("aicc")),
        cv_error=num(d.get("cv_error")),
        converged=bool(d.get("converged", True)),
    )


def _forecast(d: Mapping[str, Any]) -> ForecastPoint:
    return ForecastPoint(
        at=d["at"], compute=num(d["compute"]), value=num(d["value"]), lo=num(d["lo"]),
        hi=num(d["hi"]), identified=bool(d.get("identified", True)),
    )


def curve_from_dict(d: Mapping[str, Any]) -> CurveAnalysis:
    """The :class:`CurveAnalysis` whose ``to_dict()`` is ``d`` (``fit`` and ``points`` None)."""
    roi = d.get("roi") or {}
    return CurveAnalysis(
        source=str(d["source"]),
        experiment=str(d["experiment"]),
        run_id=str(d["run_id"]),
        run=str(d["run"]),
        metric=str(d["metric"]),
        direction=d["direction"],
        n_points=int(d["n_points"]),
        compute_first=num(d["compute_first"]),
        compute_last=num(d["compute_last"]),
        value_last=num(d["value_last"]),
        threshold=num(d["threshold"]),
        verdict=d["verdict"],
        reasons=tuple(d.get("reasons", ())),
        gain_per_doubling=estimate_from_dict(d["gain_per_doubling"]),
        asymptote=estimate_from_dict(d["asymptote"]),
        headroom=estimate_from_dict(d["headroom"]),
        roi=num(roi.get("value")),
        roi_stage=roi.get("stage", "unknown"),
        knee=None if d.get("knee") is None else float(d["knee"]),
        stop_point=estimate_from_dict(d.get("stop_point")),
        forecast=tuple(_forecast(f) for f in d.get("forecast", ())),
        laws=tuple(_law(x) for x in (d.get("model") or {}).get("laws", ())),
        trend=_trend(d.get("trend")),
        collapse=_collapse(d.get("collapse")),
        flags=tuple(d.get("flags", ())),
        run_status=d.get("run_status"),
        group=d.get("group"),
        compute_name=str(d.get("compute_name", "step")),
    )
