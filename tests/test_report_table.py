"""The terminal table at 80, 100, 120 and 200 columns, read back from the rendered text: every
run, metric and verdict is readable (whole, or shortened in the middle to a label that names one
run), no cell is cut, every number parses back to the analysis's, no line is wider than the
console; the headline comes first and the footer explains ``?``."""

from __future__ import annotations

import dataclasses
import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console
from test_report_data import N_BOOT

import saturate.api
from saturate.cli import app
from saturate.report.rows import (
    common_prefix,
    headline,
    interval,
    prob,
    short_reason,
    shorten_middle,
    unique_labels,
)
from saturate.report.terminal import render_table, table_cells

WIDTHS = (80, 100, 120, 200)
PREFIX = "team-rl-exp42-qwen2.5-7b-grpo-"
VARIANTS = ("baseline", "scaleup-20x", "symclip-entropy-collapse")
METRICS = ("eval/math500/accuracy", "eval/alpaca_eval/win_rate", "train/reward")


def _write(path: Path) -> Path:
    """Six runs (three variants x two seeds) sharing a long prefix, three metrics each, on
    scales from 1e-4 to 1 so that some intervals print long."""
    rng = np.random.default_rng(3)
    c = np.geomspace(1, 2000, 24)
    rows = []
    for v, variant in enumerate(VARIANTS):
        for seed in range(2):
            for m, metric in enumerate(METRICS):
                scale = 10.0 ** -(m + v)
                y = {0: scale * np.log2(c), 1: scale * (1 - np.exp(-c / 30)),
                     2: scale * c ** 0.3}[(v + m) % 3]
                y = y + rng.normal(0, 0.02 * scale, c.size)
                rows += [{"run": f"{PREFIX}{variant}-seed{seed}", "metric": metric, "step": i,
                          "compute": float(c[i]), "value": float(y[i])} for i in range(c.size)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def analysis(tmp_path_factory: pytest.TempPathFactory):
    path = _write(tmp_path_factory.mktemp("table") / "runs.csv")
    return saturate.api.analyze(path, n_boot=N_BOOT)


@pytest.fixture(scope="module")
def unprefixed(analysis):
    """The same curves with long run names that share no prefix (a run column cannot hold
    them in full at 80 columns)."""
    curves = tuple(dataclasses.replace(c, run=c.run.replace(PREFIX, f"{c.run[-1]}-llama3.1-8b-"))
                   for c in analysis.curves)
    return dataclasses.replace(analysis, curves=curves)


def _render(analysis, width: int, **kw) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, soft_wrap=False)
    render_table(analysis, console, **kw)
    return console.file.getvalue()


def _refers_to(label: str, names: set[str]) -> set[str]:
    """The names a label can stand for: itself, or a head…tail shortening of it."""
    if "…" not in label:
        return {label} & names
    head, tail = label.split("…")
    return {n for n in names if n.startswith(head) and n.endswith(tail) and len(n) > len(label)}


