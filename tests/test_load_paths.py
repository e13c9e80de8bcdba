"""The fast paths of loading give what the plain ones give.

Files are read with their run facts kept apart (``read_table_file(split=True)``, the path
``saturate.load`` takes) or on every point first (``split=False``, moved apart afterwards by
:meth:`saturate.Table.of`): both must give the same points and the same run facts,
whatever the order, duplicates and gaps of the rows. The helpers that replaced pandas
calls (``distinct``, the sorted fast path of ``merge_facts``, the first-rows shortcut of
``is_numeric``) are checked against the calls they replaced.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from saturate.ingest.files import read_table_file
from saturate.ingest.layouts import is_numeric
from saturate.table.cells import distinct
from saturate.table.curves import tidy
from saturate.table.run_table import merge_facts, run_count


def _table(layout: str, seed: int) -> pd.DataFrame:
    """Runs named ``1``/``2`` across algorithms, shuffled rows, repeated and missing steps,
    missing values and parameters, a status and timestamps."""
    rng = np.random.default_rng(seed)
    n = 300
    df = pd.DataFrame({
        "run": rng.choice(["1", "2"], n),
        "algo": rng.choice(["ppo", "sac", None], n),
        "lr_text": rng.choice(["lr1e-3", "lr3e-4"], n),
        "step": rng.integers(0, 40, n),
        "timestamp": rng.integers(0, 5, n).astype(float),
        "run_status": rng.choice(["FINISHED", "RUNNING"], n),
    })
    if layout == "wide":
        df["reward"] = np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n))
        df["loss"] = np.where(rng.random(n) < 0.3, np.nan, rng.normal(size=n))
        df["episodes"] = rng.integers(0, 9, n)
    else:
        df["metric"] = rng.choice(["reward", "eval/acc"], n)
        df["value"] = np.where(rng.random(n) < 0.1, np.inf, rng.normal(size=n))
        df["seed"] = rng.integers(0, 3, n)
    return df


@pytest.mark.filterwarnings("ignore::saturate.table.curves.DataWarning")
@pytest.mark.parametrize("layout", ["wide", "long"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_facts_kept_apart_are_those_split_from_every_point(
    tmp_path: Path, layout: str, seed: int, suffix: str
) -> None:
    path = tmp_path / f"runs{suffix}"
    df = _table(layout, seed)
    if suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        df.to_json(path, orient="records", lines=True)
    apart = read_table_file(path, split=True)
    split = read_table_file(path, split=False)
    pd.testing.assert_frame_equal(apart.points, split.points, check_exact=True)
    pd.testing.assert_frame_equal(apart.runs, split.runs, check_exact=True)
    assert len(apart.runs) == run_count(apart.points) > 2


def test_tidy_reads_categorical_names_as_their_text() -> None:
    raw = pd.DataFrame({"run": [2, 1, 2, 1, np.nan], "metric": ["b", "a", "a", "b", "a"],
                        "step": [0, 0, 1, 1, 0], "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    coded = raw.assign(run=pd.Categorical(raw["run"]), metric=pd.Categorical(raw["metric"]))
    pd.testing.assert_frame_equal(tidy(coded), tidy(raw), check_exact=True)


@pytest.mark.parametrize("values", [
    ["b", "b", "a", np.nan, np.nan, "a", None, "c", "b"],
    [1, 1.0, True, "1", 1, 0.0, -0.0],
    [],
    ["x"],
])
def test_distinct_is_pandas_unique(values: list[object]) -> None:
    col = pd.Series(values, dtype=object)
    assert list(map(repr, distinct(col))) == list(map(repr, pd.unique(col)))


def test_merge_facts_sorted_or_not_gives_the_same_table() -> None:
    facts = pd.DataFrame({"source": ["s"] * 4, "run_id": ["a", "b", "c", "d"],
                          "params.lr": pd.array(["1", None, "3", "4"], dtype="str")})
    shuffled = facts.iloc[[2, 0, 3, 1, 0]].reset_index(drop=True)
    pd.testing.assert_frame_equal(merge_facts([facts]), merge_facts([shuffled]))
    assert merge_facts([facts])["params.lr"].dtype == object


def test_a_column_of_numbers_after_some_text_is_still_numeric() -> None:
    text_first = pd.Series(["n/a"] * 5 + [str(i) for i in range(200)], dtype="str")
    mostly_text = pd.Series(["n/a"] * 30 + [str(i) for i in range(200)], dtype="str")
    assert is_numeric(text_first)  # 5 of 205 are text: numbers
    assert not is_numeric(mostly_text)  # 30 of 230: not
