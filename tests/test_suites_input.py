"""Suites: normalisation (baselines from a file or given, min-max over all groups), bad input
with messages that name the problem, the report faces, and tasks that are metrics."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from saturate.analysis import AnalysisSettings
from saturate.errors import InputError, SettingsError
from saturate.report.suite import suite_markdown
from saturate.report.suite_html import plot_suite, suite_html
from saturate.report.suite_table import render_suite_table
from saturate.suites import analyze_suite, parse_normalize, read_baselines
from saturate.table.curves import tidy

FAST = {"n_boot": 200, "settings": AnalysisSettings(n_boot=50), "per_task": False}
C = np.geomspace(1.0, 256.0, 24)


def table(levels: dict[tuple[str, str], tuple[float, float]], seeds: int = 2,
          metric: str = "return") -> pd.DataFrame:
    """Runs whose score is ``a + b log2(c)`` (plus a seed offset) per (task, agent)."""
    parts = []
    for (task, agent), (a, b) in levels.items():
        for s in range(seeds):
            run = f"{agent}/{task}/{s}"
            parts.append(pd.DataFrame({
                "run_id": run, "run": run, "metric": metric, "step": np.arange(C.size),
                "compute": C, "value": a + b * np.log2(C) + 0.01 * s,
                "params.game": task, "params.agent": agent,
            }))
    return tidy(pd.concat(parts, ignore_index=True))


LEVELS = {("pong", "dqn"): (-20.0, 4.0), ("pong", "rainbow"): (-18.0, 4.5),
          ("breakout", "dqn"): (2.0, 30.0), ("breakout", "rainbow"): (5.0, 40.0)}


# ---------------------------------------------------------------------------------------------
# Normalisation


def test_min_max_is_over_all_groups():
    t = table(LEVELS)
    res = analyze_suite(t, suite="game", group_by="agent", **FAST)
    norm = res.normalization
    assert norm.method == "min-max" and "over all groups" in norm.describe()
    for task in ("pong", "breakout"):
        vals = t.loc[t["params.game"] == task, "value"]
        assert norm.bounds[task] == (vals.min(), vals.max())
    best = max(res["dqn"].aggregate.iqm[-1], res["rainbow"].aggregate.iqm[-1])
    assert best <= 1.0 + 1e-12 and min(res["dqn"].aggregate.iqm) >= -1e-12


def test_lower_is_better_metrics_are_flipped_by_min_max():
    t = table(LEVELS, metric="eval/loss")
    res = analyze_suite(t, suite="game", group_by="agent", **FAST)
    for task, (zero, one) in res.normalization.bounds.items():
        assert zero > one, task  # 0 at the worst (highest) loss
    assert res["dqn"].aggregate.iqm[0] > res["dqn"].aggregate.iqm[-1]


def test_baselines_from_a_csv_file(tmp_path):
    path = tmp_path / "atari.csv"
    path.write_text("task,random,human\npong,-20.7,14.6\nbreakout,1.7,30.5\nalien,227.8,7127.7\n")
    res = analyze_suite(table(LEVELS), suite="game", group_by="agent", normalize=path, **FAST)
    assert res.normalization.method == "baselines"
    assert res.normalization.source == "file atari.csv"
    assert res.normalization.bounds == {"breakout": (1.7, 30.5), "pong": (-20.7, 14.6)}
    t = table(LEVELS)
    raw = t[(t["params.game"] == "pong") & (t["params.agent"] == "dqn")]
    first = raw.groupby("step")["value"].mean().iloc[0]
    pong = (first - -20.7) / (14.6 - -20.7)
    brk = (2.0 + 0.005 - 1.7) / (30.5 - 1.7)
    assert res["dqn"].aggregate.mean[0] == pytest.approx((pong + brk) / 2, abs=1e-9)


def test_baselines_from_json_a_mapping_or_one_pair(tmp_path):
    js = tmp_path / "b.json"
    js.write_text(json.dumps({"pong": {"random": -21, "human": 15},
                              "breakout": {"random": 0, "human": 30}}))
    assert read_baselines(js) == {"pong": (-21.0, 15.0), "breakout": (0.0, 30.0)}
    records = tmp_path / "r.json"
    records.write_text(json.dumps([{"game": "pong", "random": -21, "human": 15}]))
    assert read_baselines(records) == {"pong": (-21.0, 15.0)}
    assert parse_normalize("random=0.25,human=1") == ("baselines", {"*": (0.25, 1.0)},
                                                      "given for every task")
    assert parse_normalize({"pong": {"random": 0, "human": 1}})[1] == {"pong": (0.0, 1.0)}
    assert parse_normalize(None)[0] == parse_normalize("min-max")[0] == "min-max"
    res = analyze_suite(table(LEVELS), suite="game", group_by="agent",
                        normalize="random=0,human=100", **FAST)
    assert set(res.normalization.bounds.values()) == {(0.0, 100.0)}


@pytest.mark.parametrize("text, needle", [
    ("task,random,human\npong,-20.7,14.6\n", "no random/human baseline for task(s) breakout"),
    ("task,random,human\npong,3,3\nbreakout,1,2\n", "task 'pong'"),
    ("task,random,human\npong,x,3\nbreakout,1,2\n", "random must be a number"),
])
def test_bad_baselines_files_name_the_problem(tmp_path, text, needle):
    path = tmp_path / "b.csv"
    path.write_text(text)
    with pytest.raises(SettingsError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        analyze_suite(table(LEVELS), suite="game", group_by="agent", normalize=path, **FAST)


def test_unreadable_baselines_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_baselines(tmp_path / "missing.csv")
    path = tmp_path / "b.csv"
    path.write_text("name,lo,hi\npong,1,2\n")
    with pytest.raises(InputError, match="needs columns task, random, human; found name, lo, hi"):
        read_baselines(path)
    with pytest.raises(SettingsError, match="random == human"):
        parse_normalize("random=1,human=1")
    with pytest.raises(SettingsError, match="expected 'random=R,human=H'"):
        parse_normalize("random=1,=2")


# ---------------------------------------------------------------------------------------------
# Bad input


def test_unknown_suite_key_names_it_and_the_parameters():
    with pytest.raises(SettingsError, match=r"suite 'env' matches no column, parameter or tag; "
                                            r"parameters and tags in the data: agent, game$"):
        analyze_suite(table(LEVELS), suite="env", group_by="agent", **FAST)
    with pytest.raises(SettingsError, match="group_by 'recipe'"):
        analyze_suite(table(LEVELS), suite="game", group_by="recipe", **FAST)
    with pytest.raises(SettingsError, match="same column"):
        analyze_suite(table(LEVELS), suite="game", group_by="game", **FAST)


def test_a_task_with_no_points_is_named():
    t = table(LEVELS)
    dead = t["params.game"].eq("pong") & t["params.agent"].eq("dqn")
    t.loc[dead, "compute"] = 0.0
    with pytest.raises(InputError, match=r"task 'pong' \(dqn\): no run has two or more points"):
        analyze_suite(t, suite="game", group_by="agent", **FAST)


def test_constant_task_cannot_be_min_max_scaled():
    t = table({**LEVELS, ("flat", "dqn"): (1.0, 0.0), ("flat", "rainbow"): (1.0, 0.0)}, seeds=1)
    with pytest.raises(InputError, match=r"task\(s\) flat never change"):
        analyze_suite(t, suite="game", group_by="agent", **FAST)


@pytest.mark.parametrize("kwargs, needle", [
    ({"statistic": "median"}, "statistic: expected one of iqm, mean, got 'median'"),
    ({"n_boot": 10}, "n_boot: expected an integer >= 100"),
    ({"min_coverage": 0.0}, "min_coverage"),
    ({"metric": "nope*"}, r"--metric 'nope\*' matches no metric of the suite; the suite's "
                          "metrics: return$"),
])
def test_bad_options_name_the_argument(kwargs, needle):
    with pytest.raises(SettingsError, match=needle):
        analyze_suite(table(LEVELS), suite="game", group_by="agent",
                      **{**FAST, **kwargs})


def test_several_metrics_need_a_choice_and_non_tables_are_refused():
    both = pd.concat([table(LEVELS), table(LEVELS, metric="eval/return")], ignore_index=True)
    with pytest.raises(SettingsError, match=r"log 2 metrics \(eval/return, return\)"):
        analyze_suite(both, suite="game", group_by="agent", **FAST)
    res = analyze_suite(both, suite="game", group_by="agent", metric="eval/*", **FAST)
    assert res.metric == "eval/return"
    with pytest.raises(InputError, match="expected a tidy DataFrame"):
        analyze_suite([1, 2], suite="game")
    with pytest.raises(InputError, match="no run names a task"):
        analyze_suite(table(LEVELS).assign(**{"params.game": None}), suite="game", **FAST)


def test_runs_without_a_task_are_left_out_and_counted():
    t = table(LEVELS)
    extra = t[t["params.game"] == "pong"].assign(run_id="stray", run="stray",
                                                  **{"params.game": ""})
    res = analyze_suite(pd.concat([t, extra], ignore_index=True), suite="game",
                        group_by="agent", **FAST)
    assert any("1 run(s) without a task and a group left out" in n for n in res.notes)


# ---------------------------------------------------------------------------------------------
# Tasks that are metrics; report faces


def test_eval_sets_logged_as_metrics_form_a_suite():
    parts = []
    for metric, (a, b) in {"eval/easy": (0.7, 0.01), "eval/hard": (0.1, 0.08),
                           "eval/loss": (3.0, -0.2)}.items():
        for s in range(2):
            parts.append(pd.DataFrame({"run_id": f"r{s}", "run": f"r{s}", "metric": metric,
                                       "step": np.arange(C.size), "compute": C,
                                       "value": a + b * np.log2(C) + 0.01 * s}))
    t = tidy(pd.concat(parts, ignore_index=True))
    res = analyze_suite(t, suite="metric", metric="eval/*", **FAST)
    g = res["all"]
    assert g.tasks == ("eval/easy", "eval/hard", "eval/loss")
    assert g.n_seeds == {"eval/easy": 2, "eval/hard": 2, "eval/loss": 2}
    zero, one = res.normalization.bounds["eval/loss"]
    assert zero > one  # the loss is flipped so larger is better
    assert g.aggregate.mean[-1] > g.aggregate.mean[0]


def test_report_faces_escape_names_and_show_the_grid():
    levels = {("<b>pong</b>", "dqn"): (-20.0, 4.0), ("<b>pong</b>", "r|ainbow"): (-18.0, 0.0),
              ("breakout", "dqn"): (2.0, 30.0), ("breakout", "r|ainbow"): (5.0, 0.1)}
    res = analyze_suite(table(levels), suite="game", group_by="agent", n_boot=200,
                        settings=AnalysisSettings(n_boot=50))
    page = suite_html(res)
    assert "<b>pong</b>" not in page and "&lt;b&gt;pong&lt;/b&gt;" in page
    assert "<svg" in page and "data:image" not in page and "suite-grid" in page
    assert page.count("class='v'") == 4
    md = "\n".join(suite_markdown(res))
    assert "r\\|ainbow" in md and "Per-task verdicts" in md
    console = Console(file=io.StringIO(), width=220, color_system=None)
    render_suite_table(res, console, reasons=True)
    text = console.file.getvalue()
    assert "one verdict per group" in text and "Method:" in text and "dqn vs r|ainbow" in text
    ax = plot_suite(res)
    assert len(ax.get_lines()) >= 2
    assert res._repr_html_().startswith("<section")
