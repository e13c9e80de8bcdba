"""Every option check: each ``check_*`` validates one value and returns it converted.

``name`` is the option as the user spelled it (``--confidence``, ``confidence``, ``saturate.toml:
confidence``), so a :class:`~saturate.errors.SettingsError` reads ``--confidence must be in
[0.5, 1), got 1.5``. Depends only on :mod:`saturate.errors`, so any layer may use it.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from saturate.errors import SettingsError

__all__ = ["CONFIDENCE_RANGE", "check_confidence", "check_band", "check_gain", "gain_parts",
           "check_thresholds", "check_forecast_at", "check_forecast_points", "resolve_at",
           "check_number", "check_positive", "check_seconds", "check_gpus", "check_int", "check_text",
           "check_strings", "check_choice", "check_choices", "check_target", "check_targets",
           "check_pair", "check_pairs", "check_domain", "check_domains", "check_bool",
           "check_normalize", "check_workers", "check_scheduler"]

CONFIDENCE_RANGE = (0.5, 1.0)
"""Every interval's level lies in ``[0.5, 1)``: the verdict rules read its bounds as evidence."""

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_GAIN = re.compile(rf"^\s*({_NUMBER})\s*(%?)\s*$")
_TIMES = re.compile(rf"^\s*({_NUMBER})\s*[xX×]\s*$")


