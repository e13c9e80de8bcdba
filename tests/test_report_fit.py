"""Reports that fit their place: the Markdown report of sample_runs/ within a GitHub comment."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args)


@pytest.mark.slow
def test_markdown_report_of_the_samples_fits_a_github_comment() -> None:
    """sample_runs/ gives a report within 60,000 characters (GitHub takes 65,536), with a line
    saying what was left to the HTML report."""
    done = _cli("analyze", str(ROOT / "sample_runs"), "--format", "markdown")
    assert done.returncode == 0, done.stderr[-500:]
    md = done.stdout
    assert len(md) <= 60_000
    assert "<details>" in md and "in the HTML and JSON reports" in md
    assert "| " in md and "qwen" in md
