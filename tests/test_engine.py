"""The engine: curves analysed in this process or on a local pool of processes give the same
numbers, in the same order; curves are read as the workers take them; the options that say where
to run are validated like every other (``--workers``, ``--scheduler``, ``--dask``,
``$SATURATE_SCHEDULER``, the settings file). Real processes, no mocks; Dask itself is in
``test_dask.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_run import run_cli

import saturate
from saturate.analysis import AnalysisSettings
from saturate.analysis.engine import Engine, run_curves
from saturate.analysis.work import BATCH_CURVES, BATCH_POINTS, batches, engine_for
from saturate.errors import SettingsError
from saturate.report import render
from saturate.settings import Settings
from saturate.table.curves import tidy
from saturate.table.run_table import run_facts

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
N_BOOT = 40


def _doc(analysis: saturate.Analysis) -> dict:
    return json.loads(render(analysis, "json"))


@pytest.fixture(scope="module")
def sequential(sample_runs_sequential: saturate.Analysis) -> saturate.Analysis:
    """``analyze(SAMPLES, n_boot=N_BOOT, workers=1)``: made once a session (tests/conftest.py)."""
    assert sample_runs_sequential.settings["n_boot"] == N_BOOT
    return sample_runs_sequential


def _curve(i: int, n: int = 12) -> pd.DataFrame:
    c = np.arange(1, n + 1, dtype=float)
    rng = np.random.default_rng(i)
    df = tidy(pd.DataFrame({"run": f"r{i:03d}", "metric": "m", "step": c.astype(int),
                            "value": 1 - c ** -0.5 + rng.normal(0, 0.01, n)}), origin="t")
    return df


# ---- batches ------------------------------------------------------------------------------------


def test_batches_group_short_curves_and_send_long_ones_alone() -> None:
    short = [pd.DataFrame({"v": range(10)})] * 9
    long = pd.DataFrame({"v": range(BATCH_POINTS + 1)})
    sizes = [len(b) for b in batches([*short, long, *short[:2]])]
    assert sizes == [BATCH_CURVES, BATCH_CURVES, 1, 1, 2]
    assert [len(c) for b in batches([*short, long]) for c in b] == [10] * 9 + [BATCH_POINTS + 1]


# ---- the same numbers everywhere -----------------------------------------------------------------


@pytest.mark.slow
def test_local_pool_gives_the_sequential_json(sequential: saturate.Analysis) -> None:
    seen: list[tuple[int, int]] = []
    pooled = saturate.analyze(SAMPLES, n_boot=N_BOOT, workers=2,
                              progress=lambda d, t: seen.append((d, t)))
    assert _doc(pooled) == _doc(sequential)
    n = len(sequential.curves)
    assert seen[-1] == (n, n)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # progress only moves forward


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
def test_forked_workers_give_the_sequential_json(sequential: saturate.Analysis,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot command's pool (workers forked from it, sample_runs' 99 curves taken by a
    pool even with the workers left to saturate) gives the same numbers, and leaves no worker
    behind."""
    import multiprocessing

    from saturate.analysis.engine import forked_workers, forking
    from saturate.analysis.work import local_workers


    monkeypatch.delenv("LOKY_MAX_CPU_COUNT", raising=False)  # a worker per core, as for a user
    if local_workers() < 2:
        pytest.skip("one core: no pool to fork")
    before = {p.pid for p in multiprocessing.active_children()}  # a reused pool's, if any
    forked_workers()
    try:
        assert forking()
        forked = saturate.analyze(SAMPLES, n_boot=N_BOOT)
    finally:
        forked_workers(False)
    assert _doc(forked) == _doc(sequential)
    assert {p.pid for p in multiprocessing.active_children()} <= before


def test_each_curve_is_judged_alone_whatever_came_before() -> None:
    curves = [_curve(i) for i in range(6)]
    settings = AnalysisSettings(n_boot=30)
    forward = run_curves(curves, settings, Engine(workers=1))
    backward = run_curves(curves[::-1], settings, Engine(workers=1))
    assert [c.to_dict() for c in forward] == [c.to_dict() for c in backward[::-1]]


