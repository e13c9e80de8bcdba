"""Read curve tables from files (CSV/TSV, gzipped too, JSON Lines, Parquet, W&B CSV exports, SB3
Monitor files, console logs), the kind chosen by content, not suffix. Layouts: **long**
(``metric``, ``value``, ``step``/``compute``), **wide** (a step column, one numeric column per
metric), **W&B export** (``<run> - <metric>`` columns), **SB3 Monitor** (x axis: env steps).

Column names match ignoring case and surrounding spaces; two columns that then name the same
thing are refused rather than one picked silently. Byte-order marks (UTF-16 too) are accepted;
list, dict and bytes cells are read as text.

**Curves or not.** A file that holds no curves raises :class:`~saturate.errors.NoCurvesError`
(a folder walk skips it, :mod:`saturate.ingest.folder`); curve data that is broken raises
:class:`~saturate.errors.InputError`. The evidence is the name and the content, together:

* no curves: an empty file, a header without rows, binary content that is not Parquet; a
  ``.json`` file holding one object that is neither a point record (no ``value`` key) nor series
  (``xs``/``ys`` lists), such as a config, or a JSON Schema (``$schema``); a table without a curve column
  (:data:`CURVE_COLUMNS`: an x axis or a ``value``) when it is JSON, Parquet or ``.txt`` (these
  hold configs and data sets as often as curves) or a CSV/TSV without a numeric column; a file
  that cannot be parsed and neither is named ``.csv``/``.tsv``/``.parquet`` nor names a curve
  column in its first line (prose in a ``.txt``, a broken config).
* broken curve data (an error): a ``.csv``/``.tsv``/``.parquet`` that cannot be parsed
  (malformed rows); a file whose first line names a curve column and that cannot be parsed (a
  truncated JSONL); a table with a ``value`` column or, for CSV/TSV, a numeric one, but no x axis
  (the error says which column is missing); bad cells and misspelt column names, as ever.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import re
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, NoCurvesError, names_text, shorten
from saturate.ingest.arrow_csv import read_plain_csv
from saturate.ingest.console_log import LOG_SUFFIXES, looks_like_console_log, read_console_log
from saturate.ingest.layouts import (
    Points,
    constant_column,
    is_numeric,
    long_points,
    split_facts,
    wide_points,
    with_facts,
)
from saturate.table.cells import plain_cells
from saturate.table.curves import tidy_points
from saturate.table.table import Table
from saturate.vocabulary.names import axis_quantity

TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")
STEP_ALIASES = ("step", "global_step", "_step", "iteration", "iter", "timestep", "timesteps",
                "env_step", "env_steps", "trainer/global_step")
RUN_ALIASES = ("run", "run_name", "name")
TIME_ALIASES = ("timestamp", "wall_time", "_timestamp", "time")
_WANDB_COL = re.compile(r"^(?P<run>.+?) - (?P<metric>.+?)(?P<agg>__MIN|__MAX)?$")
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SEPARATORS = {"csv": ",", "tsv": "\t", "csv;": ";"}
#: Columns (once aliases are read) that say a table holds curves: an x axis or values.
CURVE_COLUMNS = ("step", "compute", "value")
#: Suffixes that say a file is a curve table whatever it holds: one that cannot be parsed is
#: broken, not something else.
_DATA_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
#: A curve column named in a header line or as a JSON key (the first line of a file that cannot
#: be parsed: a truncated JSONL of points is broken data, a broken config is not).
_NAMES_CURVES = re.compile(
    r'(?:^|[\s,;"{])(?:' + "|".join(re.escape(a) for a in (*CURVE_COLUMNS, *STEP_ALIASES))
    + r')\s*(?:["\s,;:]|$)', re.IGNORECASE)


def _where(path: Path) -> str:
    """The path as messages quote it (long paths shortened in the middle)."""
    return shorten(path, PATH_LIMIT)


def is_table_file(path: Path) -> bool:
    """True when the file's name says it is a table we read (used when walking a folder)."""
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return name.endswith(TABLE_SUFFIXES) and not name.startswith(".")


