"""Project settings from ``[tool.saturate]`` in ``pyproject.toml`` or from a ``saturate.toml``.

The file is found from the current directory upward (in each directory ``saturate.toml`` first, then a
``pyproject.toml`` that has a ``[tool.saturate]`` table), or named with ``--config PATH``. Options on
the command line win over the file; per-metric ``thresholds`` refine the default ``min_gain``::

    [tool.saturate]
    min_gain = "1%"                 # per doubling of compute: an absolute number or "N%"
    compute = "compute/gpu_hours"
    group_by = "recipe"
    metric = ["eval/*"]
    lower_is_better = ["*/kl"]
    forecast_at = ["2x", "4x"]
    fail_on = ["saturated", "regressing", "divergence"]
    gpu_hour_cost = 2.5             # price of a GPU-hour: cost per point of metric
    pretrain_compute = 4e5          # same unit as the x axis: RL share of pre-training
    gpu_hours = "compute/gpu_hours" # metric/column of cumulative GPU-hours (allocation, cost)
    budget = 5000                   # GPU-hours: rank the runs worth extending

    [tool.saturate.thresholds]
    "eval/accuracy" = 0.005
    "train/*" = "2%"

    [tool.saturate.pairs]           # reward glob = benchmark globs (default: naming conventions)
    "train/reward" = ["eval/*", "bench/*"]

    [tool.saturate.targets]         # metric glob = value to reach: the compute it takes
    "eval/math500/accuracy" = 0.6

In a ``saturate.toml`` the same keys sit at the top level (a ``[tool.saturate]`` table also works).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from saturate.errors import SettingsError

__all__ = [
    "Config",
    "find_config",
    "load_config",
    "read_config",
    "read_file",
    "check_kinds",
    "parse_gain",
    "parse_forecast_at",
    "parse_confidence",
    "parse_positive",
    "parse_target",
    "parse_targets",
    "parse_pair",
]

_LIST_KEYS = ("metric", "experiment", "run", "lower_is_better", "higher_is_better", "forecast_at",
              "fail_on", "laws")
_STR_KEYS = ("compute", "group_by", "filter", "format", "gpu_hours")
_POSITIVE_KEYS = ("gpu_hour_cost", "pretrain_compute", "budget")
_GAIN = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(%?)\s*$")
_TIMES = re.compile(r"^\s*((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*[xX×]\s*$")


def parse_gain(value: Any, origin: str = "--min-gain") -> float | str:
    """A minimum gain per doubling: an absolute number (float) or a relative ``"N%"`` (string).

    ``"0.01"`` and ``0.01`` give ``0.01``; ``"2%"`` and ``" 2 %"`` give ``"2%"``. Negative or
    non-finite values, and anything else, are a :class:`SettingsError` naming ``origin``.
    """
    if isinstance(value, bool):
        raise SettingsError(f"{origin}: expected a number or 'N%', got {value!r}")
    if isinstance(value, (int, float)):
        number, percent = float(value), False
    elif isinstance(value, str) and (m := _GAIN.match(value)):
        number, percent = float(m.group(1)), bool(m.group(2))
    else:
        raise SettingsError(f"{origin}: expected a number or 'N%' such as 0.01 or 2%, got {value!r}")
    if not math.isfinite(number) or number < 0:
        raise SettingsError(f"{origin}: must be a finite number >= 0, got {value!r}")
    return f"{number:g}%" if percent else number


def parse_forecast_at(value: Any, origin: str = "--forecast-at") -> str | float:
    """A forecast point: ``"Nx"`` (a multiple of the last compute, kept as text) or a compute value."""
    if isinstance(value, bool):
        raise SettingsError(f"{origin}: expected 'Nx' or a compute value, got {value!r}")
    if isinstance(value, str) and (m := _TIMES.match(value)):
        times = float(m.group(1))
        if not math.isfinite(times) or times <= 0:
            raise SettingsError(f"{origin}: the multiple must be > 0, got {value!r}")
        return f"{times:g}x"
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(
            f"{origin}: expected 'Nx' (e.g. 2x) or a compute value (e.g. 1e21), got {value!r}"
        ) from None
    if not math.isfinite(number) or number <= 0:
        raise SettingsError(f"{origin}: a compute value must be finite and > 0, got {value!r}")
    return number


def parse_confidence(value: Any, origin: str = "--confidence") -> float:
    """A confidence level strictly between 0 and 1 (``90%`` is accepted as 0.9)."""
    try:
        text = str(value).strip()
        level = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except (TypeError, ValueError):
        raise SettingsError(f"{origin}: expected a level such as 0.9, got {value!r}") from None
    if isinstance(value, bool) or not 0 < level < 1:
        raise SettingsError(f"{origin}: must be strictly between 0 and 1, got {value!r}")
    return level


def parse_positive(value: Any, origin: str) -> float:
    """A finite number > 0 (``"4e5"`` and ``4e5`` alike): prices, compute, budgets."""
    if isinstance(value, bool):
        raise SettingsError(f"{origin}: expected a number > 0, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{origin}: expected a number > 0, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise SettingsError(f"{origin}: must be a finite number > 0, got {value!r}")
    return number


def _target_value(value: Any, origin: str) -> float:
    if isinstance(value, bool):
        raise SettingsError(f"{origin}: expected a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{origin}: expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise SettingsError(f"{origin}: must be a finite number, got {value!r}")
    return number


def _split_assignment(text: Any, origin: str, example: str) -> tuple[str, str]:
    """``LEFT=RIGHT`` split at the last ``=`` (globs may not hold one; values never do)."""
    if not isinstance(text, str) or "=" not in text:
        raise SettingsError(f"{origin}: expected {example}, got {text!r}")
    left, _, right = text.rpartition("=")
    left, right = left.strip(), right.strip()
    if not left or not right:
        raise SettingsError(f"{origin}: expected {example}, got {text!r}")
    return left, right


def parse_target(text: Any, origin: str = "--target") -> tuple[str, float]:
    """``"eval/*=0.6"`` -> ``("eval/*", 0.6)``: a metric glob and the value it should reach."""
    glob, value = _split_assignment(text, origin, "GLOB=VALUE such as 'eval/math*=0.6'")
    return glob, _target_value(value, f"{origin} {text!r}")


def parse_targets(value: Any, origin: str = "targets") -> dict[str, float]:
    """Targets from a mapping ``{glob: value}`` or a list of ``"GLOB=VALUE"`` texts."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {str(g): _target_value(v, f"{origin}[{g!r}]") for g, v in value.items()}
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable):
        raise SettingsError(f"{origin}: expected a table of metric glob = value, got {value!r}")
    return dict(parse_target(v, origin) for v in value)


