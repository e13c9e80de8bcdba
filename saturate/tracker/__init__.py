"""The tracker: follow live runs (``watch``), keep every verdict (``history``), see how estimates
evolved (``timeline``) and write results back to MLflow (``log_back``).

Modules: :mod:`state` (the SQLite history), :mod:`poll` (incremental fetching), :mod:`events`
(what changed between two analyses), :mod:`watch` (the loop), :mod:`timeline`, :mod:`writeback`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Loaded on first use (saturate.lazy_exports): the pollers pull in pandas and SQLAlchemy, which the
# command line's ``--help`` (it reads the history's default path) need not pay.
if TYPE_CHECKING:
    from saturate.tracker.events import Event, detect_events, parse_event_line
    from saturate.tracker.poll import PollResult, make_poller
    from saturate.tracker.state import DEFAULT_STATE, HistoryStore
    from saturate.tracker.watch import Backoff, PassResult, Watcher, run_watch

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = [
    "DEFAULT_STATE", "Backoff", "Event", "HistoryStore", "PassResult", "PollResult", "Watcher",
    "detect_events", "make_poller", "parse_event_line", "run_watch",
]
