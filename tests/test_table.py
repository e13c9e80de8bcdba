"""The Table: what ``saturate.load`` returns and every stage takes (points, run facts, x axis).

The x axis is decided once, as the sources are read (``--gpus`` included), and travels in the
Table, never in ``DataFrame.attrs`` (which pandas drops on many operations).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

import saturate
from saturate.table import Table, concat_tables

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_runs" / "08_recipe_comparison.csv"


def _timed() -> pd.DataFrame:
    """Two runs logged every half hour of wall time, on 8 and 4 GPUs."""
    steps = np.arange(1, 41)
    rows = [pd.DataFrame({"run": run, "metric": "train/reward", "step": steps,
                          "value": 1 - 0.5 * (1 + 0.2 * steps) ** -0.7 + 0.001 * np.sin(steps),
                          "timestamp": t0 + steps * 1800.0, "params.n_gpus": gpus})
            for run, t0, gpus in (("a", 1.7e9, "8"), ("b", 1.8e9, "4"))]
    return pd.concat(rows, ignore_index=True)


def test_load_gives_the_points_the_runs_and_the_axis() -> None:
    table = saturate.load(SAMPLE)
    assert isinstance(table, Table) and len(table) == len(table.points) > 0
    assert not any(c.startswith("params.") for c in table.points.columns)
    runs = table.points[["source", "run_id"]].drop_duplicates()
    assert len(table.runs) == len(runs) and "params.recipe" in table.runs.columns
    wide = table.to_frame()
    assert "params.recipe" in wide.columns and len(wide) == len(table)
    assert table.axis.name == "compute"
    assert repr(table).startswith(f"<Table: {len(table):,} points, {len(runs)} runs")
    assert Table.of(wide).runs.equals(table.runs)


def test_analyze_takes_the_table_its_source_or_a_frame_built_by_hand() -> None:
    kw = {"n_boot": 20, "workers": 1, "metric": "eval/*"}
    from_path = saturate.analyze(SAMPLE, **kw)
    from_table = saturate.analyze(saturate.load(SAMPLE), **kw)
    assert from_table.to_dict() == from_path.to_dict()
    by_hand = saturate.analyze(_timed(), n_boot=20, workers=1, diagnostics=False)
    assert by_hand.axis.is_steps and len(by_hand.curves) == 2


def test_gpu_hours_are_decided_in_ingest_once() -> None:
    table = saturate.load(_timed(), gpus="n_gpus")
    assert table.axis.is_gpu_hours and table.axis.note.startswith("GPU-hours from wall time")
    a = table.points[table.points["run"] == "a"]
    assert np.allclose(a["compute"].to_numpy(), 0.5 * 8 * (a["step"].to_numpy() - 1))
    kw = {"n_boot": 20, "workers": 1, "diagnostics": False}
    read_here = saturate.analyze(_timed(), gpus="n_gpus", **kw)
    read_before = saturate.analyze(table, **kw)
    assert read_before.axis == read_here.axis
    assert [c.to_dict() for c in read_before.curves] == [c.to_dict() for c in read_here.curves]


def test_concat_keeps_the_runs_and_joins_the_axes() -> None:
    one = saturate.load(_timed())
    points = one.points
    parts = [one.with_points(points[points["run"] == r]) for r in ("a", "b")]
    both = concat_tables(parts)
    pd.testing.assert_frame_equal(both.points, points)
    assert both.axis.name == "step" and len(both.runs) == 2


def test_no_stage_keeps_anything_in_dataframe_attrs() -> None:
    found = []
    for path in sorted((ROOT / "saturate").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "attrs":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
