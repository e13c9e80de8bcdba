"""Regenerate every data file of ``sample_runs/``: synthetic but realistic RL post-training runs.

Run ``python sample_runs/generate.py`` (from anywhere) to rewrite the files next to this script;
``--out DIR`` writes them elsewhere, ``--truth`` prints the true quantities of every curve (the
numbers quoted in README.md). One fixed seed drives everything, so the output is byte-identical
from run to run and can be reviewed in a diff.

How the curves are made (all on a cumulative GPU-hours axis, the ``compute`` column):

* The mean of each metric is a function of compute: the ScaleRL sigmoid in log-compute
  ``R0 + (A - R0) / (1 + (Cmid / C)**B)``, a power law, a fast rise followed by a log-linear climb,
  a rise-then-fall (reward over-optimisation), a collapse, or per-problem success probabilities for
  pass@k.
* Training reward is logged every few steps; its noise is AR(1) (the policy drifts from batch to
  batch, so neighbouring steps are correlated) on top of the batch's sampling noise.
* Evaluations come every N steps and are binomial in the number of graded answers, plus a small
  AR(1) checkpoint-to-checkpoint wobble, so accuracies move in steps of 1/n like real ones.
* GPU-hours per step grow as responses get longer during training, with a few percent jitter.

Only numpy draws the numbers. The MLflow scenario is written with the real MLflow client into a
legacy file store (``mlruns/``); its ids and times are pinned so the folder is reproducible too.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SEED = 20251129
HERE = Path(__file__).resolve().parent
LOG2 = math.log(2.0)

Mean = Callable[[np.ndarray], np.ndarray]


# ---------------------------------------------------------------------------------------------
# Mean shapes (functions of compute C in GPU-hours)
# ---------------------------------------------------------------------------------------------


def sigmoid(r0: float, a: float, c_mid: float, b: float) -> Mean:
    """ScaleRL's sigmoid in log-compute: starts at r0, half-way at c_mid, asymptote a."""
    return lambda c: r0 + (a - r0) / (1.0 + (c_mid / np.asarray(c, float)) ** b)


def rise_then_loglinear(r0: float, jump: float, c_jump: float, per_doubling: float,
                        c_knee: float, cap: float = 1.0) -> Mean:
    """A fast early rise (format learning) then a steady climb of ``per_doubling`` per doubling."""
    early = sigmoid(0.0, jump, c_jump, 2.5)

    def f(c: np.ndarray) -> np.ndarray:
        c = np.asarray(c, float)
        y = r0 + early(c) + per_doubling * np.log2(1.0 + c / c_knee)
        return np.minimum(y, cap)

    return f


def power(r0: float, k: float, c_scale: float, exponent: float) -> Mean:
    """``r0 + k (C / c_scale)**exponent``: a reward-model score that keeps climbing, ever slower."""
    return lambda c: r0 + k * (np.asarray(c, float) / c_scale) ** exponent


def overoptimised(r0: float, height: float, c_end: float) -> Mean:
    """Gao et al. (2022) gold score ``r0 + a d - b d^2`` with ``d = sqrt(C)``; peak at c_end / 4.

    Scaled so the peak is ``height`` above r0 and the curve is back at r0 by ``c_end``.
    """

    def f(c: np.ndarray) -> np.ndarray:
        d = np.sqrt(np.asarray(c, float) / c_end)
        return r0 + 4.0 * height * (d - d * d)

    return f


def collapse(before: Mean, c_drop: float, width: float, level_after: float) -> Mean:
    """``before`` until c_drop, then a fall to ``level_after`` over about ``width`` GPU-hours."""

    def f(c: np.ndarray) -> np.ndarray:
        c = np.asarray(c, float)
        w = 1.0 / (1.0 + np.exp(-(c - c_drop) / (width / 4.0)))
        return (1.0 - w) * before(c) + w * level_after

    return f


def exp_decay(floor: float, start: float, c_scale: float) -> Mean:
    """An entropy that decays towards ``floor``."""
    return lambda c: floor + (start - floor) * np.exp(-np.asarray(c, float) / c_scale)


def kl_blowup(linear: float, amp: float, rate: float, c_end: float) -> Mean:
    """A KL that creeps up, then grows exponentially in the last part of the run."""
    return lambda c: linear * np.asarray(c, float) / c_end + amp * np.exp(
        rate * np.asarray(c, float) / c_end
    )


# ---------------------------------------------------------------------------------------------
# Noise models
# ---------------------------------------------------------------------------------------------


def ar1(rng: np.random.Generator, n: int, sd: float, phi: float) -> np.ndarray:
    """Stationary AR(1) noise with marginal standard deviation ``sd``."""
    e = rng.normal(0.0, sd * math.sqrt(1.0 - phi * phi), n)
    x = np.empty(n)
    x[0] = rng.normal(0.0, sd)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