def _got(value: Any) -> str:
    """The value received, as the message shows it: numbers bare, other text quoted."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return repr(value)
        return value.strip()
    return repr(value)


def _fail(name: str, rule: str, value: Any) -> SettingsError:
    return SettingsError(f"{name} {rule}, got {_got(value)}")


def _real(value: Any, name: str, expected: str) -> float:
    """A float from a real number or numeric text; bools and everything else refused."""
    if isinstance(value, bool):
        raise _fail(name, f"must be {expected}", value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _fail(name, f"must be {expected}", value)


def _range(low: float, high: float, closed: str) -> str:
    """``in [0.5, 1)``, ``> 0``, ``>= 1`` or ``a finite number``: the allowed values, in words."""
    has_low, has_high = math.isfinite(low), math.isfinite(high)
    with_low, with_high = closed in ("both", "left"), closed in ("both", "right")
    if has_low and has_high:
        return f"in {'[' if with_low else '('}{low:g}, {high:g}{']' if with_high else ')'}"
    if has_low:
        return f"{'>=' if with_low else '>'} {low:g}"
    if has_high:
        return f"{'<=' if with_high else '<'} {high:g}"
    return "a finite number"


def check_number(
    value: Any, name: str, low: float = -math.inf, high: float = math.inf, *, closed: str = "both"
) -> float:
    """A finite real number between ``low`` and ``high``; ``closed``: which ends are allowed
    (``"both"``, ``"left"``, ``"right"`` or ``"neither"``)."""
    allowed = _range(low, high, closed)
    number = _real(value, name, allowed if allowed.startswith("a ") else f"a number {allowed}")
    below = number < low or (number == low and closed not in ("both", "left"))
    above = number > high or (number == high and closed not in ("both", "right"))
    if not math.isfinite(number) or below or above:
        raise _fail(name, f"must be {allowed}", value)
    return number


def check_positive(value: Any, name: str) -> float:
    """A finite number > 0 (``4e5`` and ``"4e5"`` alike): prices, compute, budgets."""
    return check_number(value, name, 0.0, math.inf, closed="neither")


#: The longest wait an option may ask for (a week, in seconds): sockets, locks and sleeps take
#: no more than about 9e9 seconds, and a longer wait is a slip.
MAX_SECONDS = 7 * 24 * 3600


def check_seconds(value: Any, name: str, *, zero: bool = False) -> float:
    """A wait in seconds (timeouts, intervals): finite, > 0 (>= 0 with ``zero``) and at most
    :data:`MAX_SECONDS`, so that no clock of the system overflows."""
    return check_number(value, name, 0.0, MAX_SECONDS, closed="both" if zero else "right")


def _above_zero(number: float, name: str, rule: str, value: Any) -> float:
    """``number`` when finite and > 0, else the error ``name rule, got value``."""
    if not math.isfinite(number) or number <= 0:
        raise _fail(name, rule, value)
    return number


def check_gpus(value: Any, name: str) -> float | str:
    """A GPU count > 0 (``8``, ``"8"``), or the run parameter that holds it (``"n_gpus"``)."""
    if isinstance(value, str) and value.strip() and not re.match(rf"^\s*{_NUMBER}\s*$", value):
        return value.strip()
    rule = "must be a number of GPUs > 0 or the run parameter that holds it"
    return _above_zero(_real(value, name, rule.removeprefix("must be ")), name, rule, value)


def check_int(value: Any, name: str, minimum: int = 0) -> int:
    """An integer >= ``minimum`` (an integral float or numeric text is taken as one)."""
    rule = f"must be an integer >= {minimum}"
    if isinstance(value, bool):
        raise _fail(name, rule, value)
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        real = _real(value, name, f"an integer >= {minimum}")
        if not math.isfinite(real) or real != int(real):
            raise _fail(name, rule, value)
        number = int(real)
    if number < minimum:
        raise _fail(name, rule, value)
    return number


def check_confidence(value: Any, name: str = "confidence") -> float:
    """A confidence level in ``[0.5, 1)``; ``"90%"`` is taken as 0.9."""
    text = value.strip() if isinstance(value, str) else None
    if text is not None and text.endswith("%"):
        level = _real(text[:-1], name, "a level such as 0.9 or 90%") / 100.0
    else:
        level = _real(value, name, "a level such as 0.9 or 90%")
    low, high = CONFIDENCE_RANGE
    if not low <= level < high:
        raise _fail(name, f"must be {_range(low, high, 'left')}", value)
    return level


def check_band(value: Any, name: str = "band") -> tuple[float, float]:
    """The inconclusive band of P(pays): ``(low, high)`` with ``0 < low <= high < 1``, from
    ``"0.3,0.7"``, ``"30%,70%"`` or a pair; ``low == high`` (``"0.5,0.5"``) never abstains."""
    expected = "two probabilities LOW,HIGH such as 0.3,0.7"
    parts: Any = value
    if isinstance(value, str):
        parts = [p.strip() for p in value.replace(":", ",").split(",")]
    if not (isinstance(parts, (list, tuple)) and len(parts) == 2):
        raise _fail(name, f"must be {expected}", value)
    low, high = (_real(v[:-1], name, expected) / 100
                 if isinstance(v, str) and v.endswith("%") else _real(v, name, expected)
                 for v in parts)
    if not 0.0 < low <= high < 1.0:
        raise _fail(name, "must be two probabilities with 0 < LOW <= HIGH < 1 (P(pays) below "
                    "LOW: does not pay; at least HIGH: pays; between: inconclusive)", value)
    return float(low), float(high)


def check_gain(value: Any, name: str = "min_gain") -> float | str:
    """A least gain per doubling: metric units (``0.01`` -> ``0.01``) or a share of the curve's
    observed range (``"2%"``, ``" 2 %"`` -> ``"2%"``). Negative and non-finite values are refused."""
    rule = "must be a number >= 0 (metric units per doubling) or 'N%' (of the curve's range)"
    if isinstance(value, bool):
        raise _fail(name, rule, value)
    if isinstance(value, numbers.Real):
        number, percent = float(value), False
    elif isinstance(value, str) and (m := _GAIN.match(value)):
        number, percent = float(m.group(1)), bool(m.group(2))
    else:
        raise _fail(name, rule, value)
    if not math.isfinite(number) or number < 0:
        raise _fail(name, "must be >= 0 and finite", value)
    return f"{number:g}%" if percent else number


def gain_parts(value: Any, name: str = "min_gain") -> tuple[float, bool]:
    """``(number, is_percent)`` of a gain: ``"3%"`` -> ``(3.0, True)``, ``0.02`` -> ``(0.02, False)``."""
    gain = check_gain(value, name)
    return (float(gain[:-1]), True) if isinstance(gain, str) else (float(gain), False)


def check_thresholds(value: Any, name: str = "thresholds") -> dict[str, float | str]:
    """Per metric glob, its own least gain: ``{"eval/*": 0.005, "train/*": "2%"}``."""
    if not isinstance(value, Mapping):
        raise _fail(name, "must be a table of metric glob = gain", value)
    return {str(glob): check_gain(gain, f"{name}[{str(glob)!r}]") for glob, gain in value.items()}


def check_forecast_at(value: Any, name: str = "forecast_at") -> str | float:
    """One forecast point: ``"Nx"`` (N > 0 times the last compute, kept as text such as ``"2x"``)
    or an absolute compute value > 0 (a float)."""
    rule = "must be 'Nx' (a multiple > 0 of the last compute, e.g. 2x) or a compute value > 0"
    if isinstance(value, str) and (m := _TIMES.match(value)):
        return f"{_above_zero(float(m.group(1)), name, rule, value):g}x"
    return _above_zero(_real(value, name, rule.removeprefix("must be ")), name, rule, value)


def check_forecast_points(value: Any, name: str = "forecast_at") -> tuple[str | float, ...]:
    """Forecast points from one value, a list, or comma lists (``"2x,4x"``); at least one."""
    items = [value] if isinstance(value, (str, numbers.Real)) else value
    if not isinstance(items, Iterable):
        raise _fail(name, "must be a forecast point or a list of them", value)
    points: list[str | float] = []
    for item in items:
        parts = [p for p in item.split(",") if p.strip()] if isinstance(item, str) else [item]
        points += [check_forecast_at(p, name) for p in parts]
    if not points:
        raise _fail(name, "must name at least one forecast point", value)
    return tuple(points)


def resolve_at(value: Any, compute_last: float, name: str = "forecast_at") -> float:
    """The compute of a forecast point: ``"2x"`` -> ``2 * compute_last``; a value -> itself."""
    point = check_forecast_at(value, name)
    return float(point[:-1]) * compute_last if isinstance(point, str) else point


def check_text(value: Any, name: str) -> str:
    """A non-empty string (a column, a metric, a run parameter)."""
    if not isinstance(value, str) or not value.strip():
        raise _fail(name, "must be a non-empty string", value)
    return value.strip()


def check_url(value: Any, name: str) -> str:
    """An ``http(s)://`` address with a host (where a web UI is served), without a trailing
    ``/``."""
    text = check_text(value, name)
    if not re.match(r"(?i)^https?://[^/\s?#@]*@?[^/\s?#@]+(?:[/?#]\S*)?$", text):
        raise _fail(name, "must be an http:// or https:// address, such as "
                    "https://mlflow.example.org", value)
    return text.rstrip("/")


def check_strings(value: Any, name: str) -> tuple[str, ...]:
    """One string or a list of non-empty strings (globs, names) as a tuple."""
    items = [value] if isinstance(value, str) else value
    if isinstance(items, Mapping) or not isinstance(items, Iterable) or not all(
            isinstance(v, str) and v.strip() for v in items):
        raise _fail(name, "must be a string or a list of non-empty strings", value)
    return tuple(v.strip() for v in items)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """One of ``choices`` (case-insensitive), returned in lower case."""
    key = value.strip().lower() if isinstance(value, str) else value
    if key not in choices:
        raise _fail(name, f"must be one of {', '.join(choices)}", value)
    return key


def check_choices(
    values: Any, name: str, allowed: Sequence[str], *, at_least_one: bool = False
) -> tuple[str, ...]:
    """Names from ``allowed`` given as a list, comma lists or both; blanks and repeats dropped.
    ``at_least_one`` refuses an empty list."""
    items = [values] if isinstance(values, str) else values
    if not isinstance(items, Iterable) or not all(isinstance(v, str) for v in items):
        raise _fail(name, "must be a name or a list of names", values)
    out: list[str] = []
    for item in items:
        for part in item.split(","):
            key = part.strip().lower()
            if key and key not in allowed:
                raise _fail(name, f"must be among {', '.join(allowed)}", key)
            if key and key not in out:
                out.append(key)
    if at_least_one and not out:
        raise _fail(name, f"must name at least one of {', '.join(allowed)}", values)
    return tuple(out)


def _split_assignment(text: Any, name: str, example: str) -> tuple[str, str]:
    """``LEFT=RIGHT`` split at the last ``=`` (globs may hold one; values never do)."""
    if isinstance(text, str) and "=" in text:
        left, _, right = text.rpartition("=")
        if left.strip() and right.strip():
            return left.strip(), right.strip()
    raise _fail(name, f"must be {example}", text)


def _assignment(text: Any, name: str, check: Any, example: str) -> tuple[str, Any]:
    """``"GLOB=VALUE"`` -> ``(glob, check(value))``, the value named ``name glob`` in errors."""
    glob, value = _split_assignment(text, name, example)
    return glob, check(value, f"{name} {glob}")


_TARGET = "GLOB=VALUE such as 'eval/math*=0.6'"


def check_target(text: Any, name: str = "--target") -> tuple[str, float]:
    """``"eval/*=0.6"`` -> ``("eval/*", 0.6)``: a metric glob and the finite value to reach."""
    return _assignment(text, name, check_number, _TARGET)


def _glob_table(value: Any, name: str, check: Any, what: str, example: str) -> dict[str, Any]:
    """Per metric glob, ``check`` of its value: from a mapping ``{glob: value}`` or from
    ``"GLOB=VALUE"`` texts (one, or a list); ``what`` and ``example`` say what a value is."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {str(g): check(v, f"{name}[{str(g)!r}]") for g, v in value.items()}
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Iterable):
        raise _fail(name, f"must be a table of metric glob = {what}", value)
    return dict(_assignment(item, name, check, example) for item in items)


