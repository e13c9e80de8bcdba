"""MLflow ingestion against a real PostgreSQL server: a throwaway cluster (initdb into a temp dir,
127.0.0.1 on a free port, every statement logged), MLflow creating its own schema there and
logging runs through its ordinary client, then the read-only fast path, the MlflowClient route
and the same runs in a sqlite store must give one tidy table, and reading must not write."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from mlflow_server import free_port, new_store
from test_ingest_mlflow import log_runs

import saturate
from saturate.errors import SourceError
from saturate.ingest import mlflow_db
from saturate.ingest.mlflow import load_mlflow, resolve_source
from saturate.ingest.mlflow_db import client_uri, database_url
from saturate.table.curves import DataWarning

DRIVERS = [d for d in ("psycopg", "psycopg2") if importlib.util.find_spec(d)]
_PG_PROGRAMS = ("initdb", "pg_ctl", "postgres")


def _pg_bindir() -> Path | None:
    """PostgreSQL's server binaries: on PATH, else Debian's newest /usr/lib/postgresql/<ver>/bin."""
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).parent] if on_path else []
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else -1,
        reverse=True,
    )
    for folder in candidates + debian:
        if all((folder / prog).is_file() for prog in _PG_PROGRAMS):
            return folder
    return None


def _server_user() -> str | None:
    """Who runs the server: postgres refuses root, so root hands it to the ``postgres`` user."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "missing"
    return "postgres"


BINDIR = _pg_bindir()
SERVER_USER = _server_user()
pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(BINDIR is None, reason="no PostgreSQL server binaries (apt-get install postgresql)"),
    pytest.mark.skipif(not DRIVERS, reason="no PostgreSQL driver (pip install 'psycopg[binary]' or psycopg2-binary)"),
    pytest.mark.skipif(SERVER_USER == "missing", reason="running as root without a 'postgres' user to run the server"),
    pytest.mark.skipif(SERVER_USER == "postgres" and not shutil.which("runuser"), reason="running as root without runuser"),
]  # fmt: skip

USER = "saturate"
MLFLOW_TABLES = ("experiments", "runs", "metrics", "latest_metrics", "params", "tags", "alembic_version")


@dataclass
class PgCluster:
    """A running throwaway cluster; ``uri(db)`` is a SQLAlchemy/MLflow URI with the password."""

    root: Path
    port: int
    password: str

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def uri(self, db: str = "mlflow", *, driver: str | None = None, password: str | None = None,
            app: str | None = None) -> str:  # fmt: skip
        scheme = f"postgresql+{driver}" if driver else "postgresql"
        query = f"?application_name={app}" if app else ""
        pw = self.password if password is None else password
        return f"{scheme}://{USER}:{pw}@127.0.0.1:{self.port}/{db}{query}"

    def engine(self, db: str = "postgres"):  # noqa: ANN201 - a SQLAlchemy engine
        import sqlalchemy as sa

        url = self.uri(db, driver=DRIVERS[0], app="pgtest-admin")
        return sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)

    def sql(self, query: str, db: str = "postgres") -> list[tuple]:
        import sqlalchemy as sa

        engine = self.engine(db)
        try:
            with engine.connect() as conn:
                result = conn.execute(sa.text(query))
                return [tuple(r) for r in result] if result.returns_rows else []
        finally:
            engine.dispose()

    def stop(self) -> None:
        """``pg_ctl stop``, then the postmaster's own pid if it is still there."""
        proc = _as_server_user([str(BINDIR / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                                "-t", "20", "stop"])  # fmt: skip
        pidfile = self.data / "postmaster.pid"
        if proc.returncode != 0 and pidfile.is_file():
            with contextlib.suppress(ValueError, ProcessLookupError, OSError):
                os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)


