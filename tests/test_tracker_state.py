"""The watch history file: cursors, points, runs, analyses, events, schema checks."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from saturate.analysis import AnalysisSettings, analyze_curve
from saturate.errors import InputError
from saturate.table.curves import tidy
from saturate.tracker.events import Event
from saturate.tracker.state import SCHEMA_VERSION, HistoryStore, RunRecord, curve_from_dict


def points(steps, run="r1", metric="reward", source="src", value=None) -> pd.DataFrame:
    steps = np.asarray(steps)
    vals = np.log1p(steps) if value is None else np.full(steps.size, value, dtype=float)
    return tidy(pd.DataFrame({"source": source, "run_id": run, "run": f"name-{run}",
                              "metric": metric, "step": steps, "value": vals}))


def test_cursors_move_and_old_points_are_never_stored_twice(tmp_path):
    with HistoryStore(tmp_path / "h.db") as st:
        assert st.add_points(points(range(0, 10))) == {("src", "r1", "reward"): 10}
        # a re-read of the whole curve plus two new points adds only the two
        assert st.add_points(points(range(0, 12))) == {("src", "r1", "reward"): 2}
        assert st.add_points(points(range(0, 12))) == {}
        st.add_points(points(range(5), metric="kl"))
        assert st.cursors() == {("src", "r1", "reward"): 11, ("src", "r1", "kl"): 4}
        table = st.points()
    assert len(table) == 17
    assert table.groupby("metric").size().to_dict() == {"kl": 5, "reward": 12}
    # a restart sees the same cursors
    with HistoryStore(tmp_path / "h.db") as st:
        assert st.cursors(source="src")[("src", "r1", "reward")] == 11
        assert st.cursors(source="other") == {}


def test_file_is_wal_and_versioned_and_readonly_checks(tmp_path):
    path = tmp_path / "sub" / "h.db"
    HistoryStore(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="newer saturate"):
        HistoryStore(path)
    with pytest.raises(InputError, match="no watch history"):
        HistoryStore(tmp_path / "missing.db", readonly=True)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(InputError, match="not a saturate history"):
        HistoryStore(other, readonly=True)


def test_runs_report_status_changes_and_feed_the_table(tmp_path):
    with HistoryStore(tmp_path / "h.db") as st:
        rec = RunRecord("src", "r1", "name-r1", "exp", "RUNNING", (("lr", "0.1"),), (("team", "a"),))
        assert st.upsert_runs([rec]) == []
        assert st.upsert_runs([rec]) == []
        done = RunRecord("src", "r1", "name-r1", "exp", "FINISHED", (("lr", "0.1"),))
        assert st.upsert_runs([done]) == [done]
        st.add_points(points(range(3)))
        table = st.points([("src", "r1")])
    assert table["run_status"].unique().tolist() == ["FINISHED"]
    assert table["params.lr"].unique().tolist() == ["0.1"]
    assert table["experiment"].unique().tolist() == ["exp"]


def test_analysis_round_trips_through_its_json(tmp_path):
    rng = np.random.default_rng(3)
    s = np.arange(1, 41) * 10
    df = tidy(pd.DataFrame({"run": "r", "metric": "reward", "step": s,
                            "value": 1 - np.exp(-s / 120) + rng.normal(0, 0.01, s.size)}))
    a = analyze_curve(df, AnalysisSettings(n_boot=30))
    with HistoryStore(tmp_path / "h.db") as st:
        st.record_analysis(a, at=100.0)
        back = st.last_analysis((a.source, a.run_id, a.metric))
        rows = st.analyses(run="r")
        assert st.last_analysis(("x", "y", "z")) is None
        assert [c.metric for c in st.latest_analyses()] == ["reward"]
    assert back.to_dict() == a.to_dict()
    assert back == curve_from_dict(json.loads(json.dumps(a.to_dict())))
    assert rows["verdict"].tolist() == [a.verdict] and rows["time"].tolist() == [100.0]
    assert rows["gain"].iloc[0] == pytest.approx(a.gain_per_doubling.value)


def test_events_are_kept_in_order_and_filtered(tmp_path):
    def ev(kind, metric, t):
        return Event(kind, "src", "r1", "name-r1", metric, 10.0 * t, "a", "b", float(t))

    with HistoryStore(tmp_path / "h.db") as st:
        st.record_events([ev("verdict_changed", "m1", 1), ev("knee_crossed", "m1", 2)])
        st.record_events([ev("verdict_changed", "m2", 3)])
        assert [e.time for e in st.events()] == [1.0, 2.0, 3.0]
        assert [e.metric for e in st.events(kind=["verdict_changed"])] == ["m1", "m2"]
        assert [e.kind for e in st.events(run="name-r1", metric="m1")] == [
            "verdict_changed", "knee_crossed"]
        assert st.events(run="r1", metric="m2")[0] == ev("verdict_changed", "m2", 3)
        assert st.has_event(("src", "r1", "m1"), "knee_crossed")
        assert not st.has_event(("src", "r1", "m2"), "knee_crossed")
        assert not st.has_event(("src", "r2", "m1"), "verdict_changed")


