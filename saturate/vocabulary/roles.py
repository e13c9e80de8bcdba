"""The role of every metric: an *objective* (gets a verdict and counts in the gate), a
*diagnostic* (a health signal of the training, read by the diagnostics) or an *axis* (a measure
of compute or progress), read from its name (:func:`classify`); and the naming conventions the
diagnostics read (reward, benchmark, entropy, KL, length, slices).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from saturate.errors import SettingsError
from saturate.vocabulary.names import LOSS_WORDS, is_axis_name, matches_any, metric_tokens

Role = Literal["objective", "diagnostic", "axis"]
ROLES: tuple[str, ...] = ("objective", "diagnostic", "axis")

BENCHMARK_PREFIXES = frozenset({"eval", "evals", "evaluation", "bench", "benchmark", "benchmarks",
                                "val", "valid", "validation", "test", "heldout", "held_out"})
"""First path segments of held-out evaluations."""
REWARD_WORDS = frozenset({"reward", "rewards", "rew", "return", "returns", "score", "scores"})
"""Words of a training reward (see :func:`is_reward`)."""
_RL_REWARD = REWARD_WORDS - {"score", "scores"}
_SPREAD = frozenset({"std", "stddev", "stdev", "sd", "var", "variance", "min", "max", "minimum",
                     "maximum", "range", "iqr"})
"""Words of a spread or an extreme of a batch (:func:`classify` rule 2; ``range`` only last)."""
_STATS = frozenset({"mean", "avg", "average", "median", "ema", "smooth", "smoothed", "last",
                    "final", "sum"})
_NAMESPACES = frozenset({"timing", "perf", "performance", "system", "sys", "throughput", "memory",
                         "profiling", "profile", "losses", "optim", "optimizer", "hardware"})
HEALTH_WORDS = frozenset({
    "kl", "entropy", "entropies",                              # distance to the reference, exploration
    "length", "lengths", "len", "seqlen",                      # responses and episodes
    "grad", "grads", "gradient", "gradients", "norm", "gnorm",  # gradient norms
    "clip", "clipped", "clipping", "clipfrac",                 # clip fractions
    "lr", "learning",                                          # learning rate
    "advantage", "advantages", "adv", "value", "values", "vpred",  # the critic's estimates
    "coef", "coeff", "coefficient", "temperature",             # adaptive coefficients
    "fps", "sps", "throughput", "mfu", "tflops", "memory", "mem",  # speed and memory
    "timing", "duration", "seconds", "sec", "ms",              # timing
})
"""Words that make a metric a health signal of the training (rule 5 of :func:`classify`)."""
RL_LOSS_WORDS = frozenset({"policy", "pg", "actor", "critic", "value", "vf", "q", "qf", "qf1", "qf2",
                           "td", "ent", "entropy", "kl", "aux", "alpha", "bc", "surrogate", "ppo",
                           "clip", "dual", "lagrangian", "lagrange"})
"""Words that say a loss trains a part of an RL learner (rule 6 of :func:`classify`)."""
_OBJECTIVE_HEADS = REWARD_WORDS | {"accuracy", "acc", "success", "solved", "em", "f1", "bleu",
                                   "rouge"}
RATE_OF = frozenset({"win", "success", "pass", "solve", "solved", "hit", "resolve", "resolved",
                      "completion", "acceptance", "accept"})
"""Outcomes whose ``*_rate`` names an objective (``win_rate``, ``success_rate``)."""
MEASURE_WORDS = frozenset(HEALTH_WORDS | RL_LOSS_WORDS | LOSS_WORDS | _OBJECTIVE_HEADS | _SPREAD
                          | _STATS | {"rate", "ratio", "fraction", "frac", "pass", "error",
                                      "perplexity", "ppl"})
"""Words that say *what* a metric measures; a path segment holding none names a data subset
(``eval/<slice>/score``), see :func:`slice_families`."""


@dataclass(frozen=True)
class RoleCall:
    """A metric's role and the rule that gave it, in words (``"health word 'kl'"``)."""

    role: Role
    rule: str


def _head(words: list[str]) -> tuple[str, str]:
    """The head word (statistics dropped from the end) and the word before it."""
    core = list(words)
    while len(core) > 1 and core[-1] in _STATS:
        core.pop()
    return core[-1], core[-2] if len(core) > 1 else ""


