"""The command line: bad input is one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from cli_run import run_cli
from typer.testing import CliRunner

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