@dataclass(frozen=True)
class Reward:
    """A per-step training signal with AR(1) noise, logged every ``every`` steps."""

    sd: float = 0.02
    phi: float = 0.5
    lo: float = 0.0
    hi: float = 1.0
    log_scale: bool = False  # multiplicative noise (entropy, KL)


@dataclass(frozen=True)
class Binomial:
    """An accuracy over ``n`` graded answers, plus a checkpoint-to-checkpoint AR(1) wobble."""

    n: int
    wobble: float = 0.006
    phi: float = 0.6


@dataclass(frozen=True)
class MetricSpec:
    name: str
    mean: Mean
    noise: Reward | Binomial
    every: int
    first: int | None = None  # first logged step (default: ``every``)
    better: str | None = "higher"  # None: a health metric (entropy, KL), not an objective


@dataclass(frozen=True)
class RunSpec:
    run: str
    n_steps: int
    gpu_h_per_step: float
    metrics: tuple[MetricSpec, ...]
    params: dict[str, str | int] = field(default_factory=dict)
    length_growth: float = 0.4  # per-step cost grows by this fraction over the run
    passk: PassK | None = None


@dataclass(frozen=True)
class PassK:
    """pass@k from per-problem success probabilities that RL sharpens (Yue et al. 2025).

    Problem i has base logit z_i; after RL progress u in [0, 1] its logit is
    ``z_i * (1 + gain * u) + shift * u``: problems the model often solves get surer, the ones it
    rarely solves get rarer, so pass@1 rises while pass@k at large k does not.
    """

    n_problems: int
    n_samples: int
    ks: tuple[int, ...]
    progress: Mean
    gain: float
    shift: float
    logit_mean: float
    logit_sd: float
    every: int
    prefix: str
    wobble: float = 0.25  # per-problem logit noise from checkpoint to checkpoint


def gpu_hours(rng: np.random.Generator, spec: RunSpec) -> np.ndarray:
    """Cumulative GPU-hours at the end of each step 1..n_steps."""
    t = np.arange(1, spec.n_steps + 1) / spec.n_steps
    per_step = spec.gpu_h_per_step * (1.0 + spec.length_growth * t)
    per_step *= 1.0 + 0.03 * rng.standard_normal(spec.n_steps)
    return np.cumsum(per_step)


def logged_steps(every: int, n_steps: int, first: int | None = None) -> np.ndarray:
    return np.arange(first or every, n_steps + 1, every)


