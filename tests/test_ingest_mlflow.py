"""MLflow ingestion against the real thing: a live ``mlflow server``, its sqlite store, and a legacy
``mlruns/`` folder written by MLflow itself, all holding the same runs and read back into tidy
tables that must agree."""

from __future__ import annotations

import hashlib
import http.server
import math
import re
import shutil
import sqlite3
import threading
import urllib.request
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow_server import MlflowServer, free_port, unique_name

from saturate.errors import InputError, SourceError
from saturate.ingest.mlflow import Selection, load_mlflow, resolve_source
from saturate.ingest.mlflow_common import is_mlflow_source
from saturate.ingest.mlflow_db import read_database, schema_problem
from saturate.table import Table
from saturate.table.curves import DataWarning

BASE_TS = 1_700_000_000_000
RUNS = [
    # name, params, tags, final status (None: left RUNNING)
    ("ppo-s0", {"recipe": "ppo", "seed": "0"}, {"team": "rl"}, "FINISHED"),
    ("cispo-s0", {"recipe": "cispo", "seed": "0"}, {"team": "rl"}, "FINISHED"),
    ("cispo-s1", {"recipe": "cispo", "seed": "1"}, {}, None),
    ("crashed", {"recipe": "ppo", "seed": "2"}, {}, "FAILED"),
    ("removed", {"recipe": "ppo", "seed": "3"}, {}, "FINISHED"),  # deleted after logging
]
N_STEPS = 120


def _metrics(j: int, name: str) -> list:
    from mlflow.entities import Metric

    out = []
    for s in range(N_STEPS):
        out.append(Metric("reward", 1 - math.exp(-s / 40) + 0.01 * j, BASE_TS + 10 * s, s))
    for s in range(0, N_STEPS, 10):
        out.append(Metric("eval/reward", 0.5 + s / 1000 + j, BASE_TS + 10 * s + 1, s))
    if j == 0:
        # A step logged again later (the later value wins), non-finite values, a huge finite one.
        out.append(Metric("reward", 7.0, BASE_TS + 10 * N_STEPS + 5, 100))
        out.append(Metric("eval/reward", math.nan, BASE_TS + 99_001, 200))
        out.append(Metric("eval/reward", math.inf, BASE_TS + 99_002, 210))
        out.append(Metric("eval/reward", -math.inf, BASE_TS + 99_003, 220))
        out.append(Metric("eval/reward", 1e300, BASE_TS + 99_004, 230))
    if name == "crashed":
        out += [Metric("loss", 2.0 / (s + 1), BASE_TS + 7 * s, s) for s in range(40)]
    return out


def log_runs(client, exp_name: str, other_name: str, gone_name: str) -> None:  # noqa: ANN001
    """Log the fixed set of runs through an ordinary MlflowClient (server or file store)."""
    from mlflow.entities import Metric, Param

    exp_id = client.create_experiment(exp_name)
    for j, (name, params, tags, status) in enumerate(RUNS):
        run = client.create_run(exp_id, run_name=name, tags=tags, start_time=BASE_TS + j)
        rid = run.info.run_id
        client.log_batch(rid, metrics=_metrics(j, name), params=[Param(k, v) for k, v in params.items()])
        if status:
            client.set_terminated(rid, status=status, end_time=BASE_TS + 10**6)
        if name == "removed":
            client.delete_run(rid)
    other = client.create_experiment(other_name)
    solo = client.create_run(other, run_name="solo", start_time=BASE_TS)
    client.log_batch(
        solo.info.run_id, metrics=[Metric("reward", s / 10, BASE_TS + s, s) for s in range(10)]
    )
    client.set_terminated(solo.info.run_id, end_time=BASE_TS + 10**6)
    gone = client.create_experiment(gone_name)
    client.create_run(gone, run_name="ghost", start_time=BASE_TS)
    client.delete_experiment(gone)


