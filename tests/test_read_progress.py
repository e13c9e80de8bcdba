"""Reading progress: the counts :class:`saturate.ingest.Tables` reports as parts are read
(``on_part``), and the ``reading: 2/3 files · 4 runs · 120 points`` line the CLI shows on a
terminal (checked through a pseudo-terminal, and absent when stderr is a pipe)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from saturate.ingest import Tables
from saturate.ingest.stream import ReadProgress


def _runs_folder(root: Path, files: int = 3, runs: int = 2, points: int = 20) -> Path:
    """``files`` CSV files of ``runs`` runs, each a curve of ``points`` points."""
    root.mkdir(parents=True, exist_ok=True)
    step = np.arange(points)
    for f in range(files):
        parts = [pd.DataFrame({"run": f"f{f}r{r}", "metric": "eval/acc", "step": step * 100,
                               "value": 1 - np.exp(-(step + 1) / (5 + r + f))})
                 for r in range(runs)]
        pd.concat(parts).to_csv(root / f"runs_{f}.csv", index=False)
    return root


def test_on_part_counts_files_runs_and_points(tmp_path: Path) -> None:
    root = _runs_folder(tmp_path / "runs")
    seen: list[ReadProgress] = []
    parts = list(Tables(root, on_part=seen.append))
    assert len(parts) == 3
    # Each file: once when its part is read, once when the read ends.
    assert [(p.done, p.runs, p.points) for p in seen] == [
        (0, 2, 40), (1, 2, 40), (1, 4, 80), (2, 4, 80), (2, 6, 120), (3, 6, 120)]
    assert {(p.total, p.kind) for p in seen} == {(3, "files")}
    assert seen[-1].summary() == "3/3 files · 6 runs · 120 points"


def test_counts_are_of_what_was_read_before_selection(tmp_path: Path) -> None:
    root = _runs_folder(tmp_path / "runs", files=2)
    seen: list[ReadProgress] = []
    kept = pd.concat([part.points for part in Tables(root, run="f0*", on_part=seen.append)])
    assert set(kept["run"]) == {"f0r0", "f0r1"}
    assert (seen[-1].done, seen[-1].runs, seen[-1].points) == (2, 4, 80)


def test_a_dataframe_is_one_source(tmp_path: Path) -> None:
    df = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "metric": "m", "step": [1, 2, 3] * 2,
                       "value": np.arange(6.0)})
    seen: list[ReadProgress] = []
    list(Tables(df, on_part=seen.append))
    assert seen[-1] == ReadProgress(1, 1, 2, 6, "sources")
    assert seen[-1].summary() == "1/1 sources · 2 runs · 6 points"


@pytest.mark.parametrize(("n", "text"), [(0, "0"), (950, "950"), (12_345, "12.3k"),
                                         (1_200_000, "1.2M"), (2_000_000, "2M")])
def test_point_counts_are_short(n: int, text: str) -> None:
    assert ReadProgress(1, 1, 1, n).summary().endswith(f"· {text} point{'s' * (n != 1)}")


def _analyze(folder: Path, stderr: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "TERM")}
    env.update(TERM="xterm-256color", COLUMNS="120")
    return subprocess.Popen(
        [sys.executable, "-m", "saturate", "analyze", str(folder), "--n-boot", "0",
         "--format", "json", "-o", str(folder.parent / "out.json")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env)


def _read_all(fd: int, proc: subprocess.Popen) -> str:
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=120)
    return out.decode("utf-8", errors="replace")


@pytest.mark.subprocess  # what a process shows on its own stderr
@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_cli_shows_reading_counts_on_a_terminal(tmp_path: Path) -> None:
    import pty

    folder = _runs_folder(tmp_path / "runs", files=2)
    main, side = pty.openpty()
    proc = _analyze(folder, side)
    os.close(side)
    try:
        shown = _read_all(main, proc)
    finally:
        os.close(main)
    assert proc.returncode == 0, shown
    assert "reading: 2/2 files · 4 runs · 80 points" in shown
    assert "fitting curves" in shown


@pytest.mark.subprocess  # what a process shows on its own stderr
def test_cli_shows_no_bar_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    folder = _runs_folder(tmp_path / "runs", files=2)
    proc = _analyze(folder, subprocess.PIPE)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert b"reading" not in err
