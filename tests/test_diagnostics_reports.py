"""The diagnostics in every report format, in the API's settings and in the gate, on real analysis
output of the sample_runs/ scenarios (and small files written here)."""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re
import warnings
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import saturate
from saturate.cli import app
from saturate.diagnostics import KINDS
from saturate.gate import decide, gate_markdown, github_annotations, junit_xml, parse_fail_on
from saturate.report import render
from saturate.report.html import diagnostics_html, render_html
from saturate.report.markdown import render_markdown
from saturate.report.notebook import notebook_html
from saturate.report.plots import (
    diagnostic_figure,
    plot_divergence,
    plot_recipe,
    plot_sharpening,
    save_diagnostic_figures,
)
from saturate.report.rows import DIAGNOSTIC_COLUMNS
from saturate.report.schema import render_json, schema
from saturate.report.terminal import render_table

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
N_BOOT = 40
HOSTILE = "<script>alert(1)</script>|x*"
pytestmark = pytest.mark.skipif(not (SAMPLES / "README.md").is_file(), reason="no sample_runs/")
runner = CliRunner()


def _analyze(name: str, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return saturate.analyze(str(SAMPLES / name), n_boot=N_BOOT, **kw)


@pytest.fixture(scope="module")
def overopt():
    """Reward over-optimisation: both seeds' win rate falls while the reward climbs."""
    return _analyze("05_reward_overoptimisation.csv", targets={"eval/*": 0.6},
                    gpu_hour_cost=2.0, pretrain_compute=1e5, gpu_hours="compute")


@pytest.fixture(scope="module")
def passk():
    return _analyze("06_pass_at_k.csv")


@pytest.fixture(scope="module")
def recipes():
    return _analyze("08_recipe_comparison.csv", group_by="recipe", metric="train/reward")


def _hostile(analysis):
    """The analysis with its first diagnostic's run and message renamed to markup."""
    first = dataclasses.replace(analysis.diagnostics[0], run=HOSTILE,
                                message=f"{HOSTILE} [link](http://x) \n# heading")
    return dataclasses.replace(analysis, diagnostics=(first, *analysis.diagnostics[1:]))


# -- the API --------------------------------------------------------------------------------------


def test_analyze_runs_the_diagnostics_with_its_options(overopt) -> None:
    kinds = {d.kind for d in overopt.diagnostics}
    assert {"divergence", "target_unreachable", "cost"} <= kinds
    assert overopt.settings["targets"] == {"eval/*": 0.6}
    assert overopt.settings["gpu_hour_cost"] == 2.0 and overopt.settings["pretrain_compute"] == 1e5
    cost = [d for d in overopt.diagnostics if d.kind == "cost"]
    assert len(cost) == len(overopt.curves)
    for d in cost:
        curve = overopt[d.run, d.metrics[0]]
        assert d.details["rl_share"] == pytest.approx(curve.compute_last / 1e5)
    # errors first
    ranks = [{"error": 0, "warning": 1, "info": 2}[d.severity] for d in overopt.diagnostics]
    assert ranks == sorted(ranks)
    frame = overopt.diagnostics_frame()
    assert list(frame["kind"]) == [d.kind for d in overopt.diagnostics]
    assert "Diagnostics:" in overopt.summary() and "diagnostics>" in repr(overopt)
    off = _analyze("05_reward_overoptimisation.csv", diagnostics=False, metric="eval/*")
    assert off.diagnostics == () and "targets" not in off.settings


def test_config_file_feeds_the_diagnostics(tmp_path: Path) -> None:
    cfg = tmp_path / "saturate.toml"
    cfg.write_text(
        f'n_boot = {N_BOOT}\nrun = ["*seed0"]\ngpu_hour_cost = 3\ngpu_hours = "compute"\n'
        '[pairs]\n"train/reward" = ["eval/alpaca_eval/*"]\n'
        '[targets]\n"eval/*" = 0.5\n"train/*" = 100\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(str(SAMPLES / "05_reward_overoptimisation.csv"), config=cfg,
                             targets={"eval/*": 0.7})
    assert {c.run for c in a.curves} == {"llama3.1-8b-rlhf-ppo-rm7b-seed0"}  # run from the file
    assert a.settings["pairs"] == [["train/reward", "eval/alpaca_eval/*"]]
    assert a.settings["targets"] == {"eval/*": 0.7, "train/*": 100.0}  # argument wins per glob
    targets = {d.metrics[0]: d for d in a.diagnostics if d.kind.startswith("target")}
    assert targets["eval/alpaca_eval/win_rate"].details["target"] == 0.7
    assert targets["train/reward"].details["target"] == 100.0
    assert any(d.kind == "divergence" for d in a.diagnostics)
    assert all(d.details["gpu_hour_cost"] == 3.0 for d in a.diagnostics if d.kind == "cost")


def test_gpu_hours_metric_is_read_for_the_diagnostics_only(tmp_path: Path) -> None:
    """--metric leaves the GPU-hours metric out; it is still read to price the next doubling."""
    c = np.arange(1, 41, dtype=float)
    rows = []
    for run, rate in (("a", 2.0), ("b", 0.5)):
        for i, x in enumerate(c):
            rows.append({"run": run, "metric": "reward", "step": i, "compute": x,
                         "value": 0.1 * np.log2(x) + 0.01 * np.sin(i)})
            rows.append({"run": run, "metric": "sys/gpu_h", "step": i, "compute": x,
                         "value": rate * x})
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    a = saturate.analyze(path, metric="reward", gpu_hours="sys/gpu_h", gpu_hour_cost=1.0,
                         budget=100, n_boot=N_BOOT)
    assert {c.metric for c in a.curves} == {"reward"}
    cost = {d.run: d.details for d in a.diagnostics if d.kind == "cost"}
    assert cost["a"]["gpu_hours_next_doubling"] == pytest.approx(2.0 * 40)
    assert cost["b"]["gpu_hours_next_doubling"] == pytest.approx(0.5 * 40)
    (alloc,) = [d for d in a.diagnostics if d.kind == "allocation"]
    assert alloc.metrics == ("reward",)


# -- the report formats ---------------------------------------------------------------------------


def test_json_lists_the_diagnostics_and_validates(overopt) -> None:
    doc = json.loads(render_json(overopt))
    jsonschema.validate(doc, schema(), cls=jsonschema.Draft202012Validator)
    item = schema()["$defs"]["diagnostic"]
    assert item["properties"]["kind"]["enum"] == list(KINDS)
    assert len(doc["diagnostics"]) == len(overopt.diagnostics)
    div = [d for d in doc["diagnostics"] if d["kind"] == "divergence"]
    assert {d["run"] for d in div} == {"llama3.1-8b-rlhf-ppo-rm7b-seed0",
                                       "llama3.1-8b-rlhf-ppo-rm7b-seed1"}
    assert all(d["compute"] > 0 and d["details"]["benchmark_falls"] for d in div)
    broken = json.loads(json.dumps(doc))
    broken["diagnostics"][0]["kind"] = "gremlins"
    broken["diagnostics"][1]["severity"] = "fatal"
    del broken["diagnostics"][2]["message"]
    errors = list(jsonschema.Draft202012Validator(schema()).iter_errors(broken))
    assert {tuple(e.absolute_path) for e in errors} == {
        ("diagnostics", 0, "kind"), ("diagnostics", 1, "severity"), ("diagnostics", 2)}


def test_table_has_a_diagnostics_section_after_the_curves(overopt) -> None:
    text = render(overopt, "table", width=240)
    head = text.index("Diagnostics:")
    assert text.index("of 4 curves still pay") < text.index("gain / doubling") < head
    section = text[head:]
    for header in ("severity", "kind", "run", "from compute", "message"):
        assert header in section
    for d in overopt.diagnostics:
        assert f"{d.compute:.4g}" in section if d.compute is not None else True
    assert section.count("divergence") == sum(d.kind == "divergence" for d in overopt.diagnostics)
    buf = io.StringIO()
    render_table(_hostile(overopt), Console(file=buf, width=240, color_system=None))
    assert "<script>alert(1)</script>|x*" in buf.getvalue()  # literal, not rich markup


def test_markdown_diagnostics_table_escaped(overopt) -> None:
    md = render_markdown(_hostile(overopt))
    section = md[md.index("### Diagnostics"):md.index("### Reasons")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and "---" not in ln]
    assert len(rows) == 1 + len(overopt.diagnostics)
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == len(DIAGNOSTIC_COLUMNS) + 1
    assert "<script>" not in md and "&lt;script&gt;" in md and "\\[link\\]" in md
    assert "**divergence**" in section and "❌ error" in section


def test_html_diagnostics_section_with_plots(overopt, passk) -> None:
    page = render_html(_hostile(overopt))
    assert "Diagnostics (" in page and "<script>alert" not in page.lower()
    assert html.escape(HOSTILE) in page
    n_div = sum(d.kind == "divergence" for d in overopt.diagnostics)
    figures = re.findall(r'<section class="diag" id="d\d+">', page)
    assert len(figures) == n_div
    for anchor in re.findall(r'href="#(d\d+)"', page):
        assert f'id="{anchor}"' in page
    section = diagnostics_html(passk)
    assert len(re.findall(r'<section class="diag"', section)) == sum(
        d.kind in ("divergence", "sharpening") for d in passk.diagnostics)
    assert "<title>sharpening in qwen2.5-math-7b-grpo-passk" in section
    assert diagnostics_html(passk, plots=False).count("<svg") == 0
    frag = notebook_html(_hostile(overopt))
    assert "Diagnostics (" in frag and html.escape(HOSTILE) in frag and "<script" not in frag


def test_divergence_plot_twin_axes_and_the_line(overopt) -> None:
    d = next(d for d in overopt.diagnostics if d.kind == "divergence")
    ax = plot_divergence(d, overopt)
    (twin,) = [a for a in ax.figure.axes if a is not ax]
    reward = overopt[d.run, d.metrics[0]]
    bench = overopt[d.run, d.metrics[1]]
    assert len(ax.get_lines()[0].get_xdata()) == reward.n_points
    assert len(twin.get_lines()[0].get_xdata()) == bench.n_points
    (line,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("stopped following")]
    assert line.get_xdata()[0] == pytest.approx(d.compute)
    assert ax.get_xscale() == "log"


def test_sharpening_plot_change_vs_k(passk) -> None:
    d = next(d for d in passk.diagnostics if d.kind == "sharpening")
    ax = plot_sharpening(d)
    ks = [ch["k"] for ch in d.details["changes"]]
    data = ax.get_lines()[0]
    assert list(data.get_xdata()) == ks
    deltas = [ch["delta"]["value"] for ch in d.details["changes"]]
    assert list(data.get_ydata()) == pytest.approx(deltas)
    assert deltas[0] > 0 > deltas[-1]
    (mark,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("falls behind")]
    assert 1 < mark.get_xdata()[0] <= d.details["crossover_k"]


def test_recipe_plot_marks_the_crossing(recipes, tmp_path: Path) -> None:
    (d,) = [d for d in recipes.diagnostics if d.kind == "recipe"]
    ax = plot_recipe(d, recipes)
    labels = ax.get_legend_handles_labels()[1]
    assert {"cispo", "dapo"} <= set(labels)
    crossing = d.details["pair"]["crossing"]
    assert crossing is not None
    (mark,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("forecasts cross")]
    assert mark.get_xdata()[0] == pytest.approx(crossing["value"])
    assert diagnostic_figure(next(x for x in recipes.diagnostics), recipes) is not None
    paths = save_diagnostic_figures(recipes, tmp_path / "figs", ("png",))
    assert [p.name for p in paths] == ["diagnostic__recipe__cispo_vs_dapo__train_reward.png"]
    assert paths[0].read_bytes()[:4] == b"\x89PNG"


# -- the gate -------------------------------------------------------------------------------------


def test_decide_fails_a_named_diagnostic_even_when_every_curve_passes(overopt) -> None:
    passing = [c for c in overopt.curves if c.verdict not in ("saturated", "regressing")]
    assert passing
    plain = decide(passing, diagnostics=overopt.diagnostics)
    assert plain.exit_code == 0
    assert {o.diagnostic.kind for o in plain.warned_diagnostics} >= {"divergence"}
    strict = decide(passing, fail_on=parse_fail_on("divergence"), diagnostics=overopt.diagnostics)
    assert strict.exit_code == 1 and not strict.failures
    assert {o.diagnostic.kind for o in strict.failed_diagnostics} == {"divergence"}
    assert "2 diagnostic(s) failed" in strict.summary()
    errors = [ln for ln in github_annotations(strict) if ln.startswith("::error ")]
    assert len(errors) == 2 and all("divergence in llama3.1" in ln for ln in errors)
    root = ET.fromstring(junit_xml(strict))
    failing = [tc for tc in root.iter("testcase") if tc.find("failure") is not None]
    assert [tc.find("failure").get("type") for tc in failing] == ["divergence", "divergence"]
    assert failing[0].get("name") == "divergence: train/reward, eval/alpaca_eval/win_rate"
    md = gate_markdown(strict)
    assert md.startswith("### Gate failed") and md.count("❌") == 2
    everything = parse_fail_on(list(KINDS))
    assert set(KINDS) <= set(everything)


def _gate(*args: str, env: dict[str, str] | None = None):
    base = {"GITHUB_ACTIONS": "", "GITHUB_STEP_SUMMARY": ""}
    return runner.invoke(app, ["gate", *args, "--min-gain", "3%", "--n-boot", str(N_BOOT)],
                         env={**base, **(env or {})})


def test_gate_fail_on_divergence_cli(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    junit = tmp_path / "junit.xml"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    bad = _gate(str(SAMPLES / "05_reward_overoptimisation.csv"), "--fail-on", "divergence",
                "--junit", str(junit), env=env)
    assert bad.exit_code == 1, bad.output
    fails = [ln for ln in bad.stdout.splitlines() if ln.startswith("  FAIL ")]
    assert sum(": divergence: " in ln for ln in fails) == 2
    assert sum(ln.startswith("::error title=saturate%3A divergence in") for ln in
               bad.stdout.splitlines()) == 2
    text = summary.read_text()
    assert "### Gate failed" in text and "### Diagnostics" in text
    types = [f.get("type") for f in ET.parse(junit).getroot().iter("failure")]
    assert types.count("divergence") == 2

    ok = _gate(str(SAMPLES / "01_still_scaling.csv"), "--fail-on", "divergence,sharpening")
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("PASS")

    typo = _gate(str(SAMPLES / "01_still_scaling.csv"), "--fail-on", "divergnce")
    assert typo.exit_code == 2 and "divergnce" in typo.stderr and "divergence" in typo.stderr


# -- the command line options ---------------------------------------------------------------------


def test_analyze_cli_passes_the_diagnostic_options(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = runner.invoke(app, [
        "analyze", str(SAMPLES / "05_reward_overoptimisation.csv"), "--n-boot", str(N_BOOT),
        "--run", "*seed1", "--target", "eval/*=0.15", "--target", "train/*=3.5",
        "--pair", "train/reward=eval/alpaca_eval/win_rate", "--gpu-hour-cost", "2.5",
        "--gpu-hours", "compute", "--pretrain-compute", "1e6", "--format", "json", "--out", str(out),
    ])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema(), cls=jsonschema.Draft202012Validator)
    s = doc["settings"]
    assert s["targets"] == {"eval/*": 0.15, "train/*": 3.5}
    assert s["pairs"] == [["train/reward", "eval/alpaca_eval/win_rate"]]
    assert s["gpu_hour_cost"] == 2.5 and s["pretrain_compute"] == 1e6
    kinds = {(d["kind"], d["metrics"][0]) for d in doc["diagnostics"]}
    assert ("divergence", "train/reward") in kinds and ("cost", "train/reward") in kinds
    assert {k for k, m in kinds if m in ("eval/alpaca_eval/win_rate", "train/reward")} >= {
        "cost"}
    assert any(d["kind"] in ("target", "target_unreachable") for d in doc["diagnostics"])


@pytest.mark.parametrize(("args", "needle"), [
    (["--target", "eval/*"], "--target"),
    (["--target", "eval/*=lots"], "--target"),
    (["--pair", "train/reward"], "--pair"),
    (["--gpu-hour-cost", "-1"], "--gpu-hour-cost"),
    (["--pretrain-compute", "zero"], "--pretrain-compute"),
])
def test_bad_diagnostic_options_are_one_line_exit_2(args: list[str], needle: str) -> None:
    res = runner.invoke(app, ["analyze", str(SAMPLES / "01_still_scaling.csv"), *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