def sample_metric(rng: np.random.Generator, m: MetricSpec, compute: np.ndarray,
                  n_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values) of one metric of one run."""
    steps = logged_steps(m.every, n_steps, m.first)
    mu = m.mean(compute[steps - 1])
    if isinstance(m.noise, Reward):
        z = ar1(rng, n_steps, m.noise.sd, m.noise.phi)[steps - 1]
        y = mu * np.exp(z) if m.noise.log_scale else mu + z
        return steps, np.clip(y, m.noise.lo, m.noise.hi)
    p = np.clip(mu + ar1(rng, len(steps), m.noise.wobble, m.noise.phi), 0.0, 1.0)
    return steps, rng.binomial(m.noise.n, p) / m.noise.n


def pass_at_k(successes: np.ndarray, n: int, k: int) -> np.ndarray:
    """Unbiased pass@k per problem (Chen et al. 2021) from ``successes`` out of ``n`` samples."""
    fails = n - successes
    out = np.ones(len(successes))
    ok = fails >= k
    # 1 - C(fails, k) / C(n, k), as a product to stay exact.
    for i in np.flatnonzero(ok):
        out[i] = 1.0 - np.prod((fails[i] - np.arange(k)) / (n - np.arange(k)))
    return out


def passk_truth(pk: PassK, z: np.ndarray, compute: np.ndarray, k: int) -> np.ndarray:
    """Expected pass@k (over sampling) at each compute, for the problem logits z."""
    u = pk.progress(compute)
    logits = z[None, :] * (1.0 + pk.gain * u[:, None]) + pk.shift * u[:, None]
    p = 1.0 / (1.0 + np.exp(-logits))
    return (1.0 - (1.0 - p) ** k).mean(axis=1)


def passk_problems(rng: np.random.Generator, pk: PassK) -> np.ndarray:
    return rng.normal(pk.logit_mean, pk.logit_sd, pk.n_problems)


def sample_passk(rng: np.random.Generator, pk: PassK, z: np.ndarray, compute: np.ndarray,
                 n_steps: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    steps = logged_steps(pk.every, n_steps)
    u = pk.progress(compute[steps - 1])
    out: dict[str, list[float]] = {f"{pk.prefix}/pass@{k}": [] for k in pk.ks}
    for ui in u:
        zi = z + rng.normal(0.0, pk.wobble, len(z))
        p = 1.0 / (1.0 + np.exp(-(zi * (1.0 + pk.gain * ui) + pk.shift * ui)))
        succ = rng.binomial(pk.n_samples, p)
        for k in pk.ks:
            out[f"{pk.prefix}/pass@{k}"].append(float(pass_at_k(succ, pk.n_samples, k).mean()))
    return {name: (steps, np.array(v)) for name, v in out.items()}


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    file: str  # path under sample_runs/ (".csv", ".jsonl" or an MLflow "mlruns" folder)
    experiment: str
    runs: tuple[RunSpec, ...]


def _per_step(n_steps: int, gpu_h: float, growth: float = 0.4) -> float:
    """Approximate GPU-hours at the end of a run (to place curve features in compute)."""
    return n_steps * gpu_h * (1.0 + growth / 2.0)


def _jitter(rng: np.random.Generator, x: float, rel: float) -> float:
    """A seed-to-seed variation of a curve parameter."""
    return float(x * (1.0 + rel * rng.standard_normal()))


def scenarios(rng: np.random.Generator) -> list[Scenario]:
    """Every scenario, with seed-to-seed variation drawn from ``rng``."""
    out: list[Scenario] = []
    math500 = Binomial(n=2000)  # MATH-500, 4 samples per problem (avg@4)

    # 1. Still scaling: the early part of a ScaleRL sigmoid, the run ends before its midpoint.
    n, g = 800, 1.6
    c_end = _per_step(n, g)
    runs = []
    for seed in (0, 1):
        runs.append(RunSpec(
            run=f"qwen3-8b-grpo-longcot-seed{seed}", n_steps=n, gpu_h_per_step=g,
            params={"seed": seed, "recipe": "grpo", "base_model": "qwen3-8b"},
            metrics=(
                MetricSpec("train/reward", sigmoid(0.18, 0.80, _jitter(rng, 1.35 * c_end, 0.05),
                                                   2.4), Reward(0.025, 0.5), every=4),
                MetricSpec("eval/math500/accuracy",
                           sigmoid(0.40, 0.82, _jitter(rng, 1.5 * c_end, 0.05), 2.4), math500,
                           every=25),
            ),
        ))
    out.append(Scenario("01_still_scaling.csv", "qwen3-8b-grpo-longcot", tuple(runs)))

    # 2. A 20x scale-up: reward keeps climbing (log-linear after the early jump), the benchmark
    #    follows a sigmoid whose midpoint sits at the baseline's budget and flattens after it.
    n_base, g = 500, 1.0
    c_base = _per_step(n_base, g)
    runs = []
    for seed in (0, 1, 2):
        c_mid = _jitter(rng, 1.2 * c_base, 0.04)
        reward = rise_then_loglinear(0.08, 0.25, _jitter(rng, 0.04 * c_base, 0.05), 0.05,
                                     0.08 * c_base)
        bench = sigmoid(0.30, _jitter(rng, 0.53, 0.01), c_mid, 2.5)
        for budget, n_steps, tr_every, ev_every in (("1x", n_base, 2, 10),
                                                    ("20x", 20 * n_base, 25, 100)):
            label = "baseline" if budget == "1x" else "scaleup-20x"
            runs.append(RunSpec(
                run=f"qwen2.5-7b-grpo-{label}-seed{seed}", n_steps=n_steps, gpu_h_per_step=g,
                length_growth=0.4 if budget == "1x" else 0.4 * 20 ** 0.1,
                params={"seed": seed, "recipe": "grpo", "base_model": "qwen2.5-7b",
                        "budget": budget},
                metrics=(
                    MetricSpec("train/reward", reward, Reward(0.02, 0.5), every=tr_every),
                    MetricSpec("eval/math500/accuracy", bench, math500, every=ev_every),
                ),
            ))
    out.append(Scenario("02_scaleup_20x.csv", "qwen2.5-7b-grpo-scaleup", tuple(runs)))

    # 3. Saturated: a fast sigmoid whose plateau covers the last doublings (like verl's GSM8K PPO).
    n, g = 600, 0.9
    c_end = _per_step(n, g)
    runs = []
    for seed in (0, 1):
        runs.append(RunSpec(
            run=f"llama3.1-8b-ppo-gsm8k-seed{seed}", n_steps=n, gpu_h_per_step=g,
            params={"seed": seed, "recipe": "ppo", "base_model": "llama3.1-8b"},
            metrics=(
                MetricSpec("train/reward", sigmoid(0.35, _jitter(rng, 0.86, 0.01),
                                                   _jitter(rng, 0.07 * c_end, 0.05), 2.0),
                           Reward(0.025, 0.5), every=3),
                MetricSpec("eval/gsm8k/accuracy", sigmoid(0.55, _jitter(rng, 0.79, 0.01),
                                                          _jitter(rng, 0.09 * c_end, 0.05), 2.0),
                           Binomial(n=1319), every=15),
            ),
        ))
    out.append(Scenario("03_saturated.csv", "llama3.1-8b-ppo-gsm8k", tuple(runs)))

    # 4. Collapse: a good stretch, then a sudden fall (logged to MLflow, as verl/OpenRLHF do).
    n, g = 700, 0.45
    c_end = _per_step(n, g)
    c_drop = 0.70 * c_end
    runs = (RunSpec(
        run="qwen2.5-3b-grpo-lr3e-6-collapse", n_steps=n, gpu_h_per_step=g,
        params={"seed": 0, "recipe": "grpo", "base_model": "qwen2.5-3b", "lr": "3e-6"},
        metrics=(
            MetricSpec("train/reward", collapse(sigmoid(0.10, 0.66, 0.12 * c_end, 2.0), c_drop,
                                                0.02 * c_end, 0.12), Reward(0.025, 0.5),
                       every=5),
            MetricSpec("eval/math500/accuracy", collapse(sigmoid(0.30, 0.62, 0.14 * c_end, 2.0),
                                                         c_drop, 0.02 * c_end, 0.17),
                       math500, every=20),
        ),
    ),)
    out.append(Scenario("04_collapse_mlflow/mlruns", "04-collapse", runs))

    # 5. Reward over-optimisation: the reward-model score climbs as a power law, the held-out
    #    win rate rises, peaks at a quarter of the budget and falls back (Gao et al. 2022).
    n, g = 600, 1.2
    c_end = _per_step(n, g)
    runs = []
    for seed in (0, 1):
        runs.append(RunSpec(
            run=f"llama3.1-8b-rlhf-ppo-rm7b-seed{seed}", n_steps=n, gpu_h_per_step=g,
            params={"seed": seed, "recipe": "ppo-rm", "base_model": "llama3.1-8b-sft"},
            metrics=(
                MetricSpec("train/reward", power(-0.6, _jitter(rng, 3.2, 0.03), c_end, 0.35),
                           Reward(0.08, 0.5, lo=-10.0, hi=10.0), every=3),
                MetricSpec("eval/alpaca_eval/win_rate",
                           overoptimised(0.20, _jitter(rng, 0.12, 0.04), c_end),
                           Binomial(n=805, wobble=0.005), every=20),
            ),
        ))
    out.append(Scenario("05_reward_overoptimisation.csv", "llama3.1-8b-rlhf-ppo", tuple(runs)))

    # 6. pass@1 rises, pass@k at large k does not (sampled from per-problem probabilities).
    n, g = 1000, 1.6
    c_end = _per_step(n, g)
    pk = PassK(n_problems=120, n_samples=64, ks=(1, 8, 64),
               progress=sigmoid(0.0, 1.0, 1.2 * c_end, 3.5), gain=3.0, shift=5.0,
               logit_mean=-1.6, logit_sd=2.2, every=25, prefix="eval/aime_amc")
    runs = (RunSpec(
        run="qwen2.5-math-7b-grpo-passk", n_steps=n, gpu_h_per_step=g,
        params={"seed": 0, "recipe": "grpo", "base_model": "qwen2.5-math-7b"},
        metrics=(MetricSpec("train/reward", sigmoid(0.22, 0.85, 1.2 * c_end, 2.5),
                            Reward(0.025, 0.5), every=5),),
        passk=pk,
    ),)
    out.append(Scenario("06_pass_at_k.csv", "qwen2.5-math-7b-grpo", runs))

    # 7. Inconclusive: a short smoke test with a small batch: few, noisy points.
    n, g = 80, 0.25
    c_end = _per_step(n, g)
    runs = (RunSpec(
        run="qwen2.5-1.5b-grpo-smoketest", n_steps=n, gpu_h_per_step=g,
        params={"seed": 0, "recipe": "grpo", "base_model": "qwen2.5-1.5b"},
        metrics=(
            MetricSpec("train/reward", sigmoid(0.25, 0.6, 3.0 * c_end, 1.0), Reward(0.07, 0.6),
                       every=5),
            MetricSpec("eval/gsm8k/accuracy", sigmoid(0.45, 0.7, 3.0 * c_end, 1.0),
                       Binomial(n=200, wobble=0.01), every=20),
        ),
    ),)
    out.append(Scenario("07_inconclusive_smoketest.csv", "qwen2.5-1.5b-grpo-smoketest", runs))

    # 8. Recipe comparison (ScaleRL style): DAPO rises fast to a lower ceiling, CISPO slower to
    #    a higher one; three seeds each.
    n, g = 800, 1.1
    c_end = _per_step(n, g)
    shapes = {"dapo": (0.58, 0.10 * c_end, 2.2), "cispo": (0.66, 0.30 * c_end, 1.3)}
    runs = []
    for recipe, (a, c_mid, b) in shapes.items():
        for seed in (0, 1, 2):
            a_s, c_s = _jitter(rng, a, 0.01), _jitter(rng, c_mid, 0.06)
            runs.append(RunSpec(
                run=f"qwen3-4b-{recipe}-seed{seed}", n_steps=n, gpu_h_per_step=g,
                params={"seed": seed, "recipe": recipe, "base_model": "qwen3-4b"},
                metrics=(
                    MetricSpec("train/reward", sigmoid(0.25, a_s + 0.08, c_s, b),
                               Reward(0.02, 0.5), every=4),
                    MetricSpec("eval/heldout/pass_rate", sigmoid(0.22, a_s, c_s, b),
                               Binomial(n=1000 * 4, wobble=0.004), every=20),
                ),
            ))
    out.append(Scenario("08_recipe_comparison.csv", "qwen3-4b-recipe-ablation", tuple(runs)))

    # 9. Entropy collapse: entropy decays to ~0, KL blows up, reward and benchmark stall early.
    n, g = 500, 1.5
    c_end = _per_step(n, g)
    runs = (RunSpec(
        run="qwen2.5-7b-grpo-symclip-entropy-collapse", n_steps=n, gpu_h_per_step=g,
        length_growth=0.1,
        params={"seed": 0, "recipe": "grpo-symmetric-clip", "base_model": "qwen2.5-7b"},
        metrics=(
            MetricSpec("train/reward", sigmoid(0.20, 0.55, 0.05 * c_end, 2.5), Reward(0.02, 0.5),
                       every=2),
            MetricSpec("eval/math500/accuracy", sigmoid(0.38, 0.56, 0.06 * c_end, 2.5),
                       math500, every=20),
            MetricSpec("actor/entropy", exp_decay(0.004, 0.65, 0.12 * c_end),
                       Reward(0.08, 0.7, lo=0.0, hi=10.0, log_scale=True), every=2, better=None),
            MetricSpec("actor/kl", kl_blowup(0.02, 0.0005, 9.0, c_end),
                       Reward(0.10, 0.7, lo=0.0, hi=100.0, log_scale=True), every=2, better=None),
        ),
    ),)
    out.append(Scenario("09_entropy_collapse.jsonl", "qwen2.5-7b-grpo-instability", runs))

    # 10. Eval slices: easy slices saturate early, hard ones keep scaling (the long tail).
    n, g = 1000, 1.8
    c_end = _per_step(n, g)
    slices = {
        "easy": (sigmoid(0.70, 0.93, 0.05 * c_end, 2.0), 400),
        "medium": (sigmoid(0.45, 0.78, 0.12 * c_end, 2.0), 400),
        "hard": (sigmoid(0.12, 0.60, 1.2 * c_end, 2.5), 300),
        "olympiad": (sigmoid(0.03, 0.40, 1.6 * c_end, 2.2), 150),
    }
    metrics = [MetricSpec("train/reward", rise_then_loglinear(0.15, 0.22, 0.03 * c_end, 0.045,
                                                              0.05 * c_end),
                          Reward(0.02, 0.5), every=5)]
    for name, (mean, n_items) in slices.items():
        metrics.append(MetricSpec(f"eval/{name}/score", mean, Binomial(n=4 * n_items), every=25))
    runs = (RunSpec(
        run="qwen3-8b-grpo-mixed-difficulty", n_steps=n, gpu_h_per_step=g,
        params={"seed": 0, "recipe": "grpo", "base_model": "qwen3-8b"},
        metrics=tuple(metrics),
    ),)
    out.append(Scenario("10_eval_slices.csv", "qwen3-8b-grpo-slices", runs))
    return out


# 11. A suite: one base model trained by two agent recipes on each of 8 agentic tasks, 3 seeds
#     each. Turn-level PPO rises fast and saturates on 6 tasks; trajectory-level GRPO is still
#     climbing on 6. Success rates differ in scale from task to task (hence the normalisation).
#     Drawn from a stream of its own, so the scenarios above stay byte-identical.
SUITE_SEED_STREAM = 2
SUITE_TASKS: dict[str, tuple[float, float]] = {  # task: (start, best level either recipe reaches)
    "alfworld": (0.10, 0.78), "webshop": (0.15, 0.55), "sokoban": (0.05, 0.42),
    "countdown": (0.20, 0.80), "sudoku": (0.04, 0.36), "frozenlake": (0.30, 0.88),
    "textcraft": (0.08, 0.60), "minesweeper": (0.12, 0.50),
}
#: recipe: {task: shape}; the shapes other than these two recipes' defaults are listed per task.
SUITE_SHAPES: dict[str, dict[str, str]] = {
    "ppo-turn": {"textcraft": "scaling", "minesweeper": "scaling", "sokoban": "saturated-early"},
    "grpo-traj": {"sudoku": "saturated", "webshop": "regressing"},
}
SUITE_DEFAULT = {"ppo-turn": "saturated", "grpo-traj": "scaling"}


def suite_shape(recipe: str, task: str) -> str:
    """The documented shape of one recipe on one task (its per-run verdict)."""
    shape = SUITE_SHAPES[recipe].get(task, SUITE_DEFAULT[recipe])
    return "saturated" if shape == "saturated-early" else shape


def suite_scenario(rng: np.random.Generator) -> Scenario:
    """Scenario 11 (suite): 8 tasks x 3 seeds x 2 recipes, eval success rate every 20 steps."""
    n, g = 600, 0.8
    c_end = _per_step(n, g)
    runs = []
    for recipe in SUITE_SHAPES:
        for task, (r0, best) in SUITE_TASKS.items():
            shape = SUITE_SHAPES[recipe].get(task, SUITE_DEFAULT[recipe])
            for seed in (0, 1, 2):
                if shape == "scaling":
                    mean = sigmoid(r0, best, _jitter(rng, 1.4 * c_end, 0.05), 2.4)
                elif shape == "regressing":
                    mean = overoptimised(r0, _jitter(rng, 0.6 * (best - r0), 0.04), c_end)
                else:
                    c_mid = 0.03 if shape == "saturated-early" else 0.08
                    top = r0 + 0.8 * (best - r0)
                    mean = sigmoid(r0, _jitter(rng, top, 0.01),
                                   _jitter(rng, c_mid * c_end, 0.05), 2.0)
                runs.append(RunSpec(
                    run=f"qwen2.5-7b-{recipe}-{task}-seed{seed}", n_steps=n, gpu_h_per_step=g,
                    params={"seed": seed, "recipe": recipe, "base_model": "qwen2.5-7b-instruct",
                            "task": task},
                    metrics=(MetricSpec("eval/success_rate", mean,
                                       Binomial(n=2000, wobble=0.004), every=20, first=5),),
                ))
    return Scenario("11_agent_suite.csv", "qwen2.5-7b-agent-suite", tuple(runs))


# ---------------------------------------------------------------------------------------------
# Sampling and writing
# ---------------------------------------------------------------------------------------------

Row = dict[str, object]


def sample_run(rng: np.random.Generator, spec: RunSpec) -> tuple[np.ndarray, list[Row]]:
    """Cumulative GPU-hours per step and the long rows (run, metric, step, compute, value)."""
    compute = gpu_hours(rng, spec)
    series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for m in spec.metrics:
        series[m.name] = sample_metric(rng, m, compute, spec.n_steps)
    if spec.passk is not None:
        z = passk_problems(rng, spec.passk)
        series.update(sample_passk(rng, spec.passk, z, compute, spec.n_steps))
    rows: list[Row] = []
    for name, (steps, values) in series.items():
        for s, v in zip(steps, values, strict=True):
            rows.append({"run": spec.run, "metric": name, "step": int(s),
                         "compute": round(float(compute[s - 1]), 3), "value": round(float(v), 5)})
    return compute, rows


def write_csv(path: Path, rows: list[Row]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def write_jsonl(path: Path, rows: list[Row]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, separators=(",", ":")) + "\n")


def write_mlruns(root: Path, experiment: str, runs: list[tuple[RunSpec, np.ndarray, list[Row]]],
                 seed: int = SEED) -> None:
    """Log the runs with the real MLflow client into a legacy file store at ``root``.

    MLflow draws run ids from uuid4 and experiment ids from the clock; both are pinned here (and
    the creation times and artifact paths rewritten) so the folder is reproducible and holds no
    path of the machine that wrote it.
    """
    from unittest import mock

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    from mlflow.entities import Metric, Param
    from mlflow.store.tracking import file_store
    from mlflow.tracking import MlflowClient

    if root.exists():
        shutil.rmtree(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    t0 = 1_760_000_000_000  # a fixed wall-clock origin (ms) for every timestamp
    id_rng = np.random.default_rng([seed, 1])  # its own stream: the data draws stay unchanged
    ids = iter([id_rng.bytes(16).hex() for _ in runs])
    fake_uuid = mock.Mock()
    fake_uuid.uuid4.side_effect = lambda: mock.Mock(hex=next(ids))
    with mock.patch.object(file_store, "uuid", fake_uuid), \
            mock.patch.object(file_store, "_generate_unique_integer_id", lambda: 4):
        client = MlflowClient(tracking_uri=root.resolve().as_uri())
        exp_id = client.create_experiment(experiment, artifact_location="artifacts")
        for spec, compute, rows in runs:
            run = client.create_run(exp_id, start_time=t0, run_name=spec.run)
            rid = run.info.run_id
            params = [Param(k, str(v)) for k, v in spec.params.items()]
            client.log_batch(rid, params=params)
            steps = sorted({int(r["step"]) for r in rows})
            metrics = [Metric("compute/gpu_hours", round(float(compute[s - 1]), 3),
                              t0 + int(compute[s - 1] * 1000), s) for s in steps]
            metrics += [Metric(str(r["metric"]), float(r["value"]),
                               t0 + int(float(r["compute"]) * 1000), int(r["step"]))
                        for r in rows]
            for i in range(0, len(metrics), 1000):
                client.log_batch(rid, metrics=metrics[i:i + 1000])
            client.set_terminated(rid, end_time=t0 + int(compute[-1] * 1000))
    for meta in root.rglob("meta.yaml"):
        text = meta.read_text(encoding="utf-8")
        text = re.sub(r"(creation_time|last_update_time): \d+", rf"\1: {t0}", text)
        text = re.sub(r"(artifact_location|artifact_uri): .*", r"\1: artifacts", text)
        text = re.sub(r"user_id: .*", "user_id: saturate-sample", text)
        meta.write_text(text, encoding="utf-8")
    # Git keeps no empty folder, but MLflow needs them (a run without artifacts/ is "not found",
    # a store without .trash/ gets one written on open): keep each with an empty .gitkeep.
    (root / ".trash").mkdir(exist_ok=True)
    for d in [p for p in root.rglob("*") if p.is_dir()]:
        if not any(d.iterdir()):
            (d / ".gitkeep").write_text("", encoding="utf-8")


def generate(out: Path, seed: int = SEED) -> list[Path]:
    """Write every scenario under ``out``; returns the paths written."""
    rng = np.random.default_rng(seed)
    written = []
    out.mkdir(parents=True, exist_ok=True)
    for sc in scenarios(rng):
        written.append(write_scenario(out, sc, [(spec, *sample_run(rng, spec)) for spec in sc.runs],
                                      seed))
    suite_rng = np.random.default_rng([seed, SUITE_SEED_STREAM])
    sc = suite_scenario(suite_rng)
    written.append(write_scenario(out, sc, [(spec, *sample_run(suite_rng, spec))
                                            for spec in sc.runs], seed))
    return written


def write_scenario(out: Path, sc: Scenario,
                   sampled: list[tuple[RunSpec, np.ndarray, list[Row]]], seed: int) -> Path:
    """Write one sampled scenario under ``out``; returns its path."""
    path = out / sc.file
    if sc.file.endswith("mlruns"):
        write_mlruns(path, sc.experiment, sampled, seed)
    else:
        rows = []
        for spec, _, run_rows in sampled:
            extra = {"experiment": sc.experiment, **spec.params}
            rows += [{**r, **extra} for r in run_rows]
        (write_jsonl if sc.file.endswith(".jsonl") else write_csv)(path, rows)
    return path


# ---------------------------------------------------------------------------------------------
# Truth: what each curve really does at the end of its run (quoted in README.md)
# ---------------------------------------------------------------------------------------------


def truth(seed: int = SEED) -> list[dict[str, object]]:
    """Per (run, metric): the noiseless curve's gain over the next doubling, ROI (that gain over
    the last doubling's) and range.

    Also which way is better (``None`` for a health metric such as entropy or KL), the observed
    range, and how far the end lies below the best value over the observed points (a collapse or
    a fall-back shows there, where the next doubling may gain nothing either way).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for sc in scenarios(rng):
        rows += _truth_rows(rng, sc)
    suite_rng = np.random.default_rng([seed, SUITE_SEED_STREAM])
    return rows + _truth_rows(suite_rng, suite_scenario(suite_rng))


