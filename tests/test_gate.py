"""The gate: the pure decision, GitHub annotations within limits, step summary, JUnit XML, and the
command's exit codes 0 / 1 / 2 with and without GITHUB_ACTIONS."""

from __future__ import annotations

import math
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner
from test_report_data import HOSTILE, N_BOOT, write_runs

from saturate.cli import app
from saturate.errors import InputError, SettingsError
from saturate.gate import (
    STEP_SUMMARY_LIMIT,
    append_step_summary,
    decide,
    escape_data,
    escape_property,
    github_annotations,
    junit_xml,
    parse_fail_on,
)
from saturate.results import Collapse, CurveAnalysis, Estimate

runner = CliRunner()


def curve(run: str = "r", verdict: str = "scaling", metric: str = "reward", **kw) -> CurveAnalysis:
    base = dict(
        source="s", experiment="e", run_id=run, run=run, metric=metric, direction="higher",
        n_points=10, compute_first=1.0, compute_last=100.0, value_last=1.0, threshold=0.01,
        verdict=verdict, reasons=(f"because {verdict}",), gain_per_doubling=Estimate(0.1, 0.05, 0.2),
        asymptote=Estimate(math.nan, identified=False), headroom=Estimate(math.nan), roi=1.0,
        roi_stage="transition",
    )
    base.update(kw)
    return CurveAnalysis(**base)


# -- decide ----------------------------------------------------------------------------------


def test_decide_default_fails_saturated_and_regressing_only() -> None:
    curves = [curve("a", "scaling"), curve("b", "slowing"), curve("c", "saturated"),
              curve("d", "regressing"), curve("e", "inconclusive")]
    result = decide(curves)
    assert [o.status for o in result.outcomes] == ["pass", "pass", "fail", "fail", "warn"]
    assert result.exit_code == 1 and not result.passed
    assert "FAIL c / reward: saturated: because saturated" in result.summary()
    assert decide(curves[:2]).exit_code == 0
    assert decide(curves[4:]).exit_code == 0


def test_decide_fail_on_inconclusive_and_collapse() -> None:
    collapsed = curve("x", "slowing", collapse=Collapse(50.0, 5, 1.0, 0.2, 0.8, 0.8))
    inc = curve("y", "inconclusive")
    assert decide([inc], fail_on=parse_fail_on("inconclusive")).exit_code == 1
    assert decide([collapsed]).exit_code == 0
    r = decide([collapsed], fail_on=parse_fail_on(["collapse"]))
    assert r.exit_code == 1 and r.failures[0].kinds == ("collapse",)
    assert "collapse at step 50" in r.failures[0].message
    assert parse_fail_on("inconclusive,collapse") == (
        "saturated", "regressing", "inconclusive", "collapse")


def test_inconclusive_curves_are_named_and_never_said_to_gain_enough() -> None:
    """A gate whose only curve is inconclusive judged nothing: it passes (inconclusive only
    warns by default) but says so, names the curve with its P(pays), and ``--fail-on
    inconclusive`` fails it."""
    inc = curve("y", "inconclusive", p_pays=0.48)
    alone = decide([inc])
    assert alone.exit_code == 0
    text = alone.summary()
    assert text.startswith("PASS, nothing judged: all 1 curve(s) inconclusive")
    assert "gain enough" not in text and "--fail-on inconclusive" in text
    assert "WARN y / reward: inconclusive at P(pays) 0.48: because inconclusive" in text
    mixed = decide([curve("a", "slowing", p_pays=0.9), inc]).summary()
    assert mixed.startswith("PASS: 1 of 2 curve(s) still gain enough per doubling, "
                            "1 inconclusive")
    assert "WARN y / reward" in mixed
    assert decide([curve("a", "scaling")]).summary().startswith(
        "PASS: all 1 curve(s) still gain enough per doubling")
    failed = decide([inc], fail_on=parse_fail_on("inconclusive"))
    assert failed.exit_code == 1
    assert "FAIL y / reward: inconclusive at P(pays) 0.48" in failed.summary()
    assert failed.to_dict()["curves"][0]["p_pays"] == 0.48


