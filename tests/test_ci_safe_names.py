"""Names that start with ``::`` (live GitHub workflow commands at the start of a line), carry NUL,
ESC or a right-to-left override, or hold no ASCII word at all, through every command and format:
no output line begins with ``::`` from the data, no such character is written raw, and every
curve is reported (no exit 3)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from saturate.cli import app

pytestmark = pytest.mark.slow  # every command and format run on hostile names

RUNS = ("::error::FORGED", "::stop-commands::tok3n", "  ::warning file=a.py::W",
        "\u202eevil.exe", "nul\x00byte")
METRICS = ("::notice::metric", "\u7cbe\u5ea6", "\U0001f680", "--", "\t", "acc\u202e")
RAW = ("\x00", "\x1b", "\u202e", "\r")
runner = CliRunner()


def _write(path: Path, metrics: tuple[str, ...] = METRICS) -> Path:
    c = np.geomspace(1, 1000, 30)
    rng = np.random.default_rng(1)
    rows = [{"run": run, "metric": metric, "step": k, "compute": float(c[k]),
             "value": float(1 - np.exp(-c[k] / 40) + rng.normal(0, 0.004))}
            for run in RUNS for metric in metrics for k in range(30)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_command_names_with_plain_metrics(tmp_path: Path) -> None:
    """The ``::`` rule alone (ASCII metric names): the table, HTML, Markdown and JSON."""
    path = _write(tmp_path / "runs.jsonl", metrics=("reward", "::notice::metric"))
    for fmt in ("table", "html", "markdown", "json"):
        out, err, code = _invoke(["analyze", str(path), "--n-boot", "20", "--format", fmt])
        assert code == 0, err
        _safe(out)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("ci-safe") / "runs.jsonl")


def _safe(text: str, allowed: tuple[str, ...] = ()) -> None:
    for raw in RAW:
        assert raw not in text, repr(raw)
    for line in text.splitlines():
        if line.lstrip().startswith("::"):
            assert allowed and line.startswith(allowed), line


def _invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[str, str, int]:
    res = runner.invoke(app, args, env={"COLUMNS": "70", "GITHUB_ACTIONS": "false", **(env or {})})
    assert "Traceback" not in res.stderr and res.exit_code != 3, res.stderr
    return res.stdout, res.stderr, res.exit_code


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html"])
def test_analyze_in_every_format(data: Path, fmt: str) -> None:
    out, err, code = _invoke(["analyze", str(data), "--n-boot", "20", "--format", fmt])
    assert code == 0, err
    _safe(out)
    _safe(err)
    if fmt == "json":
        doc = json.loads(out)
        seen = {(c["run"], c["metric"]) for c in doc["curves"]}
        seen |= {(d["run"], d["metric"]) for d in doc.get("diagnostic_metrics", [])}
        assert {m for _, m in seen} >= {"\u7cbe\u5ea6", "\U0001f680", "--", "::notice::metric"}


def test_the_wide_table_wraps_no_name_onto_a_line_of_its_own(data: Path) -> None:
    for width in ("40", "200"):
        res = runner.invoke(app, ["analyze", str(data), "--n-boot", "20"],
                            env={"COLUMNS": width})
        assert res.exit_code == 0, res.stderr
        _safe(res.stdout)


@pytest.mark.parametrize("github", [False, True])
def test_gate(data: Path, tmp_path: Path, github: bool) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)} if github else {}
    junit = tmp_path / "junit.xml"
    out, err, code = _invoke(["gate", str(data), "--n-boot", "20", "--junit", str(junit)], env)
    assert code in (0, 1), err
    _safe(out, ("::error title=saturate", "::warning title=saturate") if github else ())
    _safe(err)
    _safe(junit.read_text(encoding="utf-8"))
    if github:
        _safe(summary.read_text(encoding="utf-8"))


def test_watch_history_and_timeline(data: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "h.db")
    for fmt in ("text", "json"):
        out, err, code = _invoke(["watch", str(data), "--once", "--state", state,
                                  "--format", fmt, "--n-boot", "20"])
        assert code == 0, err
        _safe(out)
        _safe(err)
    out, err, code = _invoke(["history", "--state", state])
    assert code == 0, err
    _safe(out)
    out, err, code = _invoke(["timeline", str(data), "--run", RUNS[0], "--metric", METRICS[0],
                              "--points", "3", "--n-boot", "20", "--from", "refit"])
    assert code == 0, err
    _safe(out)


def test_html_shows_control_and_bidi_characters_escaped(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    _, err, code = _invoke(["analyze", str(data), "--n-boot", "20", "--format", "html",
                            "--out", str(out)])
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
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
