"""The suite aggregates agree with rliable on real Dopamine Atari curves.

* IQM (and mean): ``analyze_suite``'s aggregate at every grid point equals
  ``rliable.metrics.aggregate_iqm`` (``aggregate_mean``) on the same min-max-normalised scores
  (``(num_seeds, num_games)`` at that iteration) within 1e-6.
* Intervals: the 95% percentile intervals of our stratified bootstrap match
  ``rliable.library.get_interval_estimates`` (seeds within games; and with ``task_bootstrap``)
  within Monte Carlo error. Both are percentiles of B = 2000 replicates, so each endpoint has a
  standard error ``sqrt(p (1 - p) / B) / f(q)``; we estimate it from our own replicates by the
  order-statistic rule (half the distance between the order statistics ``sqrt(B p (1 - p))``
  ranks either side of the endpoint) and allow 4.5 times the standard error of the difference of
  two independent estimates (``sqrt(2)`` times that). rliable draws from the global ``np.random``
  state (it ignores ``random_state``), so it is seeded with ``np.random.seed``.

rliable 1.2.0 (the latest) pins ``arch<8``, but arch 7 does not import under pandas 3; it runs on
arch 8 except that it passes ``random_state=None`` to arch's ``IIDBootstrap``, a keyword arch 8
renamed ``seed``. The ``rliable`` fixture drops that one keyword for these tests (rliable's own
resampling, ``StratifiedBootstrap.update_indices``, and arch's percentile interval run unchanged).
``make setup`` installs rliable with ``--no-deps`` next to arch 8 (the ``dev`` extra).

The vendored subset (4 games x 3 agents x 5 seeds, ``tests/data/realcurves/dopamine/``) runs in
any clone; the whole file (60 games x 6 agents x 5 seeds) when ``../shared/data/realcurves``
exists.
"""

from __future__ import annotations

import functools
import inspect
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from saturate.analysis import AnalysisSettings
from saturate.suites import analyze_suite
from saturate.table.curves import tidy

pytestmark = pytest.mark.slow  # the rliable comparisons bootstrap whole suites

_INSTALL = "pip install 'arch>=8' absl-py && pip install --no-deps rliable==1.2.0 (make setup does)"
rliable_metrics = pytest.importorskip("rliable.metrics", reason=f"rliable is missing: {_INSTALL}")
try:
    import arch.bootstrap as arch_bootstrap
    from rliable import library as rliable_library
except (ImportError, TypeError) as e:  # arch 7 fails with a TypeError under pandas 3
    pytest.skip(f"rliable does not import ({e}): {_INSTALL}", allow_module_level=True)

HERE = Path(__file__).resolve().parent
SUBSET = HERE / "data" / "realcurves" / "dopamine" / "suites_atari_subset.csv.gz"
FULL = HERE.parents[0].parent / "shared" / "data" / "realcurves" / "dopamine" / \
    "dopamine_baselines_long.csv.gz"
N_BOOT = 2000
CONFIDENCE = 0.95


def atari(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path)
    return df[(df["suite"] == "atari") & (df["variant"] == "legacy_tf")].reset_index(drop=True)


def as_tidy(df: pd.DataFrame) -> pd.DataFrame:
    """The Dopamine long table as saturate's tidy table: one run per (agent, game, seed)."""
    run = df["agent"] + "|" + df["game"] + "|" + df["seed"].astype(str)
    return tidy(pd.DataFrame({
        "source": "dopamine", "experiment": "atari", "run_id": run, "run": run,
        "metric": "return", "step": df["iteration"].astype(int), "value": df["value"],
        "params.game": df["game"], "params.agent": df["agent"],
    }), origin="dopamine")


