"""The role of every metric: an *objective* (gets a verdict and counts in the gate), a
*diagnostic* (a health signal of the training: no verdict, read by the diagnostics) or an *axis*
(a measure of compute or progress: never a curve to judge).

Roles come from the name, split into words by :func:`saturate.names.metric_tokens`, by the first
of these rules that applies (:func:`classify` says which one did):

1. **override**: a ``--objective`` / ``--diagnostic`` glob (settings file: ``objective = [...]``,
   ``diagnostic = [...]``); a metric matched by both is a settings error.
2. **spread**: the last word, or any word of the last path segment, is a spread or an extreme
   (``std``, ``var``, ``min``, ``max``): ``critic/score/max``, ``reward_std``, SB3's
   ``std_return``, ``eval/min_reward`` describe a batch, not the level to improve. Diagnostic.
3. **system namespace**: the first path segment is a namespace of system or optimiser logs
   (``timing/``, ``timing_s/``, ``perf/``, ``system/``, ``throughput/``, ``memory/``,
   ``losses/`` of CleanRL, ``optim/``). Diagnostic.
4. **axis**: the name measures compute or progress (:func:`saturate.names.is_axis_name`:
   ``gpu_hours``, ``compute/*``, ``total_flops``, ``num_tokens``, ``env_steps``, ``wall_time``,
   ``epoch``...). Axis.
5. **health word**: a word of :data:`HEALTH_WORDS` (KL, entropy, lengths, gradient norms, clip
   fractions, learning rate, values and advantages of a critic, throughput, memory, timing)
   appears, unless the metric's head (its last word, statistics such as ``mean`` dropped) names
   an objective: ``eval/length_controlled_win_rate`` stays an objective. Diagnostic.
6. **optimiser loss**: a loss whose name says which part of an RL learner it trains
   (``actor/pg_loss``, ``critic/vf_loss``, ``qf1_loss``, :data:`RL_LOSS_WORDS`), or any loss outside
   the held-out prefixes (``eval/``, ``val/``, ``test/``) of a run that also logs a reward or a
   return (SB3's ``train/loss`` next to ``rollout/ep_rew_mean``). Diagnostic.
7. **objective**: everything else: rewards, returns, scores, accuracies, pass@k, win and success
   rates, and the losses and perplexities of supervised runs (``train/loss`` of a scaling study,
   ``eval/loss``; lower is better, see :mod:`saturate.analysis.direction`).

>>> metric_role("critic/kl"), metric_role("val/test_score/openai/gsm8k"), metric_role("gpu_hours")
('diagnostic', 'objective', 'axis')
>>> metric_role("train/loss"), metric_role("train/loss", run_metrics=["rollout/ep_rew_mean"])
('objective', 'diagnostic')
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from saturate.errors import SettingsError
from saturate.names import LOSS_WORDS, is_axis_name, metric_tokens

__all__ = [
    "Role",
    "ROLES",
    "RoleCall",
    "HEALTH_WORDS",
    "RL_LOSS_WORDS",
    "REWARD_WORDS",
    "BENCHMARK_PREFIXES",
    "MEASURE_WORDS",
    "classify",
    "metric_role",
    "curve_roles",
    "split_by_role",
]

Role = Literal["objective", "diagnostic", "axis"]
ROLES: tuple[str, ...] = ("objective", "diagnostic", "axis")

BENCHMARK_PREFIXES = frozenset(
    {"eval", "evals", "evaluation", "bench", "benchmark", "benchmarks", "val", "valid",
     "validation", "test", "heldout", "held_out"}
)
"""First path segments of held-out evaluations."""
REWARD_WORDS = frozenset({"reward", "rewards", "rew", "return", "returns", "score", "scores"})
"""Words of a training reward (see :func:`saturate.diagnostics.naming.is_reward`)."""
_RL_REWARD = frozenset({"reward", "rewards", "rew", "return", "returns"})
_SPREAD = frozenset({"std", "stddev", "stdev", "sd", "var", "variance", "min", "max", "minimum",
                     "maximum", "range", "iqr"})
"""Words of a spread or an extreme of a batch (rule 2); ``range`` only as the last word."""
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
"""Words that make a metric a health signal of the training (rule 5)."""
RL_LOSS_WORDS = frozenset({"policy", "pg", "actor", "critic", "value", "vf", "q", "qf", "qf1", "qf2",
                           "td", "ent", "entropy", "kl", "aux", "alpha", "bc", "surrogate", "ppo",
                           "clip", "dual", "lagrangian", "lagrange"})
"""Words that say a loss trains a part of an RL learner (rule 6)."""
_LOSS = LOSS_WORDS
_OBJECTIVE_HEADS = frozenset({"reward", "rewards", "rew", "return", "returns", "score", "scores",
                              "accuracy", "acc", "success", "solved", "em", "f1", "bleu", "rouge"})
_RATE_OF = frozenset({"win", "success", "pass", "solve", "solved", "hit", "resolve", "resolved",
                      "completion", "acceptance", "accept"})
MEASURE_WORDS = frozenset(
    HEALTH_WORDS | RL_LOSS_WORDS | _LOSS | _OBJECTIVE_HEADS | _SPREAD | _STATS | REWARD_WORDS
    | {"rate", "ratio", "fraction", "frac", "pass", "accuracy", "error", "perplexity", "ppl", "nll"}
)
"""Words that say *what* a metric measures; a path segment holding none names a data subset
(``eval/<slice>/score``), see :func:`saturate.diagnostics.naming.slice_families`."""


@dataclass(frozen=True)
class RoleCall:
    """A metric's role and the rule that gave it, in words (``"health word 'kl'"``)."""

    role: Role
    rule: str


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _head(words: list[str]) -> tuple[str, str]:
    """The head word (statistics dropped from the end) and the word before it."""
    core = list(words)
    while len(core) > 1 and core[-1] in _STATS:
        core.pop()
    return core[-1], core[-2] if len(core) > 1 else ""


