"""Metric and column names read as words: the one tokenizer (:func:`metric_tokens`), used by
every rule that reads a name, and the names that measure compute.

A name measures compute when its last path segment, less counting words (``total``, ``num``...),
is one of :data:`QUANTITIES`, or when it is ``compute`` or under ``compute/``. Progress counters
(``step``, ``epoch``...) are axes too, but never picked as the x axis automatically.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from saturate.errors import SettingsError
from saturate.results import Direction

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.cache
def _splitter(keep: str) -> re.Pattern[str]:
    return re.compile(rf"[^A-Za-z0-9{re.escape(keep)}]+")


def metric_tokens(name: str, keep: str = "") -> list[str]:
    """Lower-case word tokens of a metric name, split on camelCase boundaries and on every
    character that is not a letter, a digit or one of ``keep``; ``cross entropy`` is one word
    (``cross_entropy``, a loss, not the policy's entropy).

    >>> metric_tokens("rollout/rewardMean"), metric_tokens("eval/pass@8", keep="@")
    (['rollout', 'reward', 'mean'], ['eval', 'pass@8'])
    """
    words = [t.lower() for t in _splitter(keep).split(_CAMEL.sub("_", name)) if t]
    for i in range(len(words) - 2, -1, -1):
        if (words[i], words[i + 1]) in _PHRASES:
            words[i:i + 2] = [f"{words[i]}_{words[i + 1]}"]
    return words


def matches_any(name: str, patterns: Sequence[str]) -> bool:
    """Whether ``name`` matches one of the glob ``patterns`` (case-sensitive)."""
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


_PHRASES = frozenset({("cross", "entropy")})
"""Pairs of words that name one thing (``cross entropy``: a loss)."""

LOSS_WORDS = frozenset({"loss", "losses", "nll", "cross_entropy", "crossentropy", "xent"})
"""Tokens (:func:`metric_tokens`) that name a loss: lower is better, and a loss's role rules."""


@dataclass(frozen=True)
class Quantity:
    """What an axis name measures: its ``unit`` (as reports print it), whether it is ``compute``
    (a candidate for the automatic x axis) and its ``rank`` among candidates (lower first)."""

    unit: str
    compute: bool
    rank: int


GPU_HOURS = "GPU-hours"
STEPS = "steps"
_WALL = Quantity("seconds", True, 7)
_ENV = Quantity("environment steps", True, 5)
QUANTITIES: dict[str, Quantity] = {
    **dict.fromkeys(("gpu_hours", "gpu_hour", "gpu_h", "gpuh", "gpuhours", "gpu_hrs"),
                    Quantity(GPU_HOURS, True, 1)),
    **dict.fromkeys(("gpu_days", "gpu_day"), Quantity("GPU-days", True, 1)),
    **dict.fromkeys(("pf_days", "petaflop_days", "pfs_days"), Quantity("PF-days", True, 2)),
    **dict.fromkeys(("flops", "flop"), Quantity("FLOPs", True, 2)),
    **dict.fromkeys(("tokens", "token_count"), Quantity("tokens", True, 3)),
    **dict.fromkeys(("samples", "sample_count"), Quantity("samples", True, 4)),
    **dict.fromkeys(("examples", "dataset_size", "data_size", "train_size"),
                    Quantity("examples", True, 4)),
    **dict.fromkeys(("env_steps", "env_step", "environment_steps", "timesteps", "agent_steps",
                     "interactions"), _ENV),
    **dict.fromkeys(("frames", "env_frames"), Quantity("frames", True, 6)),
    **dict.fromkeys(("wall_time", "walltime", "wall_clock", "wallclock", "wall_clock_time",
                     "time_elapsed", "elapsed_time", "elapsed", "runtime"), _WALL),
    **dict.fromkeys(("step", "steps"), Quantity(STEPS, False, 9)),
    **dict.fromkeys(("iteration", "iterations", "iter", "iters"), Quantity("iterations", False, 9)),
    **dict.fromkeys(("epoch", "epochs"), Quantity("epochs", False, 9)),
    **dict.fromkeys(("updates", "update", "gradient_steps", "optimizer_steps"),
                    Quantity("updates", False, 9)),
    **dict.fromkeys(("episodes", "episode_count"), Quantity("episodes", False, 9)),
}
"""The quantities an axis name can measure, by its normalised last segment (see module doc)."""

_COUNTING = frozenset({"total", "num", "n", "cumulative", "cum", "consumed", "seen", "processed",
                       "trained", "global", "so", "far", "train", "training", "used", "spent"})
_COMPUTE = Quantity("compute", True, 0)


def _leaf_key(segment: str) -> str:
    """``total_num_tokens`` -> ``tokens``: the segment's tokens less counting words, joined."""
    words = metric_tokens(segment)
    kept = [w for w in words if w not in _COUNTING]
    return "_".join(kept or words)


def axis_quantity(name: str) -> Quantity | None:
    """The :class:`Quantity` a name measures, or ``None``. ``compute`` has no unit;
    ``compute/<x>`` measures what ``x`` does, or compute in the unit ``x`` when it is not known."""
    segments = [s for s in str(name).split("/") if s]
    if not segments:
        return None
    leaf = _leaf_key(segments[-1])
    if len(segments) == 1 and leaf == "compute":
        return _COMPUTE
    if metric_tokens(segments[0]) == ["compute"] and len(segments) > 1:
        known = QUANTITIES.get(leaf)
        return Quantity(known.unit, True, 0) if known else Quantity(segments[-1], True, 0)
    return QUANTITIES.get(leaf)


def axis_unit(name: str | None) -> str | None:
    """The unit of an x axis named ``name`` (``GPU-hours``, ``FLOPs``...), ``None`` when the name
    does not say."""
    if name is None:
        return None
    q = axis_quantity(name)
    return None if q is None or q is _COMPUTE else q.unit


def axis_label(name: str | None, unit: str | None = None) -> str:
    """How reports name the x axis: ``GPU-hours (compute/gpu_hours)``, ``steps``, or the name
    alone when its unit is unknown; ``unit`` overrides the unit read from the name."""
    name = name or "compute"
    unit = unit or axis_unit(name)
    if unit is None or unit == name:
        return name
    if _leaf_key(name.rsplit("/", 1)[-1]) in ("step", "steps"):
        return unit
    return f"{unit} ({name})"


def is_axis_name(name: str) -> bool:
    """Whether ``name`` measures compute or progress (the axis role): never a curve to judge."""
    return axis_quantity(name) is not None


def is_compute_name(name: str) -> bool:
    """Whether ``name`` measures compute, so that it may become the x axis automatically."""
    q = axis_quantity(name)
    return q is not None and q.compute


_REPLICATE_WORDS = frozenset({"seed", "seeds", "trial", "rep", "replicate", "replica", "repeat",
                              "repetition"})
_ID_WORDS = frozenset({"id", "idx", "index", "no", "number", "random", "rng", "env", "run"})


def is_replicate_name(name: str) -> bool:
    """Whether a column ``name`` tells repeated runs apart (``seed``, ``random_seed``, ``trial``):
    a run parameter even when its values are numbers, never a metric."""
    words = metric_tokens(name)
    return (bool(words) and bool(_REPLICATE_WORDS & set(words))
            and set(words) <= _REPLICATE_WORDS | _ID_WORDS)


def _globs() -> tuple[str, ...]:
    keys = [k for k, q in QUANTITIES.items() if q.compute]
    spelled = [p + k for k in keys for p in ("", "total_", "num_")]
    return ("compute", "compute/*", *spelled, *(f"*/{s}" for s in spelled))


AXIS_GLOBS: tuple[str, ...] = _globs()
"""Globs of the usual spellings of compute metrics, fetched with any metric selection so that the
x axis is found."""


# Tokens (:func:`metric_tokens`) that make a metric lower-is-better.
LOWER_IS_BETTER_WORDS: frozenset[str] = LOSS_WORDS | frozenset({
    "error", "errors", "err", "perplexity", "ppl", "regret", "latency", "mse", "mae", "rmse", "wer",
    "cer", "bpb", "bpc", "cost", "violation", "violations",
})
# Words that keep a metric higher-is-better even when a lower-is-better word is in its name:
# "error_free_rate" or "loss_reduction" are things one wants more of.
_HIGHER_OVERRIDES: frozenset[str] = frozenset(
    {"reduction", "improvement", "accuracy", "acc", "reward", "return", "score", "success", "free"}
)


def metric_direction(
    metric: str, lower_is_better: Sequence[str] = (), higher_is_better: Sequence[str] = ()
) -> Direction:
    """``"lower"`` or ``"higher"``: explicit glob patterns first (matching both is a settings
    error), then lower when a token is in :data:`LOWER_IS_BETTER_WORDS` and none overrides it."""
    if isinstance(lower_is_better, str):
        lower_is_better = (lower_is_better,)
    if isinstance(higher_is_better, str):
        higher_is_better = (higher_is_better,)
    low, high = matches_any(metric, lower_is_better), matches_any(metric, higher_is_better)
    if low and high:
        raise SettingsError(
            f"metric {metric!r} matches both --lower-is-better {list(lower_is_better)} and "
            f"--higher-is-better {list(higher_is_better)}; make the patterns exclusive"
        )
    if low:
        return "lower"
    if high:
        return "higher"
    tokens = metric_tokens(metric)
    lower = any(t in LOWER_IS_BETTER_WORDS for t in tokens)
    return "lower" if lower and not any(t in _HIGHER_OVERRIDES for t in tokens) else "higher"


@overload
def signed(values: np.ndarray, direction: Direction) -> np.ndarray: ...


@overload
def signed(values: float, direction: Direction) -> float: ...


def signed(values: np.ndarray | float, direction: Direction) -> np.ndarray | float:
    """Values flipped so that larger is better (the identity for higher-is-better metrics)."""
    return -values if direction == "lower" else values


unsigned = signed
"""Back to the metric's own units (``signed`` is its own inverse)."""
