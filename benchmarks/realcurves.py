"""Loaders for the shared public RL curves (``../shared/data/realcurves``) used by the benchmarks.

Each loader returns :class:`RealCurve` objects (compute > 0 ascending, finite values, higher is
better for all of them) and caps how many it returns with a seeded, stratified sample so the
accuracy benchmark stays around a thousand scored cases. The data is read in place, never copied.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["DATA_DIR", "RealCurve", "LOADERS", "load_all", "available"]

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "realcurves"


@dataclass(frozen=True)
class RealCurve:
    """One real learning curve: ``source`` (benchmark group), a unique ``name``, x and y."""

    source: str
    name: str
    compute: np.ndarray
    value: np.ndarray
    metric: str = "return"


def available(root: Path = DATA_DIR) -> bool:
    """True when the shared real curves are present."""
    return root.is_dir() and (root / "SOURCES.txt").exists()


def _clean(source: str, name: str, x, y, metric: str = "return") -> RealCurve | None:
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
    return RealCurve(source, name, x, y, metric)


def _sample(items: list, cap: int | None, rng: np.random.Generator) -> list:
    if cap is None or len(items) <= cap:
        return items
    idx = np.sort(rng.choice(len(items), size=cap, replace=False))
    return [items[i] for i in idx]


def load_dopamine(root: Path, cap: int | None, rng: np.random.Generator) -> list[RealCurve]:
    """Atari seed-mean curves (mean over the 5 seeds); compute = iterations done (1M frames each)."""
    df = pd.read_csv(root / "dopamine" / "dopamine_baselines_long.csv.gz")
    df = df[df["suite"] == "atari"]
    mean = df.groupby(["game", "variant", "agent", "iteration"], sort=True)["value"].mean()
    keys = sorted(mean.index.droplevel("iteration").unique())
    # Stratify by variant x agent so every agent family is represented.
    by_stratum: dict[tuple, list] = {}
    for k in keys:
        by_stratum.setdefault((k[1], k[2]), []).append(k)
    per = None if cap is None else max(1, cap // len(by_stratum))
    chosen = [k for s in sorted(by_stratum) for k in _sample(by_stratum[s], per, rng)]
    out = []
    for game, variant, agent in chosen:
        s = mean.loc[(game, variant, agent)]
        c = _clean("dopamine", f"{game}/{variant}/{agent}", s.index.to_numpy() + 1.0, s.to_numpy())
        if c is not None:
            out.append(c)
    return out


def load_dreamerv3(root: Path, cap: int | None, rng: np.random.Generator) -> list[RealCurve]:
    """Single runs of every DreamerV3 score file (all methods); compute = env steps."""
    files = sorted((root / "dreamerv3_scores").glob("*.json.gz"))
    per = None if cap is None else max(1, cap // len(files))
    out = []
    for f in files:
        runs = pd.read_json(f)
        items = list(runs.itertuples(index=False))
        for r in _sample(items, per, rng):
            name = f"{f.name.removesuffix('.json.gz')}/{r.task}/{r.method}/s{r.seed}"
            c = _clean("dreamerv3", name, r.xs, r.ys)
            if c is not None:
                out.append(c)
    return out


def load_sb3(root: Path, cap: int | None, rng: np.random.Generator) -> list[RealCurve]:
    """stable-baselines3 periodic evaluation curves (mean return); compute = timesteps."""
    df = pd.read_csv(root / "rl_trained_agents" / "eval_curves_long.csv")
    groups = list(df.groupby(["algo", "env", "run"], sort=True))
    out = []
    for (algo, env, run), g in groups:
        c = _clean("sb3", f"{algo}/{env}/{run}", g["timestep"], g["mean_return"])
        if c is not None:
            out.append(c)
    return _sample(out, cap, rng)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def load_llm(root: Path, cap: int | None, rng: np.random.Generator) -> list[RealCurve]:
    """LLM RL runs: verl PPO on GSM8K (validation score, train reward) and the Qwen3 GRPO curves."""
    out = []
    v = pd.read_csv(root / "verl_llm_ppo" / "verl_gsm8k_ppo_metrics_long.csv")
    for log, g in v.groupby("log", sort=True):
        run = str(log).removesuffix(".log")
        val = g[g["metric"].isin(["val/test_score/openai/gsm8k", "test_score/openai/gsm8k"])]
        val = val.sort_values("step").drop_duplicates("step", keep="last")
        # The step-0 evaluation is the score before any RL: compute 0 is dropped (log axis), so it
        # sits at step 1 / 2 on the compute axis used here.
        steps = val["step"].to_numpy(float)
        steps = np.where(steps <= 0, 0.5, steps)
        c = _clean("llm", f"verl/{run}/val", steps, val["value"], "val/test_score")
        if c is not None:
            out.append(c)
        tr = g[g["metric"] == "critic/score/mean"].sort_values("step")
        c = _clean(
            "llm",
            f"verl/{run}/train",
            tr["step"].to_numpy(float) + 1.0,
            tr["value"],
            "critic/score/mean",
        )
        if c is not None:
            out.append(c)
    j = pd.read_csv(root / "josancamon19_rl_scaling_laws" / "export.csv")
    for col in [c for c in j.columns if c != "Step"]:
        g = j[["Step", col]].dropna()
        c = _clean("llm", f"qwen3-grpo/{col}", g["Step"].to_numpy(float) + 1.0, g[col], "accuracy")
        if c is not None:
            out.append(c)
    return _sample(out, cap, rng)


LOADERS: dict[str, Callable[[Path, int | None, np.random.Generator], list[RealCurve]]] = {
    "dopamine": load_dopamine,
    "dreamerv3": load_dreamerv3,
    "sb3": load_sb3,
    "llm": load_llm,
}
DEFAULT_CAPS: dict[str, int | None] = {"dopamine": 150, "dreamerv3": 162, "sb3": 110, "llm": None}


def load_all(
    root: Path = DATA_DIR,
    caps: dict[str, int | None] | None = None,
    seed: int = 0,
    sources: tuple[str, ...] | None = None,
) -> list[RealCurve]:
    """Every source's curves, capped per source (``caps``; ``None`` means all)."""
    caps = {**DEFAULT_CAPS, **(caps or {})}
    rng = np.random.default_rng(seed)
    out = []
    for name, loader in LOADERS.items():
        if sources is None or name in sources:
            out.extend(loader(root, caps.get(name), rng))
    return out
