"""Raw cells made clean before the tidy table is built: any cell into hashable text or a float.

:func:`plain_cells` makes every cell hashable (lists, dicts, bytes), :func:`text_codes` gives an
identifying column as integer codes, :func:`as_numeric` a value column as floats. Columns whose
equal values come together (a run's rows) are compared with their neighbours before anything is
hashed (:func:`differs`, :func:`distinct`, :func:`grouped_factorize`).
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, shorten

__all__ = ["plain_cells", "text_codes", "TextCodes", "spread_texts", "distinct", "differs",
           "grouped_codes", "grouped_factorize", "as_numeric", "Uniques"]

#: The distinct values ``pandas.factorize`` gives: a numpy array, or pandas' own array of them.
Uniques: TypeAlias = np.ndarray | pd.api.extensions.ExtensionArray

#: Column kinds (``pandas.api.types.infer_dtype``) whose cells are plain, hashable scalars.
_PLAIN_KINDS = frozenset({
    "string", "floating", "integer", "mixed-integer-float", "decimal", "boolean", "empty",
    "datetime64", "datetime", "date", "timedelta64", "timedelta", "time", "period", "categorical",
})


def plain_cells(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with cells that are lists, dicts, arrays, bytes or complex numbers turned into text
    (JSON for containers, UTF-8 for bytes), so every cell can be grouped and compared. Columns of
    plain scalars are left untouched (and uncopied)."""
    fixed = {}
    for i, dtype in enumerate(df.dtypes):
        if not (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_complex_dtype(dtype)):
            continue  # plain scalars by their type: not looked into
        col = df.iloc[:, i]
        if col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) not in _PLAIN_KINDS:
            fixed[i] = col.map(_plain_cell)
        elif pd.api.types.is_complex_dtype(col.dtype):
            fixed[i] = col.astype(str)
    if not fixed:
        return df
    out = df.copy()
    for i, col in fixed.items():
        out.isetitem(i, col)
    return out


def _plain_cell(v: object) -> object:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).decode("utf-8", errors="backslashreplace")
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple, dict, set, frozenset)):
        return json.dumps(list(v) if isinstance(v, (set, frozenset)) else v, default=str)
    if isinstance(v, complex):
        return str(v)
    return v


def _text_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(each row's code, the text of each code): missing values are the last code, ``""``; a
    categorical column gives its own codes (no pass over the rows)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes, uniques = col.array.codes, col.cat.categories  # a view: not copied
    else:
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
    names = np.array([str(u) for u in uniques] + [""], dtype=object)
    # Categorical codes stay in their small integer type (index with them, ``names[codes]``:
    # numpy's take converts such indices slowly).
    return (np.where(codes < 0, len(uniques), codes) if len(codes) and codes.min() < 0 else codes), names


def text_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, texts, ranks)``: each row's code, the text of each code (missing: ``""``) and
    its rank among the sorted texts (1 and "1" share one), so rows are sorted on integers and
    the text column built once, at the end: ``texts[codes]``."""
    codes, names = _text_codes(col)
    _, rank = np.unique(names, return_inverse=True)
    return codes, names, rank.reshape(-1)


@dataclass(frozen=True)
class TextCodes:
    """An identifying column as codes (:func:`text_codes`): each row's code, the text of each
    code and its rank."""

    codes: np.ndarray
    names: np.ndarray
    rank: np.ndarray

    def row_ranks(self) -> np.ndarray:
        """Each row's rank: the codes themselves when they already sort as their texts do."""
        r, last = self.rank, len(self.rank) - 1
        if last >= 1 and bool((r[1:last] > r[:last - 1]).all()) and not (self.codes == last).any():
            return self.codes
        return self.rank[self.codes]

    @property
    def constant(self) -> bool:
        """Whether every row has the same code (such a key orders and groups nothing)."""
        c = self.codes
        return len(self.names) <= 2 and (not len(c) or bool((c == c[0]).all()))


def spread_texts(texts: dict[str, TextCodes], rows: np.ndarray | None) -> dict[str, np.ndarray]:
    """Each text column's text at ``rows`` (``None``: all), ``names[codes]``; a column given
    twice is spread once. The columns share one block of memory (huge pages where the system
    offers them, rather than a page fault per 4 KiB per column)."""
    seen: list[TextCodes] = []
    for t in texts.values():
        if not any(t is d for d in seen):
            seen.append(t)
    first = seen[0].codes
    block = np.empty((len(seen), len(first) if rows is None else len(rows)), dtype=object)
    for out, t in zip(block, seen, strict=True):
        codes = t.codes if rows is None else t.codes[rows]
        starts = _stretches(codes)
        if starts is None:
            out[:] = t.names[codes]
            continue
        # Few stretches of one code (the rows of a run or curve are together): each filled
        # with its name, several times cheaper than indexing the names per row.
        names = t.names[codes[starts]].tolist()
        for name, s, e in zip(names, starts.tolist(), [*starts[1:].tolist(), len(codes)], strict=True):
            out[s:e] = name
    return {c: block[next(i for i, d in enumerate(seen) if d is t)] for c, t in texts.items()}