def _run_means(
    rng: np.random.Generator, spec: RunSpec
) -> tuple[np.ndarray, dict[str, tuple[Mean, np.ndarray, str | None]]]:
    """A run's GPU-hours and, per metric, its noiseless mean, logged steps and which way is
    better, drawing what sampling the run draws."""
    compute = gpu_hours(rng, spec)
    means: dict[str, tuple[Mean, np.ndarray, str | None]] = {
        m.name: (m.mean, logged_steps(m.every, spec.n_steps, m.first), m.better)
        for m in spec.metrics}
    for m in spec.metrics:
        sample_metric(rng, m, compute, spec.n_steps)  # keep the stream in step
    if spec.passk is not None:
        pk = spec.passk
        z = passk_problems(rng, pk)
        sample_passk(rng, pk, z, compute, spec.n_steps)
        for k in pk.ks:
            means[f"{pk.prefix}/pass@{k}"] = (
                lambda c, k=k, z=z, pk=pk: passk_truth(pk, z, np.atleast_1d(c), k),
                logged_steps(pk.every, spec.n_steps), "higher")
    return compute, means


def _truth_rows(rng: np.random.Generator, sc: Scenario) -> list[dict[str, object]]:
    rows = []
    for spec in sc.runs:
        compute, means = _run_means(rng, spec)
        for name, (f, steps, better) in means.items():
            c = compute[steps - 1]
            y = np.asarray(f(c), float)
            c_last = c[-1]
            y_last = float(np.asarray(f(np.array([c_last])))[0])
            gain = float(np.asarray(f(np.array([2 * c_last])))[0]) - y_last
            last = y_last - float(np.asarray(f(np.array([c_last / 2])))[0])
            roi = gain / last if last > 0 else math.nan  # the next doubling's over the last's
            rng_obs = float(y.max() - y.min())
            below_best = (None if better is None else round(
                y_last - float(y.min()) if better == "lower" else float(y.max()) - y_last, 5))
            rows.append({"file": sc.file, "run": spec.run, "metric": name,
                         "points": len(steps), "compute_last": round(float(c_last), 1),
                         "first": round(float(y[0]), 3), "last": round(y_last, 3),
                         "gain_next_doubling": round(gain, 4),
                         "gain_over_3pct_range": round(gain / (0.03 * rng_obs), 2),
                         "roi_end": round(roi, 2), "better": better,
                         "range": round(rng_obs, 5), "below_best": below_best})
    return rows