def is_log_file(path: Path) -> bool:
    """True for a ``.log`` (``.out``) file holding a trainer's console metrics (folder walks)."""
    name = path.name.lower().removesuffix(".gz")
    if not name.endswith(LOG_SUFFIXES) or name.startswith("."):
        return False
    try:
        return sniff(path) == "console"
    except InputError:
        return False


def _suffix(path: Path) -> str:
    """The suffix that says what a file holds, lower case, a ``.gz`` after it passed over."""
    return Path(path.name.lower().removesuffix(".gz")).suffix


def _open_bytes(path: Path, n: int | None = None) -> bytes:
    with open(path, "rb") as fh:
        head = fh.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        return fh.read() if n is None else fh.read(n)


def _utf8(data: bytes) -> bytes:
    """Text bytes as UTF-8 without a byte-order mark (UTF-16 with a mark is converted)."""
    if data.startswith(_UTF8_BOM):
        return data[len(_UTF8_BOM):]
    if data.startswith(_UTF16_BOMS):
        return data.decode("utf-16", errors="replace").encode("utf-8")
    return data


def sniff(path: Path) -> str:
    """The format of a file from its first bytes: parquet, jsonl, json, monitor, console, csv,
    ``csv;`` (semicolons) or tsv."""
    try:
        head = _open_bytes(path, 65536)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"{_where(path)}: cannot be read ({exc})") from None
    if head.startswith(b"PAR1"):
        return "parquet"
    head = _utf8(head)
    if b"\x00" in head[:4096]:
        raise NoCurvesError(_where(path), "not a table file we can read (binary content)")
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if not stripped:
        raise NoCurvesError(_where(path), "is empty")
    if stripped.startswith("{"):
        return "jsonl"
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("#{"):
        return "monitor"
    if looks_like_console_log(text):
        return "console"
    first = stripped.splitlines()[0]
    if first.count("\t") > 0 and first.count("\t") >= first.count(","):
        return "tsv"
    try:
        dialect = csv.Sniffer().sniff(first, delimiters=",;\t")
        return "tsv" if dialect.delimiter == "\t" else ("csv" if dialect.delimiter == "," else "csv;")
    except csv.Error:
        return "csv"


def _read_raw(path: Path, kind: str) -> pd.DataFrame:
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        head = _open_bytes(path, 3)
        if kind in ("csv", "tsv", "csv;") and not head.startswith(_UTF16_BOMS):
            # Straight from the file, so its bytes are never all in memory at once.
            with open(path, "rb") as fh:
                gz = fh.read(2) == b"\x1f\x8b"
            fast = None if head.startswith(_UTF8_BOM) else read_plain_csv(path, _SEPARATORS[kind], gzipped=gz)
            if fast is not None:
                return fast
            # Decoding that drops a byte-order mark reads each byte in Python: only when there is one.
            return pd.read_csv(path, sep=_SEPARATORS[kind], comment=None, low_memory=False,
                               compression="gzip" if gz else None,
                               encoding="utf-8-sig" if head.startswith(_UTF8_BOM) else "utf-8")
        data = _utf8(_open_bytes(path))
        if kind in ("jsonl", "json"):
            return _read_json(data, path)
        if kind == "monitor":
            return _read_monitor(data, path)
        if kind == "console":
            return read_console_log(data.decode("utf-8", errors="replace"), path)
        return pd.read_csv(io.BytesIO(data), sep=_SEPARATORS[kind], comment=None, low_memory=False)
    except InputError:
        raise
    except Exception as exc:  # pyarrow and friends raise their own types for corrupt files
        why = f"cannot be read as {kind.rstrip(';')} ({_why(exc)})"
        if _suffix(path) in _DATA_SUFFIXES or _names_curves(path):
            raise InputError(f"{_where(path)}: {why}") from None
        raise NoCurvesError(_where(path), f"{why}, and names no curve column") from None


def _names_curves(path: Path) -> bool:
    """Whether the first line of a file names a curve column (as a header or a JSON key)."""
    try:
        head = _utf8(_open_bytes(path, 65536)).decode("utf-8", errors="replace")
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return False
    return _NAMES_CURVES.search(head.lstrip().partition("\n")[0]) is not None


