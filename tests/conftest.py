"""Shared fixtures. MLflow: one real ``mlflow server`` per test session, fresh stores per test.

- ``mlflow_template``: a migrated, empty sqlite database (made once; copy it, never write to it).
- ``mlflow_server``: a session-wide server (sqlite backend). Tests share it, so each test should
  log into experiments with unique names (``mlflow_server.unique_name``).
- ``fresh_mlflow_server``: a server of its own for one test (a few seconds to start).
- ``mlflow_store``: a fresh ``mlflow.db`` (template copy) in the test's tmp folder, for direct
  sqlite logging with ``MlflowClient(tracking_uri=f"sqlite:///{path}")``.

Analyses: ``sample_runs_sequential``: ``saturate.analyze(sample_runs/, n_boot=40, workers=1)``,
made once per session for the tests that compare other engines with it (test_engine.py,
test_dask.py); read it, never change it.

Lanes (markers declared in pyproject.toml): a test is classed by the fixtures it uses
(``LANE_FIXTURES``: a test on ``mlflow_server`` is a ``server`` test without saying so) or by a
module's ``pytestmark``. ``make test`` runs every lane; ``make test-fast`` deselects the heavy
ones and sets ``SATURATE_FAST_LANE=1``, under which a test that starts a Python process or a
server program without a lane marker (in the test or any fixture it uses) fails and says which
marker it needs.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# MLflow's telemetry thread sets and unsets a variable of os.environ while requests reads it
# (a KeyError in another thread's request); the tests send no telemetry anyway.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from mlflow_server import MlflowServer, make_template_db, new_store, start_server  # noqa: E402

#: The fixtures that class a test into a lane (also when used through another fixture).
LANE_FIXTURES = {
    "mlflow_server": "server",
    "fresh_mlflow_server": "server",
    "pg": "server",  # tests/test_ingest_postgres.py: a throwaway PostgreSQL cluster
    "cluster": "cluster",  # tests/test_dask.py: a dask scheduler with workers
    "kernel_env": "notebook",  # tests/test_notebooks.py: a Jupyter kernel per notebook
    "written": "subprocess",  # tests/test_ingest_wandb.py: runs written by wandb in a process
    "finished_log": "subprocess",  # tests/test_watch_wandb.py: the same
}
#: Every lane `make test-fast` leaves out.
HEAVY_LANES = ("server", "browser", "cluster", "notebook", "subprocess", "slow")
#: Programs whose start makes a test heavy (besides this Python interpreter).
_HEAVY_PROGRAMS = ("python", "chromium", "chrome", "mlflow", "initdb", "pg_ctl", "postgres",
                   "dask", "saturate", "jupyter")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add the lane marker of every lane fixture a test uses."""
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            lane = LANE_FIXTURES.get(name)
            if lane is not None and item.get_closest_marker(lane) is None:
                item.add_marker(lane)


def _heavy_program(args: object) -> bool:
    """Whether ``Popen(args)`` starts a Python interpreter or a server program."""
    if isinstance(args, (str, bytes, os.PathLike)):
        words = os.fsdecode(args).split()[:1]
    else:
        words = [os.fsdecode(a) for a in list(args)[:1]]  # type: ignore[call-overload]
    if not words:
        return False
    return words[0] == sys.executable or Path(words[0]).name.startswith(_HEAVY_PROGRAMS)


@contextlib.contextmanager
def _refusing_heavy_processes(item: pytest.Item) -> Iterator[None]:
    """While ``item`` is set up, run and torn down (its fixtures of any scope included), starting
    a Python process or a server program fails it, naming the marker it lacks."""
    real_init = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen, args: object, *rest: object, **kwargs: object) -> None:
        if _heavy_program(args):
            pytest.fail(f"{item.nodeid} starts {args!r} in the fast lane: mark it 'subprocess' "
                        "(or 'server', 'browser', ...; a fixture that starts it can be named in "
                        "LANE_FIXTURES) or run the CLI in-process (tests/cli_run.py)",
                        pytrace=False)
        real_init(self, args, *rest, **kwargs)  # type: ignore[arg-type]

    subprocess.Popen.__init__ = guarded  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = real_init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """In the fast lane (``SATURATE_FAST_LANE=1``, set by ``make test-fast``), a test of no heavy
    lane that starts a process fails: the lane stays fast without anyone timing it."""
    if (os.environ.get("SATURATE_FAST_LANE") != "1"
            or any(item.get_closest_marker(lane) for lane in HEAVY_LANES)):
        return (yield)
    with _refusing_heavy_processes(item):
        return (yield)


@pytest.fixture(scope="session")
def mlflow_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template_db(tmp_path_factory.mktemp("mlflow-template") / "template.db")


@pytest.fixture(scope="session")
def mlflow_server(
    mlflow_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MlflowServer]:
    server = start_server(tmp_path_factory.mktemp("mlflow-server"), template=mlflow_template)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh_mlflow_server(mlflow_template: Path, tmp_path: Path) -> Iterator[MlflowServer]:
    server = start_server(tmp_path / "mlflow-server", template=mlflow_template)
    try:
        yield server
    finally:
        server.stop()


#: The bootstrap size of ``sample_runs_sequential``.
SAMPLE_RUNS_N_BOOT = 40


@pytest.fixture(scope="session")
def sample_runs_sequential():
    """sample_runs/ analysed in this process, one curve after another (99 curves, ~10 s): the
    reference the pool, forked workers and Dask are compared with."""
    import saturate

    return saturate.analyze(Path(__file__).resolve().parents[1] / "sample_runs",
                            n_boot=SAMPLE_RUNS_N_BOOT, workers=1)


@pytest.fixture
def mlflow_store(mlflow_template: Path, tmp_path: Path) -> Path:
    return new_store(tmp_path / "mlflow-store", mlflow_template)
