"""Every report format on real analysis output of synthetic runs: table, JSON (against the schema),
Markdown, HTML, the notebook fragment and the plots."""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re
from pathlib import Path

import jsonschema
import pytest
from matplotlib.figure import Figure
from rich.console import Console
from test_report_data import HOSTILE, N_BOOT, write_runs

import saturate.api
from saturate.errors import InputError, SettingsError
from saturate.report import FORMATS, render
from saturate.report.html import render_html
from saturate.report.markdown import escape_md, render_markdown
from saturate.report.notebook import notebook_html
from saturate.report.plots import plot_analysis, plot_curve, plot_gain, save_curve_figures
from saturate.report.rows import COLUMNS
from saturate.report.schema import render_json, schema
from saturate.report.terminal import render_table


@pytest.fixture(scope="module")
def analysis(tmp_path_factory: pytest.TempPathFactory):
    path = write_runs(tmp_path_factory.mktemp("runs") / "runs.csv")
    return saturate.api.analyze(path, n_boot=N_BOOT, forecast_at=("2x", 5000.0))


def test_json_validates_against_schema(analysis) -> None:
    text = render_json(analysis)
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(doc, schema(), cls=jsonschema.Draft202012Validator)
    assert doc["schema_version"] == 1
    assert doc["settings"]["n_boot"] == N_BOOT
    runs = {c["run"]: c for c in doc["curves"]}
    assert set(runs) == {"grow", "flat", HOSTILE, "short"}
    grow = runs["grow"]
    assert [f["at"] for f in grow["forecast"]] == ["2x", 5000.0]
    assert grow["forecast"][0]["compute"] == pytest.approx(2 * grow["compute_last"])
    assert grow["model"]["laws"] and {"value", "lo", "hi"} <= set(grow["gain_per_doubling"])
    assert runs[HOSTILE]["direction"] == "lower"
    assert runs["short"]["verdict"] == "inconclusive"


def test_schema_rejects_a_broken_document(analysis) -> None:
    doc = json.loads(render_json(analysis))
    validator = jsonschema.Draft202012Validator(schema())
    broken = json.loads(json.dumps(doc))
    broken["curves"][0]["verdict"] = "great"
    del broken["curves"][1]["gain_per_doubling"]
    broken["curves"][2]["forecast"] = [{"at": "2x"}]
    errors = list(validator.iter_errors(broken))
    assert len(errors) >= 3


def test_markdown_table_reasons_and_escaping(analysis) -> None:
    md = render_markdown(analysis)
    lines = md.splitlines()
    rows = [ln for ln in lines if ln.startswith("| ") and "---" not in ln]
    assert len(rows) == 1 + len(analysis.curves)  # header + one per curve
    # Every row has exactly the table's cells: nothing from the data broke the table.
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == len(COLUMNS) + 1
    assert "<script>" not in md and "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in md
    assert "4 curves:" in md and "### Reasons" in md
    for c in analysis.curves:
        assert escape_md(c.reasons[0]) in md


def test_escape_md_neutralises_markup() -> None:
    text = escape_md("a|b *c* [x](http://e) <img src=x>\n# h")
    assert "|" not in text.replace("\\|", "")
    assert "<" not in text and "\n" not in text
    assert "\\[x\\]\\(" in text


def test_table_rows_summary_and_literal_markup(analysis) -> None:
    named = dataclasses.replace(analysis.curves[0], run="[bold red]boom[/bold red]")
    buf = io.StringIO()
    render_table([named, *analysis.curves[1:]], Console(file=buf, width=220, color_system=None))
    out = buf.getvalue()
    assert "[bold red]boom[/bold red]" in out
    assert out.splitlines()[0].startswith("of 4 curves still pay for the next doubling", 2)
    text = render(analysis, "table")
    for c in analysis.curves:
        assert c.verdict in text and c.metric in text


def test_html_is_self_contained_and_escaped(analysis) -> None:
    page = render_html(analysis)
    assert page.startswith("<!DOCTYPE html>")
    assert page.lower().count("<script") == 1  # the table sorter, which the CSP allows by hash
    assert html.escape(HOSTILE) in page and HOSTILE not in page
    # No fetches: every href is an in-page anchor, and there is no src at all.
    for url in re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", page):
        assert url.startswith("#"), url
    charts = re.findall(r'<svg [^>]*class="chart"', page)
    assert len(charts) == 2 * len(analysis.curves)  # the curve and its gain per doubling
    assert "Content-Security-Policy" in page


def test_notebook_fragment(analysis) -> None:
    frag = analysis._repr_html_()
    assert frag == notebook_html(analysis)
    assert frag.count("<tr>") == 1 + len(analysis.curves)
    assert html.escape(HOSTILE) in frag and "<script" not in frag


