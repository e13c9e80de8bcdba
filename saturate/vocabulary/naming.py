"""Naming conventions the diagnostics read: which objective is the training reward and which a
held-out benchmark, which diagnostic is an entropy, a KL or a length, and which metrics are slices
of one another. Whether a metric is judged at all is its role (:mod:`saturate.analysis.roles`).

Names are split into lower-case tokens on anything that is not a letter, a digit or ``@`` (and on
camelCase), so ``train/reward``, ``critic/score/mean`` and ``rollout/rewardMean`` are all rewards
and ``pass@8`` stays one token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from saturate.analysis.roles import BENCHMARK_PREFIXES, MEASURE_WORDS, REWARD_WORDS, metric_role
from saturate.names import metric_tokens

__all__ = [
    "tokens",
    "is_benchmark",
    "is_reward",
    "reward_rank",
    "is_entropy",
    "is_kl",
    "is_length",
    "is_instability",
    "pass_at_k",
    "slice_families",
    "names_subset",
    "subtask_families",
]

_REWARD_WORDS = REWARD_WORDS
_PASS = re.compile(r"^(?P<head>.*?)pass@(?P<k>\d+)(?P<tail>.*)$", re.IGNORECASE)


def tokens(metric: str) -> list[str]:
    """Lower-case word tokens of a metric name (:func:`metric_tokens`, ``pass@k`` kept whole)."""
    return metric_tokens(metric, keep="@")


def _first(metric: str) -> str:
    return metric.split("/", 1)[0].lower() if "/" in metric else ""


def is_benchmark(metric: str) -> bool:
    """Held-out evaluations: under ``eval/``, ``bench/``, ``val/``, ``test/`` (or a pass@k)."""
    return _first(metric) in BENCHMARK_PREFIXES or (
        pass_at_k(metric) is not None and not is_reward(metric)
    )


def is_reward(metric: str) -> bool:
    """The training reward: an objective (by the name rules) with a reward/return/score word,
    outside the held-out prefixes (``critic/score/std`` and ``reward_std`` are diagnostics)."""
    if _first(metric) in BENCHMARK_PREFIXES:
        return False
    return (any(t in _REWARD_WORDS for t in tokens(metric)) and not is_instability(metric)
            and metric_role(metric) == "objective")


def reward_rank(metric: str) -> tuple[int, int, int, int]:
    """Sort key: the most reward-like name first (``train/reward`` before ``critic/score/mean``)."""
    t = tokens(metric)
    return (
        0 if metric.lower() in ("train/reward", "reward", "train/rewards") else 1,
        0 if any(w in t for w in ("reward", "rewards")) else 1,
        0 if "train" in t or "rollout" in t else 1,
        len(metric),
    )


def is_entropy(metric: str) -> bool:
    return "entropy" in tokens(metric)


def is_kl(metric: str) -> bool:
    t = tokens(metric)
    return "kl" in t or any(w.startswith("kl") and w[2:] in ("div", "divergence", "loss", "penalty")
                            for w in t)


def is_length(metric: str) -> bool:
    t = tokens(metric)
    lengthy = any(w in ("length", "len", "lengths", "tokens", "ntokens") for w in t)
    whose = any(w in ("response", "completion", "generation", "output", "resp", "gen", "seq")
                for w in t) or any(w.startswith(("response", "completion")) for w in t)
    return lengthy and whose


def is_instability(metric: str) -> bool:
    """Health signals (entropy, KL, length) rather than task scores."""
    return is_entropy(metric) or is_kl(metric) or is_length(metric)


def pass_at_k(metric: str) -> tuple[str, int] | None:
    """``("eval/math/pass@{k}", 8)`` for ``eval/math/pass@8``; ``None`` for other names."""
    m = _PASS.match(metric)
    if not m:
        return None
    return f"{m.group('head')}pass@{{k}}{m.group('tail')}", int(m.group("k"))


def names_subset(segment: str) -> bool:
    """Whether a path segment names a data subset (``math500``, ``easy``, ``openai``) rather than
    what is measured: none of its words is in :data:`~saturate.analysis.roles.MEASURE_WORDS`."""
    words = tokens(segment)
    return bool(words) and not any(w in MEASURE_WORDS or w.startswith("pass@") for w in words)


def slice_families(metrics: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Objectives that measure the same thing on different data: they differ in ONE middle path
    segment, and that segment names a data subset (:func:`names_subset`): ``eval/<slice>/score``.

    Returns ``{"eval/*/score": [(slice, metric), ...]}`` for families of two or more. The last
    segment never varies here (``eval/math`` vs ``eval/code`` are benchmarks, not slices), and
    ``critic/rewards/mean`` vs ``critic/score/mean`` are two measures, not two slices.
    """
    fams: dict[str, list[tuple[str, str]]] = {}
    for m in metrics:
        if metric_role(m) != "objective":
            continue
        parts = m.split("/")
        for i in range(1, len(parts) - 1):
            if not names_subset(parts[i]):
                continue
            key = "/".join([*parts[:i], "*", *parts[i + 1:]])
            fams.setdefault(key, []).append((parts[i], m))
    return {k: v for k, v in fams.items() if len(v) >= 2}


def subtask_families(metrics: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Groups of task scores that should move together: slice families, and objectives that share
    a reward or benchmark prefix and differ in a last segment naming a task (``train/reward/<task>``,
    ``eval/<task>``; not ``critic/rewards/max`` vs ``critic/rewards/mean``). Health signals and
    pass@k metrics are left out."""
    names = [m for m in metrics if not is_instability(m) and pass_at_k(m) is None
             and metric_role(m) == "objective"]
    fams = slice_families(names)
    last: dict[str, list[tuple[str, str]]] = {}
    for m in names:
        parts = m.split("/")
        if len(parts) < 2 or not names_subset(parts[-1]):
            continue
        head = parts[:-1]
        if _first(m) in BENCHMARK_PREFIXES or any(t in _REWARD_WORDS for t in tokens("/".join(head))):
            last.setdefault("/".join([*head, "*"]), []).append((parts[-1], m))
    fams.update({k: v for k, v in last.items() if len(v) >= 2})
    return fams
