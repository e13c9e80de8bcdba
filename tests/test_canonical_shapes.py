"""The battery of canonical shapes (benchmarks/canonical_shapes.py), the clean cases a user checks
first: a steady rise, a late take-off, a steady log-linear gain, a plateau, a decline over the
last third, a collapse at 80%, a flat line, flat noise, a run held at its maximum, on runs logged
in steps and in compute, at two lengths and noise from 0.5% to 5%, and a precise rising run among
flat siblings: each gets the call the module docstring there asks for."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from canonical_shapes import (  # noqa: E402
    battery,
    humility,
    humility_problems,
    judge,
    problems,
    runs,
    short_noisy,
    sibling_problems,
)

import saturate  # noqa: E402

pytestmark = pytest.mark.slow  # every canonical shape fitted


def test_every_canonical_shape_gets_the_call_a_user_expects() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = saturate.analyze(battery(), diagnostics=False)
    result = judge(analysis.curves)
    assert len(result) == len(runs())
    assert not problems(result), "\n".join(problems(result))
    flat = result[result["shape"] == "flat line"]
    assert (flat["verdict"] == "saturated").all() and (flat["p_pays"] < 0.15).all()


def test_a_precise_rising_run_keeps_its_call_among_flat_siblings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not sibling_problems()


def test_short_noisy_curves_get_humble_calls() -> None:
    # thin evidence: a flat reward is not called "pays", a rising one not "does not pay"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = humility(saturate.analyze(short_noisy(), diagnostics=False).curves)
    assert not humility_problems(table), table.to_string()
    assert 0.4 <= table.loc["flat", "mean_p"] <= 0.6