def _read_json(data: bytes, path: Path) -> pd.DataFrame:
    """JSON lines, or one JSON document: a list of records or series, or (in a ``.json`` file)
    one object, which holds curves only as series or as a point record with a ``value``."""
    if data.lstrip().startswith(b"["):
        return _json_records(json.loads(data), path)
    if _suffix(path) != ".json" or not _one_document(data):
        return pd.read_json(io.BytesIO(data), lines=True)
    try:
        doc = json.loads(data)
    except ValueError:  # lines after all (a first line longer than the head), or broken
        return pd.read_json(io.BytesIO(data), lines=True)
    if isinstance(doc, dict) and "$schema" in doc:
        raise NoCurvesError(_where(path), "holds no curves: a JSON Schema")
    if isinstance(doc, dict) and not _is_series(doc) \
            and not any(str(k).strip().lower() == "value" for k in doc):
        raise NoCurvesError(_where(path), "holds no curves: a JSON object that is neither a point "
                            "record (no value key) nor series (xs/ys lists); keys: "
                            f"{names_text(map(str, doc), most=5, limit=40)}")
    return _json_records(doc, path)


def _one_document(data: bytes) -> bool:
    """Whether ``data`` is one JSON value rather than lines of them (read from its first 64 KiB:
    a first value that does not end there is taken as the whole document)."""
    head = data[:65536].decode("utf-8", errors="replace").lstrip()
    try:
        _, end = json.JSONDecoder().raw_decode(head)
    except ValueError:
        return True
    return not head[end:].strip()


_SERIES_KEYS = (("xs", "ys"), ("steps", "values"), ("x", "y"))


def _is_series(record: dict) -> bool:
    return any(isinstance(record.get(x), list) and isinstance(record.get(y), list)
               for x, y in _SERIES_KEYS)


def _why(exc: BaseException) -> str:
    """The first line of an exception's text (its type when it has none), shortened."""
    text = str(exc).strip()
    return shorten(text.splitlines()[0] if text else type(exc).__name__, 120)


def _json_records(obj: object, path: Path) -> pd.DataFrame:
    """A JSON list of point records, or of series records ``{..., xs: [...], ys: [...]}``."""
    if isinstance(obj, dict):
        obj = [obj]
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise NoCurvesError(_where(path), "holds no curves: JSON must be a list of objects")
    for xk, yk in _SERIES_KEYS:
        if obj and all(isinstance(r.get(xk), list) and isinstance(r.get(yk), list) for r in obj):
            rows = []
            for i, rec in enumerate(obj):
                xs, ys = rec[xk], rec[yk]
                if len(xs) != len(ys):
                    raise InputError(
                        f"{_where(path)}: record {i} has {len(xs)} {xk} but {len(ys)} {yk}"
                    )
                meta = {k: v for k, v in rec.items() if k not in (xk, yk) and not isinstance(v, (list, dict))}
                run = rec.get("run") or "-".join(str(v) for v in meta.values()) or f"run{i}"
                frame = pd.DataFrame({"step": xs, "value": ys})
                frame["run"] = str(run)
                frame["metric"] = str(rec.get("metric", "score"))
                for k, v in meta.items():
                    if k not in ("run", "metric"):
                        frame[k] = v
                rows.append(frame)
            return pd.concat(rows, ignore_index=True)
    return pd.DataFrame.from_records(obj)


def _read_monitor(data: bytes, path: Path) -> pd.DataFrame:
    """A stable-baselines3 Monitor file: episode return and length against environment steps."""
    lines = data.decode("utf-8").splitlines()
    meta = {}
    with contextlib.suppress(json.JSONDecodeError, IndexError):
        meta = json.loads(lines[0][1:])
    df = pd.read_csv(io.StringIO("\n".join(lines[1:])))
    if not {"r", "l"} <= set(df.columns):
        raise InputError(
            f"{_where(path)}: a Monitor file needs columns r and l, found {names_text(df.columns)}"
        )
    env_steps = pd.to_numeric(df["l"], errors="coerce").cumsum()
    step = np.arange(len(df))
    out = [pd.DataFrame({"metric": metric, "step": step, "compute": env_steps, "value": df[col],
                         "timestamp": df.get("t")})
           for metric, col in (("episode_return", "r"), ("episode_length", "l"))]
    res = pd.concat(out, ignore_index=True)
    if meta.get("env_id"):
        res["env_id"] = meta["env_id"]
    return res