@pytest.mark.slow
def test_results_keep_compact_points_and_the_table_comes_back(
    sequential: saturate.Analysis,
) -> None:
    """The results hold what varies along each curve; ``Analysis.data`` rebuilds the table read."""
    for curve in sequential.curves:
        assert {"step", "compute", "value"} <= set(curve.points.columns)
        dropped = {"source", "run_id", "run", "metric", "run_status", "timestamp"}
        assert not dropped & set(curve.points.columns)
        assert not any(c.startswith("params.") for c in curve.points.columns)
    loaded = saturate.load(SAMPLES)
    data = sequential.data
    points = loaded.points.drop(columns="timestamp")
    assert list(data.points.columns) == list(points.columns)
    pd.testing.assert_frame_equal(data.points, points, check_dtype=False)
    assert run_facts(data.points, data.runs).equals(loaded.runs)
    assert data.axis == sequential.axis and data.axis.name == loaded.axis.name


# ---- streaming: curves are read as the workers take them -----------------------------------------


class _Counted:
    """Curves handed out one by one, counting how many were taken."""

    def __init__(self, n: int) -> None:
        self.n, self.taken = n, 0

    def __iter__(self):
        for i in range(self.n):
            self.taken += 1
            yield _curve(i)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_curves_are_read_as_they_are_analysed(workers: int) -> None:
    curves = _Counted(80)
    ahead: list[int] = []
    results = run_curves(curves, AnalysisSettings(n_boot=10), Engine(workers=workers),
                         progress=lambda done, total: ahead.append(curves.taken - done))
    assert len(results) == 80 and [r.run for r in results] == [f"r{i:03d}" for i in range(80)]
    # at most: the batches that decided to start the pool, two per worker waiting, one being cut
    bound = BATCH_CURVES * (1 if workers == 1 else workers + 2 * workers + 1)
    assert max(ahead) <= bound < 80


# ---- the options -------------------------------------------------------------------------------


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env={**os.environ, **(env or {})}, cwd=ROOT)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "--workers must be an integer >= 1"),
        (["--scheduler", "tcp://"], "--scheduler must be 'local' or the address of a Dask"),
        (["--dask", "--scheduler", "tcp://127.0.0.1:1"], "--dask and --scheduler both say"),
    ],
)
def test_bad_engine_options_are_one_line(args: list[str], message: str) -> None:
    proc = _cli("analyze", str(SAMPLES / "03_saturated.csv"), *args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {proc.stderr.split('error: ')[1].strip()}"]
    assert message in proc.stderr


def test_scheduler_from_the_environment_and_the_settings_file(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "saturate.toml"
    config.write_text('workers = 3\nscheduler = "tcp://10.1.2.3:8786"\n', encoding="utf-8")
    s = Settings.build(config)
    assert (s.workers, s.scheduler) == (3, "tcp://10.1.2.3:8786")
    monkeypatch.setenv("SATURATE_SCHEDULER", "local")
    s = Settings.build(config)
    assert s.scheduler == "local" and engine_for(s).uses_dask
    assert Settings.build(config, scheduler="tcp://h:1").scheduler == "tcp://h:1"  # options win
    monkeypatch.setenv("SATURATE_SCHEDULER", "tcp:// bad")
    with pytest.raises(SettingsError, match="SATURATE_SCHEDULER must be 'local'"):
        Settings.build(None)


@pytest.mark.subprocess  # a fresh interpreter where distributed cannot be imported
def test_without_dask_installed_the_scheduler_option_says_how_to_get_it() -> None:
    """``distributed`` made unimportable (as on a machine without the extra): one line, exit 2,
    before anything is read; the local pool still works."""
    code = ("import sys; sys.modules['distributed'] = None; from saturate.cli import main; "
            "sys.argv = ['saturate'] + sys.argv[1:]; main()")
    proc = subprocess.run([sys.executable, "-c", code, "analyze", str(SAMPLES / "03_saturated.csv"),
                           "--scheduler", "tcp://127.0.0.1:1", "--format", "json"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "pip install 'saturate[dask]'" in proc.stderr
    proc = subprocess.run([sys.executable, "-c", code, "analyze", str(SAMPLES / "03_saturated.csv"),
                           "--workers", "2", "--n-boot", "20", "--format", "json"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["curves"]
