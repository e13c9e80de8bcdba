"""One coherent story per curve, checked on 210 generated curves (hypothesis, derandomized).

The curves (laws, noise levels, lengths, directions, offsets, scales, with and without a domain)
are drawn once per module and analysed in one call; each test checks one invariant on every
curve (the checks of ``tests/coherence.py``, also run on sample_runs and real curves), and
names the curves that break it:

* every estimate lies inside its own interval;
* a curve with a domain keeps its forecasts, bands and asymptote inside it;
* the verdict follows from the reported gain, its interval and the threshold, and from the
  probability of paying and the levels of the stated loss (README "Verdicts");
* a stop point before the last compute goes with a verdict that says the curve no longer pays,
  or a reason saying why it still does;
* a knee is never reported on a curve still before its knee (initial or transition stage);
* stage names never reuse a verdict's words;
* the gain per doubling is the difference of the forecasts at 2C and C (same model, same numbers);
* scale-free: values times 1e+-300, shifted, compute times 1e+-12 change no verdict and scale
  the numbers.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from coherence import CHECKS, VERDICTS, all_stage_names, broken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import saturate
from saturate.results import CurveAnalysis

pytestmark = pytest.mark.slow  # hundreds of generated curves fitted

N_CURVES = 210
N_BOOT = 50
LAWS = ("sigmoid", "power", "loglinear", "weibull", "risefall", "flat")
METRICS = {"eval/acc": "higher", "train/reward": "higher", "train/loss": "lower"}


@dataclass(frozen=True)
class Spec:
    """One generated curve: its law, noise, length, metric (hence direction and domain), value
    scale and offset (not for the accuracy, which must stay in [0, 1]) and seed."""

    law: str
    noise: float
    n: int
    metric: str
    scale: float
    offset: float
    seed: int

    @property
    def run(self) -> str:
        return (f"{self.law}-n{self.n}-noise{self.noise:g}-{self.metric.replace('/', '.')}"
                f"-x{self.scale:g}+{self.offset:g}-s{self.seed}")

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """Compute (GPU-hour-like, uneven) and values of the curve."""
        rng = np.random.default_rng(self.seed)
        c = np.cumsum(rng.uniform(0.7, 1.3, self.n)) * 10.0
        u = np.log(c / c[0])
        h = u / u[-1]  # 0 .. 1 over the run, in log compute
        shape = {
            "sigmoid": 1 / (1 + np.exp(-rng.uniform(3, 8) * (h - rng.uniform(0.2, 0.9)))),
            "power": 1 - (c / c[0]) ** -rng.uniform(0.2, 1.0),
            "loglinear": h,
            "weibull": 1 - np.exp(-((c / c[-1] / rng.uniform(0.1, 1.0)) ** rng.uniform(0.5, 2))),
            "risefall": 4 * h * (1 - h) * rng.uniform(0.6, 1.0),
            "flat": np.zeros(self.n),
        }[self.law]
        level = 0.15 + 0.6 * shape + rng.normal(0, self.noise, self.n)
        if self.metric == "eval/acc":
            return c, np.clip(level, 0.0, 1.0)
        sign = -1.0 if METRICS[self.metric] == "lower" else 1.0
        return c, sign * level * self.scale + self.offset


specs = st.builds(
    Spec,
    law=st.sampled_from(LAWS),
    noise=st.sampled_from([0.002, 0.01, 0.03, 0.08]),
    n=st.integers(8, 70),
    metric=st.sampled_from(tuple(METRICS)),
    scale=st.sampled_from([1.0, 1e-3, 1e4]),
    offset=st.sampled_from([0.0, -3.0, 250.0]),
    seed=st.integers(0, 2**20),
)


def _draw_specs(count: int) -> list[Spec]:
    """``count`` distinct specs, the same on every run (derandomized hypothesis)."""
    out: dict[str, Spec] = {}

    @settings(max_examples=4 * count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(specs)
    def collect(spec: Spec) -> None:
        if len(out) < count:
            out.setdefault(spec.run, spec)

    collect()
    return list(out.values())


def _frame(specs_: list[Spec], s: float = 1.0, off: float = 0.0, k: float = 1.0) -> pd.DataFrame:
    """The curves as one tidy table, values as ``v * s + off`` and compute as ``c * k``."""
    parts = []
    for sp in specs_:
        c, v = sp.points()
        c, v = (c * k, v * s + off) if (s, off, k) != (1.0, 0.0, 1.0) else (c, v)
        parts.append(pd.DataFrame({"run": sp.run, "metric": sp.metric, "step": np.arange(sp.n),
                                   "compute": c, "value": v}))
    return pd.concat(parts, ignore_index=True)


def _analyze(df: pd.DataFrame, **kw) -> dict[str, CurveAnalysis]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(df, n_boot=N_BOOT, diagnostics=False, workers=1, **kw)
    return {c.run: c for c in a.curves}


@pytest.fixture(scope="module")
def drawn() -> list[Spec]:
    out = _draw_specs(N_CURVES)
    assert len(out) == N_CURVES
    return out


@pytest.fixture(scope="module")
def curves(drawn: list[Spec]) -> dict[str, CurveAnalysis]:
    out = _analyze(_frame(drawn), forecast_at=["1x", "2x", "4x"])
    assert len(out) == len(drawn)
    return out


# ---- the invariants (tests/coherence.py) ------------------------------------------------------


def test_the_generated_curves_cover_laws_directions_and_verdicts(drawn, curves) -> None:
    assert {sp.law for sp in drawn} == set(LAWS)
    assert {sp.metric for sp in drawn} == set(METRICS)
    assert {c.verdict for c in curves.values()} >= {"scaling", "slowing", "saturated"}
    assert sum(c.domain is not None for c in curves.values()) >= 40
    assert sum(c.decision is not None for c in curves.values()) >= len(curves) // 2


@pytest.mark.parametrize("invariant", list(CHECKS))
def test_every_generated_curve_keeps_the_invariant(curves, invariant: str) -> None:
    assert not broken(curves, CHECKS[invariant])


def test_stage_names_never_reuse_a_verdicts_words(curves) -> None:
    stages = all_stage_names() | {c.roi_stage for c in curves.values()}
    assert not {s for s in stages if s[:5] in {v[:5] for v in VERDICTS}}, stages


# ---- scale-free -------------------------------------------------------------------------------

UNITS = {
    "value x 1e300": (1e300, 0.0, 1.0),
    "value x 1e-300": (1e-300, 0.0, 1.0),
    "value + 1e3": (1.0, 1e3, 1.0),
    "compute x 1e12": (1.0, 0.0, 1e12),
    "compute x 1e-12": (1.0, 0.0, 1e-12),
}
N_SCALED = 16


@pytest.fixture(scope="module")
def scaled_pairs(drawn: list[Spec], curves: dict[str, CurveAnalysis]):
    """The first :data:`N_SCALED` curves re-analysed in each of :data:`UNITS`; a domain moves
    with the values (``--domain`` over the changed units)."""
    chosen = drawn[:N_SCALED]
    out = {}
    for unit, (s, off, k) in UNITS.items():
        domains = {"eval/acc": (off, s + off)}  # [0, 1] in the changed units
        out[unit] = (s, off, k, _analyze(_frame(chosen, s, off, k),
                                         forecast_at=["1x", "2x", "4x"], domains=domains))
    return [(sp, curves[sp.run]) for sp in chosen], out


@pytest.mark.parametrize("unit", list(UNITS))
def test_units_change_no_verdict_and_scale_every_number(scaled_pairs, unit: str) -> None:
    base, by_unit = scaled_pairs
    s, off, k, changed = by_unit[unit]
    bad = []
    for sp, want in base:
        got = changed[sp.run]
        if got.verdict != want.verdict or got.roi_stage != want.roi_stage:
            bad.append(f"{sp.run}: {want.verdict}/{want.roi_stage} -> {got.verdict}/{got.roi_stage}")
            continue
        span = abs(want.value_last) + abs(want.threshold) + 1e-300
        pairs = [(got.gain_per_doubling.value, s * want.gain_per_doubling.value, s * span),
                 (got.threshold, s * want.threshold, s * span),
                 (got.value_last, s * want.value_last + off, abs(s) * span + abs(off))]
        for f_got, f_want in zip(got.forecast, want.forecast, strict=True):
            pairs.append((f_got.value, s * f_want.value + off, abs(s) * span + abs(off)))
        if want.knee is not None and got.knee is not None:
            pairs.append((got.knee, k * want.knee, k * want.compute_last))
        for g, w, size in pairs:
            if math.isfinite(w) and not abs(g - w) <= 1e-3 * size:
                bad.append(f"{sp.run}: {g!r} vs {w!r}")
    assert not bad, bad