def _table_rows(text: str) -> list[tuple[str | None, list[str]]]:
    """(run heading or None, cells) per table row; wrapped reasons joined to their row."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if "─┼─" in ln) + 1
    rows: list[tuple[str | None, list[str]]] = []
    heading = None
    for ln in lines[start:]:
        if "│" not in ln:
            if ln.startswith((" ", "why", "Diagnostics", "gain / doubling")) or not ln.strip():
                break
            heading = ln.strip()
            continue
        cells = [c.strip() for c in ln.split("│")]
        if not cells[0] and rows:  # a reason wrapped onto the next line
            last = rows[-1][1]
            for j, extra in enumerate(cells):
                if extra:
                    last[j] = f"{last[j]} {extra}"
            continue
        rows.append((heading, cells))
    return rows


def _prefix(text: str, what: str) -> str:
    m = re.search(rf"Every {what} name starts with '([^']*)'", text)
    return m.group(1) if m else ""


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?", cell)]


def _close(shown: float, true: float) -> bool:
    return math.isclose(shown, true, rel_tol=5e-3, abs_tol=1e-12)


def _check(analysis, text: str, width: int) -> None:
    assert max(len(ln) for ln in text.splitlines()) <= width
    assert text.splitlines()[0].startswith(headline(analysis.curves)[:40])
    runs = {c.run for c in analysis.curves}
    metrics = {c.metric for c in analysis.curves}
    run_prefix, metric_prefix = _prefix(text, "run"), _prefix(text, "metric")
    rows = _table_rows(text)
    assert len(rows) == len(analysis.curves)
    seen = set()
    for heading, cells in rows:
        run_label = heading if heading is not None else cells.pop(0)
        metric_label = cells.pop(0)
        (run,) = _refers_to(run_label, {r.removeprefix(run_prefix) for r in runs})
        (metric,) = _refers_to(metric_label, {m.removeprefix(metric_prefix) for m in metrics})
        curve = analysis[run_prefix + run, metric_prefix + metric]
        seen.add((curve.run, curve.metric))
        assert cells[0] == curve.verdict
        every = set(table_cells(curve).values())
        assert all(cell in every for cell in cells), (cells, every)  # no cell cut
        assert cells[1] == prob(curve.p_pays)  # P(pays), the headline number, always shown
        if curve.p_pays is not None:
            assert abs(float(cells[1]) - curve.p_pays) <= 0.005
        g = curve.gain_per_doubling
        if math.isfinite(g.value):
            shown = _numbers(cells[2])
            assert cells[2] == interval(g) and _close(shown[0], g.value)
            if math.isfinite(g.lo):
                assert _close(shown[1], g.lo) and _close(shown[2], g.hi)
        if len(cells) > 3 and "straddles" in cells[3] + "above below":
            assert cells[3] == short_reason(curve)
    assert seen == {(c.run, c.metric) for c in analysis.curves}
    lines = text.splitlines()
    header = lines[:next(i for i, ln in enumerate(lines) if "─┼─" in ln)]
    if not any("│ why" in ln for ln in header):  # no reason column: the reasons follow the table
        flowing = " ".join(text.split())  # the lines may wrap
        for c in analysis.curves:
            assert f"{c.verdict}, {short_reason(c)}" in flowing


@pytest.mark.parametrize("width", WIDTHS)
def test_every_run_metric_verdict_and_number_readable(analysis, unprefixed, width: int) -> None:
    for a in (analysis, unprefixed):
        _check(a, _render(a, width), width)


def test_prefix_said_once_footer_and_dropped_columns(analysis) -> None:
    text = _render(analysis, 100)
    assert f"Every run name starts with {PREFIX!r}" in text
    curves_part = text[:text.index("Diagnostics:")]
    assert curves_part.count(PREFIX) == 1  # said once, in the caption
    assert "? after a value: the data cannot pin it down" in text or "?" not in text
    assert "Left out to fit 100 columns:" in text and "--wide" in text
    wide = _render(analysis, 100, wide=True)
    assert "Left out" not in wide
    head = " ".join(ln for ln in wide.splitlines()[:8] if "│" in ln)
    assert all(h in head for h in ("asymptote", "knee", "threshold", "forecast"))


def test_narrow_long_names_group_rows_under_their_run(unprefixed) -> None:
    text = _render(unprefixed, 80)
    headings = [ln for ln in text.splitlines() if ln and not ln.startswith(" ") and "│" not in ln]
    for run in {c.run for c in unprefixed.curves}:
        assert headings.count(run) == 1  # each run once, in full
    wide = _render(unprefixed, 200)
    assert all(c.run in wide for c in unprefixed.curves)


def test_names_shorten_in_the_middle_and_stay_distinct() -> None:
    assert shorten_middle("qwen2.5-7b-grpo-scaleup-20x-seed0", 20) == "qwen2.5-…-20x-seed0"
    assert shorten_middle("abc", 10) == "abc"
    assert shorten_middle("eval/math500/accuracy", 13) == "…/accuracy"  # never "eval/m…curacy"
    assert shorten_middle("eval/math500/accuracy", 14) == "eval/math500/…"
    assert shorten_middle("abcdefghijklmnop", 8) == "abcd…nop"  # no separator: cut mid-word
    metrics = ["eval/math500/accuracy", "eval/gsm8k/accuracy", "train/reward"]
    for width in range(6, 22):
        labels, w = unique_labels(metrics, width)
        assert len(set(labels)) == 3 and all(len(lab) <= w for lab in labels)
        for label in (lab for lab in labels if "…" in lab):  # each side of a cut: whole words
            head, _, tail = label.partition("…")
            assert head == "" or head[-1] in "-_/: ", label
            assert tail == "" or tail[0] in "-_/: ", label
    names = [f"qwen2.5-7b-grpo-{v}-seed{s}" for v in ("baseline", "scaleup-20x") for s in (0, 1)]
    labels, w = unique_labels(names, 12)
    assert len(set(labels)) == 4 and all(len(lab) <= w for lab in labels)
    for name, label in zip(names, labels, strict=True):
        assert _refers_to(label, set(names)) == {name}
    assert common_prefix(["team/exp-a1", "team/exp-b2"]) == "team/exp-"
    assert common_prefix(["a-1", "b-2"]) == "" and common_prefix(["same", "same"]) == ""


@pytest.mark.slow
def test_cli_table_fits_columns_env_and_defaults_to_120(analysis, tmp_path: Path,
                                                         monkeypatch) -> None:
    path = _write(tmp_path / "runs.csv")
    runner = CliRunner()
    monkeypatch.delenv("COLUMNS", raising=False)
    res = runner.invoke(app, ["analyze", str(path), "--n-boot", str(N_BOOT)])
    assert res.exit_code == 0, res.output
    assert max(len(ln) for ln in res.stdout.splitlines()) <= 120
    monkeypatch.setenv("COLUMNS", "90")
    res = runner.invoke(app, ["analyze", str(path), "--n-boot", str(N_BOOT)])
    assert max(len(ln) for ln in res.stdout.splitlines()) <= 90
    assert "Left out to fit 90 columns" in res.stdout
    res = runner.invoke(app, ["analyze", str(path), "--n-boot", str(N_BOOT), "--wide"])
    assert "Left out" not in res.stdout and max(len(ln) for ln in res.stdout.splitlines()) > 90


@pytest.mark.parametrize("width", [100, 120])
def test_the_watch_table_fits_its_width_one_line_per_curve(analysis, unprefixed, width) -> None:
    from saturate.report.tracker_tables import watch_table

    for a in (analysis, unprefixed):
        latest = {("src", c.run_id, c.metric): c for c in a.curves}
        events = dict.fromkeys(latest, "verdict_changed scaling")
        out = io.StringIO()
        Console(file=out, width=width, force_terminal=False).print(watch_table(latest, events, width))
        lines = out.getvalue().splitlines()
        assert lines[0] == "saturate watch" and max(len(line) for line in lines) <= width
        rows = [[cell.strip() for cell in line.split("│")] for line in lines if "│" in line]
        header, body = rows[0], rows[1:]
        assert len(body) == len(latest)  # nothing wraps onto a second line
        assert "P(pays)" in header and header[header.index("P(pays)") - 2] == "metric"
        by_run = header[0] == "run"  # else each run is a heading over its rows
        curves = sorted(a.curves, key=lambda c: (c.run, c.metric))
        said = dict(re.findall(r"^Every (\w+) name starts with '(.*)': left out below\.$",
                               out.getvalue(), flags=re.M))
        for row, c in zip(body, curves, strict=True):
            run, metric = (c.run.removeprefix(said.get("run", "")),
                           c.metric.removeprefix(said.get("metric", "")))
            shown_names = ((row[0], run), (row[1], metric)) if by_run else ((row[0], metric),)
            for shown, full in shown_names:  # cut on separators only
                head, _, tail = shown.partition("…")
                assert full.startswith(head) and full.endswith(tail), (shown, full)
                assert "…" not in shown or not head or head[-1] in "-_/: ", shown
            assert c.verdict in row
        if not by_run:
            assert {c.run.removeprefix(said.get("run", "")) for c in curves} <= {
                line.strip() for line in lines}


