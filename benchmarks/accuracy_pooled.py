"""saturate's call and forecasts from the stored per-curve outlooks, alone or pooled with the
siblings, for every setting of the call (so leave-one-source-out can choose the setting on other
sources).

The per-curve work (fits, trend tests) is done once per case by
:func:`accuracy_methods.run_saturate`, which stores the curve's
:class:`~saturate.analysis.outlook.Outlook` (``sat:o_*`` columns) and the fit at ``C``, ``2C``,
``4C``. Here the tool's own functions do the rest, exactly as
:func:`saturate.analysis.analyze_table` does for a table: the leave-one-out group priors
(:func:`saturate.analysis.pooling.leave_one_out_priors`; a case's group is its curve's group at
the same cut, so siblings are seen up to the same share of their compute), the call
(:func:`saturate.analysis.decision.decide`) and the forecasts
(:func:`saturate.analysis.projection.project`).

The tunable settings (:class:`~saturate.analysis.decision.DecisionSettings`): the two probability
levels of the call, ``stop_below`` and ``go_above``, and ``innovation``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from accuracy_cases import Case, forecast_error
from accuracy_scoring import Calls, Method

from saturate.analysis.decision import Decision, DecisionSettings, call_of, decide
from saturate.analysis.outlook import Outlook
from saturate.analysis.pooling import leave_one_out_priors
from saturate.analysis.projection import project
from saturate.results import ForecastPoint

LEVELS = (0.4, 0.5, 0.6, 0.7, 0.8)
INNOVATIONS = (0.0, 1.0, 2.0, 3.0, 4.0)
GRID: tuple[DecisionSettings, ...] = tuple(
    DecisionSettings(stop_below=lo, go_above=hi, innovation=k)
    for k in INNOVATIONS for lo in LEVELS for hi in LEVELS if hi >= lo and hi - lo <= 0.2 + 1e-9
)


def outlooks(rows: pd.DataFrame) -> list[Outlook | None]:
    """The stored outlook of every case (None where the tool had none)."""
    cols = [c for c in rows.columns if c.startswith("sat:o_")]
    out: list[Outlook | None] = []
    for rec in rows[cols].to_dict("records"):
        d = {k.removeprefix("sat:o_"): (None if _missing(v) else v) for k, v in rec.items()}
        out.append(None if d.get("threshold") is None else Outlook.from_dict(d))
    return out


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _forecasts(o: Outlook, d: Decision, row: dict, case: Case) -> tuple[float, float]:
    """Errors of the 2x and 4x forecasts :func:`project` makes from the decision."""
    last = float(case.compute[-1])
    c, c2, c4 = (row.get(f"sat:fit_{k}", math.nan) for k in ("c", "2c", "4c"))

    def shape(h: float) -> float:
        return (c2 - c) if h == 1.0 else ((c4 - c) if h == 2.0 else math.nan)

    stub = tuple(ForecastPoint(f"{k}x", k * last, math.nan, math.nan, math.nan) for k in (2, 4))
    fc = project(o, d, stub, last, shape if math.isfinite(c) else None)
    return tuple(forecast_error(case, k, p.value) for k, p in zip((2, 4), fc, strict=True))


def pooled_calls(pool: bool, cases: dict[str, Case], kinds: tuple[str, ...] | None = None
                 ) -> Calls:
    """Calls and forecast errors of the tool's decision for a setting, the curve alone or with
    its group's prior (``kinds``: only cases of these kinds pool, e.g. ``("seed",)`` as
    :func:`saturate.analysis.analyze_table` pools, seeds of one configuration); cases without an
    outlook keep the stored per-curve result."""
    cache: dict[tuple, tuple] = {}

    def decisions(rows: pd.DataFrame, innovation: float) -> tuple:
        key = (id(rows), innovation)
        if key not in cache:
            outs = outlooks(rows)
            groups = [(g, f) if pool and isinstance(g, str) and g
                      and (kinds is None or k in kinds) else None
                      for g, f, k in zip(rows["group"], rows["frac"], rows["kind"], strict=True)]
            priors = leave_one_out_priors(outs, groups)
            base = DecisionSettings(0.5, 0.5, innovation=innovation)
            ds = [decide(o, p, base) if o is not None else None
                  for o, p in zip(outs, priors, strict=True)]
            errs = [
                _forecasts(o, d, r, cases[r["key"]]) if d is not None and o is not None
                and math.isfinite(d.p_pays) else (r["saturate:err2"], r["saturate:err4"])
                for o, d, r in zip(outs, ds, rows.to_dict("records"), strict=True)
            ]
            cache[key] = (outs, ds, errs)
        return cache[key]

    def calls(rows: pd.DataFrame, setting: DecisionSettings) -> pd.DataFrame:
        outs, ds, errs = decisions(rows, setting.innovation)
        result = [
            call_of(d.p_pays, d.expected, o, setting)
            if d is not None and o is not None and math.isfinite(d.p_pays) else stored
            for stored, o, d in zip(rows["saturate:call"], outs, ds, strict=True)
        ]
        return pd.DataFrame({
            "call": pd.Series(result, index=rows.index, dtype=object),
            "err2": np.array([e[0] for e in errs], dtype=float),
            "err4": np.array([e[1] for e in errs], dtype=float),
        }, index=rows.index)

    return calls


def pooled_methods(cases: dict[str, Case]) -> list[Method]:
    """saturate's call with its settings chosen leave-one-source-out: alone and pooled."""
    return [
        Method("saturate/alone", pooled_calls(False, cases), GRID,
               "the curve's own outlook", default=DecisionSettings()),
        Method("saturate/seeds", pooled_calls(True, cases, ("seed",)), GRID,
               "seeds pooled with their sibling seeds at the same cut (what analyze_table "
               "does)", default=DecisionSettings()),
        Method("saturate/pooled", pooled_calls(True, cases), GRID,
               "pooled with the siblings at the same cut (every group: seeds, sibling agents "
               "or algorithms, model sizes)", default=DecisionSettings()),
    ]
