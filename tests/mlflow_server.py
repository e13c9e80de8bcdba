"""A real ``mlflow server`` for tests and benchmarks: sqlite backend, 127.0.0.1, a free port.

The schema migration (a few seconds) is done once into a template database; every server or
store then starts from a byte copy of it. A server runs in its own process group so stopping it
(by its own process id) also ends the uvicorn worker it spawns.

Usage::

    template = make_template_db(tmp / "template.db")
    with start_server(tmp / "srv", template=template) as server:
        client = server.client()
        ...
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MlflowServer", "make_template_db", "new_store", "start_server", "free_port", "unique_name",
]

_DB_NAME = "mlflow.db"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unique_name(prefix: str) -> str:
    """An experiment name no other test on a shared server uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def make_template_db(path: Path) -> Path:
    """Create a fully migrated, empty MLflow sqlite database at ``path`` (done once per session)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    store = SqlAlchemyStore(f"sqlite:///{path}", str(path.parent / "template-artifacts"))
    store.engine.dispose()
    return path


def new_store(folder: Path, template: Path) -> Path:
    """A fresh tracking database ``folder/mlflow.db`` copied from the migrated template."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / _DB_NAME
    shutil.copyfile(template, db)
    return db


@dataclass
class MlflowServer:
    """A running ``mlflow server``; ``url`` is its tracking URI, ``db`` its sqlite file."""

    url: str
    port: int
    db: Path
    artifacts: Path
    log: Path
    process: subprocess.Popen = field(repr=False)

    @property
    def db_uri(self) -> str:
        """The sqlite URI of the backend store the server writes to."""
        return f"sqlite:///{self.db}"

    def client(self):  # noqa: ANN201 - MlflowClient, imported lazily
        """An ordinary MlflowClient talking to this server over REST."""
        from mlflow import MlflowClient

        return MlflowClient(tracking_uri=self.url)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the server's process group (its own pid), escalating to SIGKILL if needed."""
        if self.process.poll() is not None:
            return
        pgid = self.process.pid  # started with start_new_session: group id == its own pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            self.process.wait(timeout=timeout)
        # A worker that outlived its parent still belongs to the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)

    def __enter__(self) -> MlflowServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(
    folder: Path,
    *,
    template: Path | None = None,
    db: Path | None = None,
    timeout: float = 90.0,
    attempts: int = 3,
) -> MlflowServer:
    """Start ``mlflow server`` on a free port of 127.0.0.1 and wait until ``/health`` answers.

    The backend is ``db`` if given, else ``folder/mlflow.db`` copied from ``template`` (or created
    and migrated by the server itself when neither is given). Retries on another port if the
    chosen one was taken in the meantime.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if db is None:
        db = new_store(folder, template) if template is not None else folder / _DB_NAME
    artifacts = folder / "artifacts"
    artifacts.mkdir(exist_ok=True)
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    env.pop("MLFLOW_TRACKING_URI", None)
    last_error = ""
    for attempt in range(attempts):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = folder / f"server-{port}.log"
        cmd = [
            sys.executable, "-m", "mlflow", "server",
            "--backend-store-uri", f"sqlite:///{db}",
            "--artifacts-destination", str(artifacts),
            "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        ]  # fmt: skip
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                cmd, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        server = MlflowServer(url, port, Path(db), artifacts, log, proc)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _healthy(url):
                return server
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        server.stop()
        last_error = log.read_text(errors="replace")[-2000:]
        if attempt + 1 < attempts:
            time.sleep(0.5)
    raise RuntimeError(f"mlflow server did not become healthy; last log:\n{last_error}")
