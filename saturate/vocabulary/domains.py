"""The range a metric's values can take (its *domain*), so fits and forecasts never leave it.

Rates, accuracies, pass@k, success and win rates live in ``[0, 1]``; their percent spellings in
``[0, 100]``. A domain comes, by the first of these rules that applies:

1. **setting**: a ``domains`` glob (``--domain 'eval/*=0,1'``, settings file
   ``[tool.saturate.domains]``); ``none`` removes the domain a name would give;
2. **name**: a word of the metric's name (split by :func:`saturate.names.metric_tokens`) says it
   is a share (:data:`SHARE_WORDS`, ``pass@k``, ``*_rate`` of an outcome) -> ``[0, 1]``, or a
   percentage (``pct``, ``percent``, or a share whose values run above 1) -> ``[0, 100]``.

A domain is only kept when the data confirm it: a curve with a finite value outside it does not
measure what the name says (a "rate" of tokens per second), and gets no domain (the reason says
so when a setting asked for one). The fit keeps its laws' levels inside the domain
(:class:`saturate.fit.FitSettings` ``domain``), so the asymptote, the forecasts and their bands
stay in it without any clipping.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy.special import expit

from saturate.names import metric_tokens

if TYPE_CHECKING:
    from saturate.fit import CurveFit

__all__ = [
    "Domain", "SHARE_WORDS", "PERCENT_WORDS", "metric_domain", "domain_from_name", "widen_within",
    "domain_reasons",
]

SHARE_WORDS = frozenset({"accuracy", "acc", "pass", "passk", "maj", "success", "solved",
                         "winrate", "em", "exact", "f1", "precision", "recall", "auc", "auroc"})
"""Words that make a metric a share in ``[0, 1]`` (``eval/math/acc``, ``pass@8``, ``f1``)."""
PERCENT_WORDS = frozenset({"pct", "percent", "percentage"})
"""Words that make a share a percentage in ``[0, 100]``."""
_RATE_OF = frozenset({"win", "success", "pass", "solve", "solved", "hit", "resolve", "resolved",
                      "completion", "acceptance", "accept", "error", "failure", "fail",
                      "correct", "refusal", "agreement"})
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


def widen_within(
    value: float, lo: float, hi: float, extra: float, domain: tuple[float, float] | None = None
) -> tuple[float, float]:
    """The interval ``[lo, hi]`` around ``value`` widened in quadrature by ``extra`` (a normal
    half-width), inside the domain: the widening is made on the scale where the domain is the
    whole line (logit of the position in a bounded domain, log of the distance to a single
    bound), with ``extra`` carried there by the derivative at ``value`` (the delta method). So
    a forecast near a bound gets an asymmetric band that approaches the bound but never
    crosses it; without a domain the widening is the plain one."""
    if domain is None or not (extra > 0) or not math.isfinite(value):
        return value - math.hypot(value - lo, extra), value + math.hypot(hi - value, extra)
    to, back, slope = _unbounded_scale(domain)
    t, e = to(value), extra * slope(value)
    lo_t = t - math.hypot(t - to(lo), e)
    hi_t = t + math.hypot(to(hi) - t, e)
    return min(back(lo_t), value), max(back(hi_t), value)


def _unbounded_scale(
    domain: tuple[float, float],
) -> tuple[Callable[[float], float], Callable[[float], float], Callable[[float], float]]:
    """The map from the domain to the whole line, its inverse and its derivative. Points at a
    bound are taken a hair inside it (1e-12 of the domain's width, or of the value's size)."""
    a, b = float(domain[0]), float(domain[1])
    if math.isfinite(a) and math.isfinite(b):
        w = b - a

        def p(v: float) -> float:
            return min(max((v - a) / w, 1e-12), 1.0 - 1e-12)

        return (lambda v: math.log(p(v) / (1.0 - p(v))),
                lambda t: a + w * float(expit(t)),
                lambda v: 1.0 / (w * p(v) * (1.0 - p(v))))
    if math.isfinite(a) or math.isfinite(b):
        s, edge = (1.0, a) if math.isfinite(a) else (-1.0, b)

        def d(v: float) -> float:
            return max(s * (v - edge), 1e-12 * max(abs(v), abs(edge), 1e-300))

        return (lambda v: math.log(d(v)),
                lambda t: edge + s * math.exp(min(t, 709.0)),
                lambda v: 1.0 / d(v))
    return (lambda v: v), (lambda t: t), (lambda v: 1.0)


def domain_reasons(domain: Domain | None, note: str, fit: CurveFit | None) -> tuple[str, ...]:
    """What the reader should know where the domain binds: a domain asked for but refused by the
    data, laws given no weight because they leave it, an asymptote held at one of its ends."""
    out = [note] if note else []
    if domain is None or fit is None:
        return tuple(out)
    gone = [lf.name for lf in fit.laws if any(f.startswith("outside_domain") for f in lf.flags)]
    if gone:
        out.append(f"{', '.join(gone)} left the metric's domain {domain.text} within the forecast "
                   f"horizon and got no weight")
    a = fit.asymptote.value
    width = domain.hi - domain.lo
    tol = 1e-6 * (width if math.isfinite(width) else max(abs(a), 1.0))
    for end in (domain.lo, domain.hi):
        if math.isfinite(end) and math.isfinite(a) and abs(a - end) <= tol:
            out.append(f"the asymptote is held at the end {end:g} of the metric's domain "
                       f"{domain.text}: the fit would go beyond it")
    return tuple(out)
