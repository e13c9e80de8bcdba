"""The summary row every tabular report shows for a curve, as plain text cells.

The terminal table, the Markdown and the HTML report all show the same columns with the same
number formatting; each renderer only escapes and styles the cells.
"""

from __future__ import annotations

import math
import os
import time as _time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from saturate.results import CurveAnalysis, Estimate, format_estimate
from saturate.vocabulary.names import axis_label

if TYPE_CHECKING:
    from saturate.analysis.diagnostic_metrics import DiagnosticMetric
    from saturate.api import Analysis
    from saturate.diagnostics.base import Diagnostic

#: What the reports take: an analysis, or one curve or a list of curves given bare.
Analysed: TypeAlias = "Analysis | CurveAnalysis | Sequence[CurveAnalysis]"

VERDICT_ICONS: dict[str, str] = {
    "scaling": "🟢", "slowing": "🟡", "saturated": "🔴", "regressing": "🟣", "inconclusive": "⚪"}
"""The verdict's mark in Markdown."""
VERDICT_STYLES: dict[str, str] = {
    "scaling": "bold green", "slowing": "bold yellow", "saturated": "bold red",
    "regressing": "bold magenta", "inconclusive": "dim"}
"""The verdict's style on the terminal (rich)."""

# (key, header) in display order.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "run"), ("metric", "metric"), ("points", "points"), ("compute_last", "last compute"),
    ("value_last", "last value"), ("verdict", "verdict"), ("p_pays", "P(pays)"),
    ("gain", "gain / doubling"), ("threshold", "threshold"), ("asymptote", "asymptote"),
    ("roi", "ROI stage"), ("knee", "knee"), ("stop", "stop point"), ("pooled", "pooled with"))
# (key, header) of the diagnostics section, in display order.
DIAGNOSTIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("severity", "severity"), ("kind", "kind"), ("run", "run"), ("metrics", "metrics"),
    ("compute", "from compute"), ("message", "message"))
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
# (key, header) of the metrics without a verdict (diagnostics and axes), in display order.
DIAGNOSTIC_METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "run"), ("metric", "metric"), ("role", "role"), ("points", "points"),
    ("value", "first → last"), ("trend", "recent change / doubling"), ("rule", "why no verdict"))


def num(x: float | None, digits: int = 3) -> str:
    """``1.23e+06`` style with ``digits`` significant digits; an en dash for a missing value."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "–"
    return f"{x:.{digits}g}"


def prob(p: float | None) -> str:
    """P(pays) as every report writes it: two decimals, an en dash when it could not be judged."""
    return "–" if p is None or not math.isfinite(p) else f"{p:.2f}"


def interval(e: Estimate | None, digits: int = 3) -> str:
    """``0.12 [0.08, 0.15]``, ``[lo, ∞)`` with only a lower end, ``?`` after a value the data
    cannot pin down, a dash when missing."""
    return format_estimate(e, digits, missing="–", unidentified=" ?", open_interval=True)


def summary_row(curve: CurveAnalysis) -> dict[str, str]:
    """The cells of :data:`COLUMNS` for one curve, as text."""
    roi = curve.roi_stage if not math.isfinite(curve.roi) else f"{curve.roi_stage} ({curve.roi:.2f})"
    return {
        "run": curve.run, "metric": curve.metric, "points": str(curve.n_points),
        "compute_last": num(curve.compute_last), "value_last": num(curve.value_last, 4),
        "verdict": curve.verdict, "p_pays": prob(curve.p_pays),
        "gain": interval(curve.gain_per_doubling), "threshold": num(curve.threshold),
        "asymptote": interval(curve.asymptote), "roi": roi, "knee": num(curve.knee),
        "stop": interval(curve.stop_point) if curve.stop_point is not None else "–",
        "pooled": pooled_cell(curve),
    }


def pooled_cell(curve: CurveAnalysis) -> str:
    """The sibling seeds the call leaned on (``2 seeds``), ``none: its seeds differ`` when it
    kept its own evidence, a dash without siblings."""
    p = curve.pooling
    if p is None:
        return "–"
    return f"{p.n} seed{'' if p.n == 1 else 's'}" if p.pooled else "none: its seeds differ"


def diagnostic_row(d: Diagnostic) -> dict[str, str]:
    """The cells of :data:`DIAGNOSTIC_COLUMNS` for one diagnostic, as text."""
    return {"severity": str(d.severity), "kind": str(d.kind), "run": str(d.run),
            "metrics": ", ".join(map(str, d.metrics)), "compute": num(d.compute, 4),
            "message": str(d.message)}


def diagnostics_of(analysis: Analysed | Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The diagnostics of an Analysis or a list of diagnostics (none for a list of curves),
    errors first (the order is otherwise kept)."""
    found = getattr(analysis, "diagnostics", None)
    if found is None and isinstance(analysis, Sequence) and not isinstance(analysis, str):
        found = [d for d in analysis if hasattr(d, "kind") and hasattr(d, "severity")]
    return tuple(sorted(found or (), key=lambda d: SEVERITY_ORDER.get(d.severity, 3)))


