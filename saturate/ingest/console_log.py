"""Read the metrics a trainer printed to its console: ``step:N - key:value - key:value ...`` lines
(verl and its imitators, colour codes and process prefixes allowed) as the long rows
``run, metric, step, value``, the run being the file's stem.

A metric printed at one step only whose name ends exactly one other metric's name is that metric
(older verl logs ``test_score/...`` at step 0, ``val/test_score/...`` later).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_STEP = re.compile(r"(?<![\w/])step:\s*(\d+)\s+-\s+(.*)$")
_PAIR = re.compile(r"^\s*(.+?):\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf)\s*$")
_HEAD_BYTES = 65536
LOG_SUFFIXES = (".log", ".out")  # looked into when a folder is walked


def looks_like_console_log(text: str) -> bool:
    """Whether ``text`` (a file's first 64 KiB) holds two ``step:N - key:value`` lines (one, in a
    shorter file)."""
    hits = 0
    for line in text.splitlines():
        m = _STEP.search(_ANSI.sub("", line))
        if m and _PAIR.match(m.group(2).split(" - ", 1)[0]):
            hits += 1
            if hits >= 2:
                return True
    return hits == 1 and len(text) < _HEAD_BYTES  # a short log of one step


def _pairs(body: str) -> list[tuple[str, float]]:
    """The ``key:number`` pairs of a line's body (:data:`_PAIR` admits only what float reads)."""
    return [(m.group(1).strip(), float(m.group(2)))
            for part in body.split(" - ") if (m := _PAIR.match(part))]


def read_console_log(text: str, path: Path) -> pd.DataFrame:
    """The long rows ``run, metric, step, value`` of a console log's text (see module doc)."""
    metrics: list[str] = []
    steps: list[int] = []
    values: list[float] = []
    for raw in text.splitlines():
        m = _STEP.search(_ANSI.sub("", raw))
        if m is None:
            continue
        step = int(m.group(1))
        for key, v in _pairs(m.group(2)):
            metrics.append(key)
            steps.append(step)
            values.append(v)
    frame = pd.DataFrame({"metric": metrics, "step": steps, "value": values})
    counts = frame["metric"].value_counts()
    names = set(counts.index)
    rename = {}
    for once in counts.index[counts == 1]:
        longer = [k for k in names if k.endswith("/" + once)]
        if len(longer) == 1:
            rename[once] = longer[0]
    if rename:
        frame["metric"] = frame["metric"].replace(rename)
    return frame.assign(run=run_name(path))


def run_name(path: Path) -> str:
    """The file's name without its log suffixes (``a-0.5B.log.gz`` -> ``a-0.5B``)."""
    name = path.name
    for suffix in (".gz", ".log", ".txt", ".out"):
        name = name.removesuffix(suffix)
    return name or path.name
