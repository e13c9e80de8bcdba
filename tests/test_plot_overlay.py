"""``saturate plot --overlay``: the runs of a metric on one chart, each with its points, fit and
band, the legend naming the runs, and each recipe's pooled curve (the mean of its seeds' fits)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import saturate
from saturate.cli import app
from saturate.report.plots.overlay import overlay_figure, overlay_groups, pooled_curve

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"


@pytest.fixture(scope="module")
def recipes():
    return saturate.analyze(SAMPLES / "08_recipe_comparison.csv", metric="eval/*", n_boot=30)


def test_one_chart_per_metric_with_every_run_and_each_recipe_pooled(recipes):
    groups = overlay_groups(recipes.curves)
    assert len(groups) == 1
    (curves,) = groups.values()
    runs = sorted(c.run for c in curves)
    fig = overlay_figure(curves)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [lbl.split(" (")[0] for lbl in labels[: len(runs)]] == runs
    assert all(f"({c.verdict})" in lbl for c, lbl in zip(curves, labels, strict=False))
    pooled = [lbl for lbl in labels if lbl.startswith("pooled ")]
    assert pooled == ["pooled qwen3-4b-cispo: mean of 3 fits", "pooled qwen3-4b-dapo: mean of 3 fits"]
    # the pooled line is the mean of the seeds' fits, inside the range all of them cover
    grid, mean = pooled_curve([c for c in curves if "cispo" in c.run])
    one = np.vstack([c.fit.predict(grid) for c in curves if "cispo" in c.run]).mean(axis=0)
    np.testing.assert_allclose(mean, one, rtol=1e-2)


def test_plot_overlay_writes_the_charts(tmp_path):
    out = tmp_path / "figs"
    result = CliRunner().invoke(app, ["plot", str(SAMPLES / "01_still_scaling.csv"), "--overlay",
                                      "-o", str(out), "--metric", "train/reward", "--n-boot", "20",
                                      "-f", "png,svg"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["overlay__01_still_scaling__train_reward.png",
                     "overlay__01_still_scaling__train_reward.svg"]
    assert (out / names[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (out / names[1]).read_text()
    assert "qwen3-8b-grpo-longcot-seed0" in svg and "qwen3-8b-grpo-longcot-seed1" in svg


def test_a_single_run_has_nothing_to_overlay(tmp_path):
    steps = np.arange(1, 41) * 10
    rows = "\n".join(f"ppo,reward,{s},{1 - np.exp(-s / 200):.5f}" for s in steps)
    (tmp_path / "one.csv").write_text("run,metric,step,value\n" + rows + "\n")
    result = CliRunner().invoke(app, ["plot", str(tmp_path / "one.csv"), "--overlay", "-o",
                                      str(tmp_path / "f"), "--n-boot", "10"])
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "two runs" in errors[0]


def test_the_jupyter_overlay_view_names_every_run_with_its_verdict(recipes):
    view = recipes.overlay()
    assert len(view) == 1
    html = view._repr_html_()
    assert html.count("<svg") == 1 and "<script" not in html  # a notebook output runs no script
    for c in recipes.curves:  # the legend: each run, its verdict and P(pays)
        assert c.run in html and f"P(pays) {c.p_pays:.2f}" in html
    assert html.count("class=\"ov-run\"") == len(recipes.curves)  # one drawn group per run
    assert "qwen3-4b-cispo-seed0" in repr(view)
    figures = view.figures()
    assert len(figures) == 1 and len(figures[0].axes[0].get_legend().get_texts()) >= 6
    cispo = recipes.overlay(run="*cispo*")
    assert "dapo" not in cispo._repr_html_() and len(cispo) == 1
    assert len(recipes.overlay(run="nothing-matches")) == 0
    assert "two runs or more" in recipes.overlay(run="nothing-matches")._repr_html_()


def test_the_jupyter_overlay_view_pages_a_metric_of_many_runs(tmp_path):
    c = np.geomspace(1, 1000, 16)
    rows = [f"r{k:02d},reward,{i},{x:.4f},{0.1 * np.log2(x) + 0.01 * k:.5f}"
            for k in range(14) for i, x in enumerate(c)]
    (tmp_path / "many.csv").write_text("run,metric,step,compute,value\n" + "\n".join(rows) + "\n")
    view = saturate.analyze(tmp_path / "many.csv", n_boot=10).overlay()
    pages = view.pages()
    assert [which for *_, which in pages] == ["runs 1–12 of 14", "runs 13–14 of 14"]
    html = view._repr_html_()
    assert html.count("<svg") == 2 and html.count('class="ov-run"') == 14  # every run drawn
    assert all(f"r{k:02d}" in html for k in range(14))
    assert len(view.figures()) == 2
