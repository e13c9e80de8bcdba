"""Issue 28's battery of canonical shapes (benchmarks/canonical_shapes.py): a steady rise, a late
take-off, a plateau, a decline over the last third, a collapse and flat noise, on runs logged in
steps and in compute, at two lengths and noise from 0.5% to 5% of the range, each called right
by ``saturate.analyze`` (flat noise may be inconclusive)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import saturate  # noqa: E402
from canonical_shapes import LENGTHS, LOGGED, NOISES, SHAPES, battery, judge  # noqa: E402


def test_every_canonical_shape_is_called_right() -> None:
    table = battery()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = judge(saturate.analyze(table).to_frame())
    assert len(result) == len(SHAPES) * len(LOGGED) * len(LENGTHS) * len(NOISES)
    wrong = result[~result["right"]]
    assert wrong.empty, wrong.to_string()
