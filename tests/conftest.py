"""Shared fixtures. MLflow: one real ``mlflow server`` per test session, fresh stores per test.

- ``mlflow_template``: a migrated, empty sqlite database (made once; copy it, never write to it).
- ``mlflow_server``: a session-wide server (sqlite backend). Tests share it, so each test should
  log into experiments with unique names (``mlflow_server.unique_name``).
- ``fresh_mlflow_server``: a server of its own for one test (a few seconds to start).
- ``mlflow_store``: a fresh ``mlflow.db`` (template copy) in the test's tmp folder, for direct
  sqlite logging with ``MlflowClient(tracking_uri=f"sqlite:///{path}")``.

Analyses, real and made once: ``analysed(source, **settings)`` is ``saturate.analyze(source,
**settings)`` computed once per session (per xdist worker) for each source (a file or folder,
as it is on disk) and settings, so the render, gate and report tests of several modules share
one analysis of the same data; ``sample_runs_sequential`` is ``analysed(sample_runs/, n_boot=40,
workers=1)``, the reference the pool, forked workers and Dask are compared with (test_engine.py,
test_dask.py). Read them, never change them.

One process per analysis: xdist already runs a test process per core, so an analysis under
pytest (in a test, or in a ``python -m saturate`` it starts) analyses its curves in its own
process instead of starting a pool of one worker per core on top. The cores saturate counts
come from joblib, which honours its documented ``LOKY_MAX_CPU_COUNT`` (set to 1 here, inherited
by every process a test starts); a test whose subject is a pool gives ``workers=N`` or unsets it.

Durations: ``--durations-file PATH`` writes every test's time (setup, call and teardown) and
each module's total, slowest first, with the budget (``make durations`` keeps
``tests/durations.txt`` in the repository).

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
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# MLflow's telemetry thread sets and unsets a variable of os.environ while requests reads it
# (a KeyError in another thread's request); the tests send no telemetry anyway.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
# One worker per analysis (see above): no pool of a worker per core inside xdist's workers.
os.environ.setdefault("LOKY_MAX_CPU_COUNT", "1")

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


ROOT = Path(__file__).resolve().parents[1]
#: The bootstrap size of ``sample_runs_sequential``.
SAMPLE_RUNS_N_BOOT = 40


def _on_disk(source: Path) -> tuple:
    """What ``source`` is on disk (its files' paths, sizes and modification times): an analysis
    made of it is reused only while this stays the same."""
    files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
    return tuple((str(p), (st := p.stat()).st_size, st.st_mtime_ns) for p in files)


@pytest.fixture(scope="session")
def analysed() -> Callable[..., Any]:
    """``analysed(source, **settings)``: ``saturate.analyze(source, **settings)``, analysed for
    real once per session for each source and settings and shared by every test that asks for
    the same (read it, never change it)."""
    import saturate

    made: dict[tuple, Any] = {}

    def analyse(source: str | os.PathLike, **settings: Any) -> Any:
        path = Path(source).resolve()
        key = (_on_disk(path), tuple(sorted((k, repr(v)) for k, v in settings.items())))
        if key not in made:
            made[key] = saturate.analyze(path, **settings)
        return made[key]

    return analyse


@pytest.fixture(scope="session")
def sample_runs_sequential(analysed: Callable[..., Any]) -> Any:
    """sample_runs/ analysed in this process, one curve after another (99 curves, ~10 s): the
    reference the pool, forked workers and Dask are compared with."""
    return analysed(ROOT / "sample_runs", n_boot=SAMPLE_RUNS_N_BOOT, workers=1)


# ---- durations: the suite's time, kept where it can be seen -----------------------------------

#: The budget `make durations` states beside the figures (2 cores; issue 41).
BUDGET = ("budget: `make test` <= 5 min on 2 cores in a fresh clone (setup included), "
          "`make test-fast` <= 90 s")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--durations-file", metavar="PATH", default=None,
                     help="write each test's and module's time (setup + call + teardown), "
                          "slowest first, to PATH")


_TIMES: dict[str, float] = {}
_STARTED = [time.monotonic()]


def pytest_sessionstart(session: pytest.Session) -> None:
    _STARTED[0] = time.monotonic()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each phase's time, summed per test (on the xdist controller: every worker's reports)."""
    _TIMES[report.nodeid] = _TIMES.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("--durations-file", None)
    if not path or hasattr(session.config, "workerinput"):  # written once, by the controller
        return
    wall = time.monotonic() - _STARTED[0]
    modules: dict[str, float] = {}
    for nodeid, seconds in _TIMES.items():
        module = nodeid.split("::", 1)[0]
        modules[module] = modules.get(module, 0.0) + seconds
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    workers = getattr(session.config.option, "numprocesses", None) or 0
    dist = getattr(session.config.option, "dist", "no")
    lines = [f"# {BUDGET}",
             f"# this run: {wall:.0f} s wall, {sum(_TIMES.values()):.0f} s in tests, "
             f"{len(_TIMES)} tests, -n {workers} --dist {dist}, exit {int(exitstatus)}, "
             f"load average at the end {' '.join(load) or 'unknown'}",
             "", "## modules (seconds, slowest first)"]
    lines += [f"{t:8.1f}  {m}" for m, t in sorted(modules.items(), key=lambda kv: -kv[1])]
    lines += ["", "## tests over 1 s (seconds, slowest first)"]
    lines += [f"{t:8.1f}  {n}" for n, t in sorted(_TIMES.items(), key=lambda kv: -kv[1]) if t >= 1]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def mlflow_store(mlflow_template: Path, tmp_path: Path) -> Path:
    return new_store(tmp_path / "mlflow-store", mlflow_template)
