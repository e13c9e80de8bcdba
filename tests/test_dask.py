"""Analysing on Dask: a real ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1
(``tests/dask_cluster.py``, stopped by their own process ids). The JSON is the local sequential
run's, number for number; a worker killed mid-run costs nothing but time; a client given by the
caller is used and left open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run_cli

pytest.importorskip("distributed")
pytestmark = pytest.mark.cluster  # every test starts a scheduler and workers

from dask_cluster import start_cluster  # noqa: E402
from mlflow_server import free_port  # noqa: E402

import saturate  # noqa: E402
from saturate.analysis import dask_engine  # noqa: E402
from saturate.analysis.work import Engine  # noqa: E402
from saturate.errors import SourceError  # noqa: E402
from saturate.report import render  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
N_BOOT = 40


def _doc(analysis: saturate.Analysis) -> dict:
    return json.loads(render(analysis, "json"))


@pytest.fixture(scope="module")
def sequential(sample_runs_sequential: saturate.Analysis) -> dict:
    """``saturate analyze sample_runs/`` in this process, one curve after another (made once a
    session, tests/conftest.py; test_engine.py compares with the same analysis)."""
    assert sample_runs_sequential.settings["n_boot"] == N_BOOT
    return _doc(sample_runs_sequential)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    with start_cluster(workers=2, log_dir=tmp_path_factory.mktemp("dask")) as c:
        yield c


def test_cli_on_a_running_scheduler_gives_the_local_json(cluster, sequential: dict) -> None:
    # in this process (tests/cli_run.py: exit code and streams as a process gives them): the
    # subject is what the command computes on the cluster, not how a process starts
    proc = run_cli("analyze", SAMPLES, "--scheduler", cluster.address, "--n-boot", str(N_BOOT),
                   "--format", "json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "Dask workers" not in proc.stderr  # started with saturate's malloc settings: no warning
    doc = json.loads(proc.stdout)
    assert len(doc["curves"]) == len(sequential["curves"]) == 99
    assert doc["curves"] == sequential["curves"]
    assert doc["diagnostics"] == sequential["diagnostics"]
    assert doc == sequential


def test_a_client_given_is_used_and_left_open(cluster) -> None:
    from distributed import Client

    file = SAMPLES / "03_saturated.csv"
    with Client(cluster.address, timeout=30) as client:
        on_dask = saturate.analyze(file, n_boot=N_BOOT, client=client)
        assert client.status == "running"
    assert _doc(on_dask) == _doc(saturate.analyze(file, n_boot=N_BOOT, workers=1))


def test_a_worker_lost_mid_run_still_gives_every_curve(tmp_path: Path, sequential: dict) -> None:
    """One of two workers (and its nanny) is killed once the first results are in: Dask runs its
    tasks again on the other, and the report is the sequential one."""
    with start_cluster(workers=2, log_dir=tmp_path) as cluster:
        killed: list[int] = []

        def progress(done: int, total: int) -> None:
            if not killed:
                cluster.kill_worker(0)
                killed.append(done)

        analysis = saturate.analyze(SAMPLES, n_boot=N_BOOT, scheduler=cluster.address,
                                    progress=progress)
        assert cluster.workers[0].wait(timeout=30) is not None
        assert cluster.n_workers() == 1
    assert killed and killed[0] < len(analysis.curves)
    assert _doc(analysis) == sequential


def test_local_cluster_gives_the_local_json() -> None:
    files = [SAMPLES / "03_saturated.csv", SAMPLES / "01_still_scaling.csv"]
    local = saturate.analyze(files, n_boot=N_BOOT, workers=1)
    on_dask = saturate.analyze(files, n_boot=N_BOOT, workers=2, scheduler="local")
    assert _doc(on_dask) == _doc(local)


def test_an_unreachable_scheduler_is_a_source_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask_engine, "CONNECT_TIMEOUT", 3)  # nothing listens: no need to wait 20 s
    address = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(SourceError, match="cannot reach the Dask scheduler"):
        saturate.analyze(SAMPLES / "03_saturated.csv", scheduler=address)


def test_the_local_cluster_gives_its_workers_saturates_malloc_settings() -> None:
    import os

    with dask_engine.dask_client(Engine(workers=1, scheduler="local")) as client:
        for name, value in dask_engine.WORKER_MALLOC.items():
            assert set(client.run(os.getenv, name).values()) == {value}


def test_a_trim_threshold_of_the_users_own_is_kept() -> None:
    import dask

    assert dask_engine.worker_malloc_config()[
        "distributed.nanny.pre-spawn-environ"]["MALLOC_MMAP_THRESHOLD_"] == str(32 << 20)
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": 0}):
        assert dask_engine.worker_malloc_config() == {}


def test_workers_with_dasks_default_trim_threshold_get_one_warning(tmp_path: Path) -> None:
    """Workers started with Dask's defaults (MALLOC_TRIM_THRESHOLD_=65536): the analysis runs,
    and one warning names the setting that makes it slow and how to start them."""
    file = SAMPLES / "03_saturated.csv"
    with (start_cluster(workers=1, log_dir=tmp_path, malloc=None) as cluster,
          pytest.warns(dask_engine.DaskWorkerWarning) as caught):
        on_dask = saturate.analyze(file, n_boot=N_BOOT, scheduler=cluster.address)
    slow = [w for w in caught if issubclass(w.category, dask_engine.DaskWorkerWarning)]
    assert len(slow) == 1
    text = str(slow[0].message)
    assert "1 of 1 Dask workers" in text and "MALLOC_TRIM_THRESHOLD_=65536" in text
    assert dask_engine.worker_malloc_environ() in text
    assert dask_engine.worker_malloc_environ() == (
        """DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON='{"MALLOC_TRIM_THRESHOLD_": 134217728, """
        """"MALLOC_MMAP_THRESHOLD_": 33554432}'""")
    assert _doc(on_dask) == _doc(saturate.analyze(file, n_boot=N_BOOT, workers=1))
