"""Hostile run and metric names through every face that prints them: ``gate`` (GitHub annotations,
plain CI lines, the step summary, JUnit), ``analyze`` as a table, JSON, Markdown and HTML,
``watch`` event lines, ``history`` and ``timeline``, and the name rules themselves.

Two kinds of hostile name. Control characters: a newline, a CR, an ANSI escape or a BEL in a name
never reaches the output raw, no line opens a forged ``::`` workflow command, and ``@mentions``
do not ping in Markdown. CI-unsafe names (once tests/test_ci_safe_names.py): names that start
with ``::`` (live GitHub workflow commands at the start of a line), carry NUL, ESC or a
right-to-left override, or hold no ASCII word at all: no output line begins with ``::`` from the
data, no such character is written raw, and every curve is reported (no exit 3). The reports of
one analysis of those names are drawn from one real analysis (tests/conftest.py ``analysed``);
the commands (``analyze`` here, ``gate``, ``watch``, ``history``, ``timeline``) run end to end."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


# ---- CI-unsafe names: ``::`` commands, NUL, ESC, bidi overrides, no ASCII word -------------------

RUNS = ("::error::FORGED", "::stop-commands::tok3n", "  ::warning file=a.py::W",
        "\u202eevil.exe", "nul\x00byte")
METRICS = ("::notice::metric", "\u7cbe\u5ea6", "\U0001f680", "--", "\t", "acc\u202e")
UNSAFE = ("\x00", "\x1b", "\u202e", "\r")


def _write_ci(path: Path, metrics: tuple[str, ...] = METRICS) -> Path:
    c = np.geomspace(1, 1000, 30)
    rng = np.random.default_rng(1)
    rows = [{"run": run, "metric": metric, "step": k, "compute": float(c[k]),
             "value": float(1 - np.exp(-c[k] / 40) + rng.normal(0, 0.004))}
            for run in RUNS for metric in metrics for k in range(30)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ci_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_ci(tmp_path_factory.mktemp("ci-safe") / "runs.jsonl")


def _safe(text: str, allowed: tuple[str, ...] = ()) -> None:
    for raw in UNSAFE:
        assert raw not in text, repr(raw)
    for line in text.splitlines():
        if line.lstrip().startswith("::"):
            assert allowed and line.startswith(allowed), line


def _invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[str, str, int]:
    res = runner.invoke(app, args, env={"COLUMNS": "70", "GITHUB_ACTIONS": "false", **(env or {})})
    assert "Traceback" not in res.stderr and res.exit_code != 3, res.stderr
    return res.stdout, res.stderr, res.exit_code


def _report(analysis: Any, fmt: str, width: int = 70) -> str:
    """The report ``saturate analyze --format FMT`` prints of ``analysis`` with ``$COLUMNS`` at
    ``width`` (the table as the command draws it on a pipe: its width, no colours, no reasons)."""
    if fmt != "table":
        from saturate.report import render

        return render(analysis, fmt)
    from rich.console import Console

    from saturate.report.terminal import render_table

    console = Console(file=io.StringIO(), width=width, soft_wrap=False, color_system=None)
    render_table(analysis, console)
    return console.file.getvalue()


@pytest.mark.slow
def test_command_names_with_plain_metrics(tmp_path: Path,
                                          analysed: Callable[..., Any]) -> None:
    """The ``::`` rule alone (ASCII metric names): the table, HTML, Markdown and JSON."""
    path = _write_ci(tmp_path / "runs.jsonl", metrics=("reward", "::notice::metric"))
    analysis = analysed(path, n_boot=20)
    for fmt in ("table", "html", "markdown", "json"):
        _safe(_report(analysis, fmt))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html"])
def test_analyze_in_every_format(ci_data: Path, fmt: str, analysed: Callable[..., Any]) -> None:
    out = _report(analysed(ci_data, n_boot=20), fmt)
    _safe(out)
    if fmt == "json":
        doc = json.loads(out)
        seen = {(c["run"], c["metric"]) for c in doc["curves"]}
        seen |= {(d["run"], d["metric"]) for d in doc.get("diagnostic_metrics", [])}
        assert {m for _, m in seen} >= {"\u7cbe\u5ea6", "\U0001f680", "--", "::notice::metric"}


@pytest.mark.slow
def test_the_wide_table_wraps_no_name_onto_a_line_of_its_own(
        ci_data: Path, analysed: Callable[..., Any]) -> None:
    for width in (40, 200):
        _safe(_report(analysed(ci_data, n_boot=20), "table", width))


@pytest.mark.slow
@pytest.mark.parametrize("github", [False, True])
def test_gate_on_ci_unsafe_names(ci_data: Path, tmp_path: Path, github: bool) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)} if github else {}
    junit = tmp_path / "junit.xml"
    out, err, code = _invoke(["gate", str(ci_data), "--n-boot", "20", "--junit", str(junit)], env)
    assert code in (0, 1), err
    _safe(out, ("::error title=saturate", "::warning title=saturate") if github else ())
    _safe(err)
    _safe(junit.read_text(encoding="utf-8"))
    if github:
        _safe(summary.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_watch_history_and_timeline(ci_data: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "h.db")
    for fmt in ("text", "json"):
        out, err, code = _invoke(["watch", str(ci_data), "--once", "--state", state,
                                  "--format", fmt, "--n-boot", "20"])
        assert code == 0, err
        _safe(out)
        _safe(err)
    out, err, code = _invoke(["history", "--state", state])
    assert code == 0, err
    _safe(out)
    out, err, code = _invoke(["timeline", str(ci_data), "--run", RUNS[0], "--metric", METRICS[0],
                              "--points", "3", "--n-boot", "20", "--from", "refit"])
    assert code == 0, err
    _safe(out)


@pytest.mark.slow
def test_html_shows_control_and_bidi_characters_escaped(ci_data: Path,
                                                        analysed: Callable[..., Any]) -> None:
    page = _report(analysed(ci_data, n_boot=20), "html")
    _safe(page)
    assert "\\u202eevil.exe" in page and "nul\\x00byte" in page
    assert not re.search(r"^\s*::", page, re.MULTILINE)


@pytest.mark.parametrize("metric", ["\u7cbe\u5ea6", "\U0001f680", "--", "", "\t", "\u7cbe\u5ea6_rate"])
def test_every_name_rule_takes_names_without_ascii_words(metric: str) -> None:
    from saturate.vocabulary.domains import domain_from_name, metric_domain
    from saturate.vocabulary.names import is_axis_name, metric_direction
    from saturate.vocabulary.roles import metric_role

    values = np.linspace(0.1, 0.9, 10)
    assert domain_from_name(metric, values) is None
    assert metric_domain(metric, values) == (None, "")
    assert metric_role(metric) == "objective"
    assert not is_axis_name(metric)
    assert metric_direction(metric) == "higher"