def check_targets(value: Any, name: str = "targets") -> dict[str, float]:
    """Targets from a mapping ``{glob: value}`` or a list of ``"GLOB=VALUE"`` texts."""
    return _glob_table(value, name, check_number, "value to reach", _TARGET)


def check_pair(text: Any, name: str = "--pair") -> tuple[str, str]:
    """``"train/reward=eval/*"`` -> ``("train/reward", "eval/*")``: reward and benchmark globs."""
    return _split_assignment(text, name, "REWARD=BENCHMARK such as 'train/reward=eval/*'")


def check_pairs(value: Any, name: str = "pairs") -> tuple[tuple[str, str], ...]:
    """Reward/benchmark glob pairs: a table ``{"train/reward": ["eval/*"]}``, or a list of
    ``["reward", "benchmark"]`` pairs, ``{reward = ..., benchmark = ...}`` tables or
    ``"REWARD=BENCHMARK"`` texts."""
    if value is None:
        return ()
    rule = ("must be a table {reward = [benchmark globs]} or a list of [reward, benchmark] pairs "
            "or 'REWARD=BENCHMARK' texts")

    def globs(x: Any) -> list[str]:
        items = [x] if isinstance(x, str) else x
        if not isinstance(items, Sequence) or not all(isinstance(b, str) and b for b in items):
            raise _fail(name, rule, value)
        return list(items)

    if isinstance(value, Mapping):
        return tuple((str(r), b) for r, benches in value.items() for b in globs(benches))
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise _fail(name, rule, value)
    out: list[tuple[str, str]] = []
    for item in value:
        if isinstance(item, str):
            out.append(check_pair(item, name))
        elif isinstance(item, Mapping) and {"reward", "benchmark"} <= set(item):
            out += [(str(item["reward"]), b) for b in globs(item["benchmark"])]
        elif isinstance(item, Sequence) and len(item) == 2 and all(isinstance(x, str) and x
                                                                    for x in item):
            out.append((item[0], item[1]))
        else:
            raise _fail(name, rule, value)
    return tuple(out)


