"""``saturate analyze --suite`` and ``saturate gate --suite`` end to end on the sample suite
(``sample_runs/11_agent_suite.csv``: 8 tasks x 3 seeds x 2 recipes, ppo-turn saturating on most
tasks, grpo-traj still scaling): the table fits 100 columns, the JSON validates against the
report's schema, the Markdown and HTML (drawn from one analysis of the same settings, made once)
hold the suite and the HTML opens in headless Chromium, the gate exits 1 on the saturating recipe
and 0 without it, and a bad suite option is one line and exit 2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from click.testing import CliRunner

from saturate.cli import app
from saturate.report.schema import build_schema

pytestmark = pytest.mark.slow  # suites analysed through the command line

SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs" / "11_agent_suite.csv"
SUITE = ("--suite", "task", "--group-by", "recipe")
FAST = ("--n-boot", "50", "--suite-boot", "200")
TRUTH = {"grpo-traj": "scaling", "ppo-turn": "saturated"}  # the generator's truth

runner = CliRunner()


def _run(command: str, *args: str, env: dict[str, str] | None = None):
    """``saturate COMMAND --n-boot 50 --suite-boot 200 ARGS`` (later options win)."""
    return runner.invoke(app, [command, *FAST, *args], env=env)


def test_table_at_100_columns_puts_the_suite_first(monkeypatch: pytest.MonkeyPatch) -> None:
    res = _run("analyze", str(SAMPLE), *SUITE, env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.rstrip("\n").splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    text = res.stdout
    assert text.index("Suite task: IQM over 8 tasks") < text.index("Curves (each run on its own)")
    for group, verdict in TRUTH.items():
        assert any(re.match(rf"{group}\s.*\b{verdict}\b", ln) for ln in lines), group
    assert "Per-task verdicts" in text and "Method: interquartile mean" in text
    assert res.stderr == ""


def test_without_suite_the_report_has_no_suite_section() -> None:
    res = _run("analyze", str(SAMPLE), "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert "suite" not in doc and "suite" not in doc["settings"]
    assert doc["settings"]["group_by"] is None and len(doc["curves"]) == 48


def test_json_validates_and_holds_the_suite(tmp_path: Path) -> None:
    out = tmp_path / "suite.json"
    res = _run("analyze", str(SAMPLE), *SUITE, "--format", "json", "--out", str(out))
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(build_schema()).iter_errors(doc))
    assert not errors, [e.message for e in errors[:5]]
    suite = doc["suite"]
    assert {g["group"]: g["verdict"] for g in suite["groups"]} == TRUTH
    assert doc["settings"]["suite"]["suite"] == "task"
    assert suite["normalization"]["method"] == "min-max"  # the default, stated in the report
    assert len(doc["curves"]) == 48  # every run still judged on its own, not pooled


def _suite_analysis(analysed: Callable[..., Any]) -> Any:
    """What ``saturate analyze SAMPLE --n-boot 50 --suite-boot 200 --suite task --group-by
    recipe`` analyses, analysed once a session (its table, JSON and gate run as commands above
    and below; its Markdown and HTML are drawn from this)."""
    return analysed(SAMPLE, n_boot=50, suite_boot=200, suite="task", group_by="recipe")


def test_markdown_has_the_suite_before_the_curves(analysed: Callable[..., Any]) -> None:
    from saturate.report import render

    md = render(_suite_analysis(analysed), "markdown")
    assert md.index("### Suite task") < md.index("### Curves (each run on its own)")
    assert "| task |" in md and "Per-task verdicts" in md


@pytest.mark.browser
def test_html_opens_in_chromium_with_the_suite_chart(tmp_path: Path,
                                                    analysed: Callable[..., Any]) -> None:
    from test_html_browser import BROWSER, _chromium

    from saturate.report.html import render_html

    if BROWSER is None:
        pytest.skip("no Chromium binary found (install 'chromium' or set SATURATE_CHROMIUM)")
    page = tmp_path / "suite.html"
    page.write_text(render_html(_suite_analysis(analysed)), encoding="utf-8")
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    body = dom.stdout.split("<body", 1)[1]
    assert 'data-sortable="on"' in dom.stdout, dom.stderr[-2000:]  # the page's own script ran
    section = re.search(r'<section class="suite" id="suite">(.*?)</section>', body, re.S)
    assert section, body[:2000]
    assert "<svg" in section.group(1) and "suite-grid" in section.group(1)
    assert all(g in section.group(1) for g in TRUTH)
    shot = tmp_path / "shot.png"
    res = _chromium(tmp_path, "--window-size=1100,1400", f"--screenshot={shot}", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 20_000, res.stderr[-2000:]


def test_gate_fails_on_the_saturating_group(tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    res = _run("gate", str(SAMPLE), *SUITE, "--junit", str(junit))
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("FAIL: 1 of 2 group(s) of suite task failed")
    assert any(ln.startswith("  FAIL suite task / ppo-turn: saturated") for ln in lines)
    assert not any(ln.startswith("  FAIL qwen") for ln in lines)  # a task saturating only warns
    assert any(ln.startswith("  WARN qwen2.5-7b-grpo-traj-sudoku") for ln in lines)
    cases = ET.parse(junit).getroot().iter("testcase")
    suite_cases = {c.get("name"): c for c in cases if c.get("classname") == "suite task"}
    assert set(suite_cases) == set(TRUTH)
    assert suite_cases["ppo-turn"].find("failure") is not None
    assert suite_cases["grpo-traj"].find("failure") is None


def test_gate_passes_on_the_scaling_group_and_named_kinds_still_fail() -> None:
    res = _run("gate", str(SAMPLE), *SUITE, "--run", "*grpo-traj*")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("PASS: all 1 group(s) of suite task still gain enough")
    res = _run("gate", str(SAMPLE), *SUITE, "--run", "*grpo-traj*", "--fail-on", "regressing")
    assert res.exit_code == 1, res.output  # named: the webshop curves regress
    assert "  FAIL qwen2.5-7b-grpo-traj-webshop-seed0" in res.stdout


@pytest.mark.parametrize(("args", "says"), [
    (("--suite", "nosuch"), "--suite 'nosuch' matches no column, parameter or tag"),
    (("--suite", "task", "--group-by", "agent"), "--group-by 'agent' matches no column"),
    (("--suite", "task", "--normalize", "random=1"), "--normalize must give exactly random"),
    (("--suite", "task", "--normalize", "random=a,human=1"), "--normalize random"),
    (("--suite", "task", "--normalize", "nosuch.csv"), "no such file"),
    (("--suite", "task", "--suite-statistic", "median"), "--suite-statistic must be one of"),
    (("--suite", "task", "--suite-boot", "5"), "--suite-boot"),
    (("--suite", "task", "--min-coverage", "1.5"), "--min-coverage must be in (0, 1]"),
])
def test_bad_suite_options_are_one_line_and_exit_2(args: tuple[str, ...], says: str) -> None:
    for command in ("analyze", "gate"):
        res = _run(command, str(SAMPLE), *args)
        assert res.exit_code == 2, (command, res.output)
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: "), res.stderr
        assert says in res.stderr, res.stderr


def test_bad_baselines_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "baselines.csv"
    bad.write_text("game,low\npong,1\n", encoding="utf-8")
    res = _run("analyze", str(SAMPLE), "--suite", "task", "--normalize", str(bad))
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: --normalize"), res.stderr
    assert bad.read_text(encoding="utf-8") == "game,low\npong,1\n"  # the user's file unchanged