def _as_server_user(cmd: list[str]) -> subprocess.CompletedProcess:
    if SERVER_USER == "postgres":
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def _start_cluster() -> PgCluster:
    root = Path(tempfile.mkdtemp(prefix="saturate-pg-"))  # not tmp_path: the server user needs it
    password = secrets.token_hex(12)
    (root / "sock").mkdir()
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if SERVER_USER == "postgres":
        import pwd

        entry = pwd.getpwnam("postgres")
        for path in (root, root / "sock", pwfile):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    init = _as_server_user([
        str(BINDIR / "initdb"), "-D", str(root / "data"), "-U", USER, f"--pwfile={pwfile}",
        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
        "--no-sync", "--no-instructions",
    ])  # fmt: skip
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"initdb failed: {init.stderr.strip()[-1000:]}")
    cluster = None
    try:
        for _attempt in range(3):  # the free port may be taken before the server binds it
            port = free_port()
            cluster = PgCluster(root, port, password)
            opts = (
                f"-p {port} -k {root / 'sock'} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c autovacuum=off "
                "-c log_statement=all -c log_line_prefix=@@%p:%x:%a@@"
            )
            started = _as_server_user([str(BINDIR / "pg_ctl"), "-D", str(cluster.data),
                                       "-l", str(cluster.log), "-o", opts, "-w", "-t", "30",
                                       "start"])  # fmt: skip
            if started.returncode == 0:
                return cluster
            cluster.stop()
        log = cluster.log.read_text(errors="replace")[-1000:] if cluster.log.exists() else ""
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr.strip()[-500:]} {log}")
    except BaseException:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
        raise


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = _start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(cluster.root, ignore_errors=True)


@pytest.fixture(scope="module")
def stores(pg: PgCluster, mlflow_template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same runs logged by MlflowClient into PostgreSQL (MLflow creates the schema) and into a
    sqlite store; MLflow's pooled connections are then closed so the database is quiet."""
    from mlflow import MlflowClient

    pg.sql("CREATE DATABASE mlflow")
    log_runs(MlflowClient(tracking_uri=pg.uri()), "rl", "other", "gone")
    sqlite_db = new_store(tmp_path_factory.mktemp("pg-twin"), mlflow_template)
    log_runs(MlflowClient(tracking_uri=f"sqlite:///{sqlite_db}"), "rl", "other", "gone")
    _quiesce(pg)
    return {"pg": pg, "sqlite": f"sqlite:///{sqlite_db}"}


def _quiesce(pg: PgCluster) -> None:
    """End every other session (MLflow keeps a pool) so their pending statistics are flushed."""
    pg.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
           "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")  # fmt: skip
    for _ in range(200):
        busy = pg.sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                      "AND pid <> pg_backend_pid()")[0][0]  # fmt: skip
        if not busy:
            return
        pg.sql("SELECT pg_sleep(0.05)")
    pytest.fail("MLflow's sessions did not end")


def _wait_until_closed(pg: PgCluster, app_like: str) -> None:
    """Wait for the sessions of these applications to end (fails if they stay open)."""
    query = f"SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE '{app_like}'"
    for _ in range(100):
        if not pg.sql(query)[0][0]:
            return
        pg.sql("SELECT pg_sleep(0.05)")
    pytest.fail(f"sessions {app_like!r} are still open")


