"""File ingestion: every layout and format, read from files the tests write themselves."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import saturate
from saturate.errors import InputError, SettingsError
from saturate.table import curves
from saturate.table.curves import REQUIRED_COLUMNS, DataWarning


def _long_frame() -> pd.DataFrame:
    rows = []
    for run, seed in (("ppo-a", 1), ("ppo-b", 2)):
        for step in range(0, 50, 5):
            rows.append({"run": run, "metric": "train/reward", "step": step,
                         "compute": step * 0.5, "value": 1 - np.exp(-step / 20), "seed": seed})
            rows.append({"run": run, "metric": "eval/acc", "step": step,
                         "compute": step * 0.5, "value": 0.2 + step / 100, "seed": seed})
    return pd.DataFrame(rows)


def _check_tidy(df: pd.DataFrame) -> None:
    assert list(df.columns[: len(REQUIRED_COLUMNS)]) == list(REQUIRED_COLUMNS)
    assert df["step"].dtype == np.int64
    assert df["compute"].dtype == np.float64 and df["value"].dtype == np.float64
    assert np.isfinite(df["value"]).all()
    assert not df.duplicated(["source", "run_id", "metric", "step"]).any()
    for _, g in df.groupby(["source", "run_id", "metric"]):
        assert g["step"].is_monotonic_increasing


@pytest.mark.parametrize(
    ("name", "writer"),
    [
        ("runs.csv", lambda df, p: df.to_csv(p, index=False)),
        ("runs.tsv", lambda df, p: df.to_csv(p, sep="\t", index=False)),
        ("runs.csv.gz", lambda df, p: df.to_csv(p, index=False, compression="gzip")),
        ("runs.jsonl", lambda df, p: df.to_json(p, orient="records", lines=True)),
        ("runs.parquet", lambda df, p: df.to_parquet(p, index=False)),
        ("runs.dat", lambda df, p: df.to_csv(p, index=False)),  # chosen by content, not suffix
        ("runs.txt", lambda df, p: df.to_csv(p, sep="\t", index=False)),
    ],
)
def test_long_format_every_file_kind(tmp_path: Path, name: str, writer) -> None:
    src = _long_frame()
    path = tmp_path / name
    writer(src, path)
    df = saturate.load(path)
    _check_tidy(df.points)
    assert set(df.points["run"]) == {"ppo-a", "ppo-b"}
    assert set(df.points["metric"]) == {"train/reward", "eval/acc"}
    assert len(df) == len(src)
    assert df.axis.name == "compute"
    assert df.points["compute"].max() == pytest.approx(22.5)
    assert "params.seed" not in df.points.columns  # a run fact: once per run, beside the points
    assert df.runs.set_index("run_id")["params.seed"].astype(int).to_dict() == {
        "ppo-a": 1, "ppo-b": 2}
    wide = saturate.load(path).to_frame()
    assert wide.loc[wide["run"] == "ppo-b", "params.seed"].astype(int).eq(2).all()
    last = df.points[(df.points["run"] == "ppo-a") & (df.points["metric"] == "train/reward")]["value"].iloc[-1]
    assert last == pytest.approx(1 - np.exp(-45 / 20))


def test_wide_format_run_from_file_stem(tmp_path: Path) -> None:
    steps = np.arange(0, 100, 10)
    pd.DataFrame({"step": steps, "reward": steps / 100.0, "eval/acc": 0.5 + steps / 1000,
                  "recipe": "grpo"}).to_csv(tmp_path / "qwen-run7.csv", index=False)
    df = saturate.load(tmp_path / "qwen-run7.csv")
    _check_tidy(df.points)
    assert set(df.points["run"]) == {"qwen-run7"}
    assert set(df.points["metric"]) == {"reward", "eval/acc"}
    assert (df.to_frame()["params.recipe"] == "grpo").all()
    assert df.axis.name == "step"
    assert np.array_equal(np.sort(df.points["compute"].unique()), steps.astype(float))


def test_wide_format_with_run_column_and_sparse_eval(tmp_path: Path) -> None:
    rows = []
    for run in ("a", "b"):
        for s in range(20):
            rows.append({"run": run, "step": s, "reward": s * 0.1,
                         "eval": (s * 0.05) if s % 5 == 0 else np.nan})
    pd.DataFrame(rows).to_csv(tmp_path / "wide.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)  # empty cells are "not logged", not NaN values
        df = saturate.load(tmp_path / "wide.csv").points
    counts = df.groupby(["run", "metric"]).size()
    assert counts[("a", "reward")] == 20 and counts[("a", "eval")] == 4


def test_repeated_run_names_are_told_apart_by_params(tmp_path: Path) -> None:
    rows = [{"algo": algo, "env": "Hopper", "run": 1, "timestep": t, "mean_return": t * k}
            for algo, k in (("ppo", 1), ("sac", 2)) for t in range(0, 50, 10)]
    pd.DataFrame(rows).to_csv(tmp_path / "evals.csv", index=False)
    df = saturate.load(tmp_path / "evals.csv").points
    assert df["run"].nunique() == 2
    assert all("algo=" in r for r in df["run"].unique())


def test_wandb_export(tmp_path: Path) -> None:
    steps = np.arange(0, 30)
    frame = pd.DataFrame({
        "Step": steps,
        "run-alpha - train/reward": steps * 0.1,
        "run-alpha - train/reward__MIN": steps * 0.1 - 1,
        "run-alpha - train/reward__MAX": steps * 0.1 + 1,
        "run-beta - train/reward": np.where(steps % 2 == 0, steps * 0.2, np.nan),
    })
    frame.to_csv(tmp_path / "wandb_export_2026.csv", index=False)
    df = saturate.load(tmp_path / "wandb_export_2026.csv").points
    assert set(df["run"]) == {"run-alpha", "run-beta"}
    assert set(df["metric"]) == {"train/reward"}
    assert (df["run"] == "run-alpha").sum() == 30
    assert (df["run"] == "run-beta").sum() == 15


def test_sb3_monitor_file(tmp_path: Path) -> None:
    p = tmp_path / "0.monitor.csv"
    lines = ['#{"t_start": 1.0, "env_id": "HalfCheetah-v3"}', "r,l,t"]
    lines += [f"{i * 1.5},{100 + i},{i * 0.1}" for i in range(20)]
    p.write_text("\n".join(lines) + "\n")
    df = saturate.load(p)
    ret = df.points[df.points["metric"] == "episode_return"]
    assert len(ret) == 20
    assert ret["compute"].iloc[-1] == sum(100 + i for i in range(20))
    assert df.axis.name == "env_steps"


def test_json_series_records(tmp_path: Path) -> None:
    recs = [{"task": "atari_pong", "method": "dqn", "seed": s, "xs": [0, 1e6, 2e6], "ys": [-21, 0, None]}
            for s in range(2)]
    (tmp_path / "scores.json").write_text(json.dumps(recs))
    with pytest.warns(DataWarning, match="2 non-finite"):
        df = saturate.load(tmp_path / "scores.json").points
    assert df["run"].nunique() == 2 and (df.groupby("run").size() == 2).all()


def _write_events(logdir: Path, tag: str, values: list[float]) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(logdir))
    for step, v in enumerate(values):
        summ = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=v)])
        writer.add_event(event_pb2.Event(wall_time=1000.0 + step, step=step * 10, summary=summ))
    writer.close()


def test_tensorboard_every_point_no_sampling(tmp_path: Path) -> None:
    n = 2500  # above TensorBoard's default reservoir of 1,000 scalars
    _write_events(tmp_path / "runs" / "exp1", "train/reward", [i / n for i in range(n)])
    _write_events(tmp_path / "runs" / "exp2", "train/reward", [0.5] * 10)
    df = saturate.load(tmp_path / "runs").points
    counts = df.groupby("run").size()
    assert counts["exp1"] == n and counts["exp2"] == 10
    assert df[df["run"] == "exp1"]["step"].max() == (n - 1) * 10


def test_directory_walk_mixes_formats_and_ignores_others(tmp_path: Path) -> None:
    _long_frame().to_csv(tmp_path / "a.csv", index=False)
    sub = tmp_path / "nested" / "deeper"
    sub.mkdir(parents=True)
    _long_frame().assign(run=lambda d: d["run"] + "-x").to_json(sub / "b.jsonl", orient="records", lines=True)
    (tmp_path / "README.md").write_text("# not data\n")
    (tmp_path / "generate.py").write_text("print('hi')\n")
    with pytest.warns(DataWarning, match=r"skipped 2 file\(s\) that hold no curves: .*README.md, "
                      r".*generate.py$"):
        df = saturate.load(tmp_path).points
    assert df["run"].nunique() == 4
    assert df["source"].nunique() == 2


# --- a project folder holds more than curves ----------------------------------------------------

# Files a walk skips: they hold no curves. Each is also an error, naming what it lacks, when named.
NOT_CURVES = {
    "config.json": (b'{"lr": 1e-6, "seed": 3}\n', "a JSON object that is neither a point record"),
    "schema.json": (json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema",
                                "type": "object", "properties": {"step": {"type": "integer"}}},
                               indent=2).encode(), "holds no curves: a JSON Schema"),
    "trainer_state.json": (json.dumps({"global_step": 1500, "epoch": 3.0, "log_history": [
        {"step": 10, "loss": 0.5}]}, indent=1).encode(), "no value key"),
    "vocab.json": (b'["a", "b", "c"]', "JSON must be a list of objects"),
    "train.jsonl": (b'{"prompt": "2+2", "answer": 4}\n{"prompt": "3+3", "answer": 6}\n',
                    "no step, compute or value column"),
    "names.csv": (b"run,owner\na,me\nb,you\n", "no numeric column, and no step"),
    "requirements.txt": (b"numpy>=1.26\npandas\n", "no step, compute or value column"),
    "notes.txt": (b"Runs of the sweep, on 8 GPUs.\nThe lr, seed and batch vary, as planned, "
                  b"by hand\nsee wiki\n", "holds no curves"),
    "ramble.txt": (b"first, second\nx, y\nthe lr, seed, batch, warmup, vary\n",
                   "names no curve column"),
    "empty.csv": (b"", "is empty"),
    "header_only.csv": (b"run,metric,step,value\n", "holds no rows"),
    "blob.jsonl": (b"\x00\x01binary\x00", "binary content"),
}
# Files that look like curve data but are broken: an error even when a walk found them.
BROKEN = {
    "rows.csv": (b'run,metric,step,value\na,m,0,1\na,m,1,2,3,4\na,"m,2,3\n', "cannot be read as csv"),
    "cut.jsonl": (b'{"run": "a", "metric": "m", "step": 0, "value": 1}\n{"run": "a", "metr',
                  "cannot be read as jsonl"),
    "no_axis.csv": (b"epoch,reward\n1,0.5\n2,0.6\n", "missing column(s) step"),
    "bad.parquet": (b"PAR1\x00\x01 cut short", "cannot be read as parquet"),
}


def test_a_walk_skips_files_that_hold_no_curves_and_names_them_in_one_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the folder as "." : the warning names paths as the walk found them
    _long_frame().to_csv(tmp_path / "runs.csv", index=False)
    for name, (content, _) in NOT_CURVES.items():
        (tmp_path / name).write_bytes(content)
    (tmp_path / "notes.md").write_text("# the sweep\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "train.yaml").write_text("lr: 1e-6\n")
    (tmp_path / ".hidden.csv").write_text("not,read\n")  # hidden: not walked, not named
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = saturate.load(".")
    assert set(table.points["run"]) == {"ppo-a", "ppo-b"}
    lines = [str(w.message) for w in caught if "skipped" in str(w.message)]
    n = len(NOT_CURVES) + 2
    # what was read and found to hold no curves comes first (by path), then what the name ruled out
    shown = ", ".join(sorted(NOT_CURVES)[:5])
    assert lines == [f"skipped {n} file(s) that hold no curves: {shown} and {n - 5} more"]


@pytest.mark.parametrize("name", sorted(NOT_CURVES))
def test_a_file_that_holds_no_curves_given_by_name_is_an_error_naming_what_it_lacks(
        tmp_path: Path, name: str) -> None:
    content, says = NOT_CURVES[name]
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError, match=re.escape(says)) as info:
        saturate.load(p)
    assert str(info.value).startswith(f"{p}: ")


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_curve_data_in_a_folder_is_still_an_error(tmp_path: Path, name: str) -> None:
    _long_frame().to_csv(tmp_path / "good.csv", index=False)
    (tmp_path / "config.json").write_text('{"lr": 1e-6}')
    content, says = BROKEN[name]
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError, match=re.escape(says)) as info:
        saturate.load(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / name}: ")


def test_curves_in_json_documents_and_one_line_json_lines_are_still_read(tmp_path: Path) -> None:
    (tmp_path / "series.json").write_text(json.dumps(
        {"run": "a", "metric": "reward", "xs": [0, 1, 2, 3], "ys": [0.1, 0.2, 0.3, 0.4]}, indent=2))
    (tmp_path / "record.json").write_text(json.dumps(
        {"run": "b", "metric": "reward", "step": 3, "value": 0.5}, indent=2))
    (tmp_path / "one.jsonl").write_text('{"run": "c", "step": 1, "reward": 0.2}\n')
    (tmp_path / "progress.txt").write_text("step\treward\n1\t0.1\n2\t0.2\n")
    points = saturate.load(tmp_path).points
    assert set(points["run"].str[:1]) == {"a", "b", "c", "p"}  # progress.txt: run from the file


def test_a_folder_that_holds_only_files_without_curves_says_so(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"lr": 1e-6}')
    (tmp_path / "notes.md").write_text("# notes\n")
    with pytest.raises(InputError, match=r": no curves; skipped 2 file\(s\) that hold no curves: "
                       r".*config.json, .*notes.md$"):
        saturate.load(tmp_path)


def test_sockets_and_device_nodes_in_a_folder_are_skipped_unopened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.chdir(tmp_path)
    _long_frame().to_csv(tmp_path / "runs.csv", index=False)
    (tmp_path / "mlflow.db").symlink_to("/dev/null")  # a device node named as a store
    (tmp_path / "gone.csv").symlink_to(tmp_path / "nowhere.csv")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "events.out.tfevents.1.host"))  # a socket named as an event file
    try:
        with pytest.warns(DataWarning, match=r"skipped 3 file\(s\)") as caught:
            table = saturate.load(".")
        lines = [str(w.message) for w in caught if "skipped" in str(w.message)]
        assert lines == ["skipped 3 file(s) that hold no curves: events.out.tfevents.1.host (a "
                         "socket), gone.csv (a broken link), mlflow.db (a device node)"]
        assert table.points["run"].nunique() == 2
        with pytest.raises(InputError, match=r"mlflow.db: not a file \(a device node\)$"):
            saturate.load(tmp_path / "mlflow.db")
        with pytest.raises(InputError, match=r"host: not a file \(a socket\)$"):
            saturate.load(tmp_path / "events.out.tfevents.1.host")
    finally:
        server.close()


def test_duplicates_keep_last_logged(tmp_path: Path) -> None:
    pd.DataFrame({"run": "a", "metric": "m", "step": [0, 1, 1, 2], "value": [0.0, 1.0, 5.0, 2.0]}).to_csv(
        tmp_path / "d.csv", index=False)
    df = saturate.load(tmp_path / "d.csv").points
    assert df["value"].tolist() == [0.0, 5.0, 2.0]


def test_nan_and_inf_dropped_with_a_count(tmp_path: Path) -> None:
    p = tmp_path / "n.csv"
    p.write_text("run,metric,step,value\na,m,0,1\na,m,1,nan\na,m,2,inf\na,m,3,-inf\na,m,4,2\n")
    with pytest.warns(DataWarning, match=r"dropped 3 non-finite value\(s\) \(1 NaN, 2 infinite\)"):
        df = saturate.load(p).points
    assert df["value"].tolist() == [1.0, 2.0]


def test_compute_from_column_and_from_metric(tmp_path: Path) -> None:
    rows = [{"run": "a", "metric": "reward", "step": s, "value": s / 10, "gpu_hours": s * 3.0}
            for s in range(10)]
    rows += [{"run": "a", "metric": "compute/gpu_hours", "step": s, "value": s * 2.0, "gpu_hours": s * 3.0}
             for s in range(0, 10, 2)]
    p = tmp_path / "c.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    by_col = saturate.load(p, compute="gpu_hours", metric="reward")
    assert by_col.axis.name == "gpu_hours"
    assert by_col.points["compute"].tolist() == [s * 3.0 for s in range(10)]
    with pytest.warns(DataWarning, match="dropped 1 point"):
        by_metric = saturate.load(p, compute="compute/gpu_hours").points
    assert set(by_metric["metric"]) == {"reward"}
    # interpolated on step inside the logged range; step 9 is past the last logged compute (step 8)
    assert by_metric["compute"].tolist() == [s * 2.0 for s in range(9)]
    with pytest.raises(InputError, match="neither a column nor a metric"):
        saturate.load(p, compute="nope")


def test_selection_by_metric_and_run_globs(tmp_path: Path) -> None:
    _long_frame().to_csv(tmp_path / "a.csv", index=False)
    df = saturate.load(tmp_path / "a.csv", metric="eval/*", run=["*-b"]).points
    assert set(df["metric"]) == {"eval/acc"} and set(df["run"]) == {"ppo-b"}
    with pytest.raises(InputError, match=r"--metric 'nothing/\*' matches no metric; metrics: "
                       r"eval/acc, train/reward$"):
        saturate.load(tmp_path / "a.csv", metric="nothing/*")


def test_dataframe_source_and_curve_table() -> None:
    df = saturate.load(_long_frame()).points
    table = curves.curve_table(df)
    assert len(table) == 4
    row = table[(table["run"] == "ppo-a") & (table["metric"] == "eval/acc")].iloc[0]
    assert row["n_points"] == 10 and row["compute_last"] == 22.5


# --- bad input ---------------------------------------------------------------------------------


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"run,metric,step,value\na,m,0,high\na,m,1,low\n", "column 'value' is not numeric"),
        (b"run,foo,bar\na,1,2\n", "missing column|no metric columns"),
        (b"", "is empty"),
        (b"\x1f\x8b\x08\x00garbage-not-gzip", "cannot be read"),
        (b"PAR1\x00\x01\x02 not really parquet", "cannot be read as parquet"),
        (b"\x00\x01\x02\x03binary", "binary content"),
        (b"run,metric,step,value\na,m,0,nan\na,m,1,nan\n", "holds no curves"),
        (b'{"run": "a", "metric": "m", "step": 0, "value": 1}\n{broken json\n', "cannot be read as jsonl"),
    ],
)
def test_bad_files_raise_one_clear_error(tmp_path: Path, content: bytes, match: str) -> None:
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    before = _digest(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        with pytest.raises(InputError, match=match) as info:
            saturate.load(p)
    assert str(p) in str(info.value)
    assert "\n" not in str(info.value)
    assert _digest(p) == before


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        saturate.load(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.md").write_text("hello")
    with pytest.raises(InputError, match="holds no files saturate can read"):
        saturate.load(tmp_path / "empty")


def test_folder_with_a_corrupt_file_names_it(tmp_path: Path) -> None:
    _long_frame().to_csv(tmp_path / "good.csv", index=False)
    with gzip.open(tmp_path / "bad.csv.gz", "wb") as fh:
        fh.write(b"run,metric,step,value\na,m,0,zero\n")
    with pytest.raises(InputError, match="bad.csv.gz"):
        saturate.load(tmp_path)


def test_unknown_option_and_filter_without_mlflow(tmp_path: Path) -> None:
    _long_frame().to_csv(tmp_path / "a.csv", index=False)
    with pytest.raises(SettingsError, match="unknown option"):
        saturate.load(tmp_path / "a.csv", metrics="x")
    with pytest.raises(SettingsError, match="--filter"):
        saturate.load(tmp_path / "a.csv", filter="params.x = '1'")


def test_input_frame_not_modified() -> None:
    src = _long_frame()
    copy = src.copy(deep=True)
    saturate.load(src)
    pd.testing.assert_frame_equal(src, copy)


def test_logged_compute_metric_becomes_the_axis(tmp_path: Path) -> None:
    rows = [{"run": "a", "metric": "eval/acc", "step": s, "value": s / 100} for s in range(0, 100, 10)]
    rows += [{"run": "a", "metric": "compute/gpu_hours", "step": s, "value": 4.0 * s} for s in range(100)]
    pd.DataFrame(rows).to_csv(tmp_path / "with_axis.csv", index=False)
    other = [{"run": "b", "metric": "eval/acc", "step": s, "compute": s * 7.0, "value": s / 50}
             for s in range(5)]
    pd.DataFrame(other).to_csv(tmp_path / "native.csv", index=False)
    one = saturate.load(tmp_path / "with_axis.csv", metric="eval/*")
    assert one.axis.name == "compute/gpu_hours"
    assert set(one.points["metric"]) == {"eval/acc"}
    assert one.points["compute"].tolist() == [4.0 * s for s in range(0, 100, 10)]
    both = saturate.load(tmp_path)
    assert both.axis.name == "compute"
    assert both.points.loc[both.points["run"] == "b", "compute"].tolist() == [s * 7.0 for s in range(5)]
    assert "compute/gpu_hours" not in set(both.points["metric"])


@pytest.mark.parametrize(
    "uri",
    ["foo://user:s3cret@host/db", "postgresql://user:s3cret@host:notaport/db",
     "postgresql://host/db?user=u&password=s3cret"],
)
def test_bad_uris_never_print_the_password(uri: str) -> None:
    with pytest.raises(saturate.SaturateError) as info:
        saturate.load(uri)
    assert "s3cret" not in str(info.value) and "\n" not in str(info.value)


# ---- seeds in a column -------------------------------------------------------------------------


def test_a_seed_column_tells_runs_apart_in_long_and_wide_files(tmp_path) -> None:
    """A numeric ``seed`` column changes along the file yet names runs: every seed is its own run
    (Dopamine's long CSV: suite, game, agent, seed, iteration, value), no point is lost."""
    long = pd.DataFrame({"agent": ["dqn"] * 6, "seed": [0, 0, 0, 1, 1, 1],
                         "iteration": [0, 1, 2] * 2, "metric": "return",
                         "value": [1.0, 2.0, 3.0, 1.5, 2.5, 3.5]})
    long.to_csv(tmp_path / "long.csv", index=False)
    wide = pd.DataFrame({"step": [0, 1, 0, 1], "random_seed": [7, 7, 8, 8],
                         "reward": [1.0, 2.0, 3.0, 4.0]})
    wide.to_csv(tmp_path / "wide.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = saturate.load(tmp_path / "long.csv").to_frame()
        b = saturate.load(tmp_path / "wide.csv").to_frame()
    assert len(a) == 6 and a["run"].nunique() == 2 and set(a["params.seed"].astype(int)) == {0, 1}
    assert len(b) == 4 and set(b["metric"]) == {"reward"} and b["run"].nunique() == 2


def test_points_that_repeat_a_step_without_a_timestamp_are_dropped_with_a_warning(tmp_path) -> None:
    df = pd.DataFrame({"step": [0, 1, 0, 1], "reward": [1.0, 2.0, 3.0, 4.0],
                       "worker": [0, 0, 1, 1]})
    df.to_csv(tmp_path / "w.csv", index=False)
    with pytest.warns(DataWarning, match=r"dropped 4 point\(s\) that repeat the run, metric and step"):
        t = saturate.load(tmp_path / "w.csv").points
    assert list(t.loc[t["metric"] == "reward", "value"]) == [3.0, 4.0]
