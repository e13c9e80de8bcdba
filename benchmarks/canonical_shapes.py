"""A battery of canonical curve shapes, each with the call a user checks first, on runs logged
in steps (compute linear in the step) and in compute (log-spaced), at two lengths and noise from
0.5% to 5% of the range (of the level, for the flat lines).

What each must get (:data:`SHAPES`, :func:`problems`):

* a steady rise, a late take-off, a steady log-linear gain: they pay; the log-linear gain with
  noise up to 1% is ``scaling`` at P(pays) > 0.95 with an interval at most 3x as wide as its own
  estimate's;
* a plateau, a decline over the last third: they do not pay;
* a collapse at 80% of the run: ``regressing`` at every noise level;
* a flat line at 0.40 (noise up to 2% of its level, ten doublings): ``saturated`` at
  P(pays) < 0.15; flat noise around 0.5 (a rate): does not pay, or inconclusive at 5% noise;
* a run held at its maximum over its last quarter (an accuracy at 1, a return at 500):
  ``saturated``;
* a precise rising run among two flat runs that differ from it only by their seed: keeps the
  call it gets alone;
* thin evidence (:func:`short_noisy`: 12-150 points of a reward with noise 0.1, flat at 0.35 or
  rising by 0.3 over the run): humble, not confident. At most 10% of the flat ones are called
  "pays" and at most 10% of the rising ones "does not pay"; most of the flat ones are
  inconclusive with P(pays) near a coin flip.

    python benchmarks/canonical_shapes.py        # each curve's verdict and P(pays), then problems

``tests/test_canonical_shapes.py`` runs the same battery.
"""

from __future__ import annotations

import sys
import warnings
from itertools import product

import numpy as np
import pandas as pd

PAYS, STOPS = ("scaling", "slowing"), ("saturated", "regressing")
SHAPES: dict[str, tuple[str, ...]] = {
    "steady rise": PAYS,
    "late take-off": PAYS,
    "log-linear gain": PAYS,
    "plateau": STOPS,
    "decline over the last third": STOPS,
    "collapse": ("regressing",),
    "flat line": ("saturated",),
    "flat noise": (*STOPS, "inconclusive"),
    "held at maximum": ("saturated",),
    "held at 500": ("saturated",),
}
"""Each shape and the verdicts that call it right."""
LOGGED = ("steps", "compute")
LENGTHS = (60, 300)
NOISES = (0.005, 0.02, 0.05)
FLAT_NOISES = (0.005, 0.01, 0.02)
"""The flat line's noise, as a share of its level 0.40."""


def level(shape: str, u: np.ndarray, compute: np.ndarray) -> np.ndarray:
    """The noiseless value at ``u`` (the share of the run's points logged so far)."""
    if shape == "steady rise":
        return 0.1 + 0.8 * u
    if shape == "late take-off":
        return 0.1 + 0.7 * np.clip((u - 0.6) / 0.4, 0.0, 1.0) ** 1.5
    if shape == "log-linear gain":
        return 0.1 + 0.05 * np.log2(compute)
    if shape == "plateau":
        return 0.1 + 0.7 * (1.0 - np.exp(-u / 0.08))
    if shape == "decline over the last third":
        return np.where(u < 2 / 3, 0.1 + 0.39 * u / (2 / 3), 0.49 - (u - 2 / 3) * 3 * 0.4)
    if shape == "collapse":
        return np.where(u < 0.8, 0.1 + 0.6 * (1.0 - np.exp(-u / 0.2)), 0.15)
    if shape == "flat line":
        return np.full_like(u, 0.40)
    if shape == "flat noise":
        return np.full_like(u, 0.5)
    if shape == "held at maximum":
        return np.minimum(0.2 + 0.8 * u / 0.75, 1.0)
    if shape == "held at 500":
        return np.minimum(20.0 + 480.0 * (u / 0.75) ** 0.7, 500.0)
    raise KeyError(shape)


def noise_sd(shape: str, noise: float, truth: np.ndarray) -> float:
    """The noise's standard deviation: a share of the range (of the level for a flat line)."""
    if shape == "flat line":
        return noise * 0.40
    if shape == "log-linear gain":
        return noise * float(np.ptp(truth))
    if shape == "held at 500":
        return noise * 480.0
    return noise * 0.8