def _names_objective(words: list[str]) -> bool:
    head, before = _head(words)
    return (head in _OBJECTIVE_HEADS or head.startswith("pass@")
            or (head == "rate" and before in RATE_OF))


def _logs_reward(run_metrics: Iterable[str]) -> bool:
    return any(_RL_REWARD & set(metric_tokens(m)) for m in run_metrics)


def classify(
    metric: str, *, objective: Sequence[str] = (), diagnostic: Sequence[str] = (),
    run_metrics: Iterable[str] = (),
) -> RoleCall:
    """The role of ``metric`` and why, by the first rule that applies:

    1. override: an ``objective`` / ``diagnostic`` glob (matching both is a settings error);
    2. spread: the last word, or a word of the last segment, is in ``_SPREAD`` -> diagnostic;
    3. system namespace: the first segment is in ``_NAMESPACES`` (``timing/``...) -> diagnostic;
    4. axis: :func:`~saturate.vocabulary.names.is_axis_name` (a length is not an axis) -> axis;
    5. health word (:data:`HEALTH_WORDS`), unless the head names an objective -> diagnostic;
    6. optimiser loss: a loss with a word of :data:`RL_LOSS_WORDS`, or outside the held-out
       prefixes in a run whose ``run_metrics`` log a reward -> diagnostic;
    7. everything else (rewards, scores, pass@k, supervised losses) -> objective.
    """
    if matches_any(metric, objective) and matches_any(metric, diagnostic):
        raise SettingsError(
            f"metric {metric!r} matches both objective {list(objective)} and diagnostic "
            f"{list(diagnostic)}; make the patterns exclusive")
    if matches_any(metric, objective):
        return RoleCall("objective", "--objective")
    if matches_any(metric, diagnostic):
        return RoleCall("diagnostic", "--diagnostic")
    words = metric_tokens(metric, keep="@")
    if not words:
        return RoleCall("objective", "default")
    first = set(metric_tokens(metric.split("/", 1)[0])) if "/" in metric else set()
    segment = [w for w in metric_tokens(metric.rsplit("/", 1)[-1]) if w != "range"]
    spread = [w for w in (words[-1], *segment) if w in _SPREAD]
    if spread:
        return RoleCall("diagnostic", f"a spread or extreme ({spread[0]}) of a batch")
    if first & _NAMESPACES:
        return RoleCall("diagnostic", f"system namespace {metric.split('/', 1)[0]}/")
    if is_axis_name(metric) and not {"length", "len", "lengths"} & set(words):
        return RoleCall("axis", "measures compute or progress")
    # A bare "value" is the column a long or wide file names its measure by, not a critic's.
    health = [w for w in words if w in HEALTH_WORDS] if words not in (["value"], ["values"]) else []
    if health and not _names_objective(words):
        return RoleCall("diagnostic", f"health word {health[0]!r}")
    if "per" in words and {"second", "seconds", "sec", "s", "ms"} & set(words):
        return RoleCall("diagnostic", "a rate per unit of time (throughput)")
    if LOSS_WORDS & set(words):
        qualifier = [w for w in words if w in RL_LOSS_WORDS]
        if qualifier:
            return RoleCall("diagnostic", f"optimiser loss ({qualifier[0]})")
        if not first & BENCHMARK_PREFIXES and _logs_reward(m for m in run_metrics if m != metric):
            return RoleCall("diagnostic", "a training loss of a run that logs a reward")
    return RoleCall("objective", "default")


def metric_role(
    metric: str, objective: Sequence[str] = (), diagnostic: Sequence[str] = (),
    run_metrics: Iterable[str] = (),
) -> Role:
    """``"objective"``, ``"diagnostic"`` or ``"axis"`` (see :func:`classify`)."""
    return classify(metric, objective=objective, diagnostic=diagnostic,
                    run_metrics=run_metrics).role