def test_p_pays_is_the_headline_number_of_every_format(analysis) -> None:
    """Each judged curve's P(pays) (the call's probability) in JSON, the summary, Markdown, HTML
    (the summary table and the curve's facts), the Jupyter views and the MLflow tags; an
    unjudged curve has none (JSON null, an en dash in the tables)."""
    from saturate.report.rows import prob
    from saturate.tracker.writeback import tags_for

    judged = [c for c in analysis.curves if c.p_pays is not None]
    assert judged and all(c.p_pays == c.decision.p_pays for c in judged)
    short = next(c for c in analysis.curves if c.run == "short")
    assert short.p_pays is None and prob(short.p_pays) == "–"
    doc = json.loads(render_json(analysis))
    assert {c["run"]: c["p_pays"] for c in doc["curves"]} == {
        c.run: c.p_pays for c in analysis.curves}
    md, page, frag = render_markdown(analysis), render_html(analysis), notebook_html(analysis)
    assert "| P(pays) |" in md and "<th class=\"n\" scope=\"col\">P(pays)</th>" in page
    assert "<th>P(pays)</th>" in frag
    for c in judged:
        cell = f"{c.p_pays:.2f}"
        assert f" {escape_md(cell)} |" in md and f">{cell}</td>" in page and f">{cell}</td>" in frag
        assert f"<b>P(pays):</b> {cell}" in page  # the curve's own section
        assert f"<th>P(pays)</th><td>{cell}</td>" in c._repr_html_()
        assert f"P(pays) {cell}" in c.summary().splitlines()[0]
        assert tags_for(c)[f"saturate.{c.metric}.p_pays"] == f"{c.p_pays:.6g}"
    assert tags_for(short)[f"saturate.{short.metric}.p_pays"] == "none"


def test_render_dispatch_and_unknown_format(analysis) -> None:
    assert set(FORMATS) == {"table", "json", "markdown", "html"}
    assert json.loads(render(analysis, "json"))["schema_version"] == 1
    with pytest.raises(SettingsError, match="xml"):
        render(analysis, "xml")


def test_plot_curve_draws_fit_forecast_and_marks(analysis) -> None:
    grow = analysis["grow", "reward"]
    ax = plot_curve(grow)
    assert ax.get_xscale() == "log"
    labels = ax.get_legend_handles_labels()[1]
    assert {"observed", "fit", "forecast"} <= set(labels)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    fit_x = lines["fit"].get_xdata()
    fc_x = lines["forecast"].get_xdata()
    assert fit_x.min() == pytest.approx(grow.compute_first) and fit_x.max() == pytest.approx(
        grow.compute_last)
    assert fc_x.min() == pytest.approx(grow.compute_last) and fc_x.max() >= 5000.0
    flat = analysis["flat", "reward"]
    flat_labels = plot_curve(flat).get_legend_handles_labels()[1]
    if flat.knee is not None:
        assert any(lab.startswith("knee") for lab in flat_labels)
    if flat.stop_point is not None:
        assert any(lab.startswith("stop point") for lab in flat_labels)
    if flat.asymptote.identified:
        assert any(lab.startswith("asymptote") for lab in flat_labels)


def test_plot_without_fit_and_gain_plot(analysis) -> None:
    short = analysis["short", "reward"]
    nofit = dataclasses.replace(analysis["grow", "reward"], fit=None)
    for curve in (short, nofit):
        ax = plot_curve(curve)
        assert "fit" not in ax.get_legend_handles_labels()[1]
        assert len(ax.get_lines()[0].get_xdata()) == curve.n_points
    gain_ax = plot_gain(analysis["grow", "reward"])
    labels = gain_ax.get_legend_handles_labels()[1]
    assert "fitted gain" in labels and any(lab.startswith("threshold") for lab in labels)
    # the fitted gain of a log-linear curve is about 0.1 per doubling, as generated
    fitted = dict(zip(labels, gain_ax.get_legend_handles_labels()[0], strict=True))["fitted gain"]
    assert fitted.get_ydata().mean() == pytest.approx(0.1, abs=0.03)


@pytest.mark.slow
def test_plot_analysis_selects_and_save_writes(analysis, tmp_path: Path) -> None:
    figs = plot_analysis(analysis, metric="reward")  # one figure per metric: three curves
    assert list(figs) == ["reward"] and isinstance(figs["reward"], Figure)
    shown = [ax for ax in figs["reward"].axes if ax.get_visible()]
    assert sorted(ax.get_title(loc="left").split(":")[0] for ax in shown) == ["flat", "grow",
                                                                                "short"]
    every = analysis.plot()  # every metric, each on its own figure
    assert list(every) == ["eval/loss", "reward"]  # in the order the curves come
    assert len(every["eval/loss"].axes) == 2  # a metric's only curve, beside its gain
    paged = plot_analysis(analysis, metric="reward", per_figure=2)  # pages, never one giant figure
    assert list(paged) == ["reward (1/2)", "reward (2/2)"]
    assert [sum(ax.get_visible() for ax in f.axes) for f in paged.values()] == [2, 1]
    assert all(f.get_size_inches()[1] < 12 for f in (*figs.values(), *every.values()))
    assert repr(every) == "<Figures: 2 figures: 'eval/loss', 'reward'>"
    with pytest.raises(InputError, match="nope"):
        plot_analysis(analysis, run="nope")
    paths = save_curve_figures(analysis, tmp_path / "figs", ("png",))
    assert len(paths) == len(analysis.curves)
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    assert all("<" not in p.name and "/" not in p.name for p in paths)
    (svg,) = save_curve_figures(analysis, tmp_path / "figs", ("svg",), run="grow")
    assert svg.name == "grow__reward.svg" and "<svg" in svg.read_text()
    with pytest.raises(SettingsError):
        save_curve_figures(analysis, tmp_path / "x", ("gif",))