def curves_and_settings(analysis: Analysed) -> tuple[tuple[CurveAnalysis, ...], dict[str, Any]]:
    """The curves and settings of an :class:`~saturate.api.Analysis` or a bare list of curves."""
    if isinstance(analysis, CurveAnalysis):
        return (analysis,), {}
    curves = getattr(analysis, "curves", None)
    if curves is None:
        if isinstance(analysis, Sequence):
            return tuple(analysis), {}
        raise TypeError(f"expected an Analysis or a list of CurveAnalysis, got {type(analysis)}")
    settings = getattr(analysis, "settings", None)
    return tuple(curves), dict(settings) if isinstance(settings, Mapping) else {}


def confidence_level(settings: Mapping[str, Any]) -> float:
    """The confidence the analysis was run at (0.9 when the settings do not say)."""
    level = settings.get("confidence")
    return float(level) if isinstance(level, (int, float)) and 0 < level < 1 else 0.9


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


def headline(curves: Sequence[CurveAnalysis]) -> str:
    """The first line of every report: ``27 of 53 curves still pay for the next doubling (12
    scaling, 15 slowing); 18 saturated; 6 regressing; 2 inconclusive.``"""
    counts = Counter(c.verdict for c in curves)
    paying = counts["scaling"] + counts["slowing"]
    noun = "curve" if len(curves) == 1 else "curves"
    verb = "pays" if len(curves) == 1 else "pay"
    head = f"{paying} of {len(curves)} {noun} still {verb} for the next doubling"
    if paying:
        split = [f"{counts[v]} {v}" for v in ("scaling", "slowing") if counts[v]]
        head += f" ({', '.join(split)})"
    rest = [f"{counts[v]} {v}" for v in ("saturated", "regressing", "inconclusive") if counts[v]]
    return "; ".join([head, *rest]) + "."


def short_reason(curve: CurveAnalysis) -> str:
    """Why the curve got its verdict, in a few words made from its fields: ``above threshold
    0.0105``, ``straddles 0.00328``, ``collapse at 269: fell 0.42``, with ``pooled with 2 seeds``
    when its call leaned on its siblings."""
    ev = curve.evidence
    if ev is not None and ev.why:
        return "too few points" if "too_few_points" in curve.flags else "never changes"
    if curve.verdict == "regressing":
        if curve.collapse is not None:
            return f"collapse at {num(curve.collapse.compute)}: fell {num(curve.collapse.drop)}"
        if curve.trend is not None:
            return f"falls {num(-curve.trend.slope_per_doubling.value)} per doubling"
    g, t = curve.gain_per_doubling, curve.threshold
    if g is None or not math.isfinite(g.value):
        return "nothing to go on"
    if math.isfinite(g.lo) and g.lo > t:
        text = f"above threshold {num(t)}"
    elif math.isfinite(g.hi) and g.hi < t:
        text = f"below threshold {num(t)}"
    else:
        text = f"straddles {num(t)}"
    if ev is not None and ev.basis in ("level", "domain"):
        text += f" ({ev.basis}-based: flat)"
    pooling = curve.pooling
    if pooling is not None:
        text += (f"; pooled with {pooling.n} seeds" if pooling.pooled
                 else "; not pooled: its seeds differ")
    return text


def forecast_cell(curve: CurveAnalysis, index: int = 0) -> str:
    """The ``index``-th forecast as ``0.55 [0.49, 0.61]`` (``?`` when not identified), a dash
    when there is none."""
    if index >= len(curve.forecast):
        return "–"
    f = curve.forecast[index]
    return interval(Estimate(f.value, f.lo, f.hi, identified=f.identified))


_SEPARATORS = "-_/: "
LEAST_CUT = 6
"""A name cut on separators is never shown in fewer characters than this."""
GROW_FOR_SEPARATORS = 6
"""How many characters wider a name may be shown to be cut on separators, not mid-word."""


