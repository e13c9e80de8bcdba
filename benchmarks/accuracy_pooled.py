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

The tunable settings (:class:`~saturate.analysis.decision.DecisionSettings`): the stated loss
(``stop_cost``, the cost of a wrong stop, and ``abstain_cost``, of an inconclusive call, each in
units of a wrong "pays"), which sets the two probability levels of the call; ``innovation``; and
the calibration map of the model's probability, fitted on the training sources only
(:mod:`accuracy_calibration`). For each held-out source, :meth:`PooledCalls.candidates` offers
every (innovation, loss) with and without the map fitted on the other sources, and
:func:`accuracy_scoring.score_method` chooses among them on those sources.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from accuracy_calibration import apply_map, brier, fit_map, outcome
from accuracy_cases import Case, forecast_error
from accuracy_scoring import Method, calls_made, summarize

from saturate.analysis.call_settings import EVIDENCE_FEATURES, EvidenceMap, PopulationPrior
from saturate.analysis.decision import Decision, DecisionSettings, decide, evidence_features
from saturate.analysis.outlook import Outlook
from saturate.analysis.pooling import leave_one_out_priors
from saturate.analysis.projection import project
from saturate.results import ForecastPoint

INNOVATIONS = (1.0, 2.0)
STOP_COSTS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
ABSTAIN_COSTS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 1.0)  # 1.0: never abstain
FEATURE_SETS: tuple[tuple[str, ...], ...] = (
    ("model",),  # Platt scaling of the model's own probability
    ("model", "fit_z", "trend_z"),
    ("model", "fit_z", "trend_z", "recent_gain", "recent_change", "drawdown"),
    EVIDENCE_FEATURES,
)
"""The evidence maps offered (:class:`~saturate.analysis.call_settings.EvidenceMap`): which
features each may weigh; :meth:`PooledCalls.candidates` chooses among them on the training
sources by the Brier score of their out-of-source predictions there."""
POPULATIONS: tuple[PopulationPrior, ...] = tuple(
    PopulationPrior(m, sd) for m in (0.05, 0.1, 0.2) for sd in (0.1, 0.3))
"""The grid of the call's settings: the population prior of the relative gain per doubling, the
innovation and the stated loss (a wrong stop and an inconclusive call, each in units of a wrong
"pays"); the calibration map is fitted on the training sources (:meth:`PooledCalls.candidates`).
The population priors are offered only on request (``--population``: chosen on the other
sources, they did not carry over to the held-out source on these curves), and so are the
evidence maps (``--map``)."""


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


