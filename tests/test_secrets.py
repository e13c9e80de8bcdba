"""Credentials never leave saturate: not in messages (also those made from MLflow's or the HTTP
stack's exceptions), not in reports, the step summary, JUnit XML or the watch history, also when a
password holds an unencoded ``/``, ``#``, ``?`` or ``@``. Every output is grepped for the secret."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from fault_proxy import FaultProxy
from mlflow_server import MlflowServer, free_port, unique_name

from saturate.cli import app
from saturate.errors import SourceError
from saturate.ingest import redaction
from saturate.ingest.mlflow import load_mlflow, resolve_source
from saturate.ingest.mlflow_client import cause_of
from saturate.ingest.redaction import MASK, redact, redact_uri, remember_secret

SECRET = "S3cr/t#x?y@z"  # every character that breaks a naive URL parse
runner = CliRunner()


def _with_secret(url: str, user: str = "alice") -> str:
    return url.replace("http://", f"http://{user}:{SECRET}@")


def _clean(*texts: str) -> None:
    for text in texts:
        for fragment in ("S3cr", "t#x?y", SECRET):
            assert fragment not in text, text[:500]


def test_redact_masks_urls_with_unencoded_specials_and_remembered_secrets(monkeypatch) -> None:
    # Secrets remembered by earlier tests in this process would mask parts of the texts below.
    monkeypatch.setattr(redaction, "_SEEN", set())
    url = f"http://bob:{SECRET}@host:5000/api?x=1"
    assert redact_uri(url) == "http://***@host:5000/api?x=1"
    assert redact(f"API request to {url} failed") == (
        "API request to http://***@host:5000/api?x=1 failed")
    assert redact_uri("postgresql://u:p@ss@db:5432/x?sslmode=require&password=zz") == (
        "postgresql://***@db:5432/x?sslmode=require&password=***")
    assert redact("no credentials: http://host:5000/a and a@b.c") == (
        "no credentials: http://host:5000/a and a@b.c")
    remember_secret("hunter2-long")
    assert redact("echoed hunter2-long and hunter2%2Dlong") == f"echoed {MASK} and hunter2%2Dlong"
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-123456")
    assert "tok-123456" not in redact("Bearer tok-123456")


def test_causes_from_foreign_exceptions_carry_no_credentials() -> None:
    from mlflow.exceptions import MlflowException

    url = f"http://alice:{SECRET}@10.0.0.1:5000"
    try:
        try:
            raise ValueError(f"weird failure at {url}/api/2.0/mlflow/runs/search")
        except ValueError:
            raise MlflowException(f"API request to {url} failed with exception boom") from None
    except MlflowException as exc:
        cause, _ = cause_of(exc)
    _clean(cause)
    assert "10.0.0.1:5000" in cause


@pytest.mark.slow
def test_an_unreachable_server_with_credentials(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = _with_secret(f"http://127.0.0.1:{free_port()}")
    with pytest.raises(SourceError) as info:
        load_mlflow(url, timeout=5)
    _clean(str(info.value))
    assert resolve_source(url).label.startswith("http://***@127.0.0.1:")
    for cmd in (["analyze", url], ["watch", url, "--once", "--retries", "0", "--state", "h.db"],
                ["gate", url, "--min-gain", "3%"]):
        res = runner.invoke(app, cmd, env={"SATURATE_TIMEOUT": "5"})
        assert res.exit_code == 2, res.output
        _clean(res.stdout, res.stderr)
        assert "refused" in res.stderr
    _clean(*(p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*") if p.is_file()))


@pytest.fixture(scope="module")
def logged(mlflow_server: MlflowServer) -> dict:
    from mlflow.entities import Metric

    client = mlflow_server.client()
    name = unique_name("secrets")
    exp = client.create_experiment(name)
    for j in range(2):
        run = client.create_run(exp, run_name=f"run-{j}")
        client.log_batch(run.info.run_id, metrics=[
            Metric("reward", 1 - math.exp(-s / 8) + 0.01 * j, 1_700_000_000_000 + s, s)
            for s in range(30)])  # fmt: skip
        client.set_terminated(run.info.run_id)
    return {"server": mlflow_server, "experiment": name}


def test_every_output_of_a_credentialed_source_is_clean(logged: dict, tmp_path: Path,
                                                        monkeypatch) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    url = _with_secret(logged["server"].url)
    exp = ["-e", logged["experiment"], "--n-boot", "20"]
    outputs: list[str] = []
    for fmt in ("json", "markdown", "table", "html"):
        res = runner.invoke(app, ["analyze", url, *exp, "--format", fmt, "--out", f"r.{fmt}"])
        assert res.exit_code == 0, res.output
        outputs += [res.stdout, res.stderr]
    assert "http://***@127.0.0.1" in Path("r.json").read_text()  # the source, credentials masked
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    res = runner.invoke(app, ["gate", url, *exp, "--min-gain", "3%", "--junit", "j.xml"], env=env)
    assert res.exit_code in (0, 1), res.output
    outputs += [res.stdout, res.stderr]
    for _ in range(2):
        res = runner.invoke(app, ["watch", url, *exp, "--once", "--state", "h.db"])
        assert res.exit_code == 0, res.output
        outputs += [res.stdout, res.stderr]
    res = runner.invoke(app, ["history", "--all", "--state", "h.db", "--format", "json"])
    outputs += [res.stdout, res.stderr]
    _clean(*outputs)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"r.json", "r.html", "summary.md", "j.xml", "h.db"} <= {p.name for p in files}
    _clean(*(p.read_bytes().decode("latin-1") for p in files))


def test_a_server_echoing_the_password_is_redacted(logged: dict, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    with FaultProxy(logged["server"].url) as proxy:
        proxy.set("status", match="runs/search", code=400,
                  message=f"bad login alice:{SECRET} for {_with_secret('http://h:1')}")
        url = _with_secret(proxy.url)
        with pytest.raises(SourceError) as info:
            load_mlflow(url, experiment=[logged["experiment"]], timeout=5)
        _clean(str(info.value))
        assert "HTTP 400" in str(info.value) and "bad login" in str(info.value)
        res = runner.invoke(app, ["watch", url, "--once", "--retries", "0", "--state", "h.db"])
        assert res.exit_code == 2
        _clean(res.stdout, res.stderr)