def _find(columns: list[str], aliases: tuple[str, ...], path: Path) -> str | None:
    """The column named by the first alias found (ignoring case); two such columns are refused."""
    for a in aliases:
        hits = [c for c in columns if c.lower() == a]
        if len(hits) > 1:
            raise InputError(
                f"{_where(path)}: columns {names_text(map(repr, hits))} differ only in case and "
                f"would all be read as {a!r}; rename or drop all but one"
            )
        if hits:
            return hits[0]
    return None


def _check_names(df: pd.DataFrame, path: Path) -> None:
    """Refuse columns whose names are the same once surrounding spaces are trimmed."""
    names = [str(c) for c in df.columns]
    trimmed = [n.strip() for n in names]
    if len(set(trimmed)) == len(trimmed):
        return
    seen: dict[str, list[str]] = {}
    for n, t in zip(names, trimmed, strict=True):
        seen.setdefault(t, []).append(n)
    clash = next(v for v in seen.values() if len(v) > 1)
    raise InputError(
        f"{_where(path)}: columns {names_text(map(repr, clash))} have the same name once "
        "surrounding spaces are trimmed; rename or drop all but one"
    )


def _is_wandb(df: pd.DataFrame, path: Path) -> bool:
    cols = [str(c) for c in df.columns]
    hits = [c for c in cols if _WANDB_COL.match(c)]
    return bool(hits) and len(hits) >= len(cols) - 2 and _find(cols, STEP_ALIASES, path) is not None


def _from_wandb(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    step_col = _find(list(map(str, df.columns)), STEP_ALIASES, path)
    parts = []
    for col in df.columns:
        m = _WANDB_COL.match(str(col))
        if not m or m.group("agg"):
            continue
        parts.append(pd.DataFrame({"run": m.group("run"), "metric": m.group("metric"),
                                   "step": df[step_col], "value": df[col]}))
    if not parts:
        return pd.DataFrame(columns=["run", "metric", "step", "value"])
    out = pd.concat(parts, ignore_index=True)
    # W&B leaves a cell empty where a run did not log that metric at that step: not a NaN value.
    return out[out["value"].notna()]


def _normalise_columns(df: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, str | None]:
    """Map aliases to the tidy names; return the frame and the name of the compute axis."""
    cols = [str(c).strip() for c in df.columns]
    ren: dict[str, str] = {}
    for want in ("metric", "value", "compute", "experiment", "run_id", "run_status"):
        c = _find(cols, (want,), path)
        if c is not None and c != want:
            ren[c] = want
    for aliases, want in ((STEP_ALIASES, "step"), (RUN_ALIASES, "run"),
                          (TIME_ALIASES, "timestamp")):
        c = _find(cols, aliases, path)
        if c is not None and c not in ren:
            ren[c] = want
    axis = None
    if "step" not in ren.values() and "compute" not in ren.values() and "compute" not in cols:
        axis = _compute_column(df, cols, taken=set(ren))
        if axis is not None:
            ren[axis] = "compute"
    names = [ren.get(c, c) for c in cols]
    _check_near_misses(cols, names, path)
    if names != list(df.columns):
        df = df.set_axis(names, axis=1)
    name = axis or ("compute" if "compute" in df.columns else None)
    return df, name


#: Column names a table is read by: a column one letter away from one of them (``vaule``,
#: ``metirc``) is a slip, not a metric or run parameter of its own.
_READ_BY = ("metric", "value", "step", "compute", "run_id", "experiment", "timestamp")


def _check_near_misses(cols: list[str], names: list[str], path: Path) -> None:
    """Refuse a column one edit from a name the table is read by and lacks: ``vaule`` would
    silently become a metric, ``metirc`` a run parameter. Plurals (``values``) are meant."""
    for col, name in zip(cols, names, strict=True):
        low = col.lower()
        if name != col or low in _READ_BY:
            continue
        for known in _READ_BY:
            if known not in names and low != known + "s" and _one_edit(low, known):
                what = {"value": "a metric of its own", "metric": "a run parameter"}.get(
                    known, "a column of its own")
                raise InputError(
                    f"{_where(path)}: column {col!r} looks like a misspelt {known!r}, which this "
                    f"table lacks: did you mean {known!r}? Rename the column (as it is, it would "
                    f"be read as {what})")


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a != b`` is one letter added, dropped or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1:]


