"""Hypothesis strategies for fuzzed input files: tables in every format saturate reads, mutated.

A case starts from a table that makes sense (long, wide, W&B export, JSON series, SB3 Monitor),
then mutates it: columns renamed to tidy names in other cases or with spaces, huge or unicode
names, colliding columns, cells of any type (text, huge and tiny numbers, NaN/inf spellings,
lists, dicts, bytes), and finally the bytes: byte-order marks, gzip, truncation, flipped bytes,
or random bytes outright. :func:`fuzzed_file` draws ``(file name, bytes)``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

ROLES = ("step", "value", "metric", "run", "run_id", "compute", "timestamp", "experiment",
         "global_step", "_step", "name", "time", "run_status", "Step", "Value")
WORDS = ("", "nan", "NaN", "inf", "-inf", "Infinity", "-", "null", "None", "1e999", "-1e999",
         "12345678901234567890123456", "0x1F", "1,5", "true", " 3 ", "1e308", "-1e308", "5e-324",
         "1e-320", '"', "a,b", "\t", "\n")
TEXT_FORMATS = ("csv", "tsv", "csv;", "jsonl", "json", "json_series", "monitor")

Table = tuple[list[str], list[list[Any]]]


def _variant(name: str, how: str) -> str:
    return {"upper": name.upper(), "title": name.title(), "space": f" {name} ",
            "tab": f"{name}\t", "same": name}[how]


names = st.one_of(
    st.sampled_from(ROLES),
    st.builds(_variant, st.sampled_from(ROLES), st.sampled_from(["upper", "title", "space", "tab"])),
    st.text(max_size=12),
    st.builds(lambda n, c: c * n, st.integers(300, 6000), st.sampled_from(["x", "é", "\u202e"])),
    st.builds(lambda r, m, a: f"{r} - {m}{a}", st.text(min_size=1, max_size=6),
              st.text(min_size=1, max_size=6), st.sampled_from(["", "__MIN", "__MAX"])),
)
scalars = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.sampled_from([1e308, -1e308, 1e-308, 5e-324, 1e300, 1e-300, 0.0, -0.0]),
    st.sampled_from(WORDS),
    st.text(max_size=10),
    st.none(),
    st.booleans(),
)
containers = st.one_of(
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
    st.binary(max_size=6),
)


def cells(rich: bool) -> st.SearchStrategy[Any]:
    """Any cell; lists, dicts and bytes only where the format can hold them (``rich``)."""
    return st.one_of(scalars, containers) if rich else scalars


# ---- base tables ------------------------------------------------------------------------------

@st.composite
def base_table(draw: st.DrawFn) -> Table:
    """A table that makes sense, in one of the layouts saturate reads."""
    n = draw(st.integers(0, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    steps = (np.arange(n) * draw(st.sampled_from([1, 10, 1000]))).tolist()
    vals = (1 - np.exp(-np.arange(n) / max(n / 3, 1)) + rng.normal(0, 0.03, n)).tolist()
    layout = draw(st.sampled_from(["long", "wide", "wandb"]))
    if layout == "long":
        runs = [f"run{i % 2}" for i in range(n)]
        rows = [[r, "reward", s, v, s * 2.5] for r, s, v in zip(runs, steps, vals, strict=True)]
        return ["run", "metric", "step", "value", "compute"], rows
    if layout == "wide":
        rows = [[s, v, 1 - v, "ppo"] for s, v in zip(steps, vals, strict=True)]
        return ["step", "reward", "loss", "algo"], rows
    rows = [[s, v, v - 0.1, v * 0.5] for s, v in zip(steps, vals, strict=True)]
    return ["Step", "a - train/reward", "a - train/reward__MIN", "b - train/reward"], rows


@st.composite
def mutated_table(draw: st.DrawFn, rich: bool) -> Table:
    """A base table with a few random mutations of its names and cells."""
    cols, rows = draw(base_table())
    cols, rows = list(cols), [list(r) for r in rows]
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["rename", "add", "collide", "cells", "drop", "column"]))
        if op == "rename" and cols:
            cols[draw(st.integers(0, len(cols) - 1))] = draw(names)
        elif op == "add":
            cols.append(draw(names))
            for r in rows:
                r.append(draw(cells(rich)))
        elif op == "collide" and cols:
            i = draw(st.integers(0, len(cols) - 1))
            how = draw(st.sampled_from(["upper", "title", "space", "tab", "same"]))
            cols.append(_variant(cols[i], how))
            for r in rows:
                r.append(r[i])
        elif op == "cells" and rows:
            for _ in range(draw(st.integers(1, 5))):
                r = draw(st.integers(0, len(rows) - 1))
                rows[r][draw(st.integers(0, len(cols) - 1))] = draw(cells(rich))
        elif op == "drop" and len(cols) > 1:
            i = draw(st.integers(0, len(cols) - 1))
            del cols[i]
            for r in rows:
                del r[i]
        elif op == "column" and cols:
            i = draw(st.integers(0, len(cols) - 1))
            fill = draw(cells(rich))
            for r in rows:
                r[i] = fill
    return cols, rows


# ---- writers ----------------------------------------------------------------------------------

def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return str(v)


def _json_value(v: Any) -> str:
    if isinstance(v, bytes):
        v = v.decode("utf-8", errors="replace")
    return json.dumps(v)  # NaN and Infinity as Python writes them


def _json_record(cols: list[str], row: list[Any]) -> str:
    # Built by hand so that duplicate keys stay duplicate.
    return "{" + ", ".join(f"{json.dumps(c)}: {_json_value(v)}" for c, v in zip(cols, row, strict=True)) + "}"


def write_text(fmt: str, table: Table) -> bytes:
    """The table in a text format (see :data:`TEXT_FORMATS`)."""
    cols, rows = table
    if fmt in ("csv", "tsv", "csv;"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter={"csv": ",", "tsv": "\t", "csv;": ";"}[fmt])
        w.writerow(cols)
        w.writerows([[_text(v) for v in r] for r in rows])
        return buf.getvalue().encode("utf-8", errors="surrogatepass")
    if fmt == "jsonl":
        return "\n".join(_json_record(cols, r) for r in rows).encode("utf-8", errors="surrogatepass")
    if fmt == "json":
        body = ",\n".join(_json_record(cols, r) for r in rows)
        return f"[{body}]".encode("utf-8", errors="surrogatepass")
    if fmt == "json_series":
        recs = []
        for j, c in enumerate(cols[1:], start=1):
            xs = [_json_value(r[0]) for r in rows]
            ys = [_json_value(r[j]) for r in rows]
            recs.append(f'{{"run": {json.dumps(c)}, "xs": [{", ".join(xs)}], "ys": [{", ".join(ys)}]}}')
        return f"[{', '.join(recs)}]".encode("utf-8", errors="surrogatepass")
    # SB3 Monitor: the first three columns as r, l, t under a JSON header.
    body = io.StringIO()
    w = csv.writer(body)
    w.writerow(["r", "l", "t"][: len(cols)] + cols[3:])
    w.writerows([[_text(v) for v in r] for r in rows])
    head = '#{"t_start": 1.0, "env_id": "Fuzz-v0"}\n'
    return (head + body.getvalue()).encode("utf-8", errors="surrogatepass")


def _arrow_column(values: list[Any]) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        return pa.array([None if v is None else _text(v) for v in values])


def write_parquet(table: Table) -> bytes:
    """The table as Parquet (duplicate column names kept); columns Arrow cannot hold or Parquet
    cannot store (mixed types, empty structs) fall back to text."""
    cols, rows = table
    safe = [c.encode("utf-8", errors="replace").decode("utf-8") for c in cols]
    arrays = [_arrow_column([r[i] for r in rows]) for i in range(len(cols))]
    try:
        return _parquet_bytes(arrays, safe)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        plain = [a if pa.types.is_primitive(a.type) or pa.types.is_string(a.type) else
                 pa.array([None if v is None else _text(v) for v in a.to_pylist()]) for a in arrays]
        return _parquet_bytes(plain, safe)


def _parquet_bytes(arrays: list[pa.Array], names: list[str]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names=names), buf)
    return buf.getvalue()


# ---- byte mutations ---------------------------------------------------------------------------

@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """Byte-order marks, gzip, truncation or flipped bytes (or none)."""
    for op in draw(st.lists(st.sampled_from(["bom", "utf16", "gzip", "truncate", "flip"]),
                            max_size=2, unique=True)):
        if op == "bom":
            data = b"\xef\xbb\xbf" + data
        elif op == "utf16":
            data = data.decode("utf-8", errors="replace").encode("utf-16")
        elif op == "gzip":
            data = gzip.compress(data, mtime=0)
        elif op == "truncate" and data:
            data = data[: draw(st.integers(0, len(data) - 1))]
        elif op == "flip" and data:
            arr = bytearray(data)
            for _ in range(draw(st.integers(1, 4))):
                arr[draw(st.integers(0, len(arr) - 1))] = draw(st.integers(0, 255))
            data = bytes(arr)
    return data


@st.composite
def fuzzed_file(draw: st.DrawFn, formats: tuple[str, ...] = (*TEXT_FORMATS, "parquet")
                ) -> tuple[str, bytes]:
    """``(file name, bytes)`` of a fuzzed table file, or now and then of random bytes."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from(["x.csv", "x.jsonl", "x.parquet", "x.csv.gz"])), draw(
            st.binary(max_size=300))
    fmt = draw(st.sampled_from(formats))
    rich = fmt in ("jsonl", "json", "json_series", "parquet")
    table = draw(mutated_table(rich))
    data = write_parquet(table) if fmt == "parquet" else write_text(fmt, table)
    data = draw(mutated_bytes(data))
    suffix = {"csv;": "csv", "json_series": "json", "monitor": "monitor.csv"}.get(fmt, fmt)
    return f"runs.{suffix}", data


