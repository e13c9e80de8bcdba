"""Reading part by part, run facts once per run: every reader's parts hold whole runs and add up
to the table read in one piece; the run facts (status, params, tags) sit in the side table, not on
every point; the analysis of a stream equals the analysis of the table. Real files, a real MLflow
sqlite store and file store, real TensorBoard event files."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthetic_store import synthetic_runs, write_store

import saturate
from saturate.errors import InputError
from saturate.ingest import Tables, mlflow_db
from saturate.table import Table, concat_tables
from saturate.table.curves import DataWarning
from saturate.table.run_table import run_fact_columns, run_facts

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
RUNS, METRICS, STEPS = 24, 3, 200


@pytest.fixture
def store(mlflow_template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "sweep" / "mlflow.db"
    write_store(db, mlflow_template, synthetic_runs(RUNS, METRICS, STEPS, seed=3))
    return db


def _write_events(logdir: Path, tag: str, values: list[float]) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(logdir))
    for step, v in enumerate(values):
        summ = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=v)])
        writer.add_event(event_pb2.Event(wall_time=1000.0 + step, step=step * 10, summary=summ))
    writer.close()


def _parts(source, **kw) -> list[Table]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return list(Tables(source, **kw))


def _runs_of(part: pd.DataFrame) -> set[tuple[str, str]]:
    return set(map(tuple, part[["source", "run_id"]].drop_duplicates().to_numpy().tolist()))


def _whole_runs_adding_up(parts: list[Table], whole: Table) -> None:
    """No run is split between parts, and the parts together are the table read in one piece."""
    seen: set[tuple[str, str]] = set()
    for part in parts:
        assert not _runs_of(part.points) & seen
        seen |= _runs_of(part.points)
        assert not run_fact_columns(part.points)
    joined = concat_tables(parts)
    pd.testing.assert_frame_equal(joined.points, whole.points)
    pd.testing.assert_frame_equal(run_facts(joined.points, joined.runs), whole.runs)


# ---- every reader ------------------------------------------------------------------------------


def test_sqlite_store_is_read_a_few_runs_at_a_time(store: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mlflow_db, "POINT_CHUNK", 4 * METRICS * STEPS)
    monkeypatch.setattr(mlflow_db, "RUN_BATCH", 10)
    parts = _parts(store)
    assert len(parts) == 6 + 1  # runs 10 + 10 + 4, four at most a time
    assert max(len(p) for p in parts) <= 4 * METRICS * STEPS
    _whole_runs_adding_up(parts, saturate.load(store))
    facts = saturate.load(store).runs
    assert len(facts) == RUNS and set(facts["run_status"]) == {"FINISHED"}
    assert set(facts["params.recipe"]) == {"ppo", "grpo", "cispo"}


def test_csv_folder_is_read_a_file_at_a_time(tmp_path: Path) -> None:
    for i in range(3):
        steps = np.arange(20)
        pd.DataFrame({"run": f"r{i}", "metric": "reward", "step": steps, "value": steps / 20,
                      "recipe": f"rec{i % 2}"}).to_csv(tmp_path / f"run{i}.csv", index=False)
    parts = _parts(tmp_path)
    assert len(parts) == 3
    _whole_runs_adding_up(parts, saturate.load(tmp_path))
    assert saturate.load(tmp_path).runs["params.recipe"].tolist() == [
        "rec0", "rec1", "rec0"]


def test_tensorboard_logs_are_read_a_run_at_a_time(tmp_path: Path) -> None:
    _write_events(tmp_path / "logs" / "a", "train/reward", [i / 30 for i in range(30)])
    _write_events(tmp_path / "logs" / "b", "train/reward", [0.5] * 12)
    parts = _parts(tmp_path / "logs")
    assert [set(p.points["run"]) for p in parts] == [{"a"}, {"b"}]
    _whole_runs_adding_up(parts, saturate.load(tmp_path / "logs"))


def test_mlflow_file_store_facts_in_the_side_table() -> None:
    store = SAMPLES / "04_collapse_mlflow" / "mlruns"
    (part,) = _parts(store)
    facts = run_facts(part.points, part.runs)
    assert len(facts) == 1 and facts["run_status"].tolist() == ["FINISHED"]
    assert "params.recipe" in facts.columns and "params.recipe" not in part.points.columns


def test_a_dataframe_given_keeps_its_run_columns_beside_the_points() -> None:
    wide = saturate.load(SAMPLES / "08_recipe_comparison.csv").to_frame()
    assert "params.recipe" in wide.columns
    df = saturate.load(wide)
    assert "params.recipe" not in df.points.columns
    pd.testing.assert_frame_equal(df.to_frame()[wide.columns], wide)


# ---- the table no longer repeats run facts on every point ----------------------------------------


def test_run_facts_are_not_repeated_per_point(store: Path) -> None:
    df = saturate.load(store)
    wide = df.to_frame()
    facts = df.runs
    per_point = [c for c in wide.columns if c not in df.points.columns]
    assert sorted(per_point) == ["params.recipe", "params.seed", "run_status",
                                 "tags.mlflow.runName"]
    assert len(facts) == RUNS and len(wide) == RUNS * METRICS * STEPS
    assert df.points.memory_usage(deep=True).sum() < 0.75 * wide.memory_usage(deep=True).sum()


# ---- what needs every part is settled at the end ------------------------------------------------


def test_compute_axis_missing_from_some_files_warns_once(tmp_path: Path) -> None:
    steps = np.arange(0, 50, 5)
    with_axis = pd.DataFrame({"run": "a", "metric": ["reward"] * 10 + ["compute/gpu_hours"] * 10,
                              "step": np.r_[steps, steps], "value": np.r_[steps / 50, steps * 2.0]})
    with_axis.to_csv(tmp_path / "a.csv", index=False)
    for name in ("b", "c"):
        pd.DataFrame({"run": name, "metric": "reward", "step": steps, "value": steps / 60}).to_csv(
            tmp_path / f"{name}.csv", index=False)
    with pytest.warns(DataWarning) as caught:
        table = saturate.load(tmp_path, compute="compute/gpu_hours")
    assert set(table.points["run"]) == {"a"} and table.axis.name == "compute/gpu_hours"
    dropped = [str(w.message) for w in caught if "'compute/gpu_hours'" in str(w.message)]
    assert dropped == ["dropped 20 point(s) with no 'compute/gpu_hours' value at their step"]
    with pytest.raises(InputError, match="neither a column nor a metric of the data"):
        saturate.load(tmp_path, compute="compute/tokens")


@pytest.mark.slow
def test_analysis_of_a_stream_equals_the_analysis_of_the_table(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mlflow_db, "POINT_CHUNK", 3 * METRICS * STEPS)
    streamed = saturate.analyze(store, n_boot=20, workers=1, metric="eval/task_0")
    table = saturate.analyze(saturate.load(store, metric="eval/task_0"), n_boot=20, workers=1)
    assert streamed.to_dict()["curves"] == table.to_dict()["curves"]
    assert streamed.to_dict()["diagnostics"] == table.to_dict()["diagnostics"]
    assert len(streamed.curves) == RUNS
