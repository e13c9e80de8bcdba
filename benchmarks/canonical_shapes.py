"""A battery of canonical curve shapes, each with the call a user needs, on runs logged in
steps (compute linear in the step) and in compute (log-spaced), at two lengths and noise from
0.5% to 5% of the range. Every curve must be called right; flat noise may be inconclusive.

    python benchmarks/canonical_shapes.py        # prints each curve's verdict and P(pays)

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
    "plateau": STOPS,
    "decline over the last third": STOPS,
    "collapse": STOPS,
    "flat noise": (*STOPS, "inconclusive"),
}
"""Each shape and the verdicts that call it right."""
LOGGED = ("steps", "compute")
LENGTHS = (60, 300)
NOISES = (0.005, 0.02, 0.05)


def level(shape: str, u: np.ndarray) -> np.ndarray:
    """The noiseless accuracy at ``u``, the share of the run's points logged so far."""
    if shape == "steady rise":
        return 0.1 + 0.8 * u
    if shape == "late take-off":
        return 0.1 + 0.7 * np.clip((u - 0.6) / 0.4, 0.0, 1.0) ** 1.5
    if shape == "plateau":
        return 0.1 + 0.7 * (1.0 - np.exp(-u / 0.08))
    if shape == "decline over the last third":
        return np.where(u < 2 / 3, 0.1 + 0.39 * u / (2 / 3), 0.49 - (u - 2 / 3) * 3 * 0.4)
    if shape == "collapse":
        return np.where(u < 0.8, 0.1 + 0.6 * (1.0 - np.exp(-u / 0.2)), 0.15)
    if shape == "flat noise":
        return np.full_like(u, 0.5)
    raise KeyError(shape)


def curve(shape: str, logged: str, n: int, noise: float, seed: int = 0) -> pd.DataFrame:
    """One run of ``shape``: ``n`` points, noise ``noise`` of the range (0.8), in [0, 1]."""
    rng = np.random.default_rng(seed)
    u = np.arange(1, n + 1) / n
    compute = np.arange(1, n + 1, dtype=float) if logged == "steps" else np.geomspace(1, 2**10, n)
    y = np.clip(level(shape, u) + rng.normal(0.0, noise * 0.8, n), 0.0, 1.0)
    return pd.DataFrame({"run": f"{shape}|{logged}|{n}|{noise}", "metric": "eval/accuracy",
                         "step": np.arange(1, n + 1), "compute": compute, "value": y})


def battery() -> pd.DataFrame:
    """Every shape x logging x length x noise, as one tidy table."""
    return pd.concat([curve(*k) for k in product(SHAPES, LOGGED, LENGTHS, NOISES)],
                     ignore_index=True)


def judge(frame: pd.DataFrame) -> pd.DataFrame:
    """The verdicts of :func:`battery` (``saturate.analyze(...).to_frame()``) with ``right``."""
    out = frame[["run", "verdict", "p_pays"]].copy() if "p_pays" in frame else frame[
        ["run", "verdict"]].copy()
    out["shape"] = out["run"].str.split("|").str[0]
    out["right"] = [v in SHAPES[s] for s, v in zip(out["shape"], out["verdict"], strict=True)]
    return out


def main() -> int:
    import saturate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = judge(saturate.analyze(battery()).to_frame())
    pd.set_option("display.width", 200)
    print(result.to_string(index=False))
    print(f"\n{int(result['right'].sum())} of {len(result)} called right")
    return 0 if result["right"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
