"""A file that is not a regular file, given by name to any command or option that reads one, is
exit 2 "not a file" and never a hang (issue 40, item 5; analyze, ls, gate and watch given a FIFO
as a source: test_cli_basics). Each run is a process of its own with a timeout: a FIFO opened
for reading by mistake would block it for good, so the timeout is what fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
SAT = [sys.executable, "-m", "saturate"]


def _sat(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([*SAT, *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.subprocess
@pytest.mark.parametrize("command", [["compare", "--group-by", "seed"], ["allocate", "--budget",
                                      "5"], ["plot"], ["timeline", "--run", "a", "--metric", "b"]])
def test_a_fifo_source_is_not_a_file_for_every_command(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "runs.csv"
    os.mkfifo(fifo)
    res = _sat(command[0], fifo, *command[1:])
    assert (res.returncode, res.stderr) == (2, f"error: {fifo}: not a file (a FIFO)\n")


@pytest.mark.subprocess
def test_a_device_source_is_not_a_file() -> None:
    res = _sat("analyze", "/dev/zero")  # read, it would never end
    assert (res.returncode, res.stderr) == (2, "error: /dev/zero: not a file (a device node)\n")


@pytest.mark.subprocess
def test_a_fifo_settings_file_or_baselines_file_is_not_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "saturate.toml"
    os.mkfifo(fifo)
    res = _sat("analyze", DATA, "--config", fifo)
    assert (res.returncode, res.stderr) == (2, f"error: --config {fifo}: not a file\n")
    res = _sat("analyze", DATA, "--suite", "metric", "--normalize", fifo)
    assert res.returncode == 2
    assert res.stderr.startswith("error: --normalize must be a baselines file")
    assert res.stderr.endswith(f"; not a file, got '{fifo}'\n")