def _load(source: str, *, wide: bool = False, **kw: object) -> pd.DataFrame:
    """The points read (``wide``: with the run facts on every point)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        table = saturate.load(source, **kw)
    return table.to_frame() if wide else table.points


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    out = df.drop(columns=["source", "run_id"]).sort_values(["run", "metric", "step"])
    return out.reset_index(drop=True)


def _state(pg: PgCluster, db: str = "mlflow") -> dict:
    """What any write would change: the next transaction id (a write needs one), the database's
    inserted/updated/deleted tuple counters, and a digest of every MLflow table."""
    digests = {
        t: pg.sql(f"SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM {t} x", db)[0][0]
        for t in MLFLOW_TABLES
    }  # fmt: skip
    counters = pg.sql(
        "SELECT tup_inserted, tup_updated, tup_deleted FROM pg_stat_database "
        f"WHERE datname = '{db}'"
    )[0]
    next_xid = pg.sql("SELECT pg_snapshot_xmax(pg_current_snapshot())::text")[0][0]
    return {"next_xid": next_xid, "tuples": counters, "tables": digests}


def _statements(pg: PgCluster, offset: int, app: str) -> list[tuple[str, str, str]]:
    """(backend pid, transaction id, statement) the server logged for ``app`` after ``offset``."""
    with open(pg.log, "rb") as fh:
        fh.seek(offset)
        text = fh.read().decode(errors="replace")
    out = []
    for entry in re.split(r"^@@", text, flags=re.M)[1:]:
        head, _, rest = entry.partition("@@")
        pid, xid, name = (head.split(":", 2) + ["", ""])[:3]
        match = re.match(r"\s*LOG:\s+(?:statement|execute [^:]*):\s*(.*)", rest, re.S)
        if name == app and match:
            out.append((pid, xid, " ".join(match.group(1).split())))
    return out


# ----------------------------------------------------------------------------- equality


def test_postgres_fast_path_equals_client_route_and_sqlite(stores: dict) -> None:
    pg = stores["pg"]
    fast = _load(pg.uri())
    assert set(fast["run"]) == {"ppo-s0", "cispo-s0", "cispo-s1", "crashed", "solo"}
    assert set(fast["experiment"]) == {"rl", "other"}
    assert pg.password not in fast["source"].iloc[0]
    pd.testing.assert_frame_equal(fast, _load(pg.uri(), fast=False), obj="client route")
    pd.testing.assert_frame_equal(_comparable(fast), _comparable(_load(stores["sqlite"])), obj="sqlite")
    for driver in DRIVERS:  # either driver, and Heroku's postgres:// spelling, read the same
        for uri in (pg.uri(driver=driver), pg.uri(driver=driver).replace("postgresql+", "postgres+")):
            for flag in (True, False):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DataWarning)
                    got = load_mlflow(uri, fast=flag).points
                pd.testing.assert_frame_equal(got.drop(columns="source"), fast.drop(columns="source"))


def test_postgres_content_and_non_finite_values(stores: dict) -> None:
    uri = stores["pg"].uri()
    with pytest.warns(DataWarning, match=r"dropped 3 non-finite value\(s\) \(1 NaN, 2 infinite\)"):
        ev = saturate.load(uri, experiment="rl", metric="eval/*").points
    ppo = ev[ev["run"] == "ppo-s0"]
    assert ppo.loc[ppo["step"] == 230, "value"].tolist() == [1e300]
    assert not {200, 210, 220} & set(ppo["step"])
    df = _load(uri, experiment="rl", filter="params.recipe = 'cispo'", metric="reward",
               wide=True)
    assert dict(df.groupby("run")["run_status"].first()) == {"cispo-s0": "FINISHED", "cispo-s1": "RUNNING"}
    relogged = _load(uri, experiment="rl", run="ppo-s0", metric="reward")
    assert relogged.loc[relogged["step"] == 100, "value"].tolist() == [7.0]  # the later value wins
    assert set(_load(uri, experiment="rl", filter="metrics.loss < 1")["run"]) == {"crashed"}


def test_parallel_batches_read_the_same_points(
    stores: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several run batches on a server database are read over parallel read-only connections,
    and each batch's numbers in chunks of whole runs (a run longer than a chunk alone)."""
    serial, sqlite_serial = _load(stores["pg"].uri()), _load(stores["sqlite"])
    monkeypatch.setattr(mlflow_db, "RUN_BATCH", 2)
    pd.testing.assert_frame_equal(_load(stores["pg"].uri()), serial)
    for chunk in (100, 300):  # runs hold 10 to 290 points
        monkeypatch.setattr(mlflow_db, "POINT_CHUNK", chunk)
        pd.testing.assert_frame_equal(_load(stores["pg"].uri()), serial)
        pd.testing.assert_frame_equal(_load(stores["sqlite"]), sqlite_serial, obj="sqlite")


# ----------------------------------------------------------------------------- read-only


def test_reading_sends_only_reads(stores: dict) -> None:
    pg = stores["pg"]
    before = _state(pg)
    offset = pg.log.stat().st_size
    assert len(_load(pg.uri(app="saturate-fast"), filter="metrics.loss < 1")) > 0
    assert len(_load(pg.uri(app="saturate-fast"))) > 0
    assert len(_load(pg.uri(app="saturate-client"), fast=False)) > 0
    assert _state(pg) == before
    _wait_until_closed(pg, "saturate-%")  # no session left open, not even MLflow's pool
    fast = _statements(pg, offset, "saturate-fast")
    client = _statements(pg, offset, "saturate-client")
    assert fast and client
    assert {xid for _, xid, _ in fast + client} == {"0"}  # no session ever took a transaction id
    read_only: dict[str, bool] = {}
    for pid, _, stmt in fast:
        verb = stmt.split(" ", 1)[0].upper().rstrip(";")
        assert verb in {"BEGIN", "SELECT", "SHOW", "SAVEPOINT", "RELEASE", "ROLLBACK", "DEALLOCATE", ""}, stmt
        if verb == "BEGIN":
            read_only[pid] = "READ ONLY" in stmt.upper()
        if re.search(rf"\bFROM ({'|'.join(MLFLOW_TABLES)})\b", stmt):
            assert read_only.get(pid), f"outside a read-only transaction: {stmt[:120]}"