def curve(shape: str, logged: str, n: int, noise: float, seed: int = 0) -> pd.DataFrame:
    """One run of ``shape``: ``n`` points (metric ``eval/accuracy`` in [0, 1], ``return`` for
    the return held at 500, ``reward`` for the flat line and the log-linear gain)."""
    rng = np.random.default_rng(seed)
    u = np.arange(1, n + 1) / n
    compute = np.arange(1, n + 1, dtype=float) if logged == "steps" else np.geomspace(1, 2**10, n)
    truth = level(shape, u, compute)
    y = truth + rng.normal(0.0, noise_sd(shape, noise, truth), n)
    if shape in ("held at 500", "held at maximum"):  # at the top, exactly: a ceiling
        top = 500.0 if shape == "held at 500" else 1.0
        y = np.where(truth >= top, top, np.minimum(y, top))
    if shape == "held at 500":
        metric = "return"
    elif shape in ("flat line", "log-linear gain"):
        metric = "reward"
    else:
        y = np.clip(y, 0.0, 1.0)
        metric = "eval/accuracy"
    return pd.DataFrame({"run": f"{shape}|{logged}|{n}|{noise}", "metric": metric,
                         "step": np.arange(1, n + 1), "compute": compute, "value": y})


def runs() -> list[tuple[str, str, int, float]]:
    """Every (shape, logging, length, noise) of the battery."""
    return [(s, lg, n, nz) for s, lg, n in product(SHAPES, LOGGED, LENGTHS)
            for nz in (FLAT_NOISES if s == "flat line" else NOISES)]


def battery() -> pd.DataFrame:
    """Every curve of :func:`runs` as one tidy table."""
    return pd.concat([curve(*k) for k in runs()], ignore_index=True)


def siblings(seed: int = 0) -> pd.DataFrame:
    """A precise rising run and two flat runs that differ from it only by their ``seed`` (one
    configuration's seeds, as far as the table can tell)."""
    rng = np.random.default_rng(seed)
    c = np.geomspace(1, 2**10, 200)
    rise = 0.1 + 0.05 * np.log2(c) + rng.normal(0, 0.003, c.size)
    flats = [0.4 + rng.normal(0, 0.003, c.size) for _ in range(2)]
    return pd.concat([pd.DataFrame({"run": f"recipe-seed{i}", "seed": i, "metric": "reward",
                                    "step": np.arange(c.size), "compute": c, "value": v})
                      for i, v in enumerate([rise, *flats])], ignore_index=True)


SHORT_LENGTHS = (12, 20, 40, 80, 150)
SHORT_SEEDS = 6


def short_noisy() -> pd.DataFrame:
    """Short per-batch rewards with noise 0.1 (a third of the flat level): each length of
    :data:`SHORT_LENGTHS` and seed, one flat at 0.35 and one rising by 0.3 over the run (log of
    the step); run names ``shape-n-seed``."""
    rows = []
    for n, seed in product(SHORT_LENGTHS, range(SHORT_SEEDS)):
        rng = np.random.default_rng(seed)
        s = np.arange(1, n + 1)
        for shape, f in (("rising", 0.2 + 0.3 * np.log2(s) / np.log2(150)),
                         ("flat", np.full(n, 0.35))):
            y = np.clip(f + rng.normal(0, 0.1, n), 0, 1)
            rows.append(pd.DataFrame({"run": f"{shape}-{n}-{seed}", "metric": "train/reward",
                                      "step": s, "value": y}))
    return pd.concat(rows, ignore_index=True)


def humility(curves) -> pd.DataFrame:  # noqa: ANN001 - CurveAnalysis objects
    """Per shape of :func:`short_noisy`: mean P(pays) and the shares called pays, does not
    pay, inconclusive."""
    t = pd.DataFrame([(c.run.split("-")[0], c.verdict, c.p_pays) for c in curves],
                     columns=["shape", "verdict", "p"])
    return t.groupby("shape").agg(
        mean_p=("p", "mean"),
        pays=("verdict", lambda v: v.isin(["scaling", "slowing"]).mean()),
        does_not=("verdict", lambda v: v.isin(["saturated", "regressing"]).mean()),
        inconclusive=("verdict", lambda v: (v == "inconclusive").mean()),
    )


