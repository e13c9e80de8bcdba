"""The tracker: follow live runs (``watch``), keep every verdict (``history``), see how estimates
evolved (``timeline``) and write results back to MLflow (``log_back``).

Modules: :mod:`state` (the SQLite history: what it stores, its marker, lock and file errors);
:mod:`poll` (incremental fetching: a poller per kind of source); :mod:`events` (what changed between two analyses), :mod:`watch` (the loop), :mod:`timeline` and
:mod:`writeback`.
"""

from __future__ import annotations

from saturate.tracker.events import Event, detect_events, parse_event_line
from saturate.tracker.poll import PollResult, make_poller
from saturate.tracker.state import DEFAULT_STATE, HistoryStore
from saturate.tracker.watch import Backoff, PassResult, Watcher, run_watch

__all__ = [
    "DEFAULT_STATE",
    "Backoff",
    "Event",
    "HistoryStore",
    "PassResult",
    "PollResult",
    "Watcher",
    "detect_events",
    "make_poller",
    "parse_event_line",
    "run_watch",
]
