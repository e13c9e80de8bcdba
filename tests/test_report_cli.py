"""``saturate analyze --format ...`` and ``saturate plot`` end to end on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_data import N_BOOT, write_runs

from saturate.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_runs(tmp_path_factory.mktemp("cli") / "runs.csv", names=("grow", "short"))


def _run(*args: str):
    return runner.invoke(app, [*args, "--n-boot", str(N_BOOT)])


def test_table_is_default_and_stdout_holds_only_results(runs: Path) -> None:
    res = _run("analyze", str(runs))
    assert res.exit_code == 0, res.output
    lines = res.stdout.rstrip().splitlines()
    assert lines[0].startswith("1 of 2 curves still pay") and "1 inconclusive" in lines[0]
    assert any("grow" in ln and "reward" in ln for ln in lines)
    assert res.stderr == ""


def test_json_markdown_html_to_files(runs: Path, tmp_path: Path) -> None:
    for fmt, name in (("json", "r.json"), ("markdown", "r.md"), ("html", "sub/r.html")):
        out = tmp_path / name
        res = _run("analyze", str(runs), "--format", fmt, "--out", str(out),
                   "--forecast-at", "2x", "--forecast-at", "8x", "--confidence", "0.8")
        assert res.exit_code == 0, res.output
        assert res.stdout == "" and res.stderr.strip() == f"wrote {out}"
        text = out.read_text(encoding="utf-8")
        if fmt == "json":
            doc = json.loads(text)
            assert doc["settings"]["confidence"] == 0.8
            (grow,) = [c for c in doc["curves"] if c["run"] == "grow"]
            assert [f["at"] for f in grow["forecast"]] == ["2x", "8x"]
        elif fmt == "markdown":
            assert text.startswith("## saturate report") and "| grow | reward |" in text
        else:
            assert text.startswith("<!DOCTYPE html>") and '<svg xmlns' in text


@pytest.mark.parametrize(("args", "needle"), [
    (["--format", "pdf"], "--format"),
    (["--confidence", "2"], "--confidence"),
    (["--forecast-at", "soon"], "--forecast-at"),
    (["--metric", "nothing*"], "--metric 'nothing*' matches no metric; metrics: reward"),
    (["--group-by", "recipe"], "recipe"),
])
def test_bad_options_are_one_line_exit_2(runs: Path, args: list[str], needle: str) -> None:
    res = _run("analyze", str(runs), *args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert res.stdout == ""


def test_plot_command_writes_figures(runs: Path, tmp_path: Path) -> None:
    res = _run("plot", str(runs), "--out", str(tmp_path / "figs"), "--format", "png,svg",
               "--run", "grow")
    assert res.exit_code == 0, res.output
    written = [Path(p) for p in res.stdout.split()]
    assert sorted(p.name for p in written) == ["grow__reward.png", "grow__reward.svg"]
    assert all(p.stat().st_size > 1000 for p in written)
    bad = _run("plot", str(runs), "--out", str(tmp_path / "x"), "--format", "gif")
    assert bad.exit_code == 2 and "gif" in bad.stderr
