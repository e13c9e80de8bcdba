"""The Arrow CSV reader gives exactly pandas.read_csv's table, or declines (None) and pandas reads."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saturate.ingest.arrow_csv import read_plain_csv

SAME = {
    "numbers": "step,value,n\n1,0.5,3\n2,0.25,4\n3,-1e-3,5\n",
    "missing spellings": "step,value,note\n1,NaN,a\n2,,b\n3,nan,\n4,NA,None\n5,null,N/A\n6,#N/A,<NA>\n7,0.5,c\n",
    "infinities": "step,value\n1,inf\n2,-inf\n3,Inf\n4,1.5\n",
    "booleans": "step,done,flag\n1,True,false\n2,FALSE,true\n3,true,TRUE\n",
    "quoted text": 'run,step,value\n"a, b",1,0.5\n"say ""hi""",2,0.7\n',
    "unicode": "run,step,value\nélan,1,0.5\n走,2,0.6\n",
    "big and small": "step,value\n9007199254740993,1e308\n-9223372036854775808,5e-324\n",
    "ints with gaps": "step,value,k\n1,0.5,3\n2,0.6,\n3,0.7,5\n",
    "mixed text and numbers": "step,value,tag\n1,0.5,1\n2,0.6,x\n3,0.7,2.5\n",
    "spaces": "step,value,name\n1, 0.5, a\n2,0.6 ,b \n",
    "quoted line break": 'run,step,value\n"a\nb",1,0.5\n"c",2,0.6\n',
}

DECLINED = {
    "date column": "step,value,when\n1,0.5,2024-01-01\n2,0.6,2024-01-02\n",
    "timestamp column": "step,value,when\n1,0.5,2024-01-01 10:00:00\n2,0.6,2024-01-02 11:00:00\n",
    "duplicate names": "step,value,value\n1,0.5,0.6\n",
    "empty name": "step,,value\n1,2,0.5\n",
    "boolean with a gap": "step,done\n1,True\n2,\n3,False\n",
    "ragged row": "step,value\n1,0.5\n2,0.6,7\n",
    "short row": "step,value,k\n1,0.5,1\n2,0.6\n",
    "no rows": "step,value\n",
    "all missing column": "step,value,k\n1,0.5,\n2,0.6,\n",
    "bad utf-8": b"run,step,value\n\xff\xfe,1,0.5\n",
}


def _write(tmp_path: Path, text: str | bytes, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _agrees(path: Path, sep: str = ",", gz: bool = False) -> pd.DataFrame | None:
    fast = read_plain_csv(path, sep, gzipped=gz)
    if fast is not None:
        pd.testing.assert_frame_equal(fast, pd.read_csv(path, sep=sep, compression="gzip" if gz else None))
    return fast


@pytest.mark.parametrize("name", sorted(SAME))
def test_plain_files_read_as_pandas_reads_them(tmp_path: Path, name: str) -> None:
    assert _agrees(_write(tmp_path, SAME[name])) is not None or name in {"mixed text and numbers", "spaces"}


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_files_pandas_reads_differently_are_declined(tmp_path: Path, name: str) -> None:
    assert read_plain_csv(_write(tmp_path, DECLINED[name]), ",", gzipped=False) is None


def test_tab_and_semicolon_separators_and_gzip(tmp_path: Path) -> None:
    text = "step\tvalue\trun\n1\t0.5\ta\n2\t0.7\tb\n"
    assert _agrees(_write(tmp_path, text, "t.tsv"), "\t") is not None
    assert _agrees(_write(tmp_path, text.replace("\t", ";"), "s.csv"), ";") is not None
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(SAME["numbers"].encode()))
    assert _agrees(gz, gz=True) is not None


def test_real_curves_file_reads_identically() -> None:
    path = Path(__file__).parent / "data"
    files = sorted(path.rglob("*.csv"))
    assert files, "tests/data holds CSV files"
    assert any(_agrees(f) is not None for f in files)


_CELLS = st.one_of(
    st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(), st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]),
                                      max_size=6),
    st.sampled_from(["NaN", "nan", "None", "NA", "", "inf", "-inf", "True", "false", "1.0", " 2"]),
)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_CELLS, min_size=3, max_size=3), min_size=1, max_size=12),
       st.sampled_from([0, 1, 2]))
def test_any_table_is_read_as_pandas_reads_it_or_declined(tmp_path: Path, rows: list[list[object]],
                                                          uniform: int) -> None:
    """Random cells written by pandas: the fast reader matches pandas.read_csv or says None."""
    if uniform:  # one type per column, as real logs have
        rows = [[rows[0][j] if isinstance(rows[0][j], type(c)) else c for j, c in enumerate(r)] for r in rows]
    frame = pd.DataFrame(rows, columns=["a", "b", "c"], dtype=object)
    path = tmp_path / "h.csv"
    frame.to_csv(path, index=False)
    _agrees(path)


def test_a_wide_float_table_reads_identically(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"step": np.arange(2000), "value": rng.normal(size=2000) * 1e3,
                          "run": rng.choice(["a", "b", "c"], 2000)})
    path = tmp_path / "w.csv"
    frame.to_csv(path, index=False)
    assert _agrees(path) is not None
