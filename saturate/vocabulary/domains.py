"""The range a metric's values can take (its *domain*), so fits and forecasts never leave it.

A domain comes from a ``domains`` glob setting (``--domain 'eval/*=0,1'``; ``none`` removes one),
else from the name: a share (rate, accuracy, pass@k...) is ``[0, 1]``, a percentage ``[0, 100]``.
It is kept only when every finite value lies in it (a "rate" of tokens per second is no share).
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from saturate.results.codec import Coded, meta
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


def _end(infinite: float) -> dict[str, object]:
    """An end of the interval: JSON's ``null`` reads back as ``infinite``."""
    return meta(decode=lambda x: infinite if x is None else float(x))


@dataclass(frozen=True)
class Domain(Coded):
    """A closed interval ``[lo, hi]`` (an end may be infinite, ``null`` in JSON) and where it came
    from."""

    lo: float = field(metadata=_end(-math.inf))
    hi: float = field(metadata=_end(math.inf))
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


def domain_from_name(metric: str, values: np.ndarray | None = None) -> Domain | None:
    """The domain the name gives (``[0, 1]`` or ``[0, 100]``), or None; a share whose values run
    above 1 but stay within 100 is read as a percentage."""
    tokens = metric_tokens(metric)
    words = set(tokens)
    lowered = metric.lower()
    share = bool(words & SHARE_WORDS) or _PASS_AT.search(lowered) is not None or any(
        _PASS_K.fullmatch(w) for w in words) or any(
        w == "rate" and prev in _RATE_OF for prev, w in itertools.pairwise(["", *tokens])
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


def metric_domain(
    metric: str,
    values: np.ndarray,
    settings: Mapping[str, tuple[float, float] | None] | None = None,
) -> tuple[Domain | None, str]:
    """The domain of one curve and, when a set domain was refused by the data, why.
    ``settings`` maps metric globs to ``(lo, hi)`` or ``None``; the first match wins over the name.
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
    named = domain_from_name(metric, values)
    return (named if named is not None and named.holds(values) else None), ""
