"""What keeps a long curve's memory bounded (issue 14) changes no number where it should not:
the bootstrap in blocks of resamples, thinning of very long curves, the noise range beyond its
simulated length, and the tidy table's copies. Peak memory itself is measured by
``benchmarks/bench_memory.py``."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import saturate
import saturate.analysis.curve as curve_module
import saturate.fit.engine as engine
from saturate.fit import FitSettings, fit_curve
from saturate.fit.prep import bootstrap_burn, bootstrap_sign_rows, bootstrap_signs
from saturate.measure.constants import NOISE_RANGE_SIM_POINTS
from saturate.measure.quantities import noise_range, smoothing_window
from saturate.measure.trend import thin
from saturate.table import curves


def _curve(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = np.arange(1, n + 1.0)
    return c, 1 - np.exp(-c / (n / 4)) + rng.normal(0, 0.03, n)


def test_signs_drawn_a_few_rows_at_a_time_are_the_signs_drawn_at_once() -> None:
    for n, n_boot in ((7, 5), (300, 40), (1001, 3)):
        signs, burn = bootstrap_signs(n, n_boot, np.random.default_rng(5))
        rng = np.random.default_rng(5)
        burn2 = bootstrap_burn(n, n_boot, rng)
        rows = [bootstrap_sign_rows(k, n, burn2.shape[1], rng) for k in (1, 2, n_boot - 3)]
        assert np.array_equal(burn, burn2) and np.array_equal(signs, np.vstack(rows))


@pytest.mark.parametrize("n", [60, 300])  # not binned, binned
def test_the_bootstrap_in_blocks_gives_the_same_draws(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    c, v = _curve(n)
    settings = FitSettings(n_boot=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = fit_curve(c, v, settings=settings)
        monkeypatch.setattr(engine, "_BLOCK_ELEMENTS", 1)  # one resample per block
        blocks = fit_curve(c, v, settings=settings)
    assert any(lf.theta_boot.shape[0] for lf in whole.laws)
    for a, b in zip(whole.laws, blocks.laws, strict=True):
        assert np.array_equal(a.theta_boot, b.theta_boot, equal_nan=True)
    assert np.array_equal(whole.draw_law, blocks.draw_law)


def test_thin_keeps_short_curves_whole_and_sparse_points_of_long_ones() -> None:
    assert np.array_equal(thin(np.arange(1.0, 101.0), 100), np.arange(100))
    c = np.arange(1.0, 200_001.0)
    kept = thin(c, 2_000)
    assert kept.shape[0] <= 2_000 and kept[0] == 0 and kept[-1] == c.shape[0] - 1
    assert np.all(np.diff(kept) > 0)
    assert np.array_equal(kept[:50], np.arange(50))  # early points are sparse on a log axis
    for odd in (np.r_[np.zeros(10), np.arange(1.0, 5_001.0)], np.full(5_000, 3.0),
                np.r_[-1e308, np.linspace(-1e300, 1e300, 4_998), 1e308]):
        k = thin(odd, 500)
        assert 0 < k.shape[0] <= 500 and k[-1] == odd.shape[0] - 1 and np.all(np.diff(k) > 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_thinned_long_curve_gets_the_verdict_of_the_whole_curve(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # a plateau clear of the threshold (its next doubling gains a quarter of it; at four time
    # constants, 0.7 of it, thinning moves P(pays) across the band's edge)
    rng = np.random.default_rng(seed)
    c = np.arange(1, 6_001.0)
    v = 1 - np.exp(-c / 1_200) + rng.normal(0, 0.03, c.size)
    df = pd.DataFrame({"metric": "reward", "step": c.astype(int), "value": v})
    whole = saturate.analyze(df, n_boot=50, diagnostics=False).curves[0]
    monkeypatch.setattr(curve_module, "thin", functools.partial(thin, max_points=1_500))
    thinned = saturate.analyze(df, n_boot=50, diagnostics=False).curves[0]
    assert any(f.startswith("thinned:6000->") for f in thinned.flags)
    assert thinned.verdict == whole.verdict and thinned.n_points == whole.n_points == 6_000
    assert thinned.threshold == whole.threshold  # read off every point


def test_noise_range_beyond_its_simulated_length_follows_the_window() -> None:
    m = NOISE_RANGE_SIM_POINTS
    at_m = noise_range(m, 1.0)
    for n in (m + 1, 10 * m, 1_000 * m):
        assert noise_range(n, 2.0) == pytest.approx(
            2.0 * at_m * math.sqrt(smoothing_window(m) / smoothing_window(n)), rel=1e-12)
    # the scaling holds where both can be simulated: within the simulation's own spread
    small, large = 2_000, 8_000
    ratio = noise_range(large, 1.0) / noise_range(small, 1.0)
    want = math.sqrt(smoothing_window(small) / smoothing_window(large))
    assert ratio == pytest.approx(want, rel=0.1)


def test_iter_curves_yields_sorted_curves_without_copying_sorted_ones() -> None:
    df = curves.tidy(pd.DataFrame({
        "run": ["b"] * 4 + ["a"] * 4, "metric": "m", "step": [0, 1, 2, 3] * 2,
        "compute": [0.0, 1.0, 2.0, 3.0, 3.0, 1.0, 2.0, 0.0], "value": np.arange(8.0),
    }))
    got = dict(curves.iter_curves(df))
    assert list(got) == sorted(got)
    for pts in got.values():
        assert curves.is_compute_sorted(pts)
    b = got[("data", "b", "m")]
    assert np.shares_memory(b["value"].to_numpy(), df["value"].to_numpy())  # a slice, no copy
    b.loc[b.index[0], "value"] = -1.0  # copy-on-write: the table is not changed
    assert df["value"].min() == 0.0
    assert got[("data", "a", "m")]["compute"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_tidy_shares_one_string_per_id_and_leaves_the_input_alone() -> None:
    n = 10_000
    src = pd.DataFrame({"run": "r", "metric": "m", "step": np.arange(n), "value": np.ones(n)})
    before = src.copy()
    df = curves.tidy(src, origin="/" + "long-folder-name/" * 20 + "runs.csv")
    pd.testing.assert_frame_equal(src, before)
    assert df["source"].memory_usage(deep=False, index=False) <= 8 * n
    assert df["source"].iloc[0] is df["source"].iloc[-1]
