"""saturate's call on every case made again from the case's stored evidence, for every setting
of the call, alone or pooled with the siblings (so leave-one-source-out can choose a setting on
the other sources, and each variant is scored).

The per-curve work (fits, trend tests, backtests) is done once per case by
:func:`accuracy_methods.run_saturate`, which stores the curve's
:class:`~saturate.measure.evidence.Evidence` and the fit at ``C``, ``2C``, ``4C``. Here the
tool's own functions do the rest, as :func:`saturate.analysis.analyze_table` does for a table:
the leave-one-out priors of the siblings (:func:`saturate.decide.siblings.leave_one_out_priors`;
a case's siblings are its curve's group at the same cut, so they are seen up to the same share
of their compute), the decision (:func:`saturate.decide.decide`, one call per case and setting)
and the forecasts (:func:`saturate.measure.quantities.project`).

The tunable settings (:class:`~saturate.decide.DecisionSettings`): ``innovation``, ``history``
and ``lean`` (what a doubling does beyond any estimate, :data:`INNOVATIONS` x :data:`HISTORIES`
x :data:`LEANS`), chosen on the training sources by the log loss of their P(pays); then the
band (the stated loss of a wrong stop and of an inconclusive call, :data:`STOP_COSTS` x
:data:`ABSTAIN_COSTS`), chosen by the balanced accuracy of the calls made
(:func:`accuracy_scoring.calls_made`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import pandas as pd
from accuracy_cases import Case, forecast_error
from accuracy_scoring import Method, calls_made, summarize

from saturate.decide import DecisionSettings, decide
from saturate.decide.siblings import leave_one_out_priors
from saturate.measure.evidence import Evidence
from saturate.measure.quantities import project
from saturate.results import ForecastPoint

INNOVATIONS = (0.5, 1.0, 2.0, 3.0, 4.0)
HISTORIES = (0.5, 1.0, 2.0)
LEANS = (0.0, 0.25)
STOP_COSTS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
ABSTAIN_COSTS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 1.0)  # 1.0: never abstain
GRID = tuple(s for s in (
    DecisionSettings(stop_cost=r, abstain_cost=a, innovation=k, history=h, lean=lean)
    for k in INNOVATIONS for h in HISTORIES for lean in LEANS
    for r in STOP_COSTS for a in ABSTAIN_COSTS) if s.stop_below <= 0.5 <= s.go_above)
"""Every setting of the call the benchmark may choose: a band never calls against the odds (a
"does not pay" at P(pays) above 1/2, a "pays" below it)."""


def admissible(grid: tuple[DecisionSettings, ...] = GRID) -> tuple[DecisionSettings, ...]:
    """The settings of ``grid`` under which the canonical shapes (:mod:`canonical_shapes`) are
    called with the fewest problems: a setting chosen on real curves must keep the clean cases
    a user checks first right. The battery is analysed once; each setting's call is made again
    from the stored evidence."""
    import warnings

    from canonical_shapes import battery, decided_again, judge, problems

    import saturate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curves = saturate.analyze(battery(), diagnostics=False).curves
        counts = {s: len(problems(judge(decided_again(curves, s)))) for s in grid}
    fewest = min(counts.values())
    return tuple(s for s in grid if counts[s] == fewest)


def evidence_of(rows: pd.DataFrame) -> list[Evidence | None]:
    """The stored evidence of every case (None where the tool stored none)."""
    col = rows["sat:evidence"] if "sat:evidence" in rows.columns else pd.Series(None, rows.index)
    return [Evidence.from_dict(json.loads(v)) if isinstance(v, str) and v else None for v in col]


def band_calls(p: np.ndarray, collapsed: np.ndarray, s: DecisionSettings) -> np.ndarray:
    """The calls :func:`saturate.decide.decide` makes from P(pays) under the band of ``s``
    (vectorised; :meth:`Calls.check` holds it to the tool's own)."""
    call = np.where(p < s.stop_below, False, np.where(p >= s.go_above, True, None))
    call = np.where((call == None) & collapsed & (p < 0.5), False, call)  # noqa: E711
    return np.where(np.isfinite(p), call, None)


class Calls:
    """The tool's decision on every case for each (innovation, history), computed once per
    setting (P(pays), the decisions, the forecast errors), and the calls for a band from them.
    ``kinds``: the kinds of curve that pool with their siblings (``("seed",)`` as
    :func:`saturate.analysis.analyze_table` pools, the seeds of one configuration; None: every
    group; ``()``: none)."""

    def __init__(self, rows: pd.DataFrame, cases: dict[str, Case],
                 kinds: tuple[str, ...] | None = ("seed",),
                 grid: tuple[DecisionSettings, ...] = GRID) -> None:
        self.rows, self.cases, self.grid = rows, cases, grid
        self.evidence = evidence_of(rows)
        groups = [(s, g, f) if isinstance(g, str) and g and (kinds is None or k in kinds)
                  else None for s, g, f, k in zip(rows["source"], rows["group"], rows["frac"],
                                                  rows["kind"], strict=True)]
        self.priors = leave_one_out_priors(self.evidence, groups, list(rows["name"]))
        self.collapsed = np.array([e is not None and e.collapse is not None
                                   for e in self.evidence])
        self._index = pd.Series(np.arange(len(rows)), index=rows.index)
        self._cache: dict[tuple, dict[str, Any]] = {}

    def made(self, innovation: float, history: float, lean: float = 0.0) -> dict[str, Any]:
        """Per case under (``innovation``, ``history``, ``lean``): the decision, ``p``
        (NaN without one) and the 2x / 4x forecast errors (the stored ones where the tool had no
        evidence)."""
        key = (innovation, history, lean)
        if key not in self._cache:
            s = DecisionSettings(innovation=innovation, history=history, lean=lean)
            ds = [decide(e, p, s) if e is not None else None
                  for e, p in zip(self.evidence, self.priors, strict=True)]
            errs = [self._errors(e, d, r) for e, d, r in zip(
                self.evidence, ds, self.rows.to_dict("records"), strict=True)]
            self._cache[key] = {
                "decisions": ds,
                "p": np.array([d.p_pays if d is not None else math.nan for d in ds]),
                "err2": np.array([e[0] for e in errs], dtype=float),
                "err4": np.array([e[1] for e in errs], dtype=float),
            }
        return self._cache[key]

    def _errors(self, ev: Evidence | None, d: Any, row: dict) -> tuple[float, float]:
        if ev is None or d is None or not math.isfinite(d.gain.value):
            return row["saturate:err2"], row["saturate:err4"]
        case = self.cases[row["key"]]
        last = float(case.compute[-1])
        c, c2, c4 = (row.get(f"sat:fit_{k}", math.nan) for k in ("c", "2c", "4c"))
        sign = 1.0 if ev.direction == "higher" else -1.0

        def shape(h: float) -> float:
            return sign * ((c2 - c) if h == 1.0 else ((c4 - c) if h == 2.0 else math.nan))

        stub = tuple(ForecastPoint(f"{k}x", k * last, math.nan, math.nan, math.nan)
                     for k in (2, 4))
        fc = project(ev.level, ev.direction, d.gain, (ev.lower, ev.upper), stub, last,
                     shape if math.isfinite(c) else None)
        return tuple(forecast_error(case, k, p.value) for k, p in zip((2, 4), fc, strict=True))

    def calls(self, rows: pd.DataFrame, setting: DecisionSettings) -> pd.DataFrame:
        """The call, and the forecast errors, of every case under ``setting``."""
        m = self.made(*_spread(setting))
        call = band_calls(m["p"], self.collapsed, setting)
        stored = self.rows["saturate:call"].to_numpy(dtype=object)
        call = np.where(np.isfinite(m["p"]), call, stored)
        out = pd.DataFrame({"call": pd.Series(call, index=self.rows.index, dtype=object),
                            "err2": m["err2"], "err4": m["err4"]}, index=self.rows.index)
        return out.loc[rows.index]

    def probability(self, rows: pd.DataFrame, setting: DecisionSettings) -> np.ndarray:
        """P(pays) of every case of ``rows`` under ``setting``."""
        return self.made(*_spread(setting))["p"][self._pos(rows)]

    def candidates(self, train: pd.DataFrame) -> list[DecisionSettings]:
        """The one setting ``train`` chooses on its own cases, among :attr:`grid`: the
        (innovation, history, lean) whose P(pays) has the least log loss there, then the band
        whose calls score best by :func:`accuracy_scoring.calls_made`."""
        y = train["label"].map({True: 1.0, False: 0.0}).astype(float).to_numpy()
        pos = self._pos(train)
        spreads = list(dict.fromkeys(_spread(s) for s in self.grid))
        _, best = min(((log_loss(self.made(*g)["p"][pos], y), i) for i, g in enumerate(spreads)))
        chosen = spreads[best]
        p, collapsed = self.made(*chosen)["p"][pos], self.collapsed[pos]
        zero = pd.Series(0.0, index=train.index)
        found = None
        for s in self.grid:
            if _spread(s) != chosen:
                continue
            call = pd.Series(band_calls(p, collapsed, s), index=train.index, dtype=object)
            val = calls_made(summarize(train["label"], call, zero, zero))
            if found is None or val > found[0] + 1e-12:
                found = (val, s)
        assert found is not None
        return [found[1]]

    def _pos(self, subset: pd.DataFrame) -> np.ndarray:
        return self._index.loc[subset.index].to_numpy()

    def check(self, setting: DecisionSettings) -> int:
        """How many cases' vectorised call differs from the call the tool's own
        :func:`~saturate.decide.decide` makes under ``setting``: 0 when the benchmark scores
        the tool."""
        mine = self.calls(self.rows, setting)["call"].to_numpy(dtype=object)
        bad = 0
        for i, (e, pr) in enumerate(zip(self.evidence, self.priors, strict=True)):
            if e is not None and math.isfinite(self.probability(self.rows, setting)[i]):
                bad += decide(e, pr, setting).call is not mine[i]
        return bad


def _spread(s: DecisionSettings) -> tuple:
    """The part of a setting that makes P(pays) (the band only turns it into a call)."""
    return (s.innovation, s.history, s.lean)


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    """Mean log loss of ``p`` on the scored outcomes ``y`` (probabilities held to [1e-4, 1])."""
    ok = np.isfinite(p) & np.isfinite(y)
    q = np.clip(p[ok], 1e-4, 1 - 1e-4)
    return float(-np.mean(y[ok] * np.log(q) + (1 - y[ok]) * np.log(1 - q)))


def saturate_methods(cases: dict[str, Case], rows: pd.DataFrame,
                     grid: tuple[DecisionSettings, ...] = GRID) -> list[Method]:
    """saturate's call with its settings chosen leave-one-source-out among ``grid``: each curve
    alone, seeds pooled as :func:`saturate.analysis.analyze_table` pools them, every group
    pooled."""
    specs = [
        ("saturate/alone", (), "the curve's own evidence"),
        ("saturate/seeds", ("seed",), "seeds pooled with their sibling seeds at the same cut "
         "(what analyze_table does)"),
        ("saturate/pooled", None, "pooled with the siblings at the same cut (every group: "
         "seeds, sibling agents or algorithms, model sizes)"),
    ]
    out = []
    for name, kinds, describe in specs:
        engine = Calls(rows, cases, kinds, grid)
        out.append(Method(name, engine.calls, describe=describe, default=DecisionSettings(),
                          fit=engine.candidates, engine=engine))
    return out


def describe_setting(v: Any) -> str:
    """A :class:`~saturate.decide.DecisionSettings` in words."""
    if not isinstance(v, DecisionSettings):
        return str(v)
    d = dataclasses.asdict(v)
    return (f"band [{v.stop_below:.3f}, {v.go_above:.3f}) (wrong stop {d['stop_cost']:g}, "
            f"abstain {d['abstain_cost']:g}), innovation {d['innovation']:g}x today's noise, "
            f"history {d['history']:g}, lean {d['lean']:g}")