# ---- TensorBoard ------------------------------------------------------------------------------

tags = st.one_of(st.sampled_from(["train/reward", "eval/acc", "loss"]), st.text(max_size=20))
tb_values = st.one_of(st.floats(width=32), st.sampled_from([math.nan, math.inf, 3.4e38, 1e-45]))


@st.composite
def tensorboard_events(draw: st.DrawFn) -> list[tuple[str, int, Any]]:
    """Events ``(tag, step, value)``: a value is a float (simple_value) or an array (a tensor
    summary of any dtype and shape)."""
    events = []
    for _ in range(draw(st.integers(0, 40))):
        tag, step = draw(tags), draw(st.integers(-(2**63), 2**63 - 1))
        if draw(st.integers(0, 4)) == 0:
            value: Any = draw(st.sampled_from([
                np.array(1.5), np.array([1.0, 2.0]), np.array(b"text"), np.array(7, dtype=np.int64),
                np.array(True), np.array(np.nan, dtype=np.float16)]))
        else:
            value = draw(tb_values)
        events.append((tag, step, value))
    return events


# ---- W&B transaction logs with odd records ------------------------------------------------------

#: JSON texts a history item may hold: numbers, the odd ones (NaN, infinities, hundreds of
#: digits), nesting past any parser, text, nothing readable.
_ODD_JSON = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: json.dumps(f)),
    st.integers(19, 400).map(lambda n: "9" * n),
    st.integers(50, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(50, 3000).map(lambda n: '{"a": ' * n + "1" + "}" * n),
    st.sampled_from(['"text"', "null", "true", "{}", "[1, 2]", '{"_type": "image-file"}', "{",
                     "", "1e999", "-0"]),
)


@st.composite
def wandb_history(draw: st.DrawFn) -> list[dict[str, str]]:
    """History records as ``{key: value_json}``: most with a plain ``_step``, some odd."""
    records = []
    for i in range(draw(st.integers(1, 12))):
        step = str(i) if draw(st.booleans()) else draw(_ODD_JSON)
        items = {"_step": step, "reward": draw(_ODD_JSON)}
        if draw(st.booleans()):
            items[draw(st.sampled_from(["eval", "loss", "a/b", "_timestamp"]))] = draw(_ODD_JSON)
        records.append(items)
    return records