def _names_objective(words: list[str]) -> bool:
    head, before = _head(words)
    return (head in _OBJECTIVE_HEADS or head.startswith("pass@")
            or (head == "rate" and before in _RATE_OF))


def _logs_reward(run_metrics: Iterable[str]) -> bool:
    return any(_RL_REWARD & set(metric_tokens(m)) for m in run_metrics)


def classify(
    metric: str,
    *,
    objective: Sequence[str] = (),
    diagnostic: Sequence[str] = (),
    run_metrics: Iterable[str] = (),
) -> RoleCall:
    """The role of ``metric`` and why (the rules of the module docstring, first match wins).

    ``objective`` / ``diagnostic`` are glob patterns that override the name rules;
    ``run_metrics`` the other metrics of its run (rule 6 asks whether the run logs a reward).
    """
    if _matches(metric, objective) and _matches(metric, diagnostic):
        raise SettingsError(
            f"metric {metric!r} matches both objective {list(objective)} and diagnostic "
            f"{list(diagnostic)}; make the patterns exclusive")
    if _matches(metric, objective):
        return RoleCall("objective", "--objective")
    if _matches(metric, diagnostic):
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
    if _LOSS & set(words):
        qualifier = [w for w in words if w in RL_LOSS_WORDS]
        if qualifier:
            return RoleCall("diagnostic", f"optimiser loss ({qualifier[0]})")
        if not first & BENCHMARK_PREFIXES and _logs_reward(m for m in run_metrics if m != metric):
            return RoleCall("diagnostic", "a training loss of a run that logs a reward")
    return RoleCall("objective", "default")


def metric_role(
    metric: str,
    objective: Sequence[str] = (),
    diagnostic: Sequence[str] = (),
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
    """``(objective points, other points, roles)``: the tidy table cut by :func:`curve_roles`.

    The roles frame has one row per curve.
    """
    roles = curve_roles(df, objective, diagnostic)
    if df.empty:
        return df, df, roles
    judged = roles.loc[roles["role"] == "objective", ["source", "run_id", "metric"]]
    index = pd.MultiIndex.from_frame(df[["source", "run_id", "metric"]])
    mask = index.isin(pd.MultiIndex.from_frame(judged))
    return df.loc[mask].reset_index(drop=True), df.loc[~mask].reset_index(drop=True), roles
