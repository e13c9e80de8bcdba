"""Watching files: incremental reads, restarts, backoff, and the watch/history/timeline commands."""

from __future__ import annotations

import json
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from saturate.cli import app
from saturate.errors import InputError, SourceError
from saturate.settings import Settings
from saturate.table.curves import DataWarning
from saturate.table.selection import Offered
from saturate.tracker import HistoryStore, Watcher, make_poller, parse_event_line, run_watch
from saturate.tracker.watch import Backoff

STEPS = np.arange(1, 121) * 10
VALUES = 0.8 * (1 - np.exp(-STEPS / 150)) + np.random.default_rng(1).normal(0, 0.005, STEPS.size)
SETTINGS = Settings.build(n_boot=40)


def write(path, n, run="ppo", values=VALUES):
    pd.DataFrame({"run": run, "metric": "reward", "step": STEPS[:n], "value": values[:n]}).to_csv(
        path, index=False)


def test_watcher_reads_only_changed_files_and_resumes(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    write(runs / "a.csv", 8)
    write(runs / "b.csv", 8, run="sac")
    state = tmp_path / "h.db"
    with HistoryStore(state) as st:
        w = Watcher(make_poller(str(runs)), st, SETTINGS)
        first = w.poll_once()
        assert (first.fetched, first.new_points, first.curves_changed) == (16, 16, 2)
        write(runs / "a.csv", 12)  # only a.csv changes: b.csv is not read again
        second = w.poll_once()
        assert (second.fetched, second.new_points, second.curves_changed) == (12, 4, 1)
        assert [c.run for c in second.analyses] == ["ppo"]
    # restart: nothing new, nothing read
    with HistoryStore(state) as st:
        w = Watcher(make_poller(str(runs)), st, SETTINGS)
        again = w.poll_once()
        assert (again.fetched, again.new_points, again.analyses) == (0, 0, ())
        write(runs / "c.csv", 10, run="grpo")  # a new run appears
        new_run = w.poll_once()
        assert [c.run for c in new_run.analyses] == ["grpo"]
        assert new_run.events[0].kind == "verdict_changed" and new_run.events[0].before == "none"
        assert [p.new_points for p in st.polls()] == [16, 4, 0, 10]


def test_events_follow_a_growing_curve_in_order(tmp_path):
    path = tmp_path / "run.csv"
    with HistoryStore(tmp_path / "h.db") as st:
        w = Watcher(make_poller(str(path.parent)), st, SETTINGS)
        passes = []
        for n in (4, 8, 16, 32, 64, 120):
            write(path, n)
            passes.append(w.poll_once())
        events = st.events()
        # the first pass is a baseline: one summary, no event per curve
        assert passes[0].baseline and passes[0].events == () and not passes[1].baseline
        assert "baseline of 1 curve: 1 inconclusive" in passes[0].summary()
        changes = [(e.before, e.after) for e in events if e.kind == "verdict_changed"]
        # each change starts where the previous one ended; the run goes from paying to saturated
        assert changes[0][0] == "inconclusive"
        assert all(a[1] == b[0] for a, b in zip(changes, changes[1:], strict=False))
        verdicts = [to for _, to in changes]
        pays = [i for i, v in enumerate(verdicts) if v in ("scaling", "slowing")]
        assert pays and pays[0] < verdicts.index("saturated")
        assert verdicts[-1] == "saturated"
        assert sum(e.kind == "knee_crossed" for e in events) == 1
        computes = [e.compute for e in events]
        assert computes == sorted(computes)
        assert len(st.analyses()) == 6
        knee = [e for e in events if e.kind == "knee_crossed"]
        assert all(float(e.detail.split()[-1]) < 0.8 for e in knee)  # the ROI is past the knee


class _Sleeps(list):
    def __call__(self, seconds):
        self.append(seconds)


def test_unreachable_source_is_retried_with_backoff_and_recovers(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    write(runs / "a.csv", 10)
    away = tmp_path / "away"
    messages: list[str] = []
    sleeps = _Sleeps()

    with HistoryStore(tmp_path / "h.db") as st:
        w = Watcher(make_poller(str(runs)), st, SETTINGS)
        runs.rename(away)  # the source goes away ...

        def sleep(seconds):
            sleeps(seconds)
            if len(sleeps) == 3:
                away.rename(runs)  # ... and comes back after the third retry

        passes = run_watch(w, interval=5, max_passes=2, backoff=Backoff(1.0, 3.0),
                           on_status=messages.append, sleep=sleep)
    assert passes == 2
    assert sleeps == [1.0, 2.0, 3.0, 5.0]
    assert sum("unreachable" in m for m in messages) == 3
    assert "reachable again after 3" in messages[-1]

    with HistoryStore(tmp_path / "h2.db") as st:
        w = Watcher(make_poller(str(runs)), st, SETTINGS)
        runs.rename(away)
        with pytest.raises(SourceError, match="no such file"):
            run_watch(w, once=True, retries=1, sleep=sleeps)


def test_files_without_curves_are_named_once_and_read_again_when_they_change(tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    write(runs / "a.csv", 10)
    (runs / "config.json").write_text('{"lr": 1e-6}')
    (runs / "b.csv").write_text("run,metric,step,value\n")  # a run that has not logged yet
    os.mkfifo(runs / "run-x.wandb")  # never opened: a read would block this test for good
    with HistoryStore(tmp_path / "h.db") as st:
        w = Watcher(make_poller("runs"), st, SETTINGS)
        with pytest.warns(DataWarning) as caught:
            first = w.poll_once()
        assert [str(c.message) for c in caught] == [
            "skipped 3 file(s) that hold no curves: runs/run-x.wandb (a FIFO), runs/b.csv, "
            "runs/config.json"]
        assert first.fetched == 10
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same files skipped: not said again
            assert w.poll_once().fetched == 0
        write(runs / "b.csv", 8, run="sac")  # the run logs its first points: read now
        with pytest.warns(DataWarning, match=r"skipped 2 file\(s\)"):
            third = w.poll_once()
        assert (third.fetched, [c.run for c in third.analyses]) == (8, ["sac"])


def test_a_slip_in_the_selection_stops_the_watch_before_anything_is_recorded(tmp_path):
    write(tmp_path / "a.csv", 10)
    offered = Offered()
    settings = Settings.build(n_boot=40, metric=["rewrd"])
    with HistoryStore(tmp_path / "h.db") as st:
        w = Watcher(make_poller(str(tmp_path), metric=["rewrd"], offered=offered), st, settings,
                    offered=offered)
        with pytest.raises(InputError, match=rf"^{tmp_path}: --metric 'rewrd' matches no metric "
                                             r"\(did you mean 'reward'\?\); metrics: reward$"):
            run_watch(w, max_passes=3, sleep=lambda _s: None)
        assert st.file_stamps() == {} and st.polls() == []  # the corrected one reads it all


def test_a_metric_not_logged_yet_is_waited_for_and_said_once(tmp_path):
    write(tmp_path / "a.csv", 10)
    offered, said = Offered(), []
    settings = Settings.build(n_boot=40, metric=["eval/*"])
    with HistoryStore(tmp_path / "h.db") as st:
        w = Watcher(make_poller(str(tmp_path), metric=["eval/*"], offered=offered), st,
                    settings, offered=offered)
        assert run_watch(w, max_passes=3, sleep=lambda _s: None, on_status=said.append) == 3
        assert said == [f"{tmp_path}: --metric 'eval/*' matches no metric; metrics: reward "
                        "(nothing to analyse yet; still watching)"]
        w.wait_for_names = False  # as with --once: an error
        with pytest.raises(InputError, match="'eval/\\*' matches no metric"):
            w.poll_once()


def test_watch_history_and_timeline_commands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    write(tmp_path / "run.csv", 16)
    args = ["watch", "run.csv", "--once", "--n-boot", "30"]
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""  # the first pass is a baseline: one summary line on stderr
    assert "pass 1: fetched 16 point(s), 16 new in 1 curve(s); baseline of 1 curve: " in res.stderr
    write(tmp_path / "run.csv", 120)
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    fields = [parse_event_line(x) for x in res.stdout.splitlines()]
    assert all(f["run"] == "ppo" and f["metric"] == "reward" for f in fields)
    assert {"event": "verdict_changed", "to": "saturated"}.items() <= fields[0].items()
    assert fields[0]["from"] != "none"
    assert (tmp_path / ".saturate" / "history.db").is_file()

    res = runner.invoke(app, ["history", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [e["to"] for e in doc["events"]][-1] == "saturated"
    assert doc["current"] == [{"run": "ppo", "run_id": "ppo", "metric": "reward",
                               "verdict": "saturated", "compute": 1200.0}]
    res = runner.invoke(app, ["history", "--all", "--format", "lines", "--run", "ppo"])
    assert len(res.stdout.splitlines()) >= 1
    for columns in ("80", "100"):  # the table shows whole times at any usual width
        res = runner.invoke(app, ["history", "--all"], env={"COLUMNS": columns})
        assert res.exit_code == 0, res.output
        assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", res.stdout), res.stdout

    res = runner.invoke(app, ["timeline", "run.csv", "--run", "ppo", "--metric", "reward",
                              "--from", "refit", "--points", "5", "--n-boot", "30", "--format",
                              "json", "--at", "2400", "--plot", "tl.png"])
    assert res.exit_code == 0, res.output
    tl = json.loads(res.stdout)
    assert tl["origin"] == "refit" and tl["target"] == 2400
    assert len(tl["points"]) == 5 and tl["points"][-1]["n_points"] == 120
    assert tl["points"][-1]["verdict"] == "saturated"
    assert tl["first_saturated"] is not None and tl["saturated_since"] >= tl["first_saturated"]
    assert all(p["forecast"]["compute"] == 2400 for p in tl["points"])
    assert (tmp_path / "tl.png").stat().st_size > 1000

    res = runner.invoke(app, ["timeline", "--run", "ppo", "--metric", "reward"])
    assert res.exit_code == 0, res.output
    assert "2 analyses from history" in res.stdout

    res = runner.invoke(app, ["history", "--state", "nope.db"])
    assert res.exit_code == 2 and "no watch history" in res.stderr
