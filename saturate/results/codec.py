"""Frozen dataclasses to JSON and back (:func:`to_dict`, :func:`from_dict`), and their JSON
Schema (:func:`schema_of`), from the fields, their type hints and :func:`meta`.

Only fields with ``compare=True`` are written (NaN as ``null``, tuples as lists), so
``from_dict(cls, obj.to_dict()) == obj`` holds by construction. ``key="roi.value"`` nests a
field; ``encode``/``decode``/``schema`` give a field a JSON form other than its type's;
``inline`` writes an encoded object's entries in the field's place (a view of another result).
Properties marked :func:`derived` are written too; a class's ``_json_order`` (its keys) orders
the entry when the fields' order is not the JSON's. :class:`Coded` gives a class both methods,
:class:`Written` only ``to_dict`` (a view that leaves out what it would need to be read back).

No numpy here: a numpy value cannot exist before numpy is imported, so :func:`jsonable` looks for
it only then, and light modules (the settings) can hold coded classes.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, Literal, TypeVar, Union, overload

from saturate.errors import InputError

__all__ = ["meta", "derived", "jsonable", "to_dict", "from_dict", "schema_of", "num", "Coded",
           "Written"]


_NO = object()


def meta(doc: str | None = None, *, key: str | None = None, schema: Mapping[str, Any] | None = None,
         missing: Any = _NO, required: bool | None = None,
         encode: Callable[[Any], Any] | None = None,
         decode: Callable[[Any], Any] | None = None, inline: bool | None = None,
         missing_from: Callable[[Mapping[str, Any]], Any] | None = None,
         omit_none: bool | None = None) -> dict[str, Any]:
    """A field's JSON metadata: description, key (``a.b``: nested), schema keywords to add, the
    value a missing key reads as (``missing``, or ``missing_from(entry)`` when it follows from the
    entry's other keys; else the entry is refused unless the field has a default), whether the
    schema requires the key, its own ``encode``/``decode``/``schema``, ``inline``: the encoded
    object's entries written in the field's place (write-only), and ``omit_none``: no key at all
    when the value is None."""
    out = dict(doc=doc, key=key, schema=schema, required=required, encode=encode, decode=decode,
               inline=inline, missing_from=missing_from, omit_none=omit_none)
    if missing is not _NO:
        out["missing"] = missing
    return {k: v for k, v in out.items() if v is not None or k == "missing"}


_T = TypeVar("_T")


@overload
def derived(after: str | None = None, doc: str | None = None, *, key: str | None = None,
            cached: Literal[False] = False) -> Callable[[Callable[[Any], _T]], _T]: ...
@overload
def derived(after: str | None = None, doc: str | None = None, *, key: str | None = None,
            cached: Literal[True]) -> Callable[[Callable[[Any], _T]], functools.cached_property[_T]]: ...
def derived(after: str | None = None, doc: str | None = None, *, key: str | None = None,
            cached: bool = False) -> Callable[[Callable[[Any], Any]], Any]:
    """A property (``cached``: a :func:`functools.cached_property`) also written to the JSON object
    as ``key`` (default: its name), after the field ``after`` (None: after the fields; ignored
    when read back: it follows from the fields). A type checker reads it as its value's type."""
    def wrap(fn: Callable[[Any], Any]) -> Any:
        fn._json_derived = {"after": after, "key": key or fn.__name__,  # type: ignore[attr-defined]
                            **meta(doc)}
        return functools.cached_property(fn) if cached else property(fn)

    return wrap


def num(x: Any) -> float:
    """A float from JSON: ``None`` is NaN."""
    return math.nan if x is None else float(x)


def jsonable(x: Any) -> Any:
    """Plain, JSON-safe Python: numpy scalars converted, NaN/inf as None, tuples as lists, paths
    as text."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    np = sys.modules.get("numpy")  # not imported here: see the module docstring
    if np is not None:
        if isinstance(x, np.ndarray):
            return [jsonable(v) for v in x.tolist()]
        if isinstance(x, np.bool_):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            x = float(x)
    if isinstance(x, float):
        f = float(x)
        return f if math.isfinite(f) else None
    if hasattr(x, "to_dict") and not hasattr(x, "columns"):  # not a DataFrame
        return x.to_dict()
    if isinstance(x, PurePath):
        return str(x)
    return x


# ---- the fields and their types ------------------------------------------------------------------


@functools.cache
def _fields(cls: type) -> tuple[tuple[dataclasses.Field, Any], ...]:
    """The serialised fields of ``cls`` with their resolved types."""
    module = vars(sys.modules[cls.__module__])
    out = []
    for f in dataclasses.fields(cls):
        if not f.compare:
            continue
        out.append((f, _hint(f.type, module)))
    return tuple(out)


@functools.cache
def _derived(cls: type) -> dict[str | None, tuple[tuple[str, dict[str, Any], Any], ...]]:
    """Field name (None: the end) -> the derived properties written after it: (name, metadata,
    type), the class's own and its bases'."""
    module = vars(sys.modules[cls.__module__])
    out: dict[str | None, tuple[tuple[str, dict[str, Any], Any], ...]] = {}
    seen = {k: v for c in reversed(cls.__mro__) for k, v in vars(c).items()}
    names = {f.name for f, _ in _fields(cls)}
    for name, value in seen.items():
        fn = value.func if isinstance(value, functools.cached_property) else getattr(
            value, "fget", None)
        info = getattr(fn, "_json_derived", None)
        if info is not None:
            if info["after"] is not None and info["after"] not in names:
                raise TypeError(f"{cls.__name__}.{name}: derived after {info['after']!r}, "
                                "which is no serialised field")
            hint = _hint(fn.__annotations__.get("return", "Any"), module)
            out[info["after"]] = (*out.get(info["after"], ()), (name, info, hint))
    return out


def _hint(hint: Any, module: Mapping[str, Any]) -> Any:
    """A type hint resolved in its module; a name imported only for type checkers is ``Any``
    (a field the codec only writes, by its ``encode``)."""
    if not isinstance(hint, str):
        return hint
    try:
        return eval(hint, dict(module))  # noqa: S307 - the class's own annotation
    except NameError:
        return Any


def _key(f: dataclasses.Field) -> tuple[str, ...]:
    return tuple(f.metadata.get("key", f.name).split("."))


def _has_default(f: dataclasses.Field) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def _args(hint: Any) -> tuple[Any, ...]:
    return typing.get_args(hint)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (Union, types.UnionType)


# ---- to JSON and back ----------------------------------------------------------------------------


def to_dict(obj: Any) -> dict[str, Any]:
    """``obj``'s JSON object."""
    cls: type = type(obj)
    out: dict[str, Any] = {}
    extra = _derived(cls)
    for f, _ in _fields(cls):
        value = getattr(obj, f.name)
        encode = f.metadata.get("encode")
        value = jsonable(encode(value) if encode is not None else value)
        *path, last = _key(f)
        into = out
        for part in path:
            into = into.setdefault(part, {})
        if f.metadata.get("inline"):
            into.update(value)
        elif value is not None or not f.metadata.get("omit_none"):
            into[last] = value
        for name, info, _ in extra.get(f.name, ()):
            out[info["key"]] = jsonable(getattr(obj, name))
    for name, info, _ in extra.get(None, ()):
        out[info["key"]] = jsonable(getattr(obj, name))
    order = getattr(cls, "_json_order", None)
    return out if order is None else {k: out[k] for k in (*order, *out) if k in out}


def from_dict(cls: type, d: Mapping[str, Any] | None) -> Any:
    """An instance of ``cls`` from its JSON object; a missing key without a default or
    ``missing`` value raises :class:`~saturate.errors.InputError`."""
    d = d or {}
    kwargs = {}
    for f, hint in _fields(cls):
        here: Any = d
        *path, last = _key(f)
        for part in path:
            here = here.get(part) or {}
        if last not in here:
            if "missing" in f.metadata:
                kwargs[f.name] = f.metadata["missing"]
            elif "missing_from" in f.metadata:
                kwargs[f.name] = f.metadata["missing_from"](here)
            elif not _has_default(f):
                raise InputError(f"{cls.__name__}.from_dict: the entry has no {last!r} "
                                 f"(keys: {sorted(here)})")
            continue
        decode = f.metadata.get("decode")
        kwargs[f.name] = decode(here[last]) if decode is not None else _value(hint, here[last])
    return cls(**kwargs)


class Written:
    """Mixin of a dataclass whose ``to_dict()`` is made from its fields: a view written, never
    read back (it leaves out what it would need, such as fitted arrays)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry (see ``saturate/report/schema.json``)."""
        return to_dict(self)


class Coded(Written):
    """Mixin of a dataclass whose ``to_dict()`` and ``from_dict()`` are made from its fields."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Any:
        """An instance from its :meth:`to_dict` entry (a missing key without a default raises
        :class:`~saturate.errors.InputError`)."""
        return from_dict(cls, d)


def _value(hint: Any, x: Any) -> Any:
    """``x`` from JSON as a value of type ``hint``."""
    origin = typing.get_origin(hint)
    if hint is float:
        return num(x)
    if hint in (int, str, bool):
        return hint(x)
    if _is_union(hint):
        kinds = [a for a in _args(hint) if a is not type(None)]
        if x is None and len(kinds) < len(_args(hint)):
            return None
        return _value(kinds[0], x) if len(kinds) == 1 else x
    if origin is tuple:
        items = _args(hint)
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(_value(items[0], v) for v in x)
        return tuple(_value(t, v) for t, v in zip(items, x, strict=True))
    if origin is dict:
        _, value = _args(hint)
        return {str(k): _value(value, v) for k, v in x.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint.from_dict(x) if hasattr(hint, "from_dict") else from_dict(hint, x)
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return hint(x)
    return x  # Literal, Any, dict and the like: as JSON has it


# ---- the JSON Schema -----------------------------------------------------------------------------


def schema_of(cls: type, *, ref: bool = False) -> dict[str, Any]:
    """The JSON Schema of ``cls``'s objects; with ``ref`` a class with ``_json_def`` is only
    referenced (``{"$ref": "#/$defs/<name>"}``)."""
    name = getattr(cls, "_json_def", None)
    if ref and name:
        return {"$ref": f"#/$defs/{name}"}
    root: dict[str, Any] = {"type": "object"}
    if cls.__doc__:  # its first paragraph
        root["description"] = " ".join(cls.__doc__.strip().split("\n\n")[0].split())
    for f, hint in _fields(cls):
        *path, last = _key(f)
        node = root
        for part in path:  # an object of the entry's own, always written
            parent, node = node, node.setdefault("properties", {}).setdefault(part, {"type": "object"})
            _require(parent, part, True)
        prop = dict(f.metadata["schema"]) if "encode" in f.metadata else _schema(hint)
        if "encode" not in f.metadata:
            prop.update(f.metadata.get("schema", {}))
        if "doc" in f.metadata:
            prop["description"] = f.metadata["doc"]
        node.setdefault("properties", {})[last] = prop
        optional = _has_default(f) or "missing" in f.metadata or "missing_from" in f.metadata
        _require(node, last, f.metadata.get("required", not optional))
        for _, info, hint in _derived(cls).get(f.name, ()):
            root["properties"][info["key"]] = _schema(hint) | (
                {"description": info["doc"]} if "doc" in info else {})
            _require(root, info["key"], True)
    for node in _objects(root):  # "required" and "additionalProperties" before the properties
        props, required = node.pop("properties", {}), node.pop("required", [])
        if required:
            node["required"] = required
        node.setdefault("additionalProperties", False)
        node["properties"] = props
    return root


def _require(node: dict[str, Any], key: str, required: bool) -> None:
    names = node.setdefault("required", [])
    if required and key not in names:
        names.append(key)


def _objects(node: dict[str, Any]) -> list[dict[str, Any]]:
    """``node`` and the objects nested in its properties (the ones this class declares)."""
    out = [node]
    for prop in node.get("properties", {}).values():
        if prop.get("type") == "object" and "properties" in prop:
            out += _objects(prop)
    return out


def _schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a value of type ``hint``."""
    origin = typing.get_origin(hint)
    simple = {float: {"$ref": "#/$defs/num"}, int: {"type": "integer"},
              str: {"type": "string"}, bool: {"type": "boolean"}}
    if hint in simple:
        return dict(simple[hint])
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return {"type": "string"}
    if origin is Literal:
        return {"enum": list(_args(hint))}
    if _is_union(hint):
        kinds = [a for a in _args(hint) if a is not type(None)]
        nullable = len(kinds) < len(_args(hint))
        if nullable and len(kinds) == 1 and kinds[0] is float:
            return {"$ref": "#/$defs/num"}
        if len(kinds) > 1 and all(k in simple for k in kinds):  # str | float: one "type" list
            return {"type": [simple[k].get("type", "number") for k in kinds]
                    + (["null"] if nullable else [])}
        one = _schema(kinds[0]) if len(kinds) == 1 else {}
        if nullable and list(one) == ["type"] and isinstance(one["type"], str):
            return {"type": [one["type"], "null"]}
        return {"oneOf": [{"type": "null"}, one]} if nullable else one
    if origin is tuple:
        items = _args(hint)
        if len(items) == 2 and items[1] is Ellipsis:
            return {"type": "array", "items": _schema(items[0])}
        return {"type": "array", "prefixItems": [_schema(t) for t in items],
                "minItems": len(items), "maxItems": len(items)}
    if origin is dict:
        _, value = _args(hint)
        return {"type": "object"} if value is Any else {"type": "object",
                                                         "additionalProperties": _schema(value)}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return schema_of(hint, ref=True)
    return {}