def test_client_route_sessions_cannot_write(stores: dict) -> None:
    """MlflowClient gets a URI whose sessions are read-only: a write is refused by the server."""
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException
    from sqlalchemy.exc import SQLAlchemyError

    pg = stores["pg"]
    uri = client_uri(resolve_source(pg.uri()))
    assert "default_transaction_read_only" in uri
    before = _state(pg)
    client = MlflowClient(tracking_uri=uri)
    assert {e.name for e in client.search_experiments()} >= {"rl", "other"}
    with pytest.raises((MlflowException, SQLAlchemyError), match="read-only transaction"):
        client.create_experiment("should-not-exist")
    _quiesce(pg)
    assert _state(pg)["tables"] == before["tables"]


def test_schema_mlflow_would_migrate_is_never_touched(stores: dict) -> None:
    """A copy of the database at an older alembic revision: the fast path reads it; the client
    route refuses (MLflow would migrate it). With a column gone, nothing reads it, nothing writes."""
    pg = stores["pg"]
    pg.sql("CREATE DATABASE mlflow_old TEMPLATE mlflow")
    pg.sql(f"UPDATE alembic_version SET version_num = '{_previous_revision()}'", db="mlflow_old")
    uri = pg.uri("mlflow_old")
    _quiesce(pg)
    before = _state(pg, "mlflow_old")
    pd.testing.assert_frame_equal(
        _load(uri).drop(columns="source"), _load(pg.uri()).drop(columns="source")
    )
    with pytest.raises(SourceError, match="would have to migrate") as info:
        _load(uri, fast=False)
    assert "\n" not in str(info.value) and pg.password not in str(info.value)
    _quiesce(pg)
    assert _state(pg, "mlflow_old") == before
    pg.sql("ALTER TABLE runs DROP COLUMN user_id", db="mlflow_old")
    _quiesce(pg)
    before = _state(pg, "mlflow_old")
    with pytest.warns(RuntimeWarning, match="fast path unavailable"), pytest.raises(SourceError):
        _load(uri)
    _quiesce(pg)
    assert _state(pg, "mlflow_old") == before


def _previous_revision() -> str:
    """The schema revision just before the installed MLflow's head."""
    import mlflow.store
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(str(Path(mlflow.store.__file__).parent / "db_migrations"))
    down = scripts.get_revision(scripts.get_current_head()).down_revision
    return str(down if isinstance(down, str) else down[0])


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("fast", [True, False])
def test_connection_failures_are_one_clear_line_without_the_password(
    pg: PgCluster, fast: bool
) -> None:
    cases = {
        "password authentication failed": pg.uri("postgres", password="hunter2-wrong"),
        "does not exist": pg.uri("no_such_db"),
        "Connection refused": pg.uri("postgres").replace(f":{pg.port}/", f":{free_port()}/"),
    }
    for reason, uri in cases.items():
        with pytest.raises(SourceError, match="cannot open the database") as info:
            saturate.load(uri, fast=fast)
        msg = str(info.value)
        assert reason in msg and "\n" not in msg, msg
        assert "hunter2" not in msg and pg.password not in msg, msg
        assert msg.startswith("postgresql://***@127.0.0.1:"), msg


def test_database_url_picks_an_installed_driver() -> None:
    url = database_url("postgres://u:p@db.example.com:5433/mlflow?sslmode=require", "label")
    assert url.get_backend_name() == "postgresql" and url.get_driver_name() in DRIVERS
    assert url.query == {"sslmode": "require"} and url.password == "p"
    explicit = database_url("postgresql+psycopg2://u@h/db", "label")
    assert explicit.drivername == "postgresql+psycopg2"
    src = resolve_source("postgresql://u:p@h/db?options=-c%20search_path%3Dmlflow")
    opts = database_url(client_uri(src), "label").query["options"]
    assert opts == "-c search_path=mlflow -c default_transaction_read_only=on"


def test_watch_polls_postgres_with_read_only_sql(stores: dict, tmp_path: Path) -> None:
    from saturate.tracker import HistoryStore, Watcher, make_poller
    from saturate.tracker.poll import DbPoller

    pg = stores["pg"]
    before = _state(pg)
    poller = make_poller(pg.uri(app="saturate-watch"), experiment="rl", metric="reward")
    assert isinstance(poller, DbPoller)
    with HistoryStore(tmp_path / "h.db") as st:
        first = Watcher(poller, st).poll_once()
        again = Watcher(poller, st).poll_once()
        stored = st.points()
    direct = _load(pg.uri(), experiment="rl", metric="reward")
    assert first.baseline and first.new_points == len(stored) == len(direct)
    assert (again.fetched, again.new_points) == (0, 0)
    assert _state(pg) == before  # read-only: nothing written
