"""Events between two analyses of a curve, the event line format, and its parser."""

from __future__ import annotations

import dataclasses
import math

import pytest

from saturate.results import Collapse, CurveAnalysis, Estimate
from saturate.tracker.events import Event, detect_events, parse_event_line


def curve(**kw) -> CurveAnalysis:
    base = dict(
        source="src", experiment="exp", run_id="id1", run="ppo 1", metric="eval/reward",
        direction="higher", n_points=20, compute_first=1.0, compute_last=100.0, value_last=0.5,
        threshold=0.01, verdict="scaling", reasons=("why",),
        gain_per_doubling=Estimate(0.05, 0.04, 0.06), asymptote=Estimate(math.nan, identified=False),
        headroom=Estimate(math.nan, identified=False), roi=1.2, roi_stage="transition",
        run_status="RUNNING",
    )  # fmt: skip
    base.update(kw)
    return CurveAnalysis(**base)


def kinds(events) -> list[str]:
    return [e.kind for e in events]


def test_first_analysis_reports_its_verdict_and_nothing_else_when_quiet():
    events = detect_events(None, curve(), at=1.0)
    assert kinds(events) == ["verdict_changed"]
    assert (events[0].before, events[0].after, events[0].compute) == ("none", "scaling", 100.0)


def test_no_events_when_nothing_that_matters_changed():
    prev = curve()
    new = curve(compute_last=120.0, n_points=22, gain_per_doubling=Estimate(0.049, 0.04, 0.06))
    assert detect_events(prev, new) == ()


def test_verdict_change_and_knee_crossed_once():
    prev = curve()
    new = curve(verdict="slowing", knee=80.0, compute_last=150.0, roi=0.6)
    assert kinds(detect_events(prev, new)) == ["verdict_changed", "knee_crossed"]
    e = detect_events(prev, new)[0]
    assert (e.before, e.after) == ("scaling", "slowing")
    later = curve(verdict="slowing", knee=85.0, compute_last=200.0)
    assert detect_events(new, later) == ()


def test_collapse_detected_when_new_or_at_another_step():
    col = Collapse(compute=90.0, step=90, level_before=0.6, level_after=0.2, drop=0.4,
                   drop_fraction=0.66)
    prev = curve()
    new = curve(collapse=col)
    events = detect_events(prev, new)
    assert kinds(events) == ["collapse_detected"]
    assert events[0].compute == 90.0 and "step 90" in events[0].detail
    assert detect_events(new, curve(collapse=col, compute_last=130.0)) == ()
    moved = dataclasses.replace(col, step=120, compute=120.0)
    assert kinds(detect_events(new, curve(collapse=moved))) == ["collapse_detected"]


def test_stop_point_moved_uses_the_previous_interval_and_reached_wins():
    prev = curve(stop_point=Estimate(400.0, 300.0, 500.0))
    inside = curve(stop_point=Estimate(450.0, 350.0, 600.0))
    assert detect_events(prev, inside) == ()
    outside = curve(stop_point=Estimate(900.0, 700.0, 1200.0))
    events = detect_events(prev, outside)
    assert kinds(events) == ["stop_point_moved"]
    assert (events[0].before, events[0].after) == ("400", "900")
    reached = curve(stop_point=Estimate(420.0, 380.0, 460.0), compute_last=430.0)
    assert kinds(detect_events(prev, reached)) == ["stop_point_reached"]
    assert detect_events(reached, curve(stop_point=Estimate(425.0), compute_last=500.0)) == ()


def test_a_stop_point_is_reached_once_per_curve():
    """Reached, then estimated beyond the last compute, then reached again: one event, and no
    move past the last compute once it was reached (the history says it was, ``stop_reached``)."""
    before = curve(stop_point=Estimate(400.0, 300.0, 500.0), compute_last=350.0)
    reached = curve(stop_point=Estimate(420.0, 380.0, 460.0), compute_last=430.0)
    assert kinds(detect_events(before, reached)) == ["stop_point_reached"]
    beyond = curve(stop_point=Estimate(900.0, 700.0, 1200.0), compute_last=500.0)
    assert detect_events(reached, beyond) == ()  # not moved past the last compute
    again = curve(stop_point=Estimate(950.0, 800.0, 1100.0), compute_last=1000.0)
    assert detect_events(beyond, again, stop_reached=True) == ()  # not reached twice
    assert kinds(detect_events(beyond, again)) == ["stop_point_reached"]  # without the history


def test_stop_point_without_interval_moves_beyond_a_quarter():
    prev = curve(stop_point=Estimate(400.0))
    assert detect_events(prev, curve(stop_point=Estimate(480.0))) == ()
    assert kinds(detect_events(prev, curve(stop_point=Estimate(520.0)))) == ["stop_point_moved"]
    gone = detect_events(prev, curve(stop_point=None))
    assert kinds(gone) == ["stop_point_moved"] and gone[0].after == "none"


def test_run_finished_only_on_a_transition():
    prev = curve()
    done = curve(run_status="FINISHED")
    events = detect_events(prev, done)
    assert kinds(events) == ["run_finished"]
    assert (events[0].before, events[0].after) == ("RUNNING", "FINISHED")
    assert detect_events(done, curve(run_status="FINISHED")) == ()
    assert kinds(detect_events(None, done)) == ["verdict_changed"]


@pytest.mark.parametrize("run", ["plain", "has space", 'q"uote', "a=b", ""])
def test_event_line_round_trips(run):
    e = Event(kind="verdict_changed", source="s", run_id="abc", run=run, metric="eval/x",
              compute=1234.0, before="scaling", after="slowing", time=1_800_000_000.0,
              detail='gain 0.1 [0.05, 0.2] "x"')
    line = e.line()
    assert line.startswith("2027-01-15T08:00:00Z EVENT verdict_changed ")
    fields = parse_event_line(line)
    assert fields == {"time": "2027-01-15T08:00:00Z", "event": "verdict_changed", "run": run,
                      "metric": "eval/x", "from": "scaling", "to": "slowing", "compute": "1234",
                      "run_id": "abc", "detail": 'gain 0.1 [0.05, 0.2] "x"'}
    assert e.to_dict()["from"] == "scaling" and e.to_dict()["event"] == "verdict_changed"
    assert parse_event_line("warning: not an event") == {}


def test_knee_crossed_only_when_the_roi_goes_below_the_knee_level():
    before = curve(roi=1.2)  # no knee yet
    past = curve(knee=80.0, compute_last=150.0, roi=0.6)
    risen = curve(knee=80.0, compute_last=150.0, roi=1.37)  # a knee found, but ROI back above 0.8
    assert "knee_crossed" not in kinds(detect_events(before, risen))
    assert kinds(detect_events(before, past)) == ["knee_crossed"]
    assert "knee_crossed" in kinds(detect_events(risen, past))
    assert detect_events(past, curve(knee=82.0, compute_last=200.0, roi=0.5)) == ()
    # a curve seen for the first time has nothing to cross from: its verdict only
    assert kinds(detect_events(None, past)) == ["verdict_changed"]
    first = curve(stop_point=Estimate(120.0, 100.0, 140.0), knee=80.0, roi=0.6)
    assert kinds(detect_events(None, first)) == ["verdict_changed"]