def humility_problems(table: pd.DataFrame) -> list[str]:
    """Where :func:`humility`'s table is confident on thin evidence (module docstring)."""
    out = []
    if not table.loc["flat", "pays"] <= 0.1:
        out.append(f"short noisy flat rewards: {table.loc['flat', 'pays']:.0%} called pays")
    if not table.loc["rising", "does_not"] <= 0.1:
        out.append(f"short noisy rising rewards: {table.loc['rising', 'does_not']:.0%} called "
                   "does not pay")
    if not table.loc["flat", "inconclusive"] >= 0.5:
        out.append(f"short noisy flat rewards: only {table.loc['flat', 'inconclusive']:.0%} "
                   "inconclusive")
    return out


def judge(curves) -> pd.DataFrame:  # noqa: ANN001 - CurveAnalysis objects
    """The verdict of every curve of :func:`battery`, its P(pays), its gain's interval and the
    curve's own estimate's, and ``right``."""
    rows = []
    for c in curves:
        shape, _, _, noise = c.run.split("|")
        own = c.decision.own if c.decision is not None else None
        g = c.gain_per_doubling
        rows.append({"run": c.run, "verdict": c.verdict, "p_pays": c.p_pays, "gain": g.value,
                     "lo": g.lo, "hi": g.hi, "own_width": own.hi - own.lo if own else np.nan,
                     "shape": shape, "noise": float(noise), "right": c.verdict in SHAPES[shape]})
    return pd.DataFrame(rows)


def problems(judged: pd.DataFrame) -> list[str]:
    """Every way the battery misses what the module docstring asks, in words (empty: none)."""
    out = []
    for r in judged.itertuples():
        if not r.right and not (r.shape == "flat noise" and r.noise == 0.05):
            out.append(f"{r.run}: {r.verdict} at P {r.p_pays:.2f}")
        if r.shape == "flat line" and not r.p_pays < 0.15:
            out.append(f"{r.run}: P(pays) {r.p_pays:.2f}, not below 0.15")
        if r.shape == "log-linear gain" and r.noise <= 0.01:
            if not (r.verdict == "scaling" and r.p_pays > 0.95):
                out.append(f"{r.run}: {r.verdict} at P {r.p_pays:.2f}, not scaling above 0.95")
            ratio = (r.hi - r.lo) / r.own_width
            if not ratio <= 3.0:
                out.append(f"{r.run}: interval {ratio:.1f}x its own estimate's, not at most 3x")
    return out


def decided_again(curves, setting):  # noqa: ANN001, ANN201 - CurveAnalysis, DecisionSettings
    """The battery's curves with the call made again under ``setting`` from their evidence (no
    refit): how the accuracy benchmark keeps only the settings that call every shape right."""
    from saturate.analysis import with_decision
    from saturate.decide import decide

    return [with_decision(c, decide(c.evidence, None, setting)) for c in curves]


def sibling_problems() -> list[str]:
    """The precise rising run keeps its call among flat siblings (:func:`siblings`)."""
    import saturate

    table = siblings()
    alone = saturate.analyze(table[table["run"] == "recipe-seed0"], diagnostics=False)
    pooled = saturate.analyze(table, diagnostics=False)
    a, p = alone.curves[0], next(c for c in pooled.curves if c.run == "recipe-seed0")
    if a.verdict != p.verdict or abs(a.p_pays - p.p_pays) > 0.05:
        return [f"recipe-seed0: alone {a.verdict} at P {a.p_pays:.2f}, among flat siblings "
                f"{p.verdict} at P {p.p_pays:.2f}"]
    if p.pooling is None:
        return ["recipe-seed0: the siblings it was weighed with are not shown"]
    return []


def main() -> int:
    import saturate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = saturate.analyze(battery(), diagnostics=False)
        result = judge(analysis.curves)
        thin = humility(saturate.analyze(short_noisy(), diagnostics=False).curves)
        found = problems(result) + sibling_problems() + humility_problems(thin)
    pd.set_option("display.width", 200)
    print(result.drop(columns=["shape", "noise", "own_width"]).to_string(index=False))
    print(f"\n{int(result['right'].sum())} of {len(result)} called right")
    print("\nthin evidence (short noisy rewards): mean P(pays) and the share of each call")
    print(thin.round(2).to_string())
    print("\n".join(["problems:", *found]) if found else "no problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