def parse_pair(text: Any, origin: str = "--pair") -> tuple[str, str]:
    """``"train/reward=eval/*"`` -> ``("train/reward", "eval/*")``: reward and benchmark globs."""
    return _split_assignment(text, origin, "REWARD=BENCHMARK such as 'train/reward=eval/*'")


@dataclass(frozen=True)
class Config:
    """Settings read from a file; ``None`` / empty means "not set there"."""

    path: str | None = None
    min_gain: float | str | None = None
    thresholds: dict[str, float | str] = field(default_factory=dict)
    confidence: float | None = None
    compute: str | None = None
    group_by: str | None = None
    filter: str | None = None
    format: str | None = None
    metric: tuple[str, ...] = ()
    experiment: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    lower_is_better: tuple[str, ...] = ()
    higher_is_better: tuple[str, ...] = ()
    forecast_at: tuple[str | float, ...] = ()
    fail_on: tuple[str, ...] = ()
    laws: tuple[str, ...] = ()
    n_boot: int | None = None
    seed: int | None = None
    pairs: tuple[tuple[str, str], ...] = ()
    targets: dict[str, float] = field(default_factory=dict)
    gpu_hour_cost: float | None = None
    pretrain_compute: float | None = None
    gpu_hours: str | None = None
    budget: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The settings that are set, JSON-safe (tuples as lists)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None or v == () or v == {}:
                continue
            out[f.name] = [list(x) if isinstance(x, tuple) else x for x in v] \
                if isinstance(v, tuple) else v
        return out

    def summary(self) -> str:
        """``settings from <path>: key=value, ...`` (or ``no settings file``)."""
        if self.path is None:
            return "no settings file"
        items = ", ".join(f"{k}={v}" for k, v in self.to_dict().items() if k != "path")
        return f"settings from {self.path}: {items or 'none'}"

    def merged(self, **cli: Any) -> dict[str, Any]:
        """The file's settings overlaid with the command line's (a ``None``/empty CLI value is unset)."""
        out = {k: v for k, v in self.to_dict().items() if k != "path"}
        for key, value in cli.items():
            if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
                continue
            out[key] = list(value) if isinstance(value, tuple) else value
        return out


