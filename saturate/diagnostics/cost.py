"""Money and compute shares: what a point of metric costs, and RL compute against pre-training.

Cost per point: GPU-hours times ``--gpu-hour-cost`` over the gain in points (0.01 for metrics in
[0, 1], else one unit). RL share: the last compute over ``--pretrain-compute`` (same unit, which
only the user knows). Steps are never taken for GPU-hours: :func:`gpu_hour_rates` refuses when
neither the x axis nor ``--gpu-hours`` says what a point cost.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from saturate.diagnostics.base import CurveRef, Diagnostic, DiagnosticSettings
from saturate.diagnostics.registry import EST, NUM, fields, kind, register
from saturate.errors import SettingsError, miss_text, shorten
from saturate.results import Estimate
from saturate.table.cells import distinct
from saturate.vocabulary.names import GPU_HOURS, axis_unit

if TYPE_CHECKING:
    from saturate.settings import Settings


def point_size(values: np.ndarray) -> float:
    """0.01 (a percentage point) for metrics within [0, 1], else 1."""
    v = np.asarray(values, dtype=float)
    return 0.01 if v.size and float(v.min()) >= 0.0 and float(v.max()) <= 1.0 else 1.0


def cost_per_point(gain: Estimate, gpu_hours: float, gpu_hour_cost: float,
                   point: float = 1.0) -> Estimate:
    """Cost of one point of metric when ``gpu_hours`` buy ``gain`` (larger-is-better units)."""
    money = gpu_hours * gpu_hour_cost

    def per(g: float) -> float:
        return money / (g / point) if math.isfinite(g) and g > 0 else math.inf

    value = per(gain.value)
    lo = per(gain.hi) if math.isfinite(gain.hi) else math.nan
    hi = per(gain.lo) if math.isfinite(gain.lo) else math.nan
    return Estimate(value, lo, hi, identified=math.isfinite(value) and math.isfinite(hi))


def rl_share(rl_compute: float, pretrain_compute: float) -> float:
    """RL compute as a share of pre-training compute (same unit)."""
    return float(rl_compute) / float(pretrain_compute)


def cost_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None,
    hours_per_compute: Mapping[tuple[str, str], float] | None = None,
) -> list[Diagnostic]:
    """One ``cost`` line per analysed task curve when a price or pre-training compute is given.

    The next doubling costs the compute used so far and buys the gain per doubling;
    ``hours_per_compute`` (:func:`gpu_hour_rates`) converts it to GPU-hours; no rate, no cost.
    """
    settings = settings or DiagnosticSettings()
    if settings.gpu_hour_cost is None and settings.pretrain_compute is None:
        return []
    out = []
    for ref in refs:
        ca = ref.analysis
        if ca is None or ref.role != "objective":
            continue
        parts, details = [], {}
        last = float(ca.compute_last)
        rate = (hours_per_compute or {}).get((ref.source, ref.run_id))
        if settings.gpu_hour_cost is not None and rate is None:
            parts.append("no GPU-hours logged for this run: no cost")
        elif settings.gpu_hour_cost is not None and rate is not None:
            hours = last * rate
            pt = point_size(ref.value)
            cpp = cost_per_point(ca.gain_per_doubling, hours, settings.gpu_hour_cost, pt)
            unit = "percentage point" if pt == 0.01 else "point"
            if math.isfinite(cpp.value):
                rng = f" [{cpp.lo:.3g}, {cpp.hi:.3g}]" if math.isfinite(cpp.hi) else \
                    " (no upper bound: the gain may be zero)"
                parts.append(f"the next doubling ({hours:.4g} GPU-hours) costs "
                             f"{cpp.value:.3g}{rng} per {unit}")
            else:
                parts.append(f"the next doubling ({hours:.4g} GPU-hours) buys no gain")
            details.update({"gpu_hours_next_doubling": hours, "cost_per_point": cpp.to_dict(),
                            "point": pt, "gpu_hour_cost": settings.gpu_hour_cost})
        if settings.pretrain_compute is not None:
            share = rl_share(last, settings.pretrain_compute)
            parts.append(f"RL compute {last:.4g} ({ca.compute_name}) is {share:.3g} of "
                         f"pre-training compute {settings.pretrain_compute:.4g}")
            details.update({"rl_share": share, "pretrain_compute": settings.pretrain_compute})
        out.append(Diagnostic(
            kind="cost", severity="info", run=ref.run, run_id=ref.run_id, source=ref.source,
            metrics=(ref.metric,), message=f"{ref.metric}: " + "; ".join(parts), compute=last,
            details=details,
        ))
    return out


class SameRate(Mapping):
    """GPU-hours per unit of compute that is the same for every run (1 when the x axis is
    GPU-hours): any ``(source, run_id)`` has it, pooled seed groups included."""

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = float(rate)

    def __getitem__(self, key: object) -> float:
        return self.rate

    def __iter__(self) -> Iterator:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True



def gpu_hour_rates(data, gpu_hours: str | None, *, need: str = "--budget",
                   curves: Sequence = ()) -> Mapping[tuple[str, str], float]:
    """GPU-hours per unit of the x axis for every run of ``data`` that has them.

    1 everywhere when the axis is GPU-hours, else from the metric or column ``gpu_hours``; neither
    is a :class:`SettingsError` naming ``need`` (the option asking). Without ``data`` the analysed
    ``curves`` say what their x axis is.
    """
    if data is None or data.points.empty:
        names = sorted({c.compute_name for c in curves})
        if all(axis_unit(n) == GPU_HOURS for n in names):
            return SameRate(1.0)
        label, gpu_hours = ", ".join(names), None
    elif data.axis.unit == GPU_HOURS or (gpu_hours is not None and gpu_hours == data.axis.name):
        return SameRate(1.0)  # the x axis is GPU-hours (by its unit, or named by ``gpu_hours``)
    else:
        label = data.axis.label
    if gpu_hours is None:
        raise SettingsError(
            f"{need} is in GPU-hours, and the x axis is {label}, not GPU-hours: give --gpu-hours "
            "NAME (a metric or column of cumulative GPU-hours; --gpu-hours compute when the "
            "compute column is GPU-hours) or --gpus N (GPU-hours from wall time)")
    return hours_per_compute(data, gpu_hours)


def hours_per_compute(data, gpu_hours: str | None) -> dict[tuple[str, str], float]:
    """GPU-hours per unit of the x axis, per (source, run_id), from a metric or column
    ``gpu_hours`` (the marginal rate over the last fifth of the run); empty when ``gpu_hours`` is
    not given or is the x axis itself."""
    if data is None or gpu_hours is None or data.axis.name == gpu_hours:
        return {}
    out: dict[tuple[str, str], float] = {}
    data = data.points
    is_metric = (data["metric"] == gpu_hours).any()
    if not is_metric and gpu_hours not in data.columns:
        raise SettingsError(miss_text(
            f"--gpu-hours {shorten(repr(gpu_hours))} is neither a metric nor a column of the data",
            [gpu_hours], distinct(data["metric"]), "metrics"))
    for (source, run_id), g in data.groupby(["source", "run_id"], sort=False):
        if is_metric:
            h = g[g["metric"] == gpu_hours].sort_values("step")
            rest = g[g["metric"] != gpu_hours].drop_duplicates("step").sort_values("step")
            if h.empty or rest.empty:
                continue
            hours = np.interp(rest["step"].to_numpy(float), h["step"].to_numpy(float),
                              h["value"].to_numpy(float))
            comp = rest["compute"].to_numpy(float)
        else:
            g = g.sort_values("compute")
            hours = g[gpu_hours].to_numpy(float)
            comp = g["compute"].to_numpy(float)
        k = max(2, len(comp) // 5)
        dc = comp[-1] - comp[-k]
        dh = hours[-1] - hours[-k]
        if dc > 0 and dh > 0:
            out[(str(source), str(run_id))] = float(dh / dc)
    return out


register(
    lambda given: cost_diagnostics(given.refs, given.settings, given.hours_per_compute),
    kind("cost", "info",
         "cost per point (--gpu-hour-cost) and RL compute against pre-training (--pretrain-compute)",
         fields(optional={"gpu_hours_next_doubling": NUM, "cost_per_point": EST, "point": NUM,
                          "gpu_hour_cost": NUM, "rl_share": NUM, "pretrain_compute": NUM})),
    order=80,
)


def check_rates(df: pd.DataFrame, settings: Settings) -> None:
    """GPU-hours options checked against the x axis before any curve is fitted."""
    for key in ("budget", "gpu_hour_cost"):
        if getattr(settings, key) is not None:
            gpu_hour_rates(df, settings.gpu_hours, need=settings.option(key))
            break
