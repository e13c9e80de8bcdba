"""The range a metric's values can take (its *domain*), so fits and forecasts never leave it.

Rates, accuracies, pass@k, success and win rates live in ``[0, 1]``; their percent spellings in
``[0, 100]``. A domain comes, by the first of these rules that applies:

1. **setting**: a ``domains`` glob (``--domain 'eval/*=0,1'``, settings file
   ``[tool.saturate.domains]``); ``none`` removes the domain a name would give;
2. **name**: a word of the metric's name (split by :func:`saturate.vocabulary.names.metric_tokens`) says it
   is a share (:data:`SHARE_WORDS`, ``pass@k``, ``*_rate`` of an outcome) -> ``[0, 1]``, or a
   percentage (``pct``, ``percent``, or a share whose values run above 1) -> ``[0, 100]``.

A domain is only kept when the data confirm it: a curve with a finite value outside it does not
measure what the name says (a "rate" of tokens per second), and gets no domain (the reason says
so when a setting asked for one). The fit keeps its laws' levels inside the domain
(:class:`saturate.fit.FitSettings` ``domain``), and the forecasts' bands are widened within it
(:func:`saturate.analysis.quantities.widen_within`).
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from saturate.vocabulary.names import metric_tokens
from saturate.vocabulary.roles import RATE_OF

SHARE_WORDS = frozenset({"accuracy", "acc", "pass", "passk", "maj", "success", "solved",
                         "winrate", "em", "exact", "f1", "precision", "recall", "auc", "auroc"})
"""Words that make a metric a share in ``[0, 1]`` (``eval/math/acc``, ``pass@8``, ``f1``)."""
PERCENT_WORDS = frozenset({"pct", "percent", "percentage"})
"""Words that make a share a percentage in ``[0, 100]``."""
_RATE_OF = RATE_OF | {"error", "failure", "fail", "correct", "refusal", "agreement"}
"""Outcomes whose ``*_rate`` is a share (an error rate too, unlike the objectives' rule)."""
_PASS_AT = re.compile(r"(pass|maj|acc|avg|best_of|cons)@\d+", re.IGNORECASE)
_PASS_K = re.compile(r"(pass|maj)\d+")  # one word: eval_gsm8k_pass1

Source = Literal["name", "setting"]


@dataclass(frozen=True)
class Domain:
    """A closed interval ``[lo, hi]`` of the metric's values (an end may be infinite) and where it
    came from (``name`` or ``setting``, with the glob)."""

    lo: float
    hi: float
    source: Source = "name"
    pattern: str | None = None

    def holds(self, values: np.ndarray) -> bool:
        """Whether every finite value lies in the domain."""
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        return bool(np.all((v >= self.lo) & (v <= self.hi)))

    @property
    def text(self) -> str:
        """``[0, 1]`` as the reasons print it."""
        return f"[{self.lo:g}, {self.hi:g}]"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe: infinite ends are ``None``."""
        def end(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {"lo": end(self.lo), "hi": end(self.hi), "source": self.source,
                "pattern": self.pattern}


def domain_from_name(metric: str, values: np.ndarray | None = None) -> Domain | None:
    """The domain the name gives (``[0, 1]`` or ``[0, 100]``), or None.

    A share whose values run above 1 but stay within 100 is read as a percentage.
    """
    words = set(metric_tokens(metric))
    lowered = metric.lower()
    share = bool(words & SHARE_WORDS) or _PASS_AT.search(lowered) is not None or any(
        _PASS_K.fullmatch(w) for w in words) or any(
        w == "rate" and prev in _RATE_OF for prev, w in _pairs(metric_tokens(metric))
    ) or "win_rate" in lowered or "success_rate" in lowered
    if not share:
        return None
    if words & PERCENT_WORDS or "%" in metric:
        return Domain(0.0, 100.0)
    if values is not None:
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if v.size and float(v.max()) > 1.0 and float(v.max()) <= 100.0 and float(v.min()) >= 0:
            return Domain(0.0, 100.0)
    return Domain(0.0, 1.0)


def _pairs(words: list[str]) -> list[tuple[str, str]]:
    """Each word with the one before it (``""`` for the first); none for a name without ASCII
    words (``精度``, an emoji, ``--``)."""
    return list(itertools.pairwise(["", *words]))


def metric_domain(
    metric: str,
    values: np.ndarray,
    settings: Mapping[str, tuple[float, float] | None] | None = None,
) -> tuple[Domain | None, str]:
    """The domain of one curve and, when a domain was asked for but the data refuse it, why.

    ``settings`` maps metric globs to ``(lo, hi)`` or ``None`` (no domain); the first glob that
    matches wins over the name.
    """
    for pattern, bounds in (settings or {}).items():
        if fnmatch.fnmatchcase(metric, pattern):
            if bounds is None:
                return None, ""
            dom = Domain(float(bounds[0]), float(bounds[1]), "setting", pattern)
            if dom.holds(values):
                return dom, ""
            return None, (f"the domain {dom.text} set for {pattern!r} was not applied: the curve "
                          f"has values outside it")
    dom = domain_from_name(metric, values)
    if dom is None or not dom.holds(values):
        return None, ""
    return dom, ""
