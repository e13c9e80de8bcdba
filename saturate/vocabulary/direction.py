"""Which way is better for a metric: decided from its name, overridable by glob patterns.

The direction is never inferred from the trend of the curve: a collapsing reward falls without being
a loss, and calling it "lower is better" would turn a collapse into progress.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from saturate.errors import SettingsError
from saturate.results import Direction
from saturate.vocabulary.names import LOSS_WORDS, matches_any, metric_tokens

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


def signed(values: np.ndarray | float, direction: Direction) -> np.ndarray | float:
    """Values flipped so that larger is better (the identity for higher-is-better metrics)."""
    return -values if direction == "lower" else values


unsigned = signed
"""Back to the metric's own units (``signed`` is its own inverse)."""
