"""Writing reports: all at once or not at all; a full stdout is one line, exit 2; a reader that
went away a quiet exit 141."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from saturate.errors import InputError
from saturate.report.output import save_with, write_atomic

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
CMD = [sys.executable, "-m", "saturate", "analyze", str(DATA), "--n-boot", "20"]


def _limit_file_size(limit: int):
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return cap


def test_write_atomic_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "report.json"
    write_atomic(target, "first")
    write_atomic(target, "second, longer")
    assert target.read_text() == "second, longer"
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_a_failed_write_leaves_the_old_report_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("the good old report")

    def fails(fh) -> None:
        fh.write(b"half a rep")
        raise OSError(28, "No space left on device")

    with pytest.raises(InputError, match="cannot write.*No space left.*unchanged"):
        save_with(target, fails)
    assert target.read_text() == "the good old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_an_unwritable_folder_is_one_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="--out .*cannot write"):
        write_atomic(blocker / "report.md", "text")


@pytest.mark.subprocess
def test_a_file_size_limit_keeps_the_previous_report(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("previous report\n")
    res = subprocess.run([*CMD, "--format", "html", "--out", str(out)], capture_output=True,
                         text=True, timeout=300, preexec_fn=_limit_file_size(4096))
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1
    assert "cannot write" in res.stderr and "unchanged" in res.stderr
    assert out.read_text() == "previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


@pytest.mark.subprocess
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_is_one_line_and_exit_2() -> None:
    for fmt in ("json", "table"):
        with open("/dev/full", "w") as full:
            res = subprocess.run([*CMD, "--format", fmt], stdout=full, stderr=subprocess.PIPE,
                                 text=True, timeout=300)
        assert res.returncode == 2, res.stderr
        assert res.stderr == ("error: cannot write the report to standard output "
                              "(No space left on device)\n")


@pytest.mark.subprocess
def test_a_reader_that_goes_away_is_a_quiet_exit_141() -> None:
    """As `cmd | head` expects: nothing on stderr, 128 + SIGPIPE (never 0, 1 or 2)."""
    for fmt in ("table", "json"):
        proc = subprocess.Popen([*CMD, "--format", fmt], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "COLUMNS": "100"})
        proc.stdout.close()  # the reader leaves before the report (seconds away) is written
        err = proc.stderr.read()
        assert proc.wait(timeout=300) == 141, err
        assert err == ""
