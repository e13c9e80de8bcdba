"""Plain CSV and TSV files read with Arrow's multithreaded reader, where it gives the table
``pandas.read_csv`` would (several times faster on a few cores).

Arrow's result is taken only when every column is plain numbers, gap-free booleans or text under
distinct, non-empty names; anything else returns ``None`` and pandas reads the file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

#: ``pandas.read_csv``'s default missing-value spellings (its documentation lists them).
_PANDAS_NA = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
              "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
_TRUE, _FALSE = ["True", "TRUE", "true"], ["False", "FALSE", "false"]
#: Plain files up to this size are read into memory whole, to see whether they quote any cell.
_WHOLE_BYTES = 64 << 20


def read_plain_csv(path: Path, sep: str, *, gzipped: bool) -> pd.DataFrame | None:
    """The table of the CSV file at ``path`` (fields split on ``sep``), or ``None`` when Arrow
    cannot tell it would match pandas (see the module docstring)."""
    try:
        if not gzipped and path.stat().st_size <= _WHOLE_BYTES:
            with pa.OSFile(str(path)) as fh:  # into Arrow's memory pool, which keeps its pages
                data = fh.read_buffer()
            # A file without a quote holds no quoted newline: Arrow then splits it into parts
            # for its threads without reading it through for quotes first.
            source, quoted = pa.BufferReader(data), _has_quote(data)
        else:
            source, quoted = pa.input_stream(str(path), compression="gzip" if gzipped else None), True
        with source as stream:
            table = pacsv.read_csv(
                stream,
                parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=quoted),
                convert_options=pacsv.ConvertOptions(
                    null_values=_PANDAS_NA, strings_can_be_null=True, true_values=_TRUE,
                    false_values=_FALSE, timestamp_parsers=[], column_types=None,
                ),
            )
    except (pa.ArrowException, OSError, ValueError):
        return None
    names = table.column_names
    if not table.num_rows or len(set(names)) != len(names) or not all(n.strip() for n in names):
        return None
    for column in table.columns:
        kind = column.type
        plain = (pa.types.is_int64(kind) or pa.types.is_float64(kind) or pa.types.is_string(kind)
                 or pa.types.is_large_string(kind) or (pa.types.is_boolean(kind) and not column.null_count))
        if not plain:
            return None
    return table.to_pandas()


def _has_quote(data: pa.Buffer) -> bool:
    """Whether the bytes hold a ``"`` (searched in place with numpy 2, else in a copy)."""
    strings = getattr(np, "strings", None)
    if strings is None or not data.size:
        return b'"' in data.to_pybytes()
    return int(strings.find(np.frombuffer(data, dtype=f"S{data.size}"), b'"')[0]) >= 0
