"""The diagnostics registry: each diagnostic module declares, next to the code that finds them,
the kinds it reports (severity, one-line help, JSON Schema of ``details``) via :func:`register`.

``KINDS``, what ``run_diagnostics`` runs and how findings sort, the report schema's kinds and
``gate --fail-on`` are all read from here. The package's modules are imported (so registered)
the first time the registry is read. ``#/$defs/num`` and ``/estimate`` live in ``schema.json``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from saturate.diagnostics.base import SEVERITIES, CurveRef, Diagnostic, DiagnosticSettings
from saturate.results import VERDICTS

__all__ = [
    "Kind", "Producer", "DiagnosticInput", "kind", "register", "unregister", "producers",
    "kind_specs", "kinds", "check_finding", "NUM", "EST", "STR", "BOOL", "INT", "fields", "array",
    "mapping", "nullable",
]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# JSON Schema pieces for ``details`` (NaN and inf become null in the report, hence nullable numbers).
NUM: dict[str, Any] = {"$ref": "#/$defs/num"}
EST: dict[str, Any] = {"$ref": "#/$defs/estimate"}
STR: dict[str, Any] = {"type": "string"}
BOOL: dict[str, Any] = {"type": "boolean"}
INT: dict[str, Any] = {"type": "integer"}


def nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` or null."""
    return {"oneOf": [{"type": "null"}, dict(schema)]}


def array(items: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """An array of ``items`` (``extra``: ``minItems``, ``maxItems``, ...)."""
    return {"type": "array", "items": dict(items), **extra}


def mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    """An object whose keys are free (metric or slice names) and whose values are ``values``."""
    return {"type": "object", "additionalProperties": dict(values)}


def fields(optional: Mapping[str, Mapping[str, Any]] | None = None,
           **required: Mapping[str, Any]) -> dict[str, Any]:
    """An object with exactly these keys: ``required`` always present, ``optional`` sometimes."""
    props = {**{k: dict(v) for k, v in required.items()},
             **{k: dict(v) for k, v in (optional or {}).items()}}
    return {"type": "object", "required": list(required), "properties": props,
            "additionalProperties": False}


@dataclass(frozen=True)
class Kind:
    """One ``kind`` a diagnostic reports: its severities, one-line help (``gate --help``, the
    schema) and the JSON Schema of its ``details``."""

    name: str
    severities: tuple[str, ...]
    help: str
    details: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})


def kind(name: str, severity: str | Sequence[str], help: str,
         details: Mapping[str, Any] | None = None) -> Kind:
    """A checked :class:`Kind` (a lower-case name that is not a verdict; ``details``: any object
    when omitted)."""
    sev = (severity,) if isinstance(severity, str) else tuple(severity)
    if not _NAME.match(name) or name in VERDICTS:
        raise ValueError(f"diagnostic kind {name!r} must be a lower_case word and not a verdict")
    if not sev or any(s not in SEVERITIES for s in sev):
        raise ValueError(f"diagnostic kind {name!r}: severity must be among {SEVERITIES}, "
                         f"got {severity!r}")
    if not help.strip() or "\n" in help.strip():
        raise ValueError(f"diagnostic kind {name!r}: help must be one non-empty line, got {help!r}")
    schema = dict(details) if details is not None else {"type": "object"}
    if schema.get("type") != "object":
        raise ValueError(f"diagnostic kind {name!r}: details must be a JSON Schema of an object, "
                         f"got {details!r}")
    return Kind(name, tuple(s for s in SEVERITIES if s in sev), help.strip(), schema)


@dataclass(frozen=True)
class DiagnosticInput:
    """What every diagnostic reads: the curves (one each), the settings, and GPU-hours per unit
    of compute per ``(source, run_id)`` (empty: 1 everywhere)."""

    refs: tuple[CurveRef, ...]
    settings: DiagnosticSettings
    hours_per_compute: Mapping[tuple[str, str], float] = field(default_factory=dict)


Find = Callable[[DiagnosticInput], Iterable[Diagnostic]]


@dataclass(frozen=True)
class Producer:
    """A registered diagnostic: the function that finds it and the kinds it reports. ``order``
    places its kinds among findings of the same severity (smaller first)."""

    name: str
    find: Find
    kinds: tuple[Kind, ...]
    order: float
    module: str


_PRODUCERS: dict[str, Producer] = {}
_loaded = False


def register(find: Find, *kinds: Kind, order: float, name: str | None = None) -> Producer:
    """Register ``find`` (a :class:`DiagnosticInput` -> diagnostics) as the producer of ``kinds``;
    ``name`` (default: the first kind's) again replaces it; a kind another producer registered is
    a ``ValueError``."""
    if not kinds:
        raise ValueError("register: a diagnostic reports at least one kind")
    name = name or kinds[0].name
    names = [k.name for k in kinds]
    taken = {k.name: p.name for p in _PRODUCERS.values() if p.name != name for k in p.kinds}
    clash = [n for n in names if n in taken] + [n for n in names if names.count(n) > 1]
    if clash:
        raise ValueError(f"diagnostic kind {clash[0]!r} is already registered "
                         f"(by {taken.get(clash[0], name)!r})")
    producer = Producer(name, find, tuple(kinds), float(order),
                        getattr(find, "__module__", "") or "")
    _PRODUCERS[name] = producer
    return producer


def unregister(name: str) -> None:
    """Remove the producer ``name`` (tests register throwaway diagnostics)."""
    _PRODUCERS.pop(name, None)


def _load() -> None:
    """Import every module of :mod:`saturate.diagnostics` once, so that each registers."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    package = importlib.import_module("saturate.diagnostics")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


def producers() -> tuple[Producer, ...]:
    """Every registered diagnostic, in ``order`` (then registration order)."""
    _load()
    return tuple(sorted(_PRODUCERS.values(), key=lambda p: p.order))


def kind_specs() -> tuple[Kind, ...]:
    """Every registered kind, in the order findings sort within a severity."""
    return tuple(k for p in producers() for k in p.kinds)


def kinds() -> tuple[str, ...]:
    """Every ``kind`` a diagnostic can carry (what ``gate --fail-on`` may name)."""
    return tuple(k.name for k in kind_specs())


def check_finding(producer: Producer, found: Diagnostic) -> Diagnostic:
    """``found`` if its kind and severity are ones ``producer`` registered; else a ``ValueError``
    (a bug in the diagnostic, which the report's schema would reject)."""
    spec = next((k for k in producer.kinds if k.name == found.kind), None)
    if spec is None or found.severity not in spec.severities:
        allowed = {k.name: k.severities for k in producer.kinds}
        raise ValueError(f"diagnostic {producer.name!r} reported kind {found.kind!r} with "
                         f"severity {found.severity!r}; it registered {allowed}")
    return found
