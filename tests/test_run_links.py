"""Each run's page in its tracker (``run_url``), from the real sources: a live ``mlflow server``
(the route its UI serves, credentials of the tracking URI left out), its database (no web UI: no
link), offline W&B runs written by the wandb package (entity known: the page the package itself
would print; none: no link), W&B's public API (``run.url``); and how the reports show it."""

from __future__ import annotations

import json
import math
import re
import urllib.request
from pathlib import Path

import pytest
from mlflow_server import MlflowServer, unique_name

import saturate
from saturate.ingest.redaction import public_url, ui_link
from saturate.report import render
from saturate.report.text import for_url, markdown_link
from saturate.results import CurveAnalysis

# The curves are on their step: the warning that says so is not what these tests are about.
pytestmark = pytest.mark.filterwarnings("ignore::saturate.table.axis.AxisWarning")
SECRET = "pa:ss/w#rd?@x"
NAME = "grpo [lr=3e-6] *best* @team|x"  # Markdown specials, a mention and a cell separator


def _rising(n: int, j: int) -> list[float]:
    return [1 - math.exp(-s / (8 + 4 * j)) for s in range(n)]


@pytest.fixture(scope="module")
def logged(mlflow_server: MlflowServer) -> dict:
    """Two finished runs in a fresh experiment of the shared server: ``{run name: run id}``."""
    from mlflow.entities import Metric

    client = mlflow_server.client()
    name = unique_name("links")
    exp = client.create_experiment(name)
    ids = {}
    for j, run_name in enumerate((NAME, "plain")):
        run = client.create_run(exp, run_name=run_name)
        client.log_batch(run.info.run_id, metrics=[
            Metric("reward", v, 1_700_000_000_000 + s, s) for s, v in enumerate(_rising(40, j))])
        client.set_terminated(run.info.run_id)
        ids[run_name] = run.info.run_id
    return {"server": mlflow_server, "experiment": name, "exp_id": exp, "ids": ids}


def _with_secret(url: str) -> str:
    return url.replace("http://", f"http://alice:{urllib.request.quote(SECRET, safe='')}@")


def test_a_tracking_servers_runs_link_to_their_page_in_its_ui(logged: dict) -> None:
    server = logged["server"]
    result = saturate.analyze(_with_secret(server.url), experiment=[logged["experiment"]],
                              n_boot=20)
    pages = {c.run: c.run_url for c in result.curves}
    assert pages == {name: f"{server.url}/#/experiments/{logged['exp_id']}/runs/{rid}"
                     for name, rid in logged["ids"].items()}
    # The MLflow UI itself serves the page the link opens (its single-page app; the route after #).
    with urllib.request.urlopen(pages["plain"].partition("#")[0], timeout=10) as resp:
        assert resp.status == 200 and b"<html" in resp.read().lower()
    report = json.loads(render(result, "json"))
    assert {c["run"]: c["run_url"] for c in report["curves"]} == pages
    markdown = render(result, "markdown")
    for text in (json.dumps(report), markdown):
        assert "alice" not in text and "pa:ss" not in text and "w#rd" not in text
    plain = f"[plain]({pages['plain']})"
    assert markdown.count(plain) == 2  # the table's row and the reasons
    escaped = r"grpo \[lr=3e\-6\] \*best\* @​team\|x"  # the @ made no mention (a ZWSP after it)
    assert markdown.count(f"[{escaped}]({pages[NAME]})") == 2
    row = next(line for line in markdown.splitlines() if line.startswith(f"| [{escaped}]"))
    assert len(re.split(r"(?<!\\)\|", row)) == len(markdown.splitlines()[
        markdown.splitlines().index(row) - 1].split("|"))  # no extra cell: the | is escaped


def test_the_servers_database_has_no_web_ui_so_no_link(logged: dict) -> None:
    result = saturate.analyze(logged["server"].db_uri, experiment=[logged["experiment"]],
                              n_boot=20)
    assert result.curves and all(c.run_url is None for c in result.curves)
    assert all(c["run_url"] is None for c in json.loads(render(result, "json"))["curves"])
    assert "](" not in render(result, "markdown")  # no link at all


