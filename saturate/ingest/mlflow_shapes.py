"""The answers of an MLflow tracking server checked against the shapes saturate reads.

Four endpoints feed the curve table: ``experiments/search``, ``runs/search``,
``metrics/get-history`` and the UI's ``metrics/get-history-bulk``. Each answer is checked while it
is converted, against the fields used (protobuf JSON: 64-bit integers may come as strings,
non-finite doubles as ``"NaN"``/``"Infinity"``, fields at their default may be missing). An answer
of another shape or type (a list where an object belongs, a step that is not an integer, ...)
is a :class:`~saturate.errors.SourceError` naming the endpoint and the field, never a traceback.
"""

from __future__ import annotations

import math
from typing import Any

from saturate.errors import SourceError
from saturate.ingest.mlflow_common import Experiment, RunMeta

# A fetched curve: (run_id, metric key, steps, values, timestamps).
Curve = tuple[str, str, list, list, list]


class _Bad(Exception):
    """A value is not of the expected type (``expected`` says what was)."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "an object"}  # fmt: skip
    text = names.get(type(value), type(value).__name__)
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return text


class Shape:
    """Where an answer came from, to name it when it has the wrong shape."""

    def __init__(self, label: str, endpoint: str) -> None:
        self.label = label
        self.endpoint = endpoint

    def fail(self, where: str, expected: str, got: Any) -> SourceError:
        return SourceError(
            f"{self.label}: the answer to {self.endpoint} is not what an MLflow tracking server "
            f"sends ({where}: expected {expected}, got {_kind(got)})"
        )


def _int(v: Any) -> int:
    if type(v) is int:
        return v
    if v is None:
        return 0  # proto3 leaves a field at its default out
    if type(v) is str:
        try:
            return int(v)
        except ValueError:
            pass
    elif type(v) is float and v.is_integer():
        return int(v)
    raise _Bad("an integer")


def _num(v: Any) -> float:
    if type(v) in (float, int):
        return float(v)
    if v is None:
        return math.nan
    if type(v) is str:
        try:
            return float(v)  # also "NaN", "Infinity", "-Infinity"
        except ValueError:
            pass
    raise _Bad("a number")


def _text(v: Any) -> str:
    if type(v) is str:
        return v
    if v is None:
        return ""
    raise _Bad("a string")


def _id(v: Any) -> str:
    if type(v) is str and v:
        return v
    if type(v) is int:
        return str(v)
    raise _Bad("an id (a non-empty string)")


def _obj(v: Any, where: str, shape: Shape) -> dict:
    if type(v) is not dict:
        raise shape.fail(where, "an object", v)
    return v


def _list(v: Any, where: str, shape: Shape) -> list:
    if v is None:
        return []
    if type(v) is not list:
        raise shape.fail(where, "a list", v)
    return v


def page(data: Any, field: str, shape: Shape) -> tuple[list, str | None]:
    """(the items of ``field``, the next page token) of one answer."""
    data = _obj(data, "the answer", shape)
    items = _list(data.get(field), field, shape)
    token = data.get("next_page_token")
    if token is not None and type(token) is not str:
        raise shape.fail("next_page_token", "a string", token)
    return items, token or None


def experiments(items: list, shape: Shape) -> list[Experiment]:
    out = []
    for i, e in enumerate(items):
        e = _obj(e, f"experiments[{i}]", shape)
        field = "experiment_id"
        try:
            exp_id = _id(e.get("experiment_id"))
            field = "name"
            name = _text(e.get("name"))
            field = "lifecycle_stage"
            stage = _text(e.get("lifecycle_stage"))
        except _Bad as bad:
            raise shape.fail(f"experiments[{i}].{field}", bad.expected, e.get(field)) from None
        out.append(Experiment(exp_id, name, stage != "deleted"))
    return out


def _pairs(items: Any, where: str, shape: Shape) -> dict[str, str]:
    out = {}
    for j, kv in enumerate(_list(items, where, shape)):
        kv = _obj(kv, f"{where}[{j}]", shape)
        key = kv.get("key")
        if type(key) is not str:
            raise shape.fail(f"{where}[{j}].key", "a string", key)
        value = kv.get("value")
        if value is not None and type(value) is not str:
            raise shape.fail(f"{where}[{j}].value", "a string", value)
        out[key] = value or ""
    return out


def run_meta(run: Any, i: int, shape: Shape) -> tuple[RunMeta, dict[str, tuple[int, int]], str]:
    """(RunMeta, {metric key: (step, timestamp) of its latest point}, lifecycle stage) of one
    ``runs/search`` item."""
    where = f"runs[{i}]"
    run = _obj(run, where, shape)
    info = _obj(run.get("info") or {}, f"{where}.info", shape)
    data = _obj(run.get("data") or {}, f"{where}.data", shape)
    field = "run_id"
    try:
        run_id = _id(info.get("run_id") or info.get("run_uuid"))
        field = "experiment_id"
        exp_id = _id(info.get("experiment_id"))
        values = {}
        for field in ("run_name", "status", "user_id", "artifact_uri", "lifecycle_stage"):
            values[field] = _text(info.get(field))
        field = "start_time"
        start = _int(info.get("start_time"))
        field = "end_time"
        end = _int(info["end_time"]) if info.get("end_time") else None
    except _Bad as bad:
        raise shape.fail(f"{where}.info.{field}", bad.expected, info.get(field)) from None
    meta = RunMeta(
        run_id=run_id, experiment_id=exp_id, name=values["run_name"], status=values["status"],
        params=_pairs(data.get("params"), f"{where}.data.params", shape),
        tags=_pairs(data.get("tags"), f"{where}.data.tags", shape),
        start_time=start, end_time=end, user_id=values["user_id"],
        artifact_uri=values["artifact_uri"],
    )  # fmt: skip
    latest: dict[str, tuple[int, int]] = {}
    for j, m in enumerate(_list(data.get("metrics"), f"{where}.data.metrics", shape)):
        at = f"{where}.data.metrics[{j}]"
        m = _obj(m, at, shape)
        key = m.get("key")
        if type(key) is not str:
            raise shape.fail(f"{at}.key", "a string", key)
        try:
            latest[key] = (_int(m.get("step")), _int(m.get("timestamp")))
        except _Bad as bad:
            raise shape.fail(f"{at}.step/timestamp", bad.expected, m) from None
    return meta, latest, values["lifecycle_stage"]


def history(points: list, shape: Shape, where: str = "metrics") -> tuple[list, list, list]:
    """(steps, values, timestamps) of the points of one curve."""
    steps, values, stamps = [], [], []
    for i, p in enumerate(points):
        if type(p) is not dict:
            raise shape.fail(f"{where}[{i}]", "an object", p)
        field = "step"
        try:
            steps.append(_int(p.get("step")))
            field = "value"
            values.append(_num(p.get("value")))
            field = "timestamp"
            stamps.append(_int(p.get("timestamp")))
        except _Bad as bad:
            raise shape.fail(f"{where}[{i}].{field}", bad.expected, p.get(field)) from None
    return steps, values, stamps


def bulk_history(points: list, runs: list[str], shape: Shape) -> dict[str, list[dict]]:
    """The points of a bulk answer grouped by run (every asked run present, maybe empty)."""
    by_run: dict[str, list[dict]] = {r: [] for r in runs}
    for i, p in enumerate(points):
        if type(p) is not dict:
            raise shape.fail(f"metrics[{i}]", "an object", p)
        run_id = p.get("run_id")
        if type(run_id) is not str:
            raise shape.fail(f"metrics[{i}].run_id", "a string", run_id)
        by_run.setdefault(run_id, []).append(p)
    return by_run