def _compute_column(df: pd.DataFrame, cols: list[str], taken: set[str]) -> str | None:
    """For a table with neither step nor compute column, the best-ranked numeric column that
    measures compute (:func:`~saturate.vocabulary.names.axis_quantity`), else None. ``cols``:
    ``df``'s stripped column names, in order."""
    found = [(q.rank, i, c) for i, c in enumerate(cols)
             if c not in taken and (q := axis_quantity(c)) is not None and q.compute]
    for _, i, c in sorted(found):
        if is_numeric(df.iloc[:, i]):
            return c
    return None


def read_table_file(path: str | Path, *, source: str | None = None, split: bool = False) -> Table:
    """Read one file into a :class:`~saturate.table.table.Table`.

    ``split``: take the run-level columns once per run as the points are tidied (``False``: the
    plain path, via every point; the same table)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{_where(path)}: no such file or directory")
    if not path.is_file():
        raise InputError(f"{_where(path)}: not a file")
    points, name, compute_name = _points(path)
    frame = points.frame.assign(source=constant_column(source or str(path), len(points.frame)))
    tidied = tidy_points(frame, compute_name=compute_name or name, origin=str(path))
    return with_facts(points, tidied, split)


def _without_axis(frame: pd.DataFrame, path: Path, kind: str) -> InputError:
    """The error of a table with no x axis: curve data that lacks it (a ``value`` column, or a
    numeric one in a CSV/TSV file), or a table that holds no curves (see the module docstring)."""
    found = names_text(frame.columns)
    delimited = kind in _SEPARATORS and _suffix(path) in (".csv", ".tsv")
    if "value" in frame.columns or (delimited and any(
            is_numeric(frame.iloc[:, i]) for i in range(frame.shape[1]))):
        return InputError(f"{_where(path)}: missing column(s) step (or metric and value); "
                          f"found {found}")
    lacks = "no numeric column, and " if delimited else ""
    return NoCurvesError(_where(path), f"holds no curves: {lacks}no step, compute or value column "
                         f"(found {found})")


def _points(path: Path) -> tuple[Points, str | None, str | None]:
    """The points of the file, its compute column's name and the x axis its reader names (the
    raw table is let go on return, before the tidy table is built)."""
    kind = sniff(path)
    raw = _read_raw(path, kind)
    if raw.empty or len(raw.columns) == 0:
        raise NoCurvesError(_where(path), "holds no rows")
    named = [not str(c).startswith("Unnamed: ") for c in raw.columns]
    raw = plain_cells(raw if all(named) else raw.loc[:, named])
    _check_names(raw, path)
    if _is_wandb(raw, path):
        points = split_facts(_from_wandb(raw, path))
        name = None
    else:
        frame, name = _normalise_columns(raw, path)
        if "metric" in frame.columns and "value" in frame.columns:
            points = long_points(frame, path)
        elif "value" in frame.columns and ("step" in frame.columns or "compute" in frame.columns):
            points = long_points(frame.assign(metric=constant_column("value", len(frame))), path)
        else:
            if "step" not in frame.columns and "compute" not in frame.columns:
                raise _without_axis(frame, path, kind)
            points = wide_points(frame, path)
    return points, name, "env_steps" if kind == "monitor" else None
