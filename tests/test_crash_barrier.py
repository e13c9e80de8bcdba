"""The crash barrier: a bug of saturate is one line naming the step and the input, exit 3.

There is no known bug to trigger, so each test breaks one real step on purpose: one function is
replaced with one that raises, then the real CLI runs (in this process for the steps; in a small
Python program of its own for the exit codes as a shell sees them).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_runs" / "01_still_scaling.csv"
WITH_FINDINGS = ROOT / "sample_runs" / "05_reward_overoptimisation.csv"

_PROGRAM = """
import sys
import {module} as target

def broken(*args, **kwargs):
    raise ZeroDivisionError("float division by zero")

setattr(target, {name!r}, broken)
from saturate.cli import main
sys.argv = ["saturate", *sys.argv[1:]]
main()
"""


def _broken(*args: object, **kwargs: object) -> None:
    raise ZeroDivisionError("float division by zero")


def _run_broken(monkeypatch: pytest.MonkeyPatch, module: str, name: str,
                *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in this process with ``module.name`` broken."""
    monkeypatch.setattr(importlib.import_module(module), name, _broken)
    return run_cli(*args, cwd=ROOT)


def _run(module: str, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a Python process of its own with ``module.name`` broken."""
    program = _PROGRAM.format(module=module, name=name)
    return subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.mark.parametrize(
    ("module", "name", "args", "step"),
    [
        ("saturate.analysis.work", "analyze_curve", ["--workers", "1"],
         "internal error while analysing run 'qwen3-8b-grpo-longcot-seed0' / metric"),
        ("saturate.ingest.stream", "read_table_file", [], "internal error while reading "),
        ("saturate.report", "render", ["--format", "json"],
         "internal error while writing the json report"),
        ("saturate.diagnostics.registry", "check_finding", ["--file", str(WITH_FINDINGS)],
         "internal error while running the "),
    ],
)
def test_an_unexpected_error_is_one_line_naming_the_step_and_exit_3(
    module: str, name: str, args: list[str], step: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = args[1] if args[:1] == ["--file"] else str(SAMPLE)
    args = args[2:] if args[:1] == ["--file"] else args
    proc = _run_broken(monkeypatch, module, name, "analyze", source, "--n-boot", "20", *args)
    assert proc.returncode == 3, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: " + step), lines[0]
    assert "ZeroDivisionError: float division by zero" in lines[0]
    assert lines[0].endswith("rerun with --debug for the traceback")
    assert len(lines[0]) <= 300
    assert "Traceback" not in proc.stderr


@pytest.mark.subprocess  # a real process: its exit code and stderr as a shell sees them
def test_debug_shows_the_traceback_of_an_unexpected_error() -> None:
    proc = _run("saturate.analysis.work", "analyze_curve", "--debug", "analyze", str(SAMPLE),
                "--n-boot", "20", "--workers", "1")
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "ZeroDivisionError" in proc.stderr


@pytest.mark.subprocess
def test_bad_input_is_still_exit_2_not_3(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "saturate", "analyze", str(tmp_path / "missing.csv")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "internal error" not in proc.stderr


@pytest.mark.subprocess
def test_a_failing_gate_is_exit_1_not_an_internal_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "saturate", "gate",
                           str(ROOT / "sample_runs" / "03_saturated.csv"), "--n-boot", "20"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr and "FAIL" in proc.stdout
