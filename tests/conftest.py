"""Shared fixtures. MLflow: one real ``mlflow server`` per test session, fresh stores per test.

- ``mlflow_template``: a migrated, empty sqlite database (made once; copy it, never write to it).
- ``mlflow_server``: a session-wide server (sqlite backend). Tests share it, so each test should
  log into experiments with unique names (``mlflow_server.unique_name``).
- ``fresh_mlflow_server``: a server of its own for one test (a few seconds to start).
- ``mlflow_store``: a fresh ``mlflow.db`` (template copy) in the test's tmp folder, for direct
  sqlite logging with ``MlflowClient(tracking_uri=f"sqlite:///{path}")``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# MLflow's telemetry thread sets and unsets a variable of os.environ while requests reads it
# (a KeyError in another thread's request); the tests send no telemetry anyway.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from mlflow_server import MlflowServer, make_template_db, new_store, start_server  # noqa: E402


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


@pytest.fixture
def mlflow_store(mlflow_template: Path, tmp_path: Path) -> Path:
    return new_store(tmp_path / "mlflow-store", mlflow_template)