def test_tracker_url_says_where_a_stores_ui_is_served(logged: dict, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from saturate.cli import app

    ui = "https://mlflow.example.org/team"
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["analyze", str(logged["server"].db), "-e",
                                   logged["experiment"], "--n-boot", "20", "--tracker-url",
                                   f"https://ci:{SECRET}@mlflow.example.org/team/",
                                   "--format", "json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    pages = {c["run"]: c["run_url"] for c in json.loads(out.read_text())["curves"]}
    assert pages == {name: f"{ui}/#/experiments/{logged['exp_id']}/runs/{rid}"
                     for name, rid in logged["ids"].items()}
    bad = CliRunner().invoke(app, ["analyze", str(logged["server"].db), "--tracker-url",
                                   "mlflow.example.org"])
    assert bad.exit_code == 2 and bad.stderr.strip() == (
        "error: --tracker-url must be an http:// or https:// address, such as "
        "https://mlflow.example.org, got 'mlflow.example.org'")


def test_watch_keeps_each_runs_page_in_its_history(logged: dict, tmp_path: Path) -> None:
    """``watch`` of a tracking server: the pages go into the history file with the runs, and
    every analysis made from it (the live table, webhooks, ``history``) carries them; a history
    file written before runs had pages is read as it is and given the column when next written."""
    import sqlite3

    from click.testing import CliRunner

    from saturate.cli import app
    from saturate.tracker.state import HistoryStore

    server, state = logged["server"], tmp_path / "h.db"
    args = ["watch", _with_secret(server.url), "-e", logged["experiment"], "--once",
            "--n-boot", "20", "--state", str(state)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    expected = {name: f"{server.url}/#/experiments/{logged['exp_id']}/runs/{rid}"
                for name, rid in logged["ids"].items()}
    with HistoryStore(state, readonly=True) as store:
        assert {c.run: c.run_url for c in store.latest_analyses()} == expected
        assert {r.run: r.url for r in store.runs().values()} == expected
    assert "pa:ss" not in state.read_bytes().decode("latin-1")
    with sqlite3.connect(state) as db:  # as a history file written before the column
        db.execute("ALTER TABLE runs DROP COLUMN url")
    with HistoryStore(state, readonly=True) as store:
        assert all(r.url is None for r in store.runs().values())
        assert "run_url" not in store.points().columns
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    with HistoryStore(state, readonly=True) as store:
        assert {r.run: r.url for r in store.runs().values()} == expected


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Offline W&B runs written by the wandb package: one started with an entity, one without."""
    from wandb_runs import write_runs

    rows = [[s, {"reward": v}] for s, v in enumerate(_rising(40, 0))]
    return write_runs(tmp_path_factory.mktemp("wandb-links"), [
        {"name": NAME, "id": "withent1", "entity": "my-team", "rows": rows},
        {"name": "no-entity", "id": "noent123", "rows": rows}])


@pytest.mark.subprocess  # wandb writes the runs in a process of its own
def test_offline_wandb_runs_link_where_the_wandb_package_would(offline: Path,
                                                               monkeypatch) -> None:  # fmt: skip
    import wandb

    for var in ("WANDB_APP_URL", "WANDB_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    pages = {c.run: c.run_url for c in saturate.analyze(offline, n_boot=20).curves}
    own = wandb.Settings(entity="my-team", project="saturate-tests", run_id="withent1").run_url
    assert pages == {NAME: own, "no-entity": None}  # no entity in its log: its page is unknown
    monkeypatch.setenv("WANDB_BASE_URL", "http://localhost:8080")  # a W&B server of one's own
    urls = saturate.load(offline).runs.set_index("run_id")["run_url"]
    assert urls["withent1"] == "http://localhost:8080/my-team/saturate-tests/runs/withent1"
    assert urls.isna()["noent123"]
    monkeypatch.setenv("WANDB_APP_URL", "https://bob:key@wandb.example.org/")
    result = saturate.analyze(offline, n_boot=20)
    page = "https://wandb.example.org/my-team/saturate-tests/runs/withent1"
    assert {c.run: c.run_url for c in result.curves}[NAME] == page
    assert f"]({page})" in render(result, "markdown")
    assert "bob" not in render(result, "json")


@pytest.mark.server  # a local server answering the W&B API's GraphQL
def test_wandb_api_runs_link_to_the_page_the_package_gives(monkeypatch) -> None:
    import numpy as np
    import wandb
    from wandb_server import WandbServer, remote_run

    rows = [{"_step": s, "_timestamp": 1.8e9 + s, "reward": float(1 - np.exp(-s / 9))}
            for s in range(40)]
    try:
        with WandbServer([remote_run("r1", "ppo-1", rows)]) as server:
            monkeypatch.setenv("WANDB_BASE_URL", server.url)
            monkeypatch.setenv("WANDB_API_KEY", "k3y-" + "x" * 40)
            table = saturate.load("wandb://team/rl", timeout=30)
    finally:
        wandb.teardown()
    assert table.runs["run_url"].tolist() == [f"{server.url}/team/rl/runs/r1"]


def test_links_keep_no_credentials_and_stay_links() -> None:
    assert ui_link("http://u:p@w@Host:5000/", fragment="/experiments/1/runs/a") == (
        "http://host:5000/#/experiments/1/runs/a")
    assert ui_link("https://x.org/mlflow/?token=abc&o=12#old", "", "/r") == (
        "https://x.org/mlflow/?o=12#/r")
    assert ui_link("https://wandb.ai/", "team/p/runs/x") == "https://wandb.ai/team/p/runs/x"
    assert public_url("https://k:v@h/p?api_key=z&x=1#f") == "https://h/p?x=1#f"
    assert for_url("https://h/a(b)|c`d") == "https://h/a%28b%29%7Cc%60d"
    assert for_url("https://u:pw@h/x") == "https://h/x"
    for bad in ("javascript:alert(1)", "/relative", "https://h/a b", "https://h/\nx", "", None):
        assert for_url(bad) is None
    assert markdown_link("a*b", "javascript:alert(1)") == r"a\*b"
    assert markdown_link("a*b", None) == r"a\*b"
    assert markdown_link("a]b", "https://h/x)") == r"[a\]b](https://h/x%29)"


def test_run_url_round_trips_and_old_entries_read_as_none() -> None:
    entry = {"source": "s", "run": "r", "run_id": "1", "metric": "m", "verdict": "scaling",
             "n_points": 3, "run_url": "https://h/#/experiments/1/runs/1"}
    curve = CurveAnalysis.from_dict(entry)
    assert curve.run_url == entry["run_url"]
    assert CurveAnalysis.from_dict(curve.to_dict()).run_url == entry["run_url"]
    assert CurveAnalysis.from_dict({**entry, "run_url": None}).run_url is None
    del entry["run_url"]
    assert CurveAnalysis.from_dict(entry).run_url is None