@pytest.fixture(scope="module")
def stores(mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same runs logged to the shared server and to a legacy file store."""
    from mlflow import MlflowClient

    names = {k: unique_name(k) for k in ("rl", "other", "gone")}
    log_runs(mlflow_server.client(), names["rl"], names["other"], names["gone"])
    mlruns = tmp_path_factory.mktemp("legacy") / "mlruns"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        log_runs(MlflowClient(tracking_uri=mlruns.as_uri()), names["rl"], names["other"], names["gone"])
    return {"server": mlflow_server, "mlruns": mlruns, **names}


def _sources(stores: dict) -> dict[str, str]:
    server = stores["server"]
    return {
        "server": server.url,
        "sqlite_uri": server.db_uri,
        "db_path": str(server.db),
        "folder": str(server.db.parent),
        "mlruns": str(stores["mlruns"]),
        "file_uri": stores["mlruns"].as_uri(),
    }


def _read(source: str, **kw: object) -> Table:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return load_mlflow(source, **kw)


def _load(source: str, **kw: object) -> pd.DataFrame:
    return _read(source, **kw).points


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    """Drop what legitimately differs between stores (the source label and generated run ids)."""
    out = df.drop(columns=["source", "run_id"]).sort_values(["run", "metric", "step"])
    return out.reset_index(drop=True)


def test_every_source_kind_gives_the_same_table(stores: dict) -> None:
    tables = {kind: _read(src, experiment=[stores["rl"]]) for kind, src in _sources(stores).items()}
    ref = tables["server"].points
    assert set(ref["run"]) == {"ppo-s0", "cispo-s0", "cispo-s1", "crashed"}
    for kind, table in tables.items():
        df = table.points
        assert table.axis.name == "step", kind
        assert (df["source"] == _sources(stores)[kind]).all()
        if kind in ("sqlite_uri", "db_path", "folder"):  # same database: same run ids
            pd.testing.assert_frame_equal(
                df.drop(columns="source"), ref.drop(columns="source"), obj=kind
            )
        pd.testing.assert_frame_equal(_comparable(df), _comparable(ref), obj=kind)


def test_table_content_matches_what_was_logged(stores: dict) -> None:
    df = _read(stores["server"].url, experiment=[stores["rl"]]).to_frame()
    runs = df.groupby("run")
    assert dict(runs["run_status"].first()) == {
        "ppo-s0": "FINISHED", "cispo-s0": "FINISHED", "cispo-s1": "RUNNING", "crashed": "FAILED",
    }  # fmt: skip
    assert runs["params.recipe"].first()["cispo-s1"] == "cispo"
    assert runs["tags.team"].first()["ppo-s0"] == "rl"
    assert runs["tags.mlflow.runName"].first()["crashed"] == "crashed"
    assert not [c for c in df.columns if c.startswith("tags.mlflow.") and c != "tags.mlflow.runName"]
    assert set(df.loc[df["run"] == "crashed", "metric"]) == {"reward", "eval/reward", "loss"}
    reward = df[(df["run"] == "cispo-s0") & (df["metric"] == "reward")]
    assert reward["step"].tolist() == list(range(N_STEPS))
    assert reward["value"].tolist() == [1 - math.exp(-s / 40) + 0.01 for s in range(N_STEPS)]
    np.testing.assert_allclose(reward["timestamp"], (BASE_TS + 10 * np.arange(N_STEPS)) / 1000)
    ppo = df[(df["run"] == "ppo-s0")]
    assert ppo.loc[(ppo["metric"] == "reward") & (ppo["step"] == 100), "value"].tolist() == [7.0]
    ev = ppo[ppo["metric"] == "eval/reward"]
    assert 200 not in set(ev["step"]) and 210 not in set(ev["step"]) and 220 not in set(ev["step"])
    assert ev.loc[ev["step"] == 230, "value"].tolist() == [1e300]


@pytest.mark.parametrize("kind", ["server", "sqlite_uri", "mlruns"])
def test_non_finite_values_are_mapped_back_then_dropped_with_a_warning(
    stores: dict, kind: str
) -> None:
    src = _sources(stores)[kind]
    with pytest.warns(DataWarning, match=r"dropped 3 non-finite value\(s\) \(1 NaN, 2 infinite\)"):
        load_mlflow(src, experiment=[stores["rl"]], metric=["eval/*"])


@pytest.mark.parametrize("kind", ["server", "sqlite_uri", "mlruns"])
def test_filter_and_metric_globs_select_the_same_curves(stores: dict, kind: str) -> None:
    src = _sources(stores)[kind]
    df = _load(src, experiment=[stores["rl"]], filter="params.recipe = 'cispo'", metric=["rew*"])
    assert sorted(df["run"].unique()) == ["cispo-s0", "cispo-s1"]
    assert set(df["metric"]) == {"reward"}
    by_metric = _load(src, experiment=[stores["rl"]], filter="metrics.loss < 1")
    assert set(by_metric["run"]) == {"crashed"}
    by_attr = _load(src, experiment=[stores["rl"]], filter="attributes.status = 'RUNNING'")
    assert set(by_attr["run"]) == {"cispo-s1"}


@pytest.mark.parametrize("kind", ["server", "db_path", "mlruns"])
def test_experiment_selection_and_its_errors(stores: dict, kind: str) -> None:
    src = _sources(stores)[kind]
    both = _load(src, experiment=[stores["rl"], stores["other"]])
    assert set(both["experiment"]) == {stores["rl"], stores["other"]}
    assert set(both.loc[both["run"] == "solo", "experiment"]) == {stores["other"]}
    with pytest.raises(InputError, match=r"--experiment 'no-such-experiment' matches no experiment"
                       r"; active experiments: .*" + re.escape(stores["rl"])):
        load_mlflow(src, experiment=["no-such-experiment"])
    with pytest.raises(InputError, match="deleted"):
        load_mlflow(src, experiment=[stores["gone"]])
    with pytest.raises(InputError, match=r"--metric 'nothing\*' matches no metric; metrics: "
                       r"\S*eval/reward"):
        load_mlflow(src, experiment=[stores["rl"]], metric=["nothing*"])


def test_legacy_metric_lines_with_extra_fields_or_garbage(stores: dict, tmp_path: Path) -> None:
    mlruns = tmp_path / "mlruns"
    shutil.copytree(stores["mlruns"], mlruns)
    solo = next(p for p in mlruns.rglob("metrics/reward") if "solo" in _run_name(p))
    with open(solo, "a") as fh:
        fh.write(f"{BASE_TS + 50} 5.5 50 someRunId eval_set abc123\n")  # dataset-tagged point
        fh.write(f"{BASE_TS + 60} 6.5\n")  # no step: MLflow reads step 0 (replaces step 0 here)
        fh.write("not a metric line\n")
    with pytest.warns(DataWarning, match="skipped 1 malformed metric line"):
        df = load_mlflow(mlruns, experiment=[stores["other"]]).points
    got = dict(zip(df["step"], df["value"], strict=True))
    assert got[50] == 5.5 and got[0] == 6.5 and got[9] == 0.9 and len(got) == 11


def _run_name(metric_file: Path) -> str:
    run_dir = metric_file.parents[1]
    return (run_dir / "tags" / "mlflow.runName").read_text()


def test_default_selection_reads_every_active_experiment(stores: dict) -> None:
    df = _load(str(stores["mlruns"]))
    assert set(df["experiment"]) == {stores["rl"], stores["other"]}
    assert "ghost" not in set(df["run"]) and "removed" not in set(df["run"])


def test_experiment_id_selects_on_each_store(stores: dict) -> None:
    from mlflow import MlflowClient

    server_id = stores["server"].client().get_experiment_by_name(stores["rl"]).experiment_id
    df = _load(stores["server"].db_uri, experiment=[server_id])
    assert set(df["experiment"]) == {stores["rl"]}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        file_id = MlflowClient(stores["mlruns"].as_uri()).get_experiment_by_name(stores["rl"])
    assert set(_load(str(stores["mlruns"]), experiment=[file_id.experiment_id])["experiment"]) == {
        stores["rl"]
    }


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_loading_never_writes_to_the_store(stores: dict, tmp_path: Path) -> None:
    store = tmp_path / "copy"
    store.mkdir()
    with sqlite3.connect(stores["server"].db) as src, sqlite3.connect(store / "mlflow.db") as dst:
        src.backup(dst)
    mlruns = tmp_path / "mlruns"
    shutil.copytree(stores["mlruns"], mlruns)
    before = (_tree_digest(store), _tree_digest(mlruns))
    tables = [
        _load(f"sqlite:///{store / 'mlflow.db'}", experiment=[stores["rl"]]),
        _load(str(store / "mlflow.db"), experiment=[stores["rl"]], filter="metrics.loss < 1"),
        _load(str(store), experiment=[stores["rl"]], fast=False),
        _load(str(mlruns), experiment=[stores["rl"]]),
    ]
    assert all(len(t) > 0 for t in tables)
    assert (_tree_digest(store), _tree_digest(mlruns)) == before


def test_slow_routes_agree_with_fast_paths(stores: dict) -> None:
    exps = [stores["rl"], stores["other"]]
    fast = _load(stores["server"].db_uri, experiment=exps)
    slow = _load(stores["server"].db_uri, experiment=exps, fast=False)
    pd.testing.assert_frame_equal(fast, slow)
    src = resolve_source(stores["server"].db_uri)
    for arrow in (True, False):  # ADBC columns and the sqlite3 module give the same points
        got = read_database(src, Selection(experiment=tuple(exps)), arrow=arrow)[2]
        assert got["value"].isna().sum() == 1 and np.isinf(got["value"]).sum() == 2
        pd.testing.assert_frame_equal(got.sort_values(["run_id", "metric", "step", "timestamp"])
                                      .reset_index(drop=True), sorted_points(src, exps))
    bulk = _load(stores["server"].url, experiment=exps)
    public = _load(stores["server"].url, experiment=exps, fast=False, max_workers=1)
    pd.testing.assert_frame_equal(bulk, public)
    filtered = _load(
        stores["server"].db_uri, experiment=[stores["rl"]], filter="params.seed = '1'", fast=False
    )
    assert set(filtered["run"]) == {"cispo-s1"}


def sorted_points(src: object, exps: list[str]) -> pd.DataFrame:
    got = read_database(src, Selection(experiment=tuple(exps)), arrow=False)[2]
    return got.sort_values(["run_id", "metric", "step", "timestamp"]).reset_index(drop=True)


def test_bulk_answers_that_hit_the_cap_are_split_and_completed(stores: dict) -> None:
    """Two runs with 13,000 points each: one logged at distinct steps, one mostly at few steps
    (MLflow's default step is 0), so the estimate from the latest step is far too low and the
    first bulk answer is cut at the server's 25,000-point cap."""
    client = stores["server"].client()
    name = unique_name("big")
    exp = client.create_experiment(name)
    n = 13_000
    for run_name, step_of in (("dense", lambda i: i), ("stacked", lambda i: i // 1000)):
        run_id = client.create_run(exp, run_name=run_name, start_time=BASE_TS).info.run_id
        # The bulk of the history goes straight into the server's table (logging 26,000 points
        # through the API takes seconds); the last point through MLflow, which keeps its
        # latest-metric bookkeeping.
        with sqlite3.connect(stores["server"].db, timeout=30) as conn:
            conn.executemany(
                "INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) "
                "VALUES ('reward', ?, ?, ?, ?, 0)",
                [(i / n, BASE_TS + i, run_id, step_of(i)) for i in range(n - 1)],
            )
        client.log_metric(run_id, "reward", (n - 1) / n, BASE_TS + n - 1, step_of(n - 1))
    proxy = _FlakyProxy(stores["server"].url, flaky=False)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        by_server = _load(f"http://127.0.0.1:{proxy.server_address[1]}", experiment=[name])
    finally:
        proxy.shutdown()
        proxy.server_close()
    bulk_calls = [p for p in proxy.paths if "history-bulk" in p]
    assert len(bulk_calls) == 3  # both runs (cut at the cap), then each run alone
    by_sqlite = _load(stores["server"].db_uri, experiment=[name])
    pd.testing.assert_frame_equal(by_server.drop(columns="source"), by_sqlite.drop(columns="source"))
    sizes = by_server.groupby("run").size()
    assert sizes["dense"] == n and sizes["stacked"] == 13
    # tidy kept the last logged point of each stacked step
    stacked = by_server[by_server["run"] == "stacked"]
    assert stacked["value"].tolist() == [(1000 * k + 999) / n for k in range(13)]


def test_unexpected_schema_falls_back_to_a_read_only_client_route(
    stores: dict, tmp_path: Path
) -> None:
    db = tmp_path / "mlflow.db"
    with sqlite3.connect(stores["server"].db) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    with sqlite3.connect(db) as conn:
        assert schema_problem_of(conn) is None
        conn.execute("CREATE TABLE saturate_probe (x INTEGER)")  # an extra table is fine
        assert schema_problem_of(conn) is None
        conn.execute("ALTER TABLE runs DROP COLUMN user_id")
        assert "user_id" in schema_problem_of(conn)
    before = _tree_digest(tmp_path)
    # The fast path declines; MLflow's own client, on a private copy, cannot read it either.
    with (
        pytest.warns(RuntimeWarning, match="fast path unavailable"),
        pytest.raises(SourceError, match="MLflow could not read the store") as info,
    ):
        load_mlflow(db, experiment=[stores["rl"]])
    assert "\n" not in str(info.value)
    assert _tree_digest(tmp_path) == before
    with sqlite3.connect(tmp_path / "other.db") as conn:
        conn.execute("CREATE TABLE saturate_probe (x INTEGER)")
        assert "missing" in schema_problem_of(conn)


def schema_problem_of(conn: sqlite3.Connection) -> str | None:
    import sqlalchemy as sa

    conn.commit()
    engine = sa.create_engine("sqlite://", creator=lambda: conn, poolclass=sa.pool.StaticPool)
    with engine.connect() as c:
        return schema_problem(c)[0]


def test_fresh_store_and_tracking_uri_default(
    mlflow_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{mlflow_store}")
    log_runs(client, "rl", "other", "gone")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{mlflow_store}")
    from_env = _load(None)
    assert set(from_env["experiment"]) == {"rl", "other"}
    assert len(from_env["run_id"].unique()) == 5
    direct = _load(str(mlflow_store.parent))
    pd.testing.assert_frame_equal(from_env.drop(columns="source"), direct.drop(columns="source"))


def test_is_mlflow_source(stores: dict, tmp_path: Path) -> None:
    for src in _sources(stores).values():
        assert is_mlflow_source(src), src
    assert is_mlflow_source("https://mlflow.example.com")
    assert is_mlflow_source("postgresql://u:p@db.example.com/mlflow")
    assert is_mlflow_source(stores["mlruns"].parent)  # a project folder holding mlruns/
    (tmp_path / "curves.csv").write_text("step,value\n0,1\n")
    plain = tmp_path / "plain.db"
    with sqlite3.connect(plain) as conn:
        conn.execute("CREATE TABLE t (x)")
    (tmp_path / "empty").mkdir()
    for src in ("curves.csv", "plain.db", "empty", "missing"):
        assert not is_mlflow_source(tmp_path / src), src
    assert not is_mlflow_source("s3://bucket/runs.csv")


def test_bad_sources_fail_with_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:  # no driver installed, or no database there
        load_mlflow(f"postgresql://bob:hunter2@127.0.0.1:{free_port()}/mlflow")
    assert "hunter2" not in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(InputError, match="does not exist"):
        load_mlflow(tmp_path / "nope")
    with pytest.raises(InputError, match="does not exist"):
        load_mlflow(f"sqlite:///{tmp_path / 'nope.db'}")
    with pytest.raises(InputError, match="unsupported scheme"):
        load_mlflow("ftp://host/mlruns")
    with pytest.raises(InputError, match="--filter"):
        load_mlflow(f"http://127.0.0.1:{free_port()}", filter="params.x = ")


def test_unreachable_server_is_a_source_error_without_credentials() -> None:
    url = f"http://alice:s3cret@127.0.0.1:{free_port()}"
    with pytest.raises(SourceError, match="cannot reach the MLflow server") as info:
        load_mlflow(url)
    assert "s3cret" not in str(info.value)
    assert "\n" not in str(info.value)
    assert resolve_source(url).label == f"http://***@127.0.0.1:{url.rsplit(':', 1)[1]}"


class _FlakyProxy(http.server.ThreadingHTTPServer):
    """A real HTTP proxy to an MLflow server that can answer 503 to every first history request
    (``flaky``) or 404 to the bulk history call (``no_bulk``), and records the paths asked."""

    daemon_threads = True

    def __init__(self, upstream: str, *, no_bulk: bool = False, flaky: bool = True) -> None:
        self.upstream = upstream
        self.no_bulk = no_bulk
        self.flaky = flaky
        self.paths: list[str] = []
        self.seen: set[str] = set()
        self.failures = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: _FlakyProxy

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self, method: str) -> None:
        with self.server.lock:
            self.server.paths.append(self.path)
        if self.server.no_bulk and "history-bulk" in self.path:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.server.flaky and "get-history" in self.path:
            with self.server.lock:
                first = self.path not in self.server.seen
                self.server.seen.add(self.path)
                self.server.failures += first
            if first:
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        req = urllib.request.Request(self.server.upstream + self.path, data=body, method=method)
        req.add_header("Content-Type", self.headers.get("Content-Type") or "application/json")
        with urllib.request.urlopen(req, timeout=30) as resp:
            data, status = resp.read(), resp.status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._forward("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._forward("POST")


@pytest.mark.parametrize("no_bulk", [False, True])
def test_server_errors_are_retried(stores: dict, no_bulk: bool) -> None:
    proxy = _FlakyProxy(stores["server"].url, no_bulk=no_bulk)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}"
        df = _load(url, experiment=[stores["other"]], max_workers=2)
    finally:
        proxy.shutdown()
        proxy.server_close()
    # One history request (bulk, or public when the server has no bulk call), failed once with
    # 503, then retried.
    assert proxy.failures == 1
    direct = _load(stores["server"].url, experiment=[stores["other"]])
    pd.testing.assert_frame_equal(df.drop(columns="source"), direct.drop(columns="source"))
