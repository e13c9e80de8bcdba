"""Per-task normalisation, so tasks with different score scales can be pooled: each raw score
``x`` becomes ``(x - zero) / (one - zero)``. ``baselines``: ``random`` (zero) and ``human`` (one)
per task, from a file or one pair for all; ``min-max``: the worst and best score the task shows
over all groups (so 1 is always the best seen); ``none``: scores as they are (negated when lower
is better).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from saturate.errors import InputError, SettingsError
from saturate.results import Direction
from saturate.results.codec import Coded, derived, meta, num

Method = Literal["baselines", "min-max", "none"]
#: What ``analyze_suite(normalize=...)`` accepts: None or "min-max", "none", a path to a baselines
#: file, ``"random=R,human=H"``, ``{"random": R, "human": H}`` or ``{task: {"random": R, "human": H}}``.
NormalizeSpec = str | Path | Mapping[str, Any] | None


def _bounds_entry(bounds: Mapping[str, tuple[float, float]]) -> dict[str, dict[str, float]]:
    return {t: {"zero": z, "one": o} for t, (z, o) in bounds.items()}


def _bounds_of(d: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    return {str(t): (num(b["zero"]), num(b["one"])) for t, b in d.items()}


@dataclass(frozen=True)
class Normalization(Coded):
    """How each task's scores were mapped to the common scale: ``bounds[task] = (zero, one)``."""

    method: Method
    source: str
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict, metadata=meta(
        encode=_bounds_entry, decode=_bounds_of))
    notes: tuple[str, ...] = ()

    @derived("source", key="description")
    def _description(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """One line for a report: what 0 and 1 mean."""
        if self.method == "none":
            return "scores used as they are (no normalisation)"
        if self.method == "min-max":
            return (f"min-max per task ({self.source}): 0 = the task's worst score seen, "
                    "1 = its best")
        return f"baselines per task ({self.source}): 0 = random, 1 = human"



def parse_normalize(spec: NormalizeSpec) -> tuple[Method, dict[str, tuple[float, float]] | None,
                                                   str]:
    """``(method, baselines, source)`` from any accepted spelling of the option; ``baselines``
    maps a task (``"*"``: every task) to ``(random, human)``; another string is a file path."""
    if spec is None:
        return "min-max", None, "over all groups"
    if isinstance(spec, Mapping):
        if {"random", "human"} <= {str(k) for k in spec}:
            return "baselines", {"*": _pair(spec, "normalize")}, "given for every task"
        out = {str(t): _pair(v, f"normalize[{t!r}]") for t, v in spec.items()}
        if not out:
            raise SettingsError("normalize: got an empty mapping; give {task: {random, human}}")
        return "baselines", out, f"given for {len(out)} task(s)"
    text = str(spec).strip()
    if text.lower() in ("min-max", "minmax"):
        return "min-max", None, "over all groups"
    if text.lower() == "none":
        return "none", None, "none"
    if "=" in text and not Path(text).exists():
        return "baselines", {"*": _pair(_key_values(text), "--normalize")}, "given for every task"
    path = Path(text)
    return "baselines", read_baselines(path), f"file {path.name}"


def _key_values(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise SettingsError(
                f"--normalize: expected 'random=R,human=H', a file or 'min-max', got {text!r}")
        out[key.strip().lower()] = value.strip()
    return out


def _pair(d: Any, name: str) -> tuple[float, float]:
    """``(random, human)`` from a mapping, checked finite and distinct."""
    if not isinstance(d, Mapping) or not {"random", "human"} <= {str(k) for k in d}:
        raise SettingsError(f"{name}: expected keys 'random' and 'human', got {d!r}")
    extra = sorted(set(map(str, d)) - {"random", "human"})
    if extra:
        raise SettingsError(f"{name}: unknown key(s) {', '.join(extra)}; expected random, human")
    vals = []
    for key in ("random", "human"):
        try:
            v = float(d[key])
        except (TypeError, ValueError):
            raise SettingsError(f"{name}: {key} must be a number, got {d[key]!r}") from None
        if not math.isfinite(v):
            raise SettingsError(f"{name}: {key} must be finite, got {d[key]!r}")
        vals.append(v)
    if vals[0] == vals[1]:
        raise SettingsError(
            f"{name}: random == human ({vals[0]:g}); the scale from random to human is empty")
    return vals[0], vals[1]


def read_baselines(path: str | Path) -> dict[str, tuple[float, float]]:
    """``{task: (random, human)}`` from a CSV (``task,random,human``; the task column may be
    ``game``, ``env`` or ``environment``) or a JSON mapping or list of records."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"baselines file {str(p)!r}: not found")
    try:
        if p.suffix.lower() == ".json":
            obj = json.loads(p.read_text(encoding="utf-8"))
            df = (pd.DataFrame.from_dict(obj, orient="index").rename_axis("task").reset_index()
                  if isinstance(obj, dict) else pd.DataFrame(obj))
        else:
            df = pd.read_csv(p)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise InputError(f"baselines file {p.name}: cannot be read ({e})") from None
    cols = {str(c).strip().lower(): c for c in df.columns}
    task = next((cols[k] for k in ("task", "game", "env", "environment") if k in cols), None)
    missing = [k for k in ("random", "human") if k not in cols]
    if task is None or missing:
        raise InputError(
            f"baselines file {p.name}: needs columns task, random, human; "
            f"found {', '.join(map(str, df.columns)) or 'none'}")
    out: dict[str, tuple[float, float]] = {}
    for _, row in df.iterrows():
        name = str(row[task])
        if name in out:
            raise InputError(f"baselines file {p.name}: task {name!r} appears twice")
        out[name] = _pair({"random": row[cols["random"]], "human": row[cols["human"]]},
                          f"baselines file {p.name}, task {name!r}")
    if not out:
        raise InputError(f"baselines file {p.name}: holds no tasks")
    return out



def task_bounds(
    scores: pd.DataFrame,
    task_col: str,
    spec: NormalizeSpec,
    direction: Direction | Mapping[str, Direction],
) -> Normalization:
    """The :class:`Normalization` of the tasks in ``scores`` (tidy rows, one metric per task);
    ``direction`` is the metric's, or one per task."""
    method, baselines, source = parse_normalize(spec)
    tasks = sorted(scores[task_col].astype(str).unique())
    way = {t: direction if isinstance(direction, str) else direction[t] for t in tasks}
    notes: list[str] = []
    if method == "none":
        lower = [t for t in tasks if way[t] == "lower"]
        if lower:
            notes.append(f"lower-is-better scores negated so that larger is better "
                         f"({', '.join(lower)})")
        bounds = {t: (0.0, -1.0 if way[t] == "lower" else 1.0) for t in tasks}
        return Normalization("none", source, bounds, tuple(notes))
    if method == "baselines":
        assert baselines is not None
        if "*" in baselines:
            bounds = {t: baselines["*"] for t in tasks}
        else:
            missing = [t for t in tasks if t not in baselines]
            if missing:
                raise SettingsError(
                    f"normalize ({source}): no random/human baseline for task(s) "
                    f"{', '.join(missing)}; the file names {len(baselines)} task(s)")
            bounds = {t: baselines[t] for t in tasks}
        wrong = [t for t, (r, h) in bounds.items() if (h < r) == (way[t] == "higher")]
        if wrong:
            notes.append(
                f"human is not better than random for {', '.join(wrong)} (by the metric's "
                "direction): normalised scores fall as the raw score improves there")
        return Normalization("baselines", source, bounds, tuple(notes))
    stats = scores.groupby(scores[task_col].astype(str))["value"].agg(["min", "max"])
    flat = [t for t in tasks if not stats.loc[t, "max"] > stats.loc[t, "min"]]
    if flat:
        raise InputError(
            f"min-max normalisation: the scores of task(s) {', '.join(flat)} never change; "
            "give baselines (normalize=) or leave the task out")
    lo = {t: float(v) for t, v in stats["min"].items()}
    hi = {t: float(v) for t, v in stats["max"].items()}
    bounds = {t: ((lo[t], hi[t]) if way[t] == "higher" else (hi[t], lo[t])) for t in tasks}
    return Normalization("min-max", source, bounds)


def apply_bounds(values: pd.Series, tasks: pd.Series, norm: Normalization) -> pd.Series:
    """``(x - zero) / (one - zero)`` row by row, with each row's task's bounds."""
    names = tasks.astype(str)
    zero = names.map({t: z for t, (z, _) in norm.bounds.items()}).astype(float)
    one = names.map({t: o for t, (_, o) in norm.bounds.items()}).astype(float)
    return (values.astype(float) - zero) / (one - zero)