def _stretches(codes: np.ndarray) -> np.ndarray | None:
    """The first row of each stretch of equal ``codes``, when there are few of them (at most one
    in 64 rows); else ``None``."""
    n = len(codes)
    change = np.flatnonzero(codes[1:] != codes[:-1]) if n else None
    if change is None or (len(change) and len(change) >= n // 64):
        return None
    return np.r_[0, change + 1]


def distinct(col: pd.Series | np.ndarray) -> np.ndarray:
    """``pandas.unique(col)``, hashing only the rows of an object column where the value changes
    (:func:`differs`)."""
    values = col.to_numpy() if isinstance(col, pd.Series) else np.asarray(col)
    if values.dtype == object and len(values) > 1:
        try:
            changes = np.flatnonzero(np.r_[True, differs(values)])
        except (TypeError, ValueError):  # cells that do not compare: hash them all
            return pd.unique(values)
        return pd.unique(values[changes])
    return pd.unique(col)


def differs(values: np.ndarray) -> np.ndarray:
    """``values[1:] != values[:-1]`` as booleans. An object array is compared by identity first
    and by value only where the object changes (a tidy table's text columns point at one object
    per distinct text). Identical objects count as equal, a repeated NaN object included."""
    if values.dtype != object or len(values) < 2:
        return np.asarray(values[1:] != values[:-1], dtype=bool)
    values = np.ascontiguousarray(values)
    # The array's cells are object pointers: read as integers (a view, no reference taken).
    cells = (ctypes.c_ssize_t * len(values)).from_address(values.ctypes.data)
    address = np.frombuffer(memoryview(cells), dtype=np.intp)
    out = address[1:] != address[:-1]
    at = np.flatnonzero(out)
    if len(at):
        out[at] = np.asarray(values.take(at + 1) != values.take(at), dtype=bool)
    return out


def grouped_codes(col: pd.Series | np.ndarray, *, use_na_sentinel: bool = True) -> np.ndarray:
    """``pandas.factorize(col, use_na_sentinel=...)[0]``: see :func:`grouped_factorize`."""
    return grouped_factorize(col, use_na_sentinel=use_na_sentinel)[0]


def grouped_factorize(col: pd.Series | np.ndarray, *, use_na_sentinel: bool = True
                      ) -> tuple[np.ndarray, Uniques]:
    """``pandas.factorize(col, use_na_sentinel=...)``, hashing only the rows whose value differs
    from the row before; the codes may come in a smaller integer type than pandas gives."""
    n = len(col)
    array = col.array if isinstance(col, pd.Series) else col
    if n < 64:
        return pd.factorize(array, use_na_sentinel=use_na_sentinel)
    try:
        if isinstance(array, pd.api.extensions.ExtensionArray):
            same = array[1:] == array[:-1]  # missing: pd.NA (a masked result) or False
            if isinstance(same, pd.api.extensions.ExtensionArray):
                same = same.to_numpy(dtype=bool, na_value=False)
            change = ~np.asarray(same, dtype=bool)
        else:
            change = differs(np.asarray(array))
    except (TypeError, ValueError):  # cells that do not compare: hash them all
        return pd.factorize(array, use_na_sentinel=use_na_sentinel)
    starts = np.flatnonzero(np.r_[True, change]) if change.shape == (n - 1,) else None
    if starts is None or len(starts) > n // 4:  # hardly grouped: the comparison did not pay
        return pd.factorize(array, use_na_sentinel=use_na_sentinel)
    codes, uniques = pd.factorize(array.take(starts), use_na_sentinel=use_na_sentinel)
    # In the smallest integer type that holds them (and -1): a fraction of the memory per row.
    small = next(t for t in (np.int8, np.int16, np.int32, np.int64) if len(uniques) < np.iinfo(t).max)
    return np.repeat(codes.astype(small, copy=False), np.diff(np.r_[starts, n])), uniques


def as_numeric(col: pd.Series, name: str, origin: str) -> pd.Series:
    """Convert a column to float; non-numeric text is an error that names the column."""
    if pd.api.types.is_bool_dtype(col) or (pd.api.types.is_numeric_dtype(col)
                                           and not pd.api.types.is_complex_dtype(col)):
        return col.astype(float)
    out = pd.to_numeric(col, errors="coerce")
    bad = out.isna() & col.notna()
    if bad.any():
        text = col.astype(object)
        # Spellings of NaN/inf that loggers write are fine; anything else is not a number.
        words = text[bad].astype(str).str.strip().str.lower()
        known = words.isin({"nan", "inf", "+inf", "-inf", "infinity", "-infinity", "", "none", "null"})
        if not known.all():
            sample = text[bad][~known.to_numpy()].iloc[0]
            raise InputError(f"{shorten(origin, PATH_LIMIT)}: column {name!r} is not numeric "
                             f"(found {shorten(repr(str(sample)))})")
        out = out.copy()
        out[bad] = pd.to_numeric(words.replace({"+inf": "inf", "infinity": "inf",
                                                "-infinity": "-inf"}), errors="coerce")
    return out.astype(float)
