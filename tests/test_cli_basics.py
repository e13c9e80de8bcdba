"""The command line: bad input is one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from cli_run import run_cli
from click.testing import CliRunner

from saturate.cli import app

runner = CliRunner()


def _write_runs(path: Path) -> None:
    rows = [{"run": "r1", "metric": "reward", "step": s, "value": s / 10} for s in range(12)]
    pd.DataFrame(rows).to_csv(path, index=False)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "no such file or directory"),
        ("run,metric,step,value\nr,m,0,abc\n", "not numeric"),
        ("a,b\n1,2\n", "missing column"),
        ("", "is empty"),
    ],
)
def test_bad_input_exit_2_one_line(tmp_path: Path, content: str | None, needle: str) -> None:
    p = tmp_path / "in.csv"
    if content is not None:
        p.write_text(content)
    result = run_cli("analyze", p)
    assert result.returncode == 2, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_missing_source_without_tracking_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    result = runner.invoke(app, ["analyze"])
    assert result.exit_code == 2
    assert "MLFLOW_TRACKING_URI" in result.stderr


def test_warning_is_one_line_and_results_still_print(tmp_path: Path) -> None:
    p = tmp_path / "w.csv"
    p.write_text("run,metric,step,value\nr,m,0,1\nr,m,1,nan\nr,m,2,2\n")
    result = run_cli("analyze", p)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"warning: {p}: dropped 1 non-finite value(s) (1 NaN, 0 infinite)",
        "warning: no compute axis found (no compute column, and no GPU-hours, FLOPs, tokens, "
        "samples or environment-steps metric): the x axis is the step; give one with --compute "
        "NAME, or --gpus N for GPU-hours from wall time",
    ]


def test_version_and_help() -> None:
    assert runner.invoke(app, ["--version"]).stdout.startswith("saturate ")
    result = runner.invoke(app, ["analyze", "--help"])
    assert result.exit_code == 0 and "--compute" in result.stdout


# --- a project folder: runs beside configs, notes and a pipe -------------------------------------

ROOT = Path(__file__).resolve().parents[1]
SAT = [sys.executable, "-m", "saturate"]


def _project(folder: Path) -> Path:
    """runs.csv beside a config, notes, a W&B-looking FIFO and a FIFO named as a table."""
    folder.mkdir()
    _write_runs(folder / "runs.csv")
    (folder / "config.json").write_text('{"lr": 1e-6}\n')
    (folder / "notes.md").write_text("# sweep notes\n")
    os.mkfifo(folder / "run-x.wandb")
    os.mkfifo(folder / "metrics.csv")
    return folder


def _sat(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The command in a process of its own: a FIFO opened by mistake would block it for good,
    so the timeout is what fails."""
    return subprocess.run([*SAT, *map(str, args)], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.subprocess
def test_a_project_folder_is_analysed_and_its_other_files_are_named(tmp_path: Path) -> None:
    folder = _project(tmp_path / "proj")
    res = _sat("analyze", ".", "--format", "json", cwd=folder)
    assert res.returncode == 0, res.stderr
    assert {c["run"] for c in json.loads(res.stdout)["curves"]} == {"r1"}
    skipped = [ln for ln in res.stderr.splitlines() if "skipped" in ln]
    assert skipped == ["warning: skipped 4 file(s) that hold no curves: metrics.csv (a FIFO), "
                       "run-x.wandb (a FIFO), config.json, notes.md"], res.stderr
    # ls lists them with why; watch passes over them and does not hang either
    res = _sat("ls", ".", "--format", "json", cwd=folder)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["skipped_files"] == [
        {"path": "metrics.csv", "reason": "a FIFO"}, {"path": "run-x.wandb", "reason": "a FIFO"},
        {"path": "config.json", "reason": "a JSON object that is neither a point record (no value "
                                          "key) nor series (xs/ys lists); keys: lr"},
        {"path": "notes.md", "reason": "not a kind of file saturate reads"}]
    res = _sat("watch", ".", "--once", "--state", tmp_path / "watch.db", cwd=folder)
    assert res.returncode == 0, res.stderr
    assert "warning: skipped 4 file(s) that hold no curves: metrics.csv (a FIFO)" in res.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["analyze", "ls", "gate"])
def test_a_fifo_given_by_name_is_not_a_file(tmp_path: Path, command: str) -> None:
    folder = _project(tmp_path / "proj")
    for name in ("run-x.wandb", "metrics.csv"):
        res = _sat(command, folder / name)
        assert res.returncode == 2, res.stderr
        assert res.stderr == f"error: {folder / name}: not a file (a FIFO)\n"
    res = _sat("watch", folder / "metrics.csv", "--once", "--state", tmp_path / "w.db")
    assert (res.returncode, res.stderr) == (2, f"error: {folder / 'metrics.csv'}: not a file "
                                               "(a FIFO)\n")


def test_a_config_given_by_name_is_an_error_naming_what_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"lr": 1e-6}\n')
    res = run_cli("analyze", tmp_path / "config.json")
    assert res.returncode == 2
    assert res.stderr == (f"error: {tmp_path / 'config.json'}: holds no curves: a JSON object that "
                          "is neither a point record (no value key) nor series (xs/ys lists); "
                          "keys: lr\n")


@pytest.mark.subprocess
def test_the_repository_root_is_analysed(tmp_path: Path) -> None:
    """``saturate analyze .`` where the code lives: the sample runs, the vendored real curves and
    the MLflow store are read; the schemas, code and notes are named as skipped."""
    res = _sat("ls", ".", "--format", "json", cwd=ROOT)
    assert res.returncode == 0, res.stderr
    found = json.loads(res.stdout)
    skipped = {f["path"] for f in found["skipped_files"]}
    assert {"saturate/report/schema.json", "README.md", "sample_runs/generate.py"} <= skipped
    assert not any(p.startswith((".git/", ".venv/")) or "__pycache__" in p for p in skipped)
    runs = set(found["runs"])  # a CSV sample, the MLflow sample store, a vendored real curve
    assert {"qwen3-8b-grpo-longcot-seed0", "qwen2.5-3b-grpo-lr3e-6-collapse",
            "dopamine_baselines_long (game=breakout, agent=DQN, seed=0)"} <= runs
    line = next(ln for ln in res.stderr.splitlines() if "skipped" in ln)
    assert line.startswith(f"warning: skipped {len(skipped)} file(s) that hold no curves: "
                           "saturate/report/schema.json, saturate/report/suite_schema.json, ")
