"""Hostile run and metric names through every face that prints them: ``gate`` (GitHub annotations,
plain CI lines, the step summary), ``analyze`` as a table, Markdown and HTML, ``watch`` event
lines and ``history``. A newline, a CR, an ANSI escape or a BEL in a name never reaches the output
raw, no line opens a forged ``::`` workflow command, and ``@mentions`` do not ping in Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from saturate.cli import app
from saturate.report.text import ZWSP, for_annotation, for_markdown, for_terminal
from saturate.tracker.events import Event, parse_event_line

HOSTILE = (
    "x\n::error::FORGED",
    "y\r\n::warning file=evil.py,line=1::X",
    "clear\x1b[2Jscreen",
    "bell\a!",
    "@everyone",
)
METRIC = "m\n::error::METRIC"
RAW = ("\x1b", "\a", "\r")
runner = CliRunner()


def write(path: Path, n: int) -> Path:
    """Saturating curves under hostile names (JSON lines keep every character)."""
    c = np.geomspace(1, 1000, 40)[:n]
    rng = np.random.default_rng(0)
    rows = [{"run": run, "metric": METRIC if i == 0 else "reward", "step": int(k),
             "compute": float(c[k]), "value": float(1 - np.exp(-c[k] / 30) + rng.normal(0, 0.003))}
            for i, run in enumerate(HOSTILE) for k in range(n)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _no_forgery(text: str, allowed: tuple[str, ...] = ()) -> None:
    for raw in RAW:
        assert raw not in text, repr(raw)
    for line in text.splitlines():
        if line.lstrip().startswith("::"):
            assert line.startswith(allowed) and allowed, line


def test_the_boundaries_themselves() -> None:
    assert for_terminal("x\n::error::F") == "x\\n::error::F"
    assert for_terminal("a\x1b[2Jb\a\r\t\u202e\u2028") == "a\\x1b[2Jb\\x07\\r\\t\\u202e\\u2028"
    assert for_terminal("plain ünïcode / 名前") == "plain ünïcode / 名前"
    assert for_annotation("50% a\nb", prop=True) == "50%25 a\\nb"
    assert for_annotation("t: a, b", prop=True) == "t%3A a%2C b"
    assert for_markdown("@everyone hi @org/team, mail a@b.c") == (
        f"@{ZWSP}everyone hi @{ZWSP}org/team, mail a@b\\.c")
    e = Event("verdict_changed", "s", "id", HOSTILE[1], METRIC, 3.0, "a", "b", 0.0, "d\x1b")
    assert "\n" not in e.line() and "\r" not in e.line() and "\x1b" not in e.line()
    fields = parse_event_line(e.line())
    assert (fields["run"], fields["metric"], fields["detail"]) == (HOSTILE[1], METRIC, "d\x1b")


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("hostile") / "runs.jsonl", 40)


@pytest.mark.parametrize("github", [False, True])
def test_gate_lines_annotations_and_summary(data: Path, tmp_path: Path, github: bool) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)} if github else {
        "GITHUB_ACTIONS": "false"}
    res = runner.invoke(app, ["gate", str(data), "--min-gain", "3%", "--n-boot", "20",
                              "--fail-on", "inconclusive,slowing"], env=env)
    assert res.exit_code == 1, res.output
    _no_forgery(res.stdout, ("::error title=saturate", "::warning title=saturate"))
    _no_forgery(res.stderr)
    fails = [ln for ln in res.stdout.splitlines() if ln.startswith("  FAIL ")]
    assert len(fails) == len(HOSTILE)  # one line per failing curve, whatever its name
    assert any("x\\n::error::FORGED" in ln for ln in fails)
    if github:
        notes = [ln for ln in res.stdout.splitlines() if ln.startswith("::")]
        assert len(notes) == len(HOSTILE)
        assert any("clear\\x1b[2Jscreen" in ln for ln in notes)
        md = summary.read_text(encoding="utf-8")
        _no_forgery(md)
        assert "@everyone" not in md and f"@{ZWSP}everyone" in md
    else:
        assert not any(ln.startswith("::") for ln in res.stdout.splitlines())


@pytest.mark.slow
def test_analyze_table_markdown_and_html(data: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["analyze", str(data), "--n-boot", "20", "--format", "table"],
                        env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    _no_forgery(res.stdout)
    assert "x\\n::error::FORGED" in res.stdout and "bell\\x07!" in res.stdout
    res = runner.invoke(app, ["analyze", str(data), "--n-boot", "20", "--format", "markdown"])
    assert res.exit_code == 0, res.output
    _no_forgery(res.stdout)
    assert "@everyone" not in res.stdout and f"@{ZWSP}everyone" in res.stdout
    rows = [ln for ln in res.stdout.splitlines() if ln.startswith("| ") and "---" not in ln]
    assert len(rows) == 1 + len(HOSTILE)
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["analyze", str(data), "--n-boot", "20", "--format", "html",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    # the page's own sorting script is the only one: no name from the data became a script
    assert page.lower().count("<script") == 1 and "alert(1)</script>" not in page
    assert "@everyone" in page  # HTML escapes markup and does not ping: nothing to neutralise


def test_watch_and_history_lines_stay_one_per_event(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / "runs.jsonl", 8)
    args = ["watch", str(path), "--once", "--n-boot", "20"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0 and res.stdout == "", res.output  # the baseline pass
    _no_forgery(res.stderr)
    write(path, 40)
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    _no_forgery(res.stdout)
    _no_forgery(res.stderr)
    lines = res.stdout.splitlines()
    assert lines and all(re.match(r"^\d{4}-\d\d-\d\dT\S+Z EVENT \w+ ", ln) for ln in lines)
    names = {parse_event_line(ln)["run"] for ln in lines}
    assert names == set(HOSTILE)  # the names come back exactly from their escaped form
    for fmt in ("lines", "table"):
        res = runner.invoke(app, ["history", "--all", "--format", fmt], env={"COLUMNS": "300"})
        assert res.exit_code == 0, res.output
        _no_forgery(res.stdout)
    res = runner.invoke(app, ["history", "--all", "--format", "lines"])
    assert len(res.stdout.splitlines()) == len(lines)
    doc = json.loads(runner.invoke(app, ["history", "--all", "--format", "json"]).stdout)
    assert {e["run"] for e in doc["events"]} == set(HOSTILE)  # JSON keeps the true names


def test_hostile_names_survive_loading(data: Path) -> None:
    import saturate

    df = saturate.load(str(data)).points
    assert set(df["run"]) == set(HOSTILE) and METRIC in set(df["metric"])
    assert isinstance(df, pd.DataFrame)
