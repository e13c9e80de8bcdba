"""How the fast path fetches query results: through SQLAlchemy's DBAPI cursor (any backend), or
for sqlite through ADBC's Arrow columns when ``adbc-driver-sqlite`` is installed.

Point queries return bare numbers (step, value, is_nan, timestamp) as numpy columns, skipping
the per-row Python objects that dominate reading large histories.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from pathlib import Path

import numpy as np
import sqlalchemy as sa

from saturate.ingest.mlflow_common import MlflowSource

__all__ = ["Rows", "ArrowRows", "no_numbers", "row_reader"]


class Rows:
    """Runs the point queries through SQLAlchemy's DBAPI cursor (any backend)."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    def rows(self, stmt: sa.Select) -> list[tuple]:
        return [tuple(r) for r in self.conn.execute(stmt)]

    def numbers(self, stmt: sa.Select) -> tuple[np.ndarray, ...]:
        """(step, value, is_nan, timestamp) columns; rows skip SQLAlchemy's row processing."""
        result = self.conn.execute(stmt)
        try:
            raw = result.cursor.fetchall()
        finally:
            result.close()
        if not raw:
            return no_numbers()
        arr = np.asarray(raw, dtype=np.float64)  # steps and ms timestamps are exact below 2**53
        ts = np.nan_to_num(arr[:, 3], nan=0.0)  # a NULL timestamp arrives as NaN
        return arr[:, 0].astype(np.int64), arr[:, 1], arr[:, 2] != 0, ts.astype(np.int64)

    def close(self) -> None:
        pass


class ArrowRows(Rows):
    """The same for sqlite through ADBC, which hands columns over as Arrow arrays, skipping the
    per-row Python objects that dominate reading with the sqlite3 module (about 4x faster).
    Opened with ``mode=ro`` like the sqlite3 connection."""

    def __init__(self, conn: sa.Connection, path: Path) -> None:
        import adbc_driver_sqlite.dbapi as adbc  # only sqlite stores use it; ImportError is handled

        super().__init__(conn)
        uri = f"file:{urllib.parse.quote(str(Path(path).resolve()))}?mode=ro"
        self.adbc = adbc.connect(uri)

    def _table(self, stmt: sa.Select):  # noqa: ANN202 - a pyarrow.Table, or None
        """The query's result as Arrow; None (and the plain route from then on) if ADBC fails,
        e.g. on a column whose values do not fit the type ADBC inferred from the first rows."""
        if self.adbc is None:
            return None
        compiled = stmt.compile(
            dialect=self.conn.dialect, compile_kwargs={"render_postcompile": True}
        )
        params = compiled.construct_params()
        args = tuple(params[name] for name in compiled.positiontup or ())
        try:
            cur = self.adbc.cursor()
            try:
                cur.execute(str(compiled), args)
                return cur.fetch_arrow_table()
            finally:
                cur.close()
        except Exception:  # noqa: BLE001 - any ADBC failure: the sqlite3 route still works
            self.close()
            return None

    def rows(self, stmt: sa.Select) -> list[tuple]:
        table = self._table(stmt)
        if table is None:
            return super().rows(stmt)
        return list(zip(*(col.to_pylist() for col in table.columns), strict=True))

    def numbers(self, stmt: sa.Select) -> tuple[np.ndarray, ...]:
        table = self._table(stmt)
        if table is None:
            return super().numbers(stmt)
        if table.num_rows == 0:
            return no_numbers()
        step, value, is_nan, ts = (table.column(i).to_numpy() for i in range(4))
        ts = np.nan_to_num(np.asarray(ts, dtype=np.float64), nan=0.0)
        return (
            np.asarray(step, dtype=np.int64),
            np.asarray(value, dtype=np.float64),
            np.asarray(is_nan, dtype=np.float64) != 0,
            ts.astype(np.int64),
        )

    def close(self) -> None:
        if self.adbc is not None:
            with contextlib.suppress(Exception):
                self.adbc.close()
            self.adbc = None


def no_numbers() -> tuple[np.ndarray, ...]:
    return (np.empty(0, np.int64), np.empty(0), np.empty(0, bool), np.empty(0, np.int64))


def row_reader(conn: sa.Connection, src: MlflowSource, arrow: bool) -> Rows:
    if arrow and src.sqlite_path is not None:
        try:
            return ArrowRows(conn, src.sqlite_path)
        except Exception:  # noqa: BLE001 - ADBC missing or unable to open: the plain route works
            pass
    return Rows(conn)
