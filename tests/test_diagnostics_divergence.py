"""Reward vs benchmark divergence on synthetic runs built to have it, and not to."""

import numpy as np
import pytest
from diag_helpers import ar1, ref

from saturate.diagnostics import DiagnosticSettings
from saturate.diagnostics.divergence import check_pair, divergence_diagnostics, find_pairs

C = np.geomspace(10, 10_000, 200)
CE = C[::5]


def reward(rng):
    return 0.1 + 0.05 * np.log2(C / 10) + ar1(rng, C.size, 0.01)


def bench(rng, shape):
    x = np.log2(CE / 10)
    if shape == "follows":
        mean = 0.2 + 0.03 * x
    elif shape == "flattens":  # rises until compute ~320, then flat
        mean = 0.2 + 0.03 * np.minimum(x, 5.0)
    else:  # rises then falls (over-optimisation)
        mean = 0.2 + 0.03 * np.minimum(x, 5.0) - 0.04 * np.maximum(x - 5.0, 0.0)
    return mean + rng.normal(0, 0.008, CE.size)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_flattening_benchmark_is_a_warning_from_its_plateau(seed):
    rng = np.random.default_rng(seed)
    d = check_pair(ref("train/reward", C, reward(rng)), ref("eval/math", CE, bench(rng, "flattens")))
    assert d is not None and d.kind == "divergence"
    assert d.metrics == ("train/reward", "eval/math")
    # The plateau starts at 320: the finding starts near it, well before the end.
    assert 150 <= d.compute <= 3000
    assert "eval/math stopped following train/reward" in d.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_falling_benchmark_is_an_error(seed):
    rng = np.random.default_rng(seed)
    d = check_pair(ref("train/reward", C, reward(rng)), ref("eval/math", CE, bench(rng, "falls")))
    assert d is not None and d.severity == "error" and d.details["benchmark_falls"]
    assert 150 <= d.compute <= 2000


@pytest.mark.parametrize("seed", range(6))
def test_no_false_alarm_when_the_benchmark_follows(seed):
    rng = np.random.default_rng(seed)
    assert check_pair(ref("train/reward", C, reward(rng)),
                      ref("eval/math", CE, bench(rng, "follows"))) is None


def test_no_divergence_when_the_reward_saturates_too():
    rng = np.random.default_rng(3)
    r = 0.1 + 0.05 * np.minimum(np.log2(C / 10), 5.0) + ar1(rng, C.size, 0.01)
    assert check_pair(ref("train/reward", C, r), ref("eval/math", CE, bench(rng, "flattens"))) is None


def test_pairs_from_conventions_and_config():
    metrics = ["train/reward", "critic/score/mean", "eval/math", "bench/gsm8k", "actor/kl",
               "eval/kl"]
    assert find_pairs(metrics) == [("train/reward", "eval/math"), ("train/reward", "bench/gsm8k")]
    assert find_pairs(metrics, [("critic/*", "bench/*")]) == [("critic/score/mean", "bench/gsm8k")]
    assert find_pairs(["eval/math"]) == []


def test_config_pairs_drive_the_diagnostics():
    rng = np.random.default_rng(4)
    refs = [ref("rm_score", C, reward(rng)), ref("heldout_win", CE, bench(rng, "falls"))]
    # Neither name follows the conventions: nothing without pairs, a finding with them.
    assert divergence_diagnostics(refs) == []
    found = divergence_diagnostics(refs, DiagnosticSettings.checked(pairs={"rm_score": "heldout_*"}))
    assert [d.metrics for d in found] == [("rm_score", "heldout_win")]
