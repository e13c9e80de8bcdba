"""Loaders for the shared public RL curves (``../shared/data/realcurves``) used by the benchmarks.

Each loader returns :class:`RealCurve` objects (compute > 0 ascending, finite values, higher is
better for all of them). Every curve names its ``group``: the curves a team would analyse
together and that share what is being pooled (the seeds of one configuration, or the sibling
runs of one task), so the pooled analysis can be measured without peeking at other experiments.
Large sources are sampled by whole groups with a seeded generator, stratified so that every
agent family and suite is represented; the data is read in place, never copied.

What is loaded (``caps`` sets how much; ``QUICK_CAPS`` is a quarter-size subset):

* ``dopamine``: Atari (3 variants x 60 games x 5-6 agents x 5 seeds) and MuJoCo (5 envs, SAC):
  a sample of (suite, game, variant) units; in each, the seed-mean curve of every agent (group:
  the unit, i.e. the sibling agents on that game) and the 5 single seeds of a few agents (group:
  the agent's seeds). MuJoCo seed means pool across the 5 envs (one agent).
* ``dreamerv3``: every score file (27 suite x method files); per file a sample of tasks, per task
  up to ``dreamer_seeds`` seeds (group: the seeds of the method on the task).
* ``sb3``: every stable-baselines3 evaluation curve (group: the environment, i.e. the sibling
  algorithms on it).
* ``llm``: verl PPO on GSM8K (validation score and train reward; groups: the 3 validation curves,
  the 3 train curves) and the Qwen3 GRPO GSM8K curves of 4 model sizes (one group). All are
  accuracies in [0, 1] (``domain``); the other sources are returns (unbounded).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["DATA_DIR", "RealCurve", "LOADERS", "FULL_CAPS", "QUICK_CAPS", "load_all", "available"]

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "realcurves"

FULL_CAPS: dict[str, int | None] = {
    "dopamine_units": 8,  # per Atari variant (3 variants); MuJoCo always adds its 5 envs
    "dopamine_seed_agents": 2,  # agents per unit whose 5 single seeds are included
    "dreamer_tasks": 3,  # tasks per score file (27 files)
    "dreamer_seeds": 5,
    "sb3": None,
    "llm": None,
}
QUICK_CAPS: dict[str, int | None] = {
    "dopamine_units": 2,
    "dopamine_seed_agents": 1,
    "dreamer_tasks": 1,
    "dreamer_seeds": 3,
    "sb3": 40,
    "llm": None,
}


@dataclass(frozen=True)
class RealCurve:
    """One real learning curve.

    ``source`` is the benchmark source (the unit of leave-one-source-out), ``name`` unique,
    ``group`` the curves analysed together and pooled, ``kind`` ``seed-mean``, ``seed`` or
    ``run`` (one run of its configuration), ``domain`` the metric's bounds (None: unbounded).
    """

    source: str
    name: str
    compute: np.ndarray = field(repr=False)
    value: np.ndarray = field(repr=False)
    metric: str = "return"
    group: str = ""
    kind: str = "run"
    domain: tuple[float, float] | None = None


def available(root: Path = DATA_DIR) -> bool:
    """True when the shared real curves are present."""
    return root.is_dir() and (root / "SOURCES.txt").exists()


def _clean(source: str, name: str, x, y, **kw) -> RealCurve | None:
    x = np.asarray(x, dtype=float)
    y = np.asarray(pd.to_numeric(pd.Series(y), errors="coerce"), dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0)
    x, y = x[ok], y[ok]
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    keep = np.r_[True, np.diff(x) > 0]
    x, y = x[keep], y[keep]
    if x.size < 8:
        return None
    return RealCurve(source, name, x, y, **kw)


def _sample(items: list, cap: int | None, rng: np.random.Generator) -> list:
    if cap is None or len(items) <= cap:
        return list(items)
    idx = np.sort(rng.choice(len(items), size=cap, replace=False))
    return [items[i] for i in idx]


def load_dopamine(root: Path, caps: dict, rng: np.random.Generator) -> list[RealCurve]:
    """Seed-mean curves of every agent of sampled (suite, game, variant) units, and single seeds
    of a few agents per unit; compute = iterations done (1M Atari frames or 10 MuJoCo
    iterations each, shifted by one so the first iteration is not at zero)."""
    df = pd.read_csv(root / "dopamine" / "dopamine_baselines_long.csv.gz")
    units = sorted(df.groupby(["suite", "game", "variant"]).groups)
    chosen = []
    for variant in sorted({u[2] for u in units if u[0] == "atari"}):
        pool = [u for u in units if u[0] == "atari" and u[2] == variant]
        chosen += _sample(pool, caps.get("dopamine_units"), rng)
    chosen += [u for u in units if u[0] == "mujoco"]
    keyed = df.set_index(["suite", "game", "variant"]).sort_index()
    out = []
    for suite, game, variant in chosen:
        d = keyed.loc[(suite, game, variant)]
        agents = sorted(d["agent"].unique())
        unit = f"{suite}/{game}/{variant}"
        mean_group = "mujoco/SAC" if suite == "mujoco" else unit
        for agent in agents:
            s = d[d["agent"] == agent].groupby("iteration")["value"].mean()
            c = _clean("dopamine", f"{unit}/{agent}/mean", s.index.to_numpy() + 1.0, s.to_numpy(),
                       group=mean_group, kind="seed-mean")
            if c is not None:
                out.append(c)
        for agent in _sample(agents, caps.get("dopamine_seed_agents"), rng):
            da = d[d["agent"] == agent]
            for seed, g in da.groupby("seed", sort=True):
                g = g.sort_values("iteration")
                c = _clean("dopamine", f"{unit}/{agent}/s{seed}",
                           g["iteration"].to_numpy(float) + 1.0, g["value"],
                           group=f"{unit}/{agent}", kind="seed")
                if c is not None:
                    out.append(c)
    return out


def load_dreamerv3(root: Path, caps: dict, rng: np.random.Generator) -> list[RealCurve]:
    """Runs of sampled tasks of every DreamerV3 score file (all methods); compute = env steps."""
    out = []
    for f in sorted((root / "dreamerv3_scores").glob("*.json.gz")):
        runs = pd.read_json(f)
        stem = f.name.removesuffix(".json.gz")
        for task in _sample(sorted(runs["task"].unique()), caps.get("dreamer_tasks"), rng):
            seeds = runs[runs["task"] == task].sort_values("seed")
            items = list(seeds.itertuples(index=False))
            items = _sample(items, caps.get("dreamer_seeds"), rng)
            kind = "seed" if len(seeds) > 1 else "run"
            for r in items:
                c = _clean("dreamerv3", f"{stem}/{task}/s{r.seed}", r.xs, r.ys,
                           group=f"{stem}/{task}", kind=kind)
                if c is not None:
                    out.append(c)
    return out


def load_sb3(root: Path, caps: dict, rng: np.random.Generator) -> list[RealCurve]:
    """stable-baselines3 periodic evaluation curves (mean return); compute = timesteps."""
    df = pd.read_csv(root / "rl_trained_agents" / "eval_curves_long.csv")
    out = []
    for (algo, env, run), g in df.groupby(["algo", "env", "run"], sort=True):
        c = _clean("sb3", f"{algo}/{env}/{run}", g["timestep"], g["mean_return"], group=str(env))
        if c is not None:
            out.append(c)
    return _sample(out, caps.get("sb3"), rng)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def load_llm(root: Path, caps: dict, rng: np.random.Generator) -> list[RealCurve]:
    """LLM RL runs: verl PPO on GSM8K (validation score, train reward) and the Qwen3 GRPO curves."""
    out = []
    unit = (0.0, 1.0)
    v = pd.read_csv(root / "verl_llm_ppo" / "verl_gsm8k_ppo_metrics_long.csv")
    for log, g in v.groupby("log", sort=True):
        run = str(log).removesuffix(".log")
        val = g[g["metric"].isin(["val/test_score/openai/gsm8k", "test_score/openai/gsm8k"])]
        val = val.sort_values("step").drop_duplicates("step", keep="last")
        # The step-0 evaluation is the score before any RL: compute 0 is dropped (log axis), so it
        # sits at step 1 / 2 on the compute axis used here.
        steps = val["step"].to_numpy(float)
        steps = np.where(steps <= 0, 0.5, steps)
        c = _clean("llm", f"verl/{run}/val", steps, val["value"], metric="val/test_score",
                   group="verl/val", domain=unit)
        if c is not None:
            out.append(c)
        tr = g[g["metric"] == "critic/score/mean"].sort_values("step")
        c = _clean("llm", f"verl/{run}/train", tr["step"].to_numpy(float) + 1.0, tr["value"],
                   metric="critic/score/mean", group="verl/train", domain=unit)
        if c is not None:
            out.append(c)
    j = pd.read_csv(root / "josancamon19_rl_scaling_laws" / "export.csv")
    for col in [c for c in j.columns if c != "Step"]:
        g = j[["Step", col]].dropna()
        c = _clean("llm", f"qwen3-grpo/{col}", g["Step"].to_numpy(float) + 1.0, g[col],
                   metric="accuracy", group="qwen3-grpo", domain=unit)
        if c is not None:
            out.append(c)
    return _sample(out, caps.get("llm"), rng)


LOADERS: dict[str, Callable[[Path, dict, np.random.Generator], list[RealCurve]]] = {
    "dopamine": load_dopamine,
    "dreamerv3": load_dreamerv3,
    "sb3": load_sb3,
    "llm": load_llm,
}


def load_all(
    root: Path = DATA_DIR,
    caps: dict[str, int | None] | None = None,
    seed: int = 0,
    sources: tuple[str, ...] | None = None,
) -> list[RealCurve]:
    """Every source's curves, sampled by ``caps`` (default :data:`FULL_CAPS`; ``None`` = all).

    Each source draws from its own generator (seeded by ``seed`` and the source's position), so
    choosing a subset of sources does not change which curves the others load."""
    caps = {**FULL_CAPS, **(caps or {})}
    out = []
    for i, (name, loader) in enumerate(LOADERS.items()):
        if sources is None or name in sources:
            out.extend(loader(root, caps, np.random.default_rng([seed, i])))
    return out
