"""Fuzzing the analysis: any finite curve gives a result or a SaturateError, and verdicts do not
depend on the units (values times 1e+-300 or shifted, compute times 1e+-12).

Settings and the per-case guard in ``fuzzing.py`` (``make fuzz`` runs 10,000 cases in all).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from fuzzing import case, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import saturate
from saturate.api import Analysis

finite = st.floats(allow_nan=False, allow_infinity=False)
extremes = st.sampled_from([1e308, -1e308, 1.7976931348623157e308, 1e-308, -1e-308, 5e-324, 0.0,
                            1.0, -1.0, 1e300, 1e-300])
N_BOOT = 20  # the bootstrap's size does not change which code runs; keeps a case fast


def _normal_values(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 1 - np.exp(-np.arange(n) / max(n / 3, 1)) + rng.normal(0, 0.02, n)


@st.composite
def curve_values(draw: st.DrawFn, n: int) -> np.ndarray:
    """Arbitrary finite values, or a normal curve scaled, shifted, rounded or with spikes."""
    kind = draw(st.sampled_from(["arbitrary", "normal", "spiky", "levels", "constant"]))
    if kind == "arbitrary":
        return np.array(draw(st.lists(st.one_of(finite, extremes), min_size=n, max_size=n)), float)
    if kind == "constant":
        return np.full(n, draw(st.one_of(finite, extremes)))
    v = _normal_values(n, draw(st.integers(0, 2**16)))
    v = v * draw(st.sampled_from([1.0, 1e300, 1e-300, 1e-308, 8e307, 1e150, -1.0]))
    v = v + draw(st.sampled_from([0.0, 1e6, -1e300, 1e-300]))
    if kind == "spiky" and n:
        for _ in range(draw(st.integers(1, 3))):
            v[draw(st.integers(0, n - 1))] = draw(st.one_of(finite, extremes))
    if kind == "levels":
        with np.errstate(over="ignore"):  # values near the float limit round to inf: kept as such
            v = np.round(v * 4) / 4
    return v


@st.composite
def compute_axis(draw: st.DrawFn, n: int) -> np.ndarray:
    """Arbitrary finite compute, or a grid scaled to extremes, with duplicates or all zero."""
    kind = draw(st.sampled_from(["grid", "arbitrary", "scaled", "duplicates", "zeros", "from0"]))
    if kind == "arbitrary":
        return np.array(draw(st.lists(st.one_of(finite, extremes), min_size=n, max_size=n)), float)
    if kind == "scaled":
        return (np.arange(n) + 1.0) * draw(st.sampled_from([1e-300, 1e-12, 1e12, 1e300, 5e-324]))
    if kind == "duplicates":
        return np.repeat(np.arange((n + 1) // 2), 2)[:n].astype(float)
    if kind == "zeros":
        return np.zeros(n)
    return np.arange(n, dtype=float) + (1.0 if kind == "grid" else 0.0)


@st.composite
def curve_tables(draw: st.DrawFn) -> pd.DataFrame:
    """One or two curves (two runs, so diagnostics across runs run too)."""
    parts = []
    for run in range(draw(st.integers(1, 2))):
        n = draw(st.integers(0, 300))
        parts.append(pd.DataFrame({
            "run": f"r{run}", "metric": draw(st.sampled_from(["reward", "loss", "eval/acc"])),
            "step": np.arange(n), "compute": draw(compute_axis(n)), "value": draw(curve_values(n)),
        }))
    return pd.concat(parts, ignore_index=True)


@fuzz_settings(ci=8, share=0.253)
@given(curve_tables(), st.booleans())
def test_any_finite_curve_gives_a_result_or_one_clear_error(df: pd.DataFrame, diag: bool) -> None:
    with case("analysis"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = saturate.analyze(df, n_boot=N_BOOT, diagnostics=diag)
        assert isinstance(res, Analysis)
        for c in res.curves:
            assert c.verdict in ("scaling", "slowing", "saturated", "regressing", "inconclusive")
            c.to_dict()


# ---- the scale-free property ------------------------------------------------------------------

def _shape(kind: str, seed: int, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = np.arange(1, n + 1) * 100.0
    v = {
        "saturating": 0.8 * (1 - np.exp(-c / 500)),
        "power": 0.1 * c**0.3,
        "collapse": np.where(c < 0.6 * c[-1], 0.8 * (1 - np.exp(-c / 500)), 0.2),
        "flat": np.full(n, 0.5),
    }[kind]
    return c, v + rng.normal(0, 0.02, n)


def _verdict(c: np.ndarray, v: np.ndarray, metric: str) -> tuple:
    df = pd.DataFrame({"metric": metric, "step": np.arange(c.size), "compute": c, "value": v})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(df, n_boot=50, diagnostics=False).curves[0]
    return a.verdict, a.roi_stage, a.collapse is not None, a.flags


UNITS = {
    "value x 1e300": lambda c, v: (c, v * 1e300),
    "value x 1e-300": lambda c, v: (c, v * 1e-300),
    "value + 1e3": lambda c, v: (c, v + 1e3),
    "value - 1e6": lambda c, v: (c, v - 1e6),
    "compute x 1e12": lambda c, v: (c * 1e12, v),
    "compute x 1e-12": lambda c, v: (c * 1e-12, v),
}


#: Shifts are not changes of unit: the threshold of a curve that has not moved beyond its noise
#: is a share of its level (a flat loss at 1000 +- 0.02 is saturated, at 0.5 +- 0.02 it may not
#: be), and so is the size of a fall that counts as a collapse; only the rising shapes keep their
#: verdict under a shift (the long fuzz found both, 8 of 85 cases).
SHIFTS = ("value + 1e3", "value - 1e6")


@pytest.mark.parametrize("kind", ["saturating", "power", "collapse", "flat"])
@fuzz_settings(ci=1, share=0.003)
@given(seed=st.integers(0, 10_000), metric=st.sampled_from(["reward", "loss"]))
def test_verdicts_do_not_depend_on_the_units(kind: str, seed: int, metric: str) -> None:
    c, v = _shape(kind, seed)
    with case("scale-free"):
        want = _verdict(c, v, metric)
        for unit, change in UNITS.items():
            if kind in ("flat", "collapse") and unit in SHIFTS:
                continue  # judged against a share of their level (see SHIFTS)
            assert _verdict(*change(c, v), metric) == want, unit
