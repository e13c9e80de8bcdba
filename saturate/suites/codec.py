"""Reading a suite's JSON form (``to_dict()`` output) back: the small conversions its result
objects share. Curve analyses are read with :meth:`saturate.results.CurveAnalysis.from_dict`.
JSON ``null`` becomes NaN where the field is a number.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from saturate.results import Estimate

__all__ = ["estimate_from_dict", "num"]


def num(x: Any) -> float:
    """A float from JSON: ``None`` is NaN."""
    return math.nan if x is None else float(x)


def estimate_from_dict(d: Mapping[str, Any] | None) -> Estimate | None:
    """An :class:`Estimate` from ``{"value", "lo", "hi"[, "identified"]}``; None stays None.

    Without ``identified`` (the gain's JSON leaves it out) it is identified when it has an interval.
    """
    if d is None:
        return None
    est = Estimate.from_dict(d)
    if "identified" not in d:
        est = dataclasses.replace(est, identified=math.isfinite(est.lo))
    return est
