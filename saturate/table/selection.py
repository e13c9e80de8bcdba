"""What a selection by name (``--metric``, ``--run``, ``--experiment``: globs) had to choose from,
and what it says when it keeps nothing.

Sources record the names they offer in an :class:`Offered` as they are read (the tidy points of a
file, the metric keys an MLflow store or a W&B project lists before its selection is pushed into
the query); once the read is over, :func:`selection_miss` makes the one error of a selection that
kept no curve, naming what exists (through :func:`saturate.errors.no_match`, the one form of every
miss), and :func:`unmatched_lines` the warnings of patterns that matched nothing beside others that
did. The choosing itself is :func:`saturate.table.curves.select`.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from saturate.errors import InputError, closest, miss_line, no_match

__all__ = ["Offered", "unmatched", "selection_miss", "is_slip", "unmatched_lines",
           "METRIC_GLOB_OPTIONS", "unmatched_globs"]


@dataclass
class Offered:
    """The names the sources of a read offered before any selection: metrics, run names, run ids
    and experiments (added to from reader threads: guarded by a lock)."""

    metrics: set[str] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)
    run_ids: set[str] = field(default_factory=set)
    experiments: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, points: pd.DataFrame) -> None:
        """The names of tidy ``points`` (before they are selected)."""
        with self._lock:
            for names, column in ((self.metrics, "metric"), (self.runs, "run"),
                                  (self.run_ids, "run_id"), (self.experiments, "experiment")):
                if column in points.columns and len(points):
                    names.update(map(str, pd.unique(points[column].to_numpy())))

    def metric(self, key: str) -> None:
        """One metric key a store offered."""
        with self._lock:
            self.metrics.add(key)

    def run(self, name: str, run_id: str) -> None:
        """One run a store offered."""
        with self._lock:
            self.runs.add(name)
            self.run_ids.add(run_id)


def _selectors(offered: Offered, metric: Sequence[str] | None, run: Sequence[str] | None,
               experiment: Sequence[str] | None
               ) -> list[tuple[str, str, list[str], set[str], set[str]]]:  # fmt: skip
    """Each selector given: (option, noun, patterns, names it matches against, names shown)."""
    out = []
    for option, noun, patterns, match, shown in (
            ("--metric", "metric", metric, offered.metrics, offered.metrics),
            ("--run", "run", run, offered.runs | offered.run_ids, offered.runs),
            ("--experiment", "experiment", experiment, offered.experiments, offered.experiments)):
        if patterns:
            out.append((option, noun, list(patterns), match, shown))
    return out


def unmatched(patterns: Iterable[str], names: Iterable[str]) -> list[str]:
    """The glob ``patterns`` that match none of ``names`` (case-sensitive, as selection is)."""
    pool = list(names)
    return [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n in pool)]


def selection_miss(offered: Offered, *, metric: Sequence[str] | None = None,
                   run: Sequence[str] | None = None, experiment: Sequence[str] | None = None,
                   where: str | None = None) -> InputError | None:
    """The error of a selection that kept no curve: a selector none of whose patterns matches
    anything (naming what exists, with a "did you mean"), else selectors that each match but
    never together; None when no selector is to blame."""
    chosen = _selectors(offered, metric, run, experiment)
    for option, noun, patterns, match, shown in chosen:
        missing = unmatched(patterns, match)
        if len(missing) == len(patterns):
            return no_match(option, missing, shown, noun, where=where,  # type: ignore[return-value]
                            globs=True)
    if len(chosen) > 1:
        given = " and ".join(f"{o} {', '.join(map(repr, p))}" for o, _, p, _, _ in chosen)
        head = f"{where}: " if where else ""
        return InputError(f"{head}no curve matches {given} together (each matches curves of its "
                          "own; `saturate ls` lists the runs and metrics)")
    return None


def is_slip(offered: Offered, *, metric: Sequence[str] | None = None,
            run: Sequence[str] | None = None, experiment: Sequence[str] | None = None) -> bool:
    """Whether a pattern that matched nothing is close to a name there is (a typo: ``watch``
    stops on it), rather than a name that may yet come (a metric logged later: it waits)."""
    return any(closest(p, shown, globs=True) is not None
               for _, _, patterns, match, shown in _selectors(offered, metric, run, experiment)
               for p in unmatched(patterns, match))


def unmatched_lines(offered: Offered, *, metric: Sequence[str] | None = None,
                    run: Sequence[str] | None = None,
                    experiment: Sequence[str] | None = None) -> list[str]:
    """Warnings for the patterns that matched nothing while others of their option did
    (``--metric eval/acc --metric eval/acuracy``): one line per option."""
    lines = []
    for option, noun, patterns, match, shown in _selectors(offered, metric, run, experiment):
        missing = unmatched(patterns, match)
        if missing and len(missing) < len(patterns):
            lines.append(miss_line(option, missing, shown, noun, globs=True))
    return lines


#: Options whose values are metric globs that choose how a metric is read, not whether: a glob
#: of theirs that matches no metric is a warning (a shared settings file may name metrics a
#: project lacks), not an error.
METRIC_GLOB_OPTIONS = ("objective", "diagnostic", "lower_is_better", "higher_is_better",
                       "domains", "thresholds", "targets", "pairs")


def unmatched_globs(globs: Mapping[str, Iterable[str]], metrics: Iterable[str]) -> list[str]:
    """One warning line per option (``{option as spelled: its globs}``) with globs that match
    none of ``metrics``, naming them and what there is."""
    pool = sorted(set(metrics))
    return [miss_line(option, missing, pool, "metric", globs=True)
            for option, patterns in globs.items() if (missing := unmatched(patterns, pool))]