def curve_roles(
    df: pd.DataFrame, objective: Sequence[str] = (), diagnostic: Sequence[str] = ()
) -> pd.DataFrame:
    """One row per curve of a tidy table: ``source, run_id, metric, role, rule``."""
    cols = ["source", "run_id", "metric", "role", "rule"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    keys = df[["source", "run_id", "metric"]].drop_duplicates()
    rows = []
    for (source, run_id), g in keys.groupby(["source", "run_id"], sort=False):
        names = [str(m) for m in g["metric"]]
        for m in names:
            call = classify(m, objective=objective, diagnostic=diagnostic, run_metrics=names)
            rows.append((source, run_id, m, call.role, call.rule))
    return pd.DataFrame(rows, columns=cols)


def split_by_role(
    df: pd.DataFrame, objective: Sequence[str] = (), diagnostic: Sequence[str] = ()
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(objective points, other points, roles)``: the tidy table cut by :func:`curve_roles`."""
    roles = curve_roles(df, objective, diagnostic)
    if df.empty:
        return df, df, roles
    judged = roles.loc[roles["role"] == "objective", ["source", "run_id", "metric"]]
    index = pd.MultiIndex.from_frame(df[["source", "run_id", "metric"]])
    mask = index.isin(pd.MultiIndex.from_frame(judged))
    return df.loc[mask].reset_index(drop=True), df.loc[~mask].reset_index(drop=True), roles


# ---- naming conventions the diagnostics read ---------------------------------------------------
# Which objective is the training reward and which a held-out benchmark, which diagnostic is an
# entropy, a KL or a length, and which metrics are slices of one another.
_PASS = re.compile(r"^(?P<head>.*?)pass@(?P<k>\d+)(?P<tail>.*)$", re.IGNORECASE)


def tokens(metric: str) -> list[str]:
    """Lower-case word tokens of a metric name (:func:`metric_tokens`, ``pass@k`` kept whole)."""
    return metric_tokens(metric, keep="@")


def _first(metric: str) -> str:
    return metric.split("/", 1)[0].lower() if "/" in metric else ""


def is_benchmark(metric: str) -> bool:
    """Held-out evaluations: under ``eval/``, ``bench/``, ``val/``, ``test/`` (or a pass@k)."""
    return _first(metric) in BENCHMARK_PREFIXES or (pass_at_k(metric) is not None
                                                     and not is_reward(metric))


def is_reward(metric: str) -> bool:
    """The training reward: an objective with a reward/return/score word, outside the held-out
    prefixes."""
    if _first(metric) in BENCHMARK_PREFIXES:
        return False
    return (any(t in REWARD_WORDS for t in tokens(metric)) and not is_instability(metric)
            and metric_role(metric) == "objective")


def reward_rank(metric: str) -> tuple[int, int, int, int]:
    """Sort key: the most reward-like name first (``train/reward`` before ``critic/score/mean``)."""
    t = tokens(metric)
    return (0 if metric.lower() in ("train/reward", "reward", "train/rewards") else 1,
            0 if any(w in t for w in ("reward", "rewards")) else 1,
            0 if "train" in t or "rollout" in t else 1, len(metric))


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
    """Whether a path segment names a data subset (``math500``, ``easy``): none of its words is in
    :data:`MEASURE_WORDS`."""
    words = tokens(segment)
    return bool(words) and not any(w in MEASURE_WORDS or w.startswith("pass@") for w in words)


def slice_families(metrics: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Objectives that differ in ONE middle path segment naming a data subset
    (:func:`names_subset`): ``{"eval/*/score": [(slice, metric), ...]}``, families of two or more.
    The last segment never varies (``eval/math`` vs ``eval/code`` are benchmarks, not slices)."""
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
    """Groups of task scores that should move together: slice families, and objectives under a
    reward or benchmark prefix whose last segment names a task (``train/reward/<task>``,
    ``eval/<task>``). Health signals and pass@k metrics are left out."""
    names = [m for m in metrics if not is_instability(m) and pass_at_k(m) is None
             and metric_role(m) == "objective"]
    fams = slice_families(names)
    last: dict[str, list[tuple[str, str]]] = {}
    for m in names:
        parts = m.split("/")
        if len(parts) < 2 or not names_subset(parts[-1]):
            continue
        head = parts[:-1]
        if _first(m) in BENCHMARK_PREFIXES or any(t in REWARD_WORDS for t in tokens("/".join(head))):
            last.setdefault("/".join([*head, "*"]), []).append((parts[-1], m))
    fams.update({k: v for k, v in last.items() if len(v) >= 2})
    return fams