def _table(data: Mapping[str, Any], path: Path) -> Mapping[str, Any] | None:
    """The saturate table of a parsed file, or None when a pyproject.toml has none."""
    tool = data.get("tool", {})
    if isinstance(tool, Mapping) and "saturate" in tool:
        section = tool["saturate"]
        if not isinstance(section, Mapping):
            raise SettingsError(f"{path}: [tool.saturate] must be a table")
        return section
    if path.name == "pyproject.toml":
        return None
    return {k: v for k, v in data.items() if k != "tool"}


def _strings(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{path}: {key} must be a string or a list of strings, got {value!r}")
    return tuple(value)


def _int(value: Any, key: str, path: Path, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingsError(f"{path}: {key} must be an integer >= {minimum}, got {value!r}")
    return value


def _parse(section: Mapping[str, Any], path: Path) -> Config:
    known = {f.name for f in fields(Config)} - {"path"}
    unknown = sorted(set(section) - known)
    if unknown:
        raise SettingsError(
            f"{path}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    kw: dict[str, Any] = {"path": str(path)}
    for key, value in section.items():
        where = f"{path}: {key}"
        if key == "min_gain":
            kw[key] = parse_gain(value, where)
        elif key == "thresholds":
            if not isinstance(value, Mapping):
                raise SettingsError(f"{where} must be a table of metric glob = gain")
            kw[key] = {str(g): parse_gain(v, f"{where}.{g!r}") for g, v in value.items()}
        elif key == "confidence":
            kw[key] = parse_confidence(value, where)
        elif key in _STR_KEYS:
            if not isinstance(value, str) or not value:
                raise SettingsError(f"{where} must be a non-empty string, got {value!r}")
            kw[key] = value
        elif key == "forecast_at":
            items = value if isinstance(value, list) else [value]
            kw[key] = tuple(parse_forecast_at(v, where) for v in items)
        elif key in _LIST_KEYS:
            kw[key] = _strings(value, key, path)
        elif key in ("n_boot", "seed"):
            kw[key] = _int(value, key, path, 0)
        elif key in _POSITIVE_KEYS:
            kw[key] = parse_positive(value, where)
        elif key == "targets":
            if not isinstance(value, Mapping):
                raise SettingsError(f"{where} must be a table of metric glob = value to reach, "
                                    f"got {value!r}")
            kw[key] = parse_targets(value, where)
        elif key == "pairs":
            from saturate.diagnostics.base import parse_pairs

            try:
                kw[key] = parse_pairs(value)
            except SettingsError as exc:
                raise SettingsError(f"{path}: {exc}") from None
    return Config(**kw)


def read_file(path: str | os.PathLike) -> Config:
    """Read one settings file (``pyproject.toml`` needs a ``[tool.saturate]`` table)."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise SettingsError(f"--config {os.fspath(path)}: no such file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{p}: not valid TOML ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{p}: cannot read ({exc})") from None
    section = _table(data, p)
    if section is None:
        raise SettingsError(f"{p}: has no [tool.saturate] table")
    return _parse(section, p)


def find_config(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest ``saturate.toml``, or ``pyproject.toml`` with ``[tool.saturate]``, upward from
    ``start`` (default: the current directory)."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for d in (here, *here.parents):
        candidate = d / "saturate.toml"
        if candidate.is_file():
            return candidate
        pyproject = d / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
                continue  # someone else's broken pyproject is not ours to report
            tool = data.get("tool")
            if isinstance(tool, Mapping) and "saturate" in tool:
                return pyproject
    return None


def load_config(
    path: str | os.PathLike | Config | None = None, *, start: str | os.PathLike | None = None
) -> Config:
    """The settings: from ``path`` when given, else from the file found upward of ``start``.

    No file found gives an empty :class:`Config` (everything unset). A ``Config`` passes through.
    """
    if isinstance(path, Config):
        return path
    if path is not None:
        return read_file(path)
    found = find_config(start)
    return read_file(found) if found is not None else Config()


def read_config(path: str | os.PathLike | None = None) -> dict[str, Any]:
    """The settings a file sets, as keyword arguments of :func:`saturate.analyze` and the CLI.

    ``path=None`` looks for the file from the current directory upward; none found gives ``{}``.
    """
    return load_config(path).merged()


def check_kinds(kinds: Iterable[str], allowed: Iterable[str], origin: str) -> tuple[str, ...]:
    """Split comma lists, drop blanks, and refuse names outside ``allowed``."""
    allowed = tuple(allowed)
    out: list[str] = []
    for item in kinds:
        for k in str(item).split(","):
            k = k.strip().lower()
            if not k:
                continue
            if k not in allowed:
                raise SettingsError(f"{origin}: unknown kind {k!r} (known: {', '.join(allowed)})")
            if k not in out:
                out.append(k)
    return tuple(out)
