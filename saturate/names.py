"""Metric and column names read as words: the one tokenizer, and the names that measure compute.

Every rule of saturate that reads a name (which way is better, a metric's role, the compute axis,
the naming conventions of the diagnostics) splits it with :func:`metric_tokens`. The compute
quantities are here, below the tidy table, because the table picks its x axis from them
(:func:`saturate.ingest.axis_join.auto_compute`).

A name measures compute when its last path segment, less counting words (``total``, ``num``,
``n``, ``cumulative``, ``consumed``, ``seen``, ``training``...), is one of :data:`QUANTITIES`:
``gpu_hours``/``gpu_h``, ``flops``, ``pf_days``, ``tokens``, ``samples``, ``examples``/
``dataset_size`` (a data-scaling axis), ``env_steps``/
``timesteps``, ``frames``, ``wall_time``/``time_elapsed``/``runtime``; or when it is ``compute``
or under ``compute/`` (``compute/gpu_hours``). Progress counters (``step``, ``epoch``,
``iteration``, ``updates``, ``episodes``) are axes too, but no better an x axis than the step,
so they are never picked automatically.

>>> axis_unit("compute/gpu_hours"), axis_unit("total_flops"), axis_unit("train/loss")
('GPU-hours', 'FLOPs', None)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "metric_tokens",
    "LOSS_WORDS",
    "Quantity",
    "QUANTITIES",
    "GPU_HOURS",
    "STEPS",
    "axis_quantity",
    "axis_unit",
    "axis_label",
    "is_axis_name",
    "is_compute_name",
    "is_replicate_name",
    "AXIS_GLOBS",
]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.cache
def _splitter(keep: str) -> re.Pattern[str]:
    return re.compile(rf"[^A-Za-z0-9{re.escape(keep)}]+")


def metric_tokens(name: str, keep: str = "") -> list[str]:
    """Lower-case word tokens of a metric name, split on camelCase boundaries and on every
    character that is not a letter, a digit or one of ``keep``.

    >>> metric_tokens("rollout/rewardMean")
    ['rollout', 'reward', 'mean']
    >>> metric_tokens("eval/math/pass@8", keep="@")
    ['eval', 'math', 'pass@8']

    ``cross entropy`` is one word (``cross_entropy``, a loss, not the policy's entropy):

    >>> metric_tokens("test_cross_entropy")
    ['test', 'cross_entropy']
    """
    words = [t.lower() for t in _splitter(keep).split(_CAMEL.sub("_", name)) if t]
    for i in range(len(words) - 2, -1, -1):
        if (words[i], words[i + 1]) in _PHRASES:
            words[i:i + 2] = [f"{words[i]}_{words[i + 1]}"]
    return words


_PHRASES = frozenset({("cross", "entropy")})
"""Pairs of words that name one thing (``cross entropy``: a loss)."""

LOSS_WORDS = frozenset({"loss", "losses", "nll", "cross_entropy", "crossentropy", "xent"})
"""Tokens (:func:`metric_tokens`) that name a loss: lower is better, and a loss's role rules."""


@dataclass(frozen=True)
class Quantity:
    """What an axis name measures: its ``unit`` (as reports print it), whether it measures
    ``compute`` (a candidate for the automatic x axis) and its ``rank`` among candidates (lower
    first: a run logging both GPU-hours and tokens is analysed against GPU-hours)."""

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
    """The :class:`Quantity` a metric or column name measures, or ``None`` for other names.

    ``compute`` itself measures compute in an unknown unit; ``compute/<x>`` measures what ``x``
    does (``compute/gpu_hours``: GPU-hours), or compute in the unit ``x`` when ``x`` is not known.
    """
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
    """The unit of an x axis named ``name`` (``GPU-hours``, ``FLOPs``, ``steps``...), ``None``
    when the name does not say (``compute``, or a name that is not a compute quantity)."""
    if name is None:
        return None
    q = axis_quantity(name)
    return None if q is None or q is _COMPUTE else q.unit


def axis_label(name: str | None, unit: str | None = None) -> str:
    """How reports and plots name the x axis: ``GPU-hours (compute/gpu_hours)``, ``steps``, or
    the name alone when its unit is unknown. ``unit`` overrides the unit read from the name."""
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
    """Whether a column ``name`` tells repeated runs of one configuration apart (``seed``,
    ``random_seed``, ``trial``, ``replicate``): a run parameter even when its values are numbers
    that change along the table, never a metric or a per-point column."""
    words = metric_tokens(name)
    return (bool(words) and bool(_REPLICATE_WORDS & set(words))
            and set(words) <= _REPLICATE_WORDS | _ID_WORDS)


def _globs() -> tuple[str, ...]:
    keys = [k for k, q in QUANTITIES.items() if q.compute]
    spelled = [p + k for k in keys for p in ("", "total_", "num_")]
    return ("compute", "compute/*", *spelled, *(f"*/{s}" for s in spelled))


AXIS_GLOBS: tuple[str, ...] = _globs()
"""Glob patterns of the usual spellings of compute metrics, fetched with any metric selection so
that the x axis is found (``compute/*``, ``gpu_hours``, ``*/total_flops``, ...)."""
