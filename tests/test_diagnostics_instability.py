"""Entropy collapse, KL blow-up, length runaway, gradient conflict; pass@k sharpening."""

import numpy as np
import pandas as pd
from diag_helpers import ar1, ref
from realdata import realcurves_path

from saturate.diagnostics import DiagnosticSettings
from saturate.diagnostics.instability import (
    entropy_collapse,
    gradient_conflict,
    instability_diagnostics,
    kl_blowup,
    length_runaway,
)
from saturate.diagnostics.passk import crossover_k, passk_diagnostics

S = DiagnosticSettings()
C = np.linspace(5, 1000, 250)


def test_entropy_collapse_and_a_healthy_decline():
    rng = np.random.default_rng(0)
    noise = np.exp(rng.normal(0, 0.05, C.size))
    collapsing = (0.004 + 0.6 * np.exp(-C / 120)) * noise
    d = entropy_collapse(ref("actor/entropy", C, collapsing), S)
    assert d is not None and d.kind == "entropy_collapse" and d.severity == "error"
    assert 150 < d.compute < 400  # where it fell below 15% of its start (~230)
    healthy = (0.35 + 0.25 * np.exp(-C / 300)) * noise  # loses 40%: normal for RL
    assert entropy_collapse(ref("actor/entropy", C, healthy), S) is None


def test_kl_blowup_and_steady_growth():
    rng = np.random.default_rng(1)
    noise = np.exp(rng.normal(0, 0.1, C.size))
    blow = (0.02 * C / 1000 + 0.0005 * np.exp(9 * C / 1000)) * noise
    d = kl_blowup(ref("actor/kl", C, blow), S)
    assert d is not None and d.kind == "kl_blowup" and d.compute > 300
    for growth in (C / 1000 * 0.2, (C / 1000) ** 2 * 0.2, np.sqrt(C / 1000) * 0.2):
        assert kl_blowup(ref("actor/kl", C, growth * noise), S) is None


def test_length_runaway_only_when_reward_stalls_or_growth_accelerates():
    rng = np.random.default_rng(2)
    length = 300 * (1 + 3 * C / 1000) + rng.normal(0, 10, C.size)  # 4x longer, steadily
    rising = 0.2 + 0.06 * np.log2(C / 5) + ar1(rng, C.size, 0.01)
    flat = 0.5 + ar1(rng, C.size, 0.01)
    assert length_runaway(ref("response_length/mean", C, length),
                          ref("train/reward", C, rising), S) is None
    d = length_runaway(ref("response_length/mean", C, length), ref("train/reward", C, flat), S)
    assert d is not None and d.kind == "length_runaway" and d.details["reward_stalled"]
    explode = 300 * np.exp(3 * C / 1000) + rng.normal(0, 10, C.size)
    d = length_runaway(ref("response_length/mean", C, explode), None, S)
    assert d is not None and d.details["accelerating"]


def test_gradient_conflict_needs_opposite_significant_moves():
    rng = np.random.default_rng(3)
    up = 0.3 + 0.04 * np.log2(C / 5) + ar1(rng, C.size, 0.01)
    down = 0.6 - 0.03 * np.log2(C / 5) + ar1(rng, C.size, 0.01)
    up2 = 0.5 + 0.02 * np.log2(C / 5) + ar1(rng, C.size, 0.01)
    curves = {m: ref(m, C, y) for m, y in
              (("eval/math", up), ("eval/code", down), ("eval/chat", up2))}
    found = gradient_conflict(curves, S)
    assert len(found) == 1 and found[0].kind == "gradient_conflict"
    assert set(found[0].details["degrading"]) == {"eval/code"}
    curves["eval/code"] = ref("eval/code", C, up2 + 0.1)
    assert gradient_conflict(curves, S) == []


def passk_curves(rng, k_values, deltas):
    out = []
    for k, dlt in zip(k_values, deltas, strict=True):
        base = min(0.95, 0.3 + 0.1 * np.log2(k))
        y = base + dlt * np.log2(C / 5) / np.log2(200) + rng.normal(0, 0.005, C.size)
        out.append(ref(f"eval/aime/pass@{k}", C, y))
    return out


def test_sharpening_and_the_k_where_the_run_falls_behind():
    rng = np.random.default_rng(4)
    found = passk_diagnostics(passk_curves(rng, [1, 8, 64], [0.10, -0.05, -0.12]))
    assert len(found) == 1 and found[0].kind == "sharpening" and found[0].severity == "error"
    assert found[0].details["crossover_k"] == 8
    assert 1 < found[0].details["crossover_k_interpolated"] < 8
    # Healthy: pass@k rises with pass@1.
    assert passk_diagnostics(passk_curves(rng, [1, 8, 64], [0.10, 0.08, 0.05])) == []


def test_crossover_k_interpolates_in_log_k():
    from saturate.diagnostics.passk import PassKChange
    from saturate.results import Estimate

    ch = [PassKChange(k, f"p@{k}", 0, 0, Estimate(d)) for k, d in ((1, 0.1), (4, 0.05), (16, -0.05))]
    assert crossover_k(ch) == (16, 8.0)
    assert crossover_k(ch[:2]) == (None, None)


def test_real_verl_ppo_runs():
    """Qwen2.5-0.5B PPO's entropy falls to ~11% of its start (a collapse, and its GSM8K score
    plateaus); gemma keeps 35% of it. KL grows steadily and lengths shrink in all three: no flags."""
    df = pd.read_csv(realcurves_path("verl_llm_ppo", "verl_gsm8k_ppo_metrics_long.csv.gz"))
    refs = [ref(m, g["step"].to_numpy(float) + 1, g["value"].to_numpy(float), run=log)
            for (log, m), g in df.sort_values("step").groupby(["log", "metric"])]
    found = instability_diagnostics(refs, S)
    kinds = {(d.run[:10], d.kind) for d in found}
    assert kinds == {("Qwen2.5-0.", "entropy_collapse")}
    assert sum(d.kind == "entropy_collapse" for d in found) == 2