def suite_truth(seed: int = SEED) -> list[dict[str, object]]:
    """Scenario 11 per recipe: the noiseless suite aggregate (IQM over tasks and seeds of the
    success rate, min-max normalised per task over both recipes) and its verdict by the default
    rule: the gain over the next doubling against 3% of the aggregate's range, then ROI (the next
    doubling's gain over the last one's)."""
    rng = np.random.default_rng([seed, SUITE_SEED_STREAM])
    sc = suite_scenario(rng)
    curves = []  # (recipe, task, compute, mean function)
    for spec in sc.runs:
        compute, means = _run_means(rng, spec)
        f, steps, _ = means["eval/success_rate"]
        curves.append((str(spec.params["recipe"]), str(spec.params["task"]),
                       compute[steps - 1], f))
    lo = max(c[0] for _, _, c, _ in curves)
    hi = min(c[-1] for _, _, c, _ in curves)
    grid = np.geomspace(lo, 2.0 * hi, 400)
    seen = {}
    for _, task, c, f in curves:
        y = np.asarray(f(c), float)
        a, b = seen.get(task, (np.inf, -np.inf))
        seen[task] = (min(a, y.min()), max(b, y.max()))
    rows = []
    for recipe in SUITE_SHAPES:
        ys = np.array([(np.asarray(f(grid), float) - seen[t][0]) / (seen[t][1] - seen[t][0])
                       for r, t, _, f in curves if r == recipe])
        k = int(0.25 * ys.shape[0])
        agg = np.sort(ys, axis=0)[k: ys.shape[0] - k].mean(axis=0)
        last = int(np.searchsorted(grid, hi))
        inside = agg[: last + 1]
        gain = float(agg[-1] - agg[last])
        thr = 0.03 * float(inside.max() - inside.min())
        half = int(np.searchsorted(grid, hi / 2.0))
        roi = gain / float(agg[last] - agg[half])  # the next doubling's gain over the last's
        verdict = "saturated" if gain < thr else ("scaling" if roi >= 0.8 else "slowing")
        shapes = [suite_shape(recipe, t) for t in SUITE_TASKS]
        rows.append({"recipe": recipe, "iqm_last": round(float(agg[last]), 3),
                     "gain_next_doubling": round(gain, 4), "gain_over_3pct_range":
                     round(gain / thr, 2), "roi_end": round(roi, 2), "verdict": verdict,
                     "tasks_paying": sum(s == "scaling" for s in shapes),
                     "tasks_regressing": sum(s == "regressing" for s in shapes)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write (default: here)")
    parser.add_argument("--truth", action="store_true", help="print the noiseless quantities")
    args = parser.parse_args()
    if args.truth:
        for r in truth():
            print(" | ".join(str(v) for v in r.values()))
        for r in suite_truth():
            print(" | ".join(f"{k}={v}" for k, v in r.items()))
        return
    for p in generate(args.out):
        print(p)


if __name__ == "__main__":
    main()
