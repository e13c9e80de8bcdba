"""Terminal tables never split a word across lines, at 80 to 200 columns, and a wider console
never shortens a name that a narrower one shows whole: the report's table, ``watch``, ``history``,
the suite, ``allocate``, ``compare``, ``ls`` and ``timeline``, rendered in-process at each width
(rich's own ``Console(width=...)`` or the command with ``$COLUMNS``), and one real terminal (tmux).
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from rich.console import Console

import saturate
from saturate.cli import app
from saturate.report.terminal import render_table
from saturate.report.tracker_tables import render_history, watch_table
from saturate.tracker.events import Event

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
WIDTHS = (80, 100, 120, 200)
EVENT_KINDS = ("verdict_changed", "stop_point_reached", "stop_point_moved")
# The curves are on their step where a test makes them: the warning saying so is not the subject.
pytestmark = pytest.mark.filterwarnings("ignore::saturate.table.axis.AxisWarning")


def _rising(n: int, scale: float) -> np.ndarray:
    return 0.8 - 0.6 * np.exp(-np.arange(1, n + 1) / scale)


def _short_runs_long_metrics() -> pd.DataFrame:
    """Runs with short names and one curve each of three long metric names (the case where a
    run column once cut the metrics at 120 columns that 80 columns showed whole)."""
    rows = []
    for r, run in enumerate(("ppo-s0", "ppo-s1")):
        for m, metric in enumerate(("eval/math500/accuracy", "eval/aime24/pass_at_1",
                                    "train/reward")):
            y = _rising(60, 10 + 5 * m + r)
            rows += [(run, metric, s, float(s), v) for s, v in enumerate(y, 1)]
    return pd.DataFrame(rows, columns=["run", "metric", "step", "compute", "value"])


def _long_unique_runs() -> pd.DataFrame:
    """One curve per run, each run named at length (the run column must be cut at 80)."""
    rows = []
    for i, variant in enumerate(("symclip-entropy-collapse", "baseline-longer-context",
                                 "scaleup-20x-rollouts")):
        run = f"team-rl-exp42-qwen2.5-7b-grpo-{variant}-seed{i}"
        rows += [(run, "eval/gsm8k/accuracy", s, float(s), v)
                 for s, v in enumerate(_rising(50, 8 + 4 * i), 1)]
    return pd.DataFrame(rows, columns=["run", "metric", "step", "compute", "value"])


@pytest.fixture(scope="module")
def analyses() -> dict[str, saturate.Analysis]:
    """Real sample curves (long run names, slashed metrics, several curves per run) and the two
    made cases above, each analysed once."""
    files = [SAMPLES / f for f in ("03_saturated.csv", "10_eval_slices.csv",
                                   "01_still_scaling.csv")]
    return {"samples": saturate.analyze(files, n_boot=20),
            "short_runs": saturate.analyze(_short_runs_long_metrics(), n_boot=20),
            "long_runs": saturate.analyze(_long_unique_runs(), n_boot=20)}


def _render(draw: Callable[[Console], None], width: int) -> list[str]:
    out = io.StringIO()
    draw(Console(file=out, width=width, force_terminal=False, color_system=None,
                 soft_wrap=False))
    return out.getvalue().splitlines()


# Words the tables print themselves (titles, headers) that are heads of data words.
OWN_WORDS = {"saturate", "verdict", "event", "scaling"}
_TOKEN = re.compile(r"[^\s│┃─━┼╇┡┩┏┓┗┛┳┻┃]+")


def tokens(lines: list[str]) -> set[str]:
    return {t for line in lines for t in _TOKEN.findall(line)}


def split_words(lines: list[str], words: Iterable[str],
                allowed: Iterable[str] = ()) -> list[tuple[str, str]]:
    """``(word, piece)`` for each piece of a known word shown on a line without the rest of it:
    a proper head or tail of the word that is not itself a word of the table, nor ``allowed``
    (the words of the same output on a console wide enough for all; a word cut in the middle
    with ``…`` is shortened, not split)."""
    words = set(words)
    known = words | OWN_WORDS | set(allowed)
    return [(w, t) for w in words if len(w) >= 5 for t in tokens(lines)
            if t != w and len(t) >= 3 and "…" not in t and t not in known
            and (w.startswith(t) or w.endswith(t))]


def stated_prefixes(lines: list[str]) -> list[str]:
    """The prefixes a report says every run or metric name starts with (left out below it)."""
    return re.findall(r"Every \w+ name starts with '(.*?)': left out below", " ".join(lines))


def with_prefixes_left_out(lines: list[str], names: Iterable[str]) -> set[str]:
    """``names``, and each as shown once a prefix the report states is left out."""
    names = set(names)
    return names | {n.removeprefix(p) for n in names for p in stated_prefixes(lines)}


def whole(lines: list[str], names: Iterable[str]) -> set[str]:
    """The names shown whole on some line (less a prefix the report states once above)."""
    prefixes = [""] + stated_prefixes(lines)
    return {n for n in names
            if any(n.startswith(p) and n.removeprefix(p) in line
                   for p in prefixes for line in lines)}


def check_widths(render: Callable[[int], list[str]], words: set[str], names: set[str]) -> None:
    """At each width: no line wider, no word split, verdict words whole; a name shown whole at
    a width is whole at every wider one, and every name is whole at 200 columns."""
    before: set[str] = set()
    prose = tokens(render(max(WIDTHS)))  # the words the output says at its widest
    for width in WIDTHS:
        lines = render(width)
        assert max(map(len, lines)) <= width, (width, max(lines, key=len))
        assert split_words(lines, with_prefixes_left_out(lines, words), prose - words) == [], (
            width, "\n".join(lines))
        shown = whole(lines, names)
        assert before <= shown, (width, before - shown, "\n".join(lines))
        before = shown
    assert before == names, names - before


def _names(analysis: saturate.Analysis) -> set[str]:
    return {c.run for c in analysis.curves} | {c.metric for c in analysis.curves}


@pytest.mark.parametrize("case", ["samples", "short_runs", "long_runs"])
def test_the_report_table(analyses, case: str) -> None:
    a = analyses[case]
    words = _names(a) | {c.verdict for c in a.curves}
    check_widths(lambda w: _render(lambda con: render_table(a, con), w), words, _names(a))


def test_short_runs_keep_their_long_metrics_whole_at_every_width(analyses) -> None:
    a = analyses["short_runs"]
    for width in WIDTHS:
        lines = _render(lambda con, a=a: render_table(a, con), width)
        assert whole(lines, {c.metric for c in a.curves}) == {c.metric for c in a.curves}, (
            width, "\n".join(lines))


@pytest.mark.parametrize("case", ["samples", "short_runs", "long_runs"])
def test_the_watch_table(analyses, case: str) -> None:
    a = analyses[case]
    latest = {("src", c.run_id, c.metric): c for c in a.curves}
    last = {k: f"{EVENT_KINDS[i % 3]} {c.verdict}" for i, (k, c) in enumerate(latest.items())}
    words = _names(a) | {c.verdict for c in a.curves} | set(EVENT_KINDS)
    check_widths(lambda w: _render(lambda con: con.print(watch_table(latest, last, w)), w),
                 words, _names(a))


def _events(a: saturate.Analysis) -> list[Event]:
    return [Event(EVENT_KINDS[i % 3], c.source, c.run_id, c.run, c.metric, c.compute_last,
                  before="inconclusive" if i % 3 == 0 else None,
                  after=c.verdict if i % 3 == 0 else f"{c.compute_last:.6g}",
                  time=1.8e9 + i) for i, c in enumerate(a.curves)]


@pytest.mark.parametrize("case", ["samples", "short_runs", "long_runs"])
def test_the_history_table(analyses, case: str) -> None:
    a = analyses[case]
    events = _events(a)
    words = _names(a) | {c.verdict for c in a.curves} | set(EVENT_KINDS) | {"inconclusive"}
    check_widths(lambda w: _render(lambda con: render_history(
        events, a.curves, con, title="events recorded in h.db"), w), words, _names(a))


def _cli_lines(args: list[str], width: int) -> list[str]:
    res = CliRunner().invoke(app, args, env={"COLUMNS": str(width)})
    assert res.exit_code in (0, 1), res.output
    return res.stdout.splitlines()


@pytest.mark.slow  # a suite's bootstrap (once: the tables at every width are drawn from it)
def test_the_suite_tables(analysed: Callable[..., saturate.Analysis]) -> None:
    """``saturate analyze 11_agent_suite.csv --suite task --group-by recipe --n-boot 20``'s table
    at each width (the command's own table: tests/test_suites_cli.py)."""
    suite = SAMPLES / "11_agent_suite.csv"
    a = analysed(suite, suite="task", group_by="recipe", n_boot=20)
    data = pd.read_csv(suite)
    names = set(data["recipe"]) | set(data["task"])
    check_widths(lambda w: _render(lambda con: render_table(a, con), w),
                 names | {"saturated", "scaling", "slowing"}, set(data["recipe"]))


def test_compare_and_allocate() -> None:
    recipes = SAMPLES / "08_recipe_comparison.csv"
    data = pd.read_csv(recipes)
    check_widths(lambda w: _cli_lines(["compare", str(recipes), "--group-by", "recipe",
                                       "--n-boot", "20"], w),
                 set(data["recipe"]) | set(data["metric"]), set(data["recipe"]))
    plan = ["allocate", str(SAMPLES / "01_still_scaling.csv"), "--budget", "500",
            "--gpu-hours", "compute", "--n-boot", "20"]
    runs = set(pd.read_csv(SAMPLES / "01_still_scaling.csv")["run"])
    check_widths(lambda w: _cli_lines(plan, w), runs, runs)


def test_ls_and_timeline_lines_wrap_between_words() -> None:
    slices = SAMPLES / "10_eval_slices.csv"
    data = pd.read_csv(slices)
    check_widths(lambda w: _cli_lines(["ls", str(slices)], w),
                 set(data["metric"]) | set(data["run"]) | {"objective", "default"},
                 set(data["metric"]))
    run = data["run"].iloc[0]
    words = {run, "eval/hard/score", "inconclusive", "saturated", "scaling", "gain/doubling"}
    check_widths(lambda w: _cli_lines(["timeline", str(slices), "--run", run, "--metric",
                                       "eval/hard/score", "--points", "3", "--n-boot", "20",
                                       "--from", "refit"], w), words, {run, "eval/hard/score"})


def test_the_word_checks_can_fail() -> None:
    """What the checks above would catch: the pieces of a folded cell, a name cut at 120 that
    80 showed whole."""
    folded = ["│ verdic │ satura │", "│ t_chan │ ted    │", "│ ged    │        │"]
    assert sorted(split_words(folded, {"verdict_changed", "saturated"})) == [
        ("saturated", "satura"), ("saturated", "ted"), ("verdict_changed", "ged"),
        ("verdict_changed", "verdic")]
    assert split_words(["qwen3-…-seed0 saturated"], {"qwen3-8b-grpo-seed0", "saturated"}) == []
    with pytest.raises(AssertionError):
        check_widths(lambda w: ["eval/math500/accuracy" if w == 80 else "eval/…/accuracy"],
                     set(), {"eval/math500/accuracy"})


@pytest.mark.subprocess  # saturate in a real terminal (tmux), 80 columns wide
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_history_in_a_real_80_column_terminal(analyses, tmp_path: Path) -> None:
    from saturate.tracker.state import HistoryStore

    a = analyses["samples"]
    with HistoryStore(tmp_path / "h.db") as store:
        for c in a.curves:
            store.record_analysis(c, at=1.8e9)
        store.record_events(_events(a))
    session = f"saturate-words-{time.monotonic_ns()}"
    done = tmp_path / "done"
    cmd = (f"{sys.executable} -m saturate history --all --state {tmp_path / 'h.db'}; "
           f"touch {done}; sleep 30")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "200",
                    cmd], check=True, env={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color",
                                           "PYTHONPATH": str(Path(saturate.__file__).parents[1])})
    try:
        deadline = time.monotonic() + 60
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session, "-S", "-200"],
                                check=True, capture_output=True, text=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    lines = [line for line in screen.splitlines() if line.strip()]
    assert done.exists() and any("verdict_changed" in line for line in lines), screen
    words = _names(a) | {c.verdict for c in a.curves} | set(EVENT_KINDS)
    assert split_words(lines, words) == [], screen
    assert whole(lines, _names(a)) == _names(a), screen