def shorten_middle(text: str, width: int, *, on_separators: bool = True) -> str:
    """``text`` cut in the middle to ``width`` characters with ``…``, keeping its head and tail
    (where the seed or variant that tells runs apart is). With ``on_separators`` the cuts fall on
    separators (``-_/: ``), the most kept and then the longest tail winning; a name with no
    separator to cut at is cut mid-word."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    budget = width - 1
    tail = budget // 2
    if on_separators:
        heads = [0] + [i + 1 for i, ch in enumerate(text) if ch in _SEPARATORS and i + 1 <= budget]
        tails = [i for i, ch in enumerate(text) if ch in _SEPARATORS] + [len(text)]
        pairs = [(h, t) for h in heads for t in tails
                 if h <= t and h + len(text) - t <= budget and (h, t) != (0, len(text))]
        if pairs:
            h, t = max(pairs, key=lambda p: (p[0] > 0 and p[1] < len(text),
                                             p[0] + len(text) - p[1], len(text) - p[1]))
            return f"{text[:h]}…{text[t:]}"
    return f"{text[: budget - tail]}…{text[len(text) - tail:]}"


def unique_labels(names: Sequence[str], width: int) -> tuple[list[str], int]:
    """The names shortened in the middle to the largest width <= ``width`` (else the least larger)
    at which distinct names stay distinct, and that width. Cuts on separators, at a smaller or a
    few characters larger width, are preferred to cutting any name mid-word."""
    distinct = sorted(set(names))
    longest = max((len(n) for n in names), default=0)

    def labels(w: int, on_separators: bool) -> dict[str, str] | None:
        out = {n: shorten_middle(n, w, on_separators=on_separators) for n in distinct}
        return out if len(set(out.values())) == len(distinct) else None

    w = min(max(width, 1), longest)
    tries = [(v, True) for v in range(w, LEAST_CUT - 1, -1)]
    tries += [(v, True) for v in range(w + 1, min(w + GROW_FOR_SEPARATORS, longest) + 1)]
    tries += [(v, False) for v in range(w, 0, -1)] + [(v, False) for v in range(w, longest + 1)]
    v, found = next((v, lab) for v, sep in tries if (lab := labels(v, sep)) is not None)
    return [found[n] for n in names], v


def common_prefix(names: Sequence[str], least: int = 4) -> str:
    """The prefix every name shares, up to and including its last separator (``-_/: ``), when it
    is at least ``least`` characters long and leaves every name something; else ``""``."""
    distinct = sorted(set(names))
    if len(distinct) < 2:
        return ""
    prefix = os.path.commonprefix(distinct)
    cut = max(prefix.rfind(ch) for ch in _SEPARATORS) + 1
    prefix = prefix[:cut]
    if len(prefix) < least or any(len(n) <= len(prefix) for n in distinct):
        return ""
    return prefix


def format_time(t: float) -> str:
    """Epoch seconds as ``2026-11-29T17:03:12Z`` (UTC)."""
    return _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(t))


def diagnostic_metric_row(m: DiagnosticMetric) -> dict[str, str]:
    """The cells of :data:`DIAGNOSTIC_METRIC_COLUMNS` for one
    :class:`~saturate.analysis.diagnostic_metrics.DiagnosticMetric`, as text."""
    slope = "–" if m.trend is None else f"{m.movement} {interval(m.trend.slope_per_doubling)}"
    return {"run": str(m.run), "metric": str(m.metric), "role": str(m.role),
            "points": str(m.n_points), "value": f"{num(m.value_first, 4)} → {num(m.value_last, 4)}",
            "trend": slope, "rule": str(m.rule)}


def diagnostic_rows(analysis: Analysed) -> list[dict[str, str]]:
    """The rows of the "Diagnostic metrics" section: the metrics that get no verdict (none for a
    bare list of curves)."""
    return [diagnostic_metric_row(m) for m in getattr(analysis, "diagnostic_metrics", ()) or ()]


def settings_source(analysis: Analysed) -> str:
    """``settings from PATH`` when a settings file decided some options, else ``""``."""
    _, settings = curves_and_settings(analysis)
    return f"settings from {settings['config']}" if settings.get("config") else ""


def axis_text(analysis: Analysed) -> str:
    """``x axis: GPU-hours (compute/gpu_hours)``, with the axis's note when it has one; from the
    curves' axis name for a bare list of curves."""
    axis = getattr(analysis, "axis", None)
    if axis is not None:
        return f"x axis: {axis.heading}"
    curves, settings = curves_and_settings(analysis)
    name = settings.get("compute") or (curves[0].compute_name if curves else "compute")
    return f"x axis: {axis_label(name)}"