def rliable_scores(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per agent, ``(num_seeds, num_games, num_iterations)`` of min-max-normalised returns (per
    game over every agent, seed and iteration), iterations 1..198 (iteration 0 has compute 0,
    which the log-compute grid leaves out)."""
    lo = df.groupby("game")["value"].transform("min")
    hi = df.groupby("game")["value"].transform("max")
    df = df.assign(score=(df["value"] - lo) / (hi - lo))
    df = df[df["iteration"] > 0]
    out = {}
    for agent, g in df.groupby("agent"):
        cube = g.pivot_table(index=["seed", "game"], columns="iteration", values="score")
        seeds, games = cube.index.levels
        out[str(agent)] = cube.to_numpy().reshape(len(seeds), len(games), -1)
    return out


def mc_tolerance(replicates: np.ndarray, p: float) -> float:
    """4.5 standard errors of the difference of two B-replicate percentile estimates at ``p``."""
    x = np.sort(replicates[np.isfinite(replicates)])
    b = x.size
    j = math.sqrt(b * p * (1.0 - p))
    lo = x[max(int(math.floor(p * b - j)), 0)]
    hi = x[min(int(math.ceil(p * b + j)), b - 1)]
    se = (hi - lo) / 2.0
    return 4.5 * math.sqrt(2.0) * se + 1e-12


def check_iqm(df: pd.DataFrame, suite) -> int:
    scores = rliable_scores(df)
    checked = 0
    for g in suite.groups:
        cube = scores[g.group]
        ours_iqm = np.asarray(g.aggregate.iqm)
        ours_mean = np.asarray(g.aggregate.mean)
        assert ours_iqm.size == cube.shape[2]
        for k in range(cube.shape[2]):
            ref = rliable_metrics.aggregate_iqm(cube[:, :, k])
            assert abs(ours_iqm[k] - ref) <= 1e-6, (g.group, k, ours_iqm[k], ref)
            ref_mean = rliable_metrics.aggregate_mean(cube[:, :, k])
            assert abs(ours_mean[k] - ref_mean) <= 1e-6, (g.group, k)
            checked += 1
    return checked


def check_intervals(df: pd.DataFrame, suite, points: list[int], task_bootstrap: bool) -> None:
    scores = rliable_scores(df)
    a = (1.0 - CONFIDENCE) / 2.0
    for g in suite.groups:
        reps = g.aggregate.replicates
        for k in points:
            np.random.seed(1234 + k)
            _, ci = rliable_library.get_interval_estimates(
                {"x": scores[g.group][:, :, k]}, lambda s: np.array([rliable_metrics.aggregate_iqm(s)]),
                reps=N_BOOT, confidence_interval_size=CONFIDENCE, task_bootstrap=task_bootstrap)
            ref_lo, ref_hi = float(ci["x"][0, 0]), float(ci["x"][1, 0])
            ours_lo, ours_hi = g.aggregate.iqm_lo[k], g.aggregate.iqm_hi[k]
            assert abs(ours_lo - ref_lo) <= mc_tolerance(reps[:, k], a), \
                (g.group, k, ours_lo, ref_lo)
            assert abs(ours_hi - ref_hi) <= mc_tolerance(reps[:, k], 1.0 - a), \
                (g.group, k, ours_hi, ref_hi)


def run_suite(df: pd.DataFrame, *, task_bootstrap: bool = False):
    return analyze_suite(as_tidy(df), suite="game", group_by="agent", n_boot=N_BOOT,
                         settings=AnalysisSettings(confidence=CONFIDENCE, n_boot=50), seed=7,
                         task_bootstrap=task_bootstrap, per_task=False)


@pytest.fixture(scope="module", autouse=True)
def rliable_on_arch8():
    """Let rliable 1.2 construct its bootstrap on arch 8 (see the module docstring)."""
    original = arch_bootstrap.IIDBootstrap.__init__
    if "random_state" in inspect.signature(original).parameters:
        yield
        return

    @functools.wraps(original)
    def init(self, *args, random_state=None, **kwargs):
        original(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(arch_bootstrap.IIDBootstrap, "__init__", init)
        yield


@pytest.fixture(scope="module")
def subset() -> pd.DataFrame:
    return atari(SUBSET)


@pytest.fixture(scope="module")
def subset_suite(subset):
    return run_suite(subset)


def test_subset_is_the_documented_slice(subset):
    assert sorted(subset["game"].unique()) == ["asterix", "breakout", "pong", "seaquest"]
    assert sorted(subset["agent"].unique()) == ["C51", "DQN", "Rainbow"]
    assert subset.groupby(["game", "agent"])["seed"].nunique().eq(5).all()
    assert subset.groupby(["game", "agent", "seed"])["iteration"].max().eq(198).all()


def test_iqm_and_mean_match_rliable_on_the_subset(subset, subset_suite):
    assert check_iqm(subset, subset_suite) == 3 * 198
    assert subset_suite.normalization.method == "min-max"
    assert any("compute <= 0" in n for n in subset_suite.notes)


def test_intervals_match_rliable_on_the_subset(subset, subset_suite):
    check_intervals(subset, subset_suite, [0, 9, 49, 120, 197], task_bootstrap=False)


def test_task_bootstrap_intervals_match_rliable_on_the_subset(subset):
    suite = run_suite(subset, task_bootstrap=True)
    assert suite.task_bootstrap
    check_intervals(subset, suite, [9, 197], task_bootstrap=True)


@pytest.mark.parametrize("task_bootstrap", [False, True])
def test_bootstrap_distribution_is_rliables(subset, task_bootstrap):
    """Beyond the interval ends: the whole distribution of the bootstrapped IQM at a point is
    rliable's (two-sample Kolmogorov-Smirnov on 5000 replicates each, fixed seeds)."""
    from scipy.stats import ks_2samp

    from saturate.suites import stratified_bootstrap

    cube = rliable_scores(subset)["DQN"][:, :, 99]  # (seeds, games)
    np.random.seed(99)
    boot = rliable_library.StratifiedBootstrap(cube, task_bootstrap=task_bootstrap)
    theirs = np.array([rliable_metrics.aggregate_iqm(d[0][0]) for d in boot.bootstrap(5000)])
    ours = stratified_bootstrap(np.moveaxis(cube, 0, 1)[:, :, None],
                                np.full(cube.shape[1], cube.shape[0]), n_boot=5000,
                                rng=np.random.default_rng(99),
                                task_bootstrap=task_bootstrap)["iqm"][:, 0]
    assert ks_2samp(theirs, ours).pvalue > 1e-3
    assert ours.std() == pytest.approx(theirs.std(), rel=0.1)


def test_the_aggregate_is_analysed_with_its_spread(subset_suite):
    for g in subset_suite.groups:
        a = g.analysis
        assert a.verdict in ("scaling", "slowing", "saturated", "regressing", "inconclusive")
        assert a.n_points == 198 and a.compute_last == 198.0
        assert any("tasks and seeds (stratified bootstrap)" in r for r in a.reasons)
        assert 0.0 <= g.p_next_doubling_pays <= 1.0
        se = np.asarray(g.aggregate.doubling_se, dtype=float)
        assert np.isnan(se[0]) and np.all(se[1:] > 0)  # no doubling before the first point


@pytest.mark.skipif(not FULL.exists(), reason=f"the shared real curves are not here ({FULL})")
def test_full_dopamine_atari_suite_matches_rliable():
    df = atari(FULL)
    assert df["game"].nunique() == 60 and df["agent"].nunique() == 6
    suite = run_suite(df)
    assert check_iqm(df, suite) == 6 * 198
    check_intervals(df, suite, [9, 197], task_bootstrap=False)