class PooledCalls:
    """The tool's decision on every case for each innovation, computed once per row set (the
    leave-one-out group priors, the model's probability of paying, the forecasts), and the call
    for a setting from them (:meth:`calls`); :meth:`candidates`: the settings a training set
    offers, with the calibration map fitted on it. ``kinds``: only cases of these kinds pool,
    e.g. ``("seed",)`` as :func:`saturate.analysis.analyze_table` pools, seeds of one
    configuration; ``pool`` False: every curve alone. Cases without an outlook keep the stored
    per-curve result."""

    def __init__(self, pool: bool, cases: dict[str, Case], kinds: tuple[str, ...] | None = None,
                 calibrate: bool = False, population: bool = False) -> None:
        self.pool, self.cases, self.kinds, self.calibrate = pool, cases, kinds, calibrate
        self.populations = (None, *POPULATIONS) if population else (None,)
        self._cache: dict[tuple, dict[str, Any]] = {}

    def decisions(self, rows: pd.DataFrame, innovation: float,
                  population: PopulationPrior | None = None) -> dict[str, Any]:
        """Per case: the outlook, the decision (uncalibrated, empty band), ``p`` (the model's
        probability, NaN without one), ``noisy`` (the threshold measures noise: never a call)
        and the forecast errors."""
        key = (id(rows), innovation, population)
        if key not in self._cache:
            outs = outlooks(rows)
            groups = [(s, g, f) if self.pool and isinstance(g, str) and g
                      and (self.kinds is None or k in self.kinds) else None
                      for s, g, f, k in zip(rows["source"], rows["group"], rows["frac"],
                                            rows["kind"], strict=True)]
            priors = leave_one_out_priors(outs, groups, population)
            base = DecisionSettings(innovation=innovation, population=population,
                                    calibration=EvidenceMap())
            ds = [decide(o, p, base) if o is not None else None
                  for o, p in zip(outs, priors, strict=True)]
            ok = [d is not None and o is not None and math.isfinite(d.p_model)
                  for o, d in zip(outs, ds, strict=True)]
            errs = [
                _forecasts(o, d, r, self.cases[r["key"]]) if good
                else (r["saturate:err2"], r["saturate:err4"])
                for o, d, r, good in zip(outs, ds, rows.to_dict("records"), ok, strict=True)
            ]
            feats = np.array([
                list(evidence_features(o, d.p_model, d.prior).values()) if g
                else [math.nan] * len(EVIDENCE_FEATURES)
                for o, d, g in zip(outs, ds, ok, strict=True)], dtype=float).reshape(
                    len(ds), len(EVIDENCE_FEATURES))
            self._cache[key] = {
                "outlooks": outs, "decisions": ds, "x": feats,
                "p": np.array([d.p_model if g else math.nan for d, g in zip(ds, ok, strict=True)]),
                "noisy": np.array([g and not o.moved and d.expected.lo <= o.threshold
                                   <= d.expected.hi for o, d, g in zip(outs, ds, ok, strict=True)]),
                "err2": np.array([e[0] for e in errs], dtype=float),
                "err4": np.array([e[1] for e in errs], dtype=float),
            }
        return self._cache[key]

    def calls(self, rows: pd.DataFrame, setting: DecisionSettings) -> pd.DataFrame:
        """The call of every case under ``setting`` (vectorised :func:`call_of`; the benchmark
        checks it against the tool's own :func:`decide` on every case, :meth:`check`)."""
        d = self.decisions(rows, setting.innovation, setting.population)
        p = apply_map(d["p"], d["x"], setting.calibration)
        call = np.where(p < setting.stop_below, False, np.where(p >= setting.go_above, True, None))
        call = np.where(d["noisy"], None, call)
        # refine: an unrecovered collapse is "does not pay" unless P(pays) reaches go_above
        collapsed = rows["sat:collapse"].fillna(0.0).to_numpy(dtype=float) > 0
        call = np.where(collapsed & (p < setting.go_above), False, call)
        stored = rows["saturate:call"].to_numpy(dtype=object)
        call = np.where(np.isfinite(p), call, stored)
        return pd.DataFrame({"call": pd.Series(call, index=rows.index, dtype=object),
                             "err2": d["err2"], "err4": d["err4"]}, index=rows.index)

    def probability(self, rows: pd.DataFrame, setting: DecisionSettings) -> np.ndarray:
        """The reported P(pays) of every case under ``setting`` (its map applied)."""
        d = self.decisions(rows, setting.innovation, setting.population)
        return apply_map(d["p"], d["x"], setting.calibration)

    def candidates(self, train: pd.DataFrame) -> list[DecisionSettings]:
        """The one setting ``train`` chooses, on its own cases only: the innovation, population
        prior and evidence map (:data:`FEATURE_SETS`; with :attr:`calibrate` False only the
        identity) whose out-of-source probabilities on ``train`` (each of its sources predicted
        by a map fitted on its other sources) have the least Brier score; the map then fitted
        on all of ``train``; and the stated loss (the band of the call) whose calls on those
        out-of-source probabilities score best by :func:`accuracy_scoring.calls_made`."""
        y = outcome(train["label"])
        pos = self._pos(train)
        src = train["source"].to_numpy()
        sets = FEATURE_SETS if self.calibrate else ((),)
        found = []
        for i, pop in enumerate(self.populations):
            for k in INNOVATIONS:
                d = self.decisions(self._rows, k, pop)
                p, x = d["p"][pos], d["x"][pos]
                for j, feats in enumerate(sets):
                    oof = self._out_of_source(p, x, y, src, feats)
                    found.append((brier(oof, y), i, k, j, oof))
        _, i, k, j, oof = min(found, key=lambda f: f[:4])
        d = self.decisions(self._rows, k, self.populations[i])
        cal = (fit_map(d["x"][pos], y, sets[j]) if sets[j] else EvidenceMap())
        noisy = d["noisy"][pos]
        best = None
        for r in STOP_COSTS:
            for a in ABSTAIN_COSTS:
                s = DecisionSettings(stop_cost=r, abstain_cost=a, calibration=cal, innovation=k,
                                     population=self.populations[i])
                call = np.where(oof < s.stop_below, False, np.where(oof >= s.go_above, True, None))
                call = pd.Series(np.where(noisy | ~np.isfinite(oof), None, call), index=train.index,
                                 dtype=object)
                zero = pd.Series(0.0, index=train.index)
                val = calls_made(summarize(train["label"], call, zero, zero))
                if best is None or val > best[0] + 1e-12:
                    best = (val, s)
        return [best[1]]

    @staticmethod
    def _out_of_source(p: np.ndarray, x: np.ndarray, y: np.ndarray, src: np.ndarray,
                       feats: tuple[str, ...]) -> np.ndarray:
        """Each source's probabilities from a map over ``feats`` fitted on the other sources
        (the model's own probability without features)."""
        if not feats:
            return p.copy()
        out = np.full(p.shape, math.nan)
        for s in np.unique(src):
            held = src == s
            out[held] = apply_map(p, x, fit_map(x[~held], y[~held], feats))[held]
        return out

    def bind(self, rows: pd.DataFrame) -> PooledCalls:
        """Attach the full row set the training subsets of :meth:`candidates` come from."""
        self._rows = rows
        self._index = pd.Series(np.arange(len(rows)), index=rows.index)
        return self

    def _pos(self, subset: pd.DataFrame) -> np.ndarray:
        return self._index.loc[subset.index].to_numpy()

    def check(self, rows: pd.DataFrame, setting: DecisionSettings) -> int:
        """How many cases' vectorised call differs from the tool's own :func:`decide` under
        ``setting`` (the priors of :meth:`decisions`): 0 when the benchmark scores the tool."""
        d = self.decisions(rows, setting.innovation, setting.population)
        mine = self.calls(rows, setting)["call"].to_numpy(dtype=object)
        priors = [dd.prior if dd is not None else None for dd in d["decisions"]]
        bad = 0
        collapsed = rows["sat:collapse"].fillna(0.0).to_numpy(dtype=float) > 0
        for i, (o, pr) in enumerate(zip(d["outlooks"], priors, strict=True)):
            if np.isfinite(d["p"][i]):
                dd = decide(o, pr, setting)
                call = dd.call
                if call is None and collapsed[i] and dd.p_pays < setting.go_above:
                    call = False
                bad += call is not mine[i]
        return bad


def pooled_methods(cases: dict[str, Case], rows: pd.DataFrame, calibrate: bool = False,
                   population: bool = False) -> list[Method]:
    """saturate's call with its settings chosen leave-one-source-out: alone and pooled."""
    specs = [
        ("saturate/alone", False, None, "the curve's own outlook"),
        ("saturate/seeds", True, ("seed",), "seeds pooled with their sibling seeds at the same "
         "cut (what analyze_table does)"),
        ("saturate/pooled", True, None, "pooled with the siblings at the same cut (every "
         "group: seeds, sibling agents or algorithms, model sizes)"),
    ]
    out = []
    for name, pool, kinds, describe in specs:
        pc = PooledCalls(pool, cases, kinds, calibrate, population).bind(rows)
        out.append(Method(name, pc.calls, describe=describe, default=DecisionSettings(),
                          fit=pc.candidates, engine=pc))
    return out