def test_diagnostic_kinds_are_fail_on_kinds() -> None:
    from saturate.diagnostics import KINDS
    from saturate.gate import fail_kinds, register_fail_kind

    assert set(KINDS) <= set(fail_kinds())
    assert parse_fail_on("divergence,entropy_collapse") == (
        "saturated", "regressing", "divergence", "entropy_collapse")
    with pytest.raises(ValueError, match="divergence"):
        register_fail_kind("divergence", lambda c: None)
    # no diagnostics: the named kind has nothing to fail on
    assert decide([curve("a")], fail_on=parse_fail_on("divergence")).exit_code == 0


def test_labels_follow_the_severity_of_what_does_not_fail() -> None:
    from saturate.diagnostics import Diagnostic

    err = Diagnostic("sharpening", "error", "r", "r", ("eval/pass@1", "eval/pass@8"), "sharpens")
    warn = Diagnostic("divergence", "warning", "r", "r", ("train/reward", "eval/x"), "diverges")
    info = Diagnostic("cost", "info", "r", "r", ("train/reward",), "costs")
    result = decide([curve("r")], diagnostics=[warn, err, info])
    lines = result.summary().splitlines()
    assert lines[0].startswith("PASS")
    assert lines[1] == ("  ERROR r / eval/pass@1, eval/pass@8: sharpening: sharpens (does not fail "
                        "the gate; --fail-on sharpening would)")
    assert lines[2].startswith("  WARN r / train/reward, eval/x: divergence: diverges (does not")
    assert lines[3] == "  ok   r / reward: scaling"  # every curve gets a line, passing ones last
    assert len(lines) == 4 and not any("WARN" in ln and "(error)" in ln for ln in lines)
    failed = decide([curve("r")], fail_on=parse_fail_on("sharpening"), diagnostics=[err, warn])
    assert "  FAIL r / eval/pass@1, eval/pass@8: sharpening: sharpens" in failed.summary()
    assert [o.label for o in failed.diagnostics] == ["FAIL", "WARN"]


def test_decide_refuses_no_curves_and_unknown_kinds() -> None:
    with pytest.raises(InputError, match="no curves"):
        decide([])
    with pytest.raises(SettingsError, match="divergance"):
        parse_fail_on(["divergance"])


# -- GitHub outputs ---------------------------------------------------------------------------


def test_annotation_escaping() -> None:
    assert escape_data("50%\r\nx") == "50%25%0D%0Ax"
    assert escape_property("a: b, c%") == "a%3A b%2C c%25"
    result = decide([curve("run:1,2", "saturated", reasons=("line1\nline2 100%",))])
    (line,) = github_annotations(result)
    # a newline from the data is shown escaped: the annotation stays one line
    assert line == ("::error title=saturate%3A run%3A1%2C2 / reward saturated::"
                    "saturated: line1\\nline2 100%25")


def test_annotations_stay_within_the_per_step_limits() -> None:
    curves = [curve(f"f{i}", "saturated") for i in range(15)]
    curves += [curve(f"w{i}", "inconclusive") for i in range(12)]
    lines = github_annotations(decide(curves))
    errors = [ln for ln in lines if ln.startswith("::error ")]
    warns = [ln for ln in lines if ln.startswith("::warning ")]
    assert len(errors) == 10 and len(warns) == 10
    assert "6 more curves failed" in errors[-1] and "f14 / reward" in errors[-1]
    assert "3 more curves are inconclusive" in warns[-1]
    exact = github_annotations(decide([curve(f"f{i}", "saturated") for i in range(10)]))
    assert len(exact) == 10 and not any("more curves" in ln for ln in exact)


