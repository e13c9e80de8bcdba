"""What changed between two analyses of the same curve (:func:`detect_events`, pure), as events
on one stable line that :func:`parse_event_line` reads back::

    2026-11-29T17:03:12Z EVENT verdict_changed run=ppo-1 metric=eval/reward from=scaling to=slowing compute=1234

Values with spaces, quotes, ``=`` or control characters are double-quoted with backslash escapes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import ClassVar

from saturate.measure.constants import KNEE_ROI
from saturate.report.rows import format_time
from saturate.report.text import for_terminal
from saturate.results import CurveAnalysis
from saturate.results.codec import Written, meta

FINISHED_STATUSES = frozenset({"FINISHED", "FAILED", "KILLED"})
# A stop point without an interval "moved" when it shifts by more than this share of its value.
STOP_MOVE_FRACTION = 0.25
_NONE = "none"


def _fmt(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return _NONE
    return f"{x:.6g}"


def _quote(text: str) -> str:
    """A value of the event line: bare when plain, else quoted with backslash escapes."""
    if text and not re.search(r'[\s"=\\]', text) and for_terminal(text) == text:
        return text
    return '"' + for_terminal(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)")
_NAMED = {"n": "\n", "r": "\r", "t": "\t"}


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if len(code) > 1:
            return chr(int(code[1:], 16))
        return _NAMED.get(code, code)

    return _ESCAPE.sub(one, text)


@dataclass(frozen=True)
class Event(Written):
    """One change that matters on one curve, at the compute where it was seen. ``to_dict()`` is
    its JSON line's object, the time to the second as the line shows it (not read back)."""

    _json_order: ClassVar[tuple[str, ...]] = (
        "time", "event", "source", "run_id", "run", "metric", "from", "to")

    kind: str = field(metadata=meta(key="event"))
    source: str
    run_id: str
    run: str
    metric: str
    compute: float
    before: str | None = field(default=None, metadata=meta(key="from"))
    after: str | None = field(default=None, metadata=meta(key="to"))
    time: float = field(default=0.0, metadata=meta(encode=format_time))
    detail: str = ""

    def line(self) -> str:
        """The stable one-line text form (see the module docstring)."""
        parts = [format_time(self.time), "EVENT", self.kind, f"run={_quote(self.run)}",
                 f"metric={_quote(self.metric)}"]
        if self.before is not None or self.after is not None:
            parts += [f"from={_quote(self.before or _NONE)}", f"to={_quote(self.after or _NONE)}"]
        parts += [f"compute={_fmt(self.compute)}", f"run_id={_quote(self.run_id)}"]
        if self.detail:
            parts.append(f"detail={_quote(self.detail)}")
        return " ".join(parts)

    def json_line(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False)

    def summary(self) -> str:
        return self.line()


_TOKEN = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def parse_event_line(line: str) -> dict[str, str]:
    """The fields of an event line: ``time``, ``event`` and each ``key=value``; {} if not one."""
    head = line.strip().split(" ", 3)
    if len(head) < 4 or head[1] != "EVENT":
        return {}
    out = {"time": head[0], "event": head[2]}
    for key, raw in _TOKEN.findall(head[3]):
        if raw.startswith('"'):
            raw = _unescape(raw[1:-1])
        out[key] = raw
    return out


def _stop(c: CurveAnalysis) -> float | None:
    if c.stop_point is None or not math.isfinite(c.stop_point.value):
        return None
    return float(c.stop_point.value)


def _past_knee(c: CurveAnalysis) -> bool:
    """Past the knee now: a knee at or before the last compute and the ROI there below the knee
    level (an ROI that rose back above it is not past the knee)."""
    return (
        c.knee is not None and math.isfinite(c.knee) and c.knee <= c.compute_last
        and c.roi is not None and math.isfinite(c.roi) and c.roi < KNEE_ROI
    )  # fmt: skip


def _stop_moved(prev: CurveAnalysis, new: CurveAnalysis) -> bool:
    a, b = _stop(prev), _stop(new)
    if a is None or b is None:
        return (a is None) != (b is None)
    sp = prev.stop_point
    if sp is not None and math.isfinite(sp.lo) and math.isfinite(sp.hi) and sp.hi > sp.lo:
        return not sp.lo <= b <= sp.hi
    return abs(b - a) > STOP_MOVE_FRACTION * abs(a)


def detect_events(
    prev: CurveAnalysis | None, new: CurveAnalysis, *, at: float = 0.0, stop_reached: bool = False
) -> tuple[Event, ...]:
    """The events between two analyses of one curve (``prev`` None: first seen, which gets only
    ``verdict_changed`` from ``none`` and a collapse); ``at`` stamps them (epoch seconds).

    ``knee_crossed``: now past the knee (ROI below :data:`KNEE_ROI`); ``stop_point_reached``
    once per curve (``stop_reached``: the history holds one already), after which the stop point
    neither moves nor is reached again; ``stop_point_moved``: it left the previous interval (or
    moved by :data:`STOP_MOVE_FRACTION`); ``run_finished``: status became FINISHED/FAILED/KILLED.
    """

    def ev(kind: str, before: str | None = None, after: str | None = None, detail: str = "",
           compute: float | None = None) -> Event:
        return Event(kind=kind, source=new.source, run_id=new.run_id, run=new.run,
                     metric=new.metric, compute=new.compute_last if compute is None else compute,
                     before=before, after=after, time=at, detail=detail)  # fmt: skip

    out: list[Event] = []
    if prev is None or prev.verdict != new.verdict:
        out.append(ev("verdict_changed", _NONE if prev is None else prev.verdict, new.verdict,
                      detail=new.reasons[0] if new.reasons else ""))
    if prev is not None and _past_knee(new) and not _past_knee(prev):
        out.append(ev("knee_crossed", after=_fmt(new.knee), detail=f"roi {_fmt(new.roi)}"))
    if new.collapse is not None and (
        prev is None or prev.collapse is None or prev.collapse.step != new.collapse.step
    ):
        c = new.collapse
        out.append(ev("collapse_detected", _fmt(c.level_before), _fmt(c.level_after),
                      detail=f"drop {_fmt(c.drop)} ({c.drop_fraction:.0%}) at step {c.step}",
                      compute=c.compute))  # fmt: skip
    if prev is None:
        return tuple(out)
    stop, before = _stop(new), _stop(prev)
    was_reached = stop_reached or (before is not None and before <= prev.compute_last)
    if was_reached:
        pass  # reached once; it stays reached
    elif stop is not None and stop <= new.compute_last:
        out.append(ev("stop_point_reached", after=_fmt(stop)))
    elif _stop_moved(prev, new):
        out.append(ev("stop_point_moved", _fmt(before), _fmt(stop)))
    status = (new.run_status or "").upper()
    if status in FINISHED_STATUSES and (prev.run_status or "").upper() not in FINISHED_STATUSES:
        out.append(ev("run_finished", prev.run_status or _NONE, status))
    return tuple(out)



