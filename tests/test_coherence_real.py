"""Issue 13's invariants (``tests/coherence.py``) on the vendored real curves, read as a user would.

The verl PPO runs on GSM8K carry accuracies (scores in [0, 1], given as ``--domain`` would) next to KL,
entropy, losses, lengths and timing (diagnostics: no verdict); the Dopamine Pong and Breakout
seeds are returns that plateau and decline. ``benchmarks/check_coherence.py`` runs the same checks
on the whole shared collection.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from coherence import CHECKS, broken
from realdata import realcurves_path

import saturate
from saturate.results import CurveAnalysis


def _verl() -> dict[str, CurveAnalysis]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(realcurves_path("verl_llm_ppo", "verl_gsm8k_ppo_metrics_long.csv.gz"),
                             n_boot=60, workers=1, forecast_at=["1x", "2x", "4x"],
                             domains={"*score*": (0.0, 1.0)})
    assert {m.metric for m in a.diagnostic_metrics} >= {"critic/kl", "actor/entropy_loss",
                                                        "response_length/mean"}
    assert not {c.metric for c in a.curves} & {m.metric for m in a.diagnostic_metrics}
    assert sum(c.domain == (0.0, 1.0) for c in a.curves) >= 3
    return {f"verl | {c.run} | {c.metric}": c for c in a.curves}


def _dopamine() -> dict[str, CurveAnalysis]:
    df = pd.read_csv(realcurves_path("dopamine", "dopamine_baselines_long.csv.gz"))
    df = pd.DataFrame({"run": df["game"] + "-" + df["agent"] + "-s" + df["seed"].astype(str),
                       "metric": "return", "step": df["iteration"] + 1, "value": df["value"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(df, n_boot=60, workers=1, forecast_at=["1x", "2x", "4x"])
    return {f"dopamine | {c.run}": c for c in a.curves}


@pytest.fixture(scope="module")
def curves() -> dict[str, CurveAnalysis]:
    out = _verl() | _dopamine()
    assert len(out) >= 15
    return out


@pytest.mark.parametrize("invariant", list(CHECKS))
def test_every_real_curve_tells_one_coherent_story(curves, invariant) -> None:
    assert not broken(curves, CHECKS[invariant])