def test_step_summary_appends_and_truncates(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "summary.md"
    target.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    assert append_step_summary("## report\nline") == target
    assert target.read_text() == "# earlier step\n## report\nline\n"
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert append_step_summary("x") is None
    big = tmp_path / "big.md"
    append_step_summary("row\n" * (STEP_SUMMARY_LIMIT // 2), big)
    assert big.stat().st_size <= STEP_SUMMARY_LIMIT
    assert "truncated" in big.read_text()


def test_junit_xml_one_case_per_curve() -> None:
    curves = [curve("ok", "scaling"), curve("bad\x01<&>", "saturated"), curve("meh", "inconclusive")]
    root = ET.fromstring(junit_xml(decide(curves)))
    suite = root.find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "1" and suite.get("skipped") == "1"
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == ["ok", "bad\\x01<&>", "meh"]  # shown escaped
    assert cases[1].find("failure").get("type") == "saturated"
    assert cases[2].find("skipped") is not None and cases[0].find("failure") is None


# -- the command -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_runs(tmp_path_factory.mktemp("gate") / "runs.csv", names=("grow", "flat", "short"))


def _gate(args: list[str], env: dict[str, str] | None = None):
    base = {"GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": ""}
    return runner.invoke(app, ["gate", *args, "--n-boot", str(N_BOOT)], env={**base, **(env or {})})


@pytest.mark.parametrize("github", [False, True])
def test_gate_exit_codes(runs: Path, tmp_path: Path, github: bool) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true" if github else "false"}

    ok = _gate([str(runs), "--min-gain", "2%", "--run", "grow"], env)
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("PASS") and "::" not in ok.stdout

    bad = _gate([str(runs), "--min-gain", "2%", "--run", "grow", "--run", "flat",
                 "--junit", str(tmp_path / "junit.xml")], env)
    assert bad.exit_code == 1, bad.output
    assert "FAIL flat / reward: saturated" in bad.stdout
    assert ET.parse(tmp_path / "junit.xml").getroot().find("testsuite").get("failures") == "1"
    errors = [ln for ln in bad.stdout.splitlines() if ln.startswith("::error ")]
    if github:
        assert len(errors) == 1 and "flat / reward saturated" in errors[0]
        text = summary.read_text()
        assert "## saturate gate passed" in text and "## saturate gate failed" in text
        assert "| flat | reward |" in text
    else:
        assert errors == [] and not summary.exists()

    inc = _gate([str(runs), "--min-gain", "2%", "--run", "short"], env)
    assert inc.exit_code == 0 and ("::warning " in inc.stdout) == github
    strict = _gate([str(runs), "--min-gain", "2%", "--run", "short", "--fail-on", "inconclusive"],
                   env)
    assert strict.exit_code == 1 and "FAIL short / reward: inconclusive" in strict.stdout

    for args, needle in [
        ([str(tmp_path / "missing.csv"), "--min-gain", "2%"], "no such file"),
        ([str(runs), "--min-gain", "lots"], "--min-gain"),
        ([str(runs), "--min-gain", "1%", "--fail-on", "bogus"], "bogus"),
    ]:
        err = _gate(args, env)
        assert err.exit_code == 2, (args, err.output)
        lines = err.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
        assert err.stdout == ""


def test_gate_uses_the_threshold_analyze_uses(runs: Path, tmp_path: Path, monkeypatch) -> None:
    """No --min-gain: analyze's default (3% of each curve's range), or min_gain from the file."""
    import saturate

    both = _gate([str(runs), "--run", "grow", "--run", "flat"])
    assert both.exit_code == 1, both.output
    assert "FAIL flat / reward: saturated" in both.stdout
    assert "  ok   grow / reward: scaling" in both.stdout  # every curve gets a line
    default = saturate.analyze(runs, run=["grow", "flat"], n_boot=N_BOOT, diagnostics=False)
    assert {c.run: c.verdict in ("scaling", "slowing") for c in default.curves} == {
        "grow": True, "flat": False}
    assert default.settings["min_gain"] == "3%"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "saturate.toml").write_text('min_gain = "1000%"\n')
    strict = _gate([str(runs), "--run", "grow"])
    assert strict.exit_code == 1 and "FAIL grow / reward" in strict.stdout


def test_hostile_names_in_annotations(tmp_path: Path) -> None:
    path = write_runs(tmp_path / "h.csv", names=(HOSTILE,))
    res = _gate([str(path), "--min-gain", "1000%", "--fail-on", "inconclusive"],
                {"GITHUB_ACTIONS": "true"})
    assert res.exit_code == 1, res.output
    (line,) = [ln for ln in res.stdout.splitlines() if ln.startswith("::error ")]
    assert line.count("::") == 2  # the name cannot open a second workflow command