_DOMAIN_RULE = "must be LO,HI with LO < HI (numbers, inf allowed, e.g. 0,1) or none"


def check_domain(value: Any, name: str = "domain") -> tuple[float, float] | None:
    """A metric's domain: ``(0, 1)``, ``[0, 100]``, ``"0,1"`` or ``"-inf,0"``; ``None`` or
    ``"none"`` for no domain."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    parts = value.split(",") if isinstance(value, str) else value
    if isinstance(parts, Mapping) or not isinstance(parts, Iterable):
        raise _fail(name, _DOMAIN_RULE, value)
    parts = list(parts)
    if len(parts) != 2:
        raise _fail(name, _DOMAIN_RULE, value)
    lo, hi = (_real(p.strip() if isinstance(p, str) else p, name, _DOMAIN_RULE[8:])
              for p in parts)
    if math.isnan(lo) or math.isnan(hi) or not lo < hi:
        raise _fail(name, _DOMAIN_RULE, value)
    return float(lo), float(hi)


def check_domains(value: Any, name: str = "domains") -> dict[str, tuple[float, float] | None]:
    """Per metric glob, its domain: a table ``{"eval/*" = [0, 1]}`` or ``"GLOB=LO,HI"`` texts
    (``"GLOB=none"`` removes the domain the name would give)."""
    return _glob_table(value, name, check_domain, "[lo, hi]", "GLOB=LO,HI such as 'eval/*=0,1'")


# ---- suites (saturate.suites: one verdict per agent over a suite of tasks) ----------------------

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_NORMALIZE_RULE = ("must be a baselines file (task,random,human CSV or JSON), 'random=R,human=H', "
                   "'min-max' or 'none'")


def check_bool(value: Any, name: str) -> bool:
    """``True``/``False``, or the words ``true``/``false``, ``yes``/``no``, ``on``/``off``, ``1``/``0``."""
    if isinstance(value, bool):
        return value
    key = value.strip().lower() if isinstance(value, str) else value
    if key in _TRUE or key == 1:
        return True
    if key in _FALSE or key == 0:
        return False
    raise _fail(name, "must be true or false", value)


def _baseline_pair(value: Any, name: str, shown: Any = None) -> dict[str, float]:
    """``{"random": R, "human": H}``: both finite numbers, and different (``shown``: the value as
    the user gave it, for the message)."""
    shown = value if shown is None else shown
    keys = {str(k).strip().lower(): v for k, v in value.items()} if isinstance(value, Mapping) \
        else {}
    if set(keys) != {"random", "human"}:
        raise _fail(name, "must give exactly random and human (random=R,human=H)", shown)
    pair = {k: check_number(keys[k], f"{name} {k}") for k in ("random", "human")}
    if pair["random"] == pair["human"]:
        raise _fail(name, "must have random != human (the scale from random to human is empty)",
                    shown)
    return pair


def check_normalize(value: Any, name: str = "normalize") -> str | dict[str, Any]:
    """How a suite's scores are normalised per task, checked for form: ``"min-max"``
    (``"minmax"``), ``"none"``, ``"random=R,human=H"``, the path of an existing baselines file
    (read later by :func:`saturate.suites.read_baselines`), or a mapping ``{"random": R, "human":
    H}`` or ``{task: {"random": R, "human": H}}``."""
    if isinstance(value, Mapping):
        if {str(k).strip().lower() for k in value} & {"random", "human"}:
            return _baseline_pair(value, name)
        if not value:
            raise _fail(name, _NORMALIZE_RULE, value)
        return {str(task): _baseline_pair(pair, f"{name}[{str(task)!r}]")
                for task, pair in value.items()}
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise _fail(name, _NORMALIZE_RULE, value)
    text = value.strip()
    if text.lower() in ("min-max", "minmax"):
        return "min-max"
    if text.lower() == "none":
        return "none"
    path = Path(text).expanduser()
    if "=" in text and not path.exists():
        items = [part.partition("=") for part in text.split(",")]
        if any(not sep for _, sep, _ in items):
            raise _fail(name, _NORMALIZE_RULE, value)
        pair = _baseline_pair({k: v for k, _, v in items}, name, text)
        return f"random={pair['random']!r},human={pair['human']!r}"
    if not path.is_file():
        raise _fail(name, f"{_NORMALIZE_RULE}; {'not a file' if path.exists() else 'no such file'}",
                    value)
    return text


def check_workers(value: Any, name: str) -> int:
    """A count of processes, written as digits (``1e3`` is refused: a slip, not a count)."""
    if isinstance(value, str) and not value.strip().isdigit():
        raise SettingsError(f"{name} must be a whole number of processes such as 4, got "
                            f"{value!r}")
    return check_int(value, name, 1)


def check_scheduler(value: Any, name: str) -> str:
    """``"local"`` (a Dask cluster on this machine) or a scheduler address such as
    ``tcp://10.0.0.5:8786`` or ``10.0.0.5:8786``."""
    text = check_text(value, name)
    if text.lower() == "local":
        return "local"
    _, sep, rest = text.partition("://")
    if any(ch.isspace() for ch in text) or (sep and not rest.strip("/")) or text.startswith(":"):
        raise SettingsError(f"{name} must be 'local' or the address of a Dask scheduler such as "
                            f"tcp://10.0.0.5:8786, got {value!r}")
    return text
