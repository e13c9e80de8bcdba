"""W&B run folders read natively: runs written by the wandb package (offline, no server) read
back from their ``run-<id>.wandb`` transaction logs."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import saturate
from saturate.cli import app
from saturate.errors import InputError
from saturate.ingest import wandb_files
from saturate.table.curves import DataWarning

pytest.importorskip("wandb")

from wandb_runs import points_table, runs_from_table, write_runs  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
# one run of each kind the sample runs hold: still scaling, saturated, collapsing
KINDS = {"qwen3-8b-grpo-longcot-seed0": "scaling", "llama3.1-8b-ppo-gsm8k-seed0": "saturated",
         "qwen2.5-3b-grpo-lr3e-6-collapse": "regressing"}
EXTRA = {"qwen3-8b-grpo-longcot-seed0": {"group": "grpo-longcot", "tags": ["baseline", "long"],
                                         "config": {"lr": 1e-6, "actor": {"clip": 0.2}}},
         "qwen2.5-3b-grpo-lr3e-6-collapse": {"exit_code": 1}}


def _sample_points() -> pd.DataFrame:
    parts = [saturate.load(SAMPLES / name).points for name in (
        "01_still_scaling.csv", "03_saturated.csv", "04_collapse_mlflow/mlruns")]
    df = pd.concat(parts, ignore_index=True)
    return df[df["run"].isin(KINDS) & (df["metric"] == "train/reward")]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A ``wandb/`` folder of the three runs and a CSV of the same points."""
    runs = runs_from_table(_sample_points(), **EXTRA)
    root = tmp_path_factory.mktemp("wandb-runs")
    folder = write_runs(root / "train", runs)
    csv = root / "same_points.csv"
    points_table(runs).to_csv(csv, index=False)
    return folder, csv


def _verdicts(source: Path) -> dict[tuple[str, str], str]:
    result = saturate.analyze(source, n_boot=60)
    return {(c.run, c.metric): c.verdict for c in result.curves}


def test_three_runs_get_the_verdicts_of_the_same_points_read_from_csv(written):
    folder, csv = written
    from_wandb, from_csv = _verdicts(folder), _verdicts(csv)
    assert from_wandb == from_csv
    assert {run: v for (run, _), v in from_wandb.items()} == KINDS


def test_run_facts_history_keys_and_state(written):
    folder, _ = written
    df = saturate.load(folder)
    assert set(df.points["experiment"]) == {"saturate-tests"}
    assert set(df.points["metric"]) == {"train/reward"}  # compute/gpu_hours became the x axis
    assert df.axis.name == "compute/gpu_hours"
    facts = df.runs.set_index(df.runs["run_id"].map(
        dict(zip(df.points["run_id"], df.points["run"], strict=True))))
    scaling = facts.loc["qwen3-8b-grpo-longcot-seed0"]
    assert (scaling["params.group"], scaling["params.lr"], scaling["params.actor.clip"]) == (
        "grpo-longcot", "1e-06", "0.2")
    assert scaling["tags.wandb.tags"] == "baseline, long"
    assert facts["run_status"].to_dict() == {
        "qwen3-8b-grpo-longcot-seed0": "FINISHED", "llama3.1-8b-ppo-gsm8k-seed0": "FINISHED",
        "qwen2.5-3b-grpo-lr3e-6-collapse": "FAILED"}
    one = next(folder.glob("*/run-*.wandb"))  # a single run folder, and the file itself
    assert saturate.load(one.parent).points["run_id"].nunique() == 1
    assert len(saturate.load(one)) == len(saturate.load(one.parent))


def _cut_copy(folder: Path, dest: Path, fraction: float) -> Path:
    run_dir = sorted(folder.glob("*/run-*.wandb"))[0].parent
    shutil.copytree(run_dir, dest / run_dir.name)
    log = next((dest / run_dir.name).glob("run-*.wandb"))
    data = log.read_bytes()
    log.write_bytes(data[: int(len(data) * fraction)])
    return dest / run_dir.name


def test_a_run_folder_cut_mid_file_keeps_what_was_read_with_one_warning(written, tmp_path):
    folder, _ = written
    whole = saturate.load(sorted(folder.glob("*/run-*.wandb"))[0].parent, metric="train/reward").points
    cut = _cut_copy(folder, tmp_path, 0.6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read = saturate.load(cut, metric="train/reward")
    part = read.points
    cut_short = [w for w in caught if "ends inside a record" in str(w.message)]
    assert len(cut_short) == 1 and issubclass(cut_short[0].category, DataWarning)
    assert 0 < len(part) < len(whole)
    # what was kept is the start of the run, point for point
    head = whole.iloc[: len(part)].reset_index(drop=True)
    pd.testing.assert_series_equal(part["value"], head["value"])
    assert read.runs["run_status"].tolist() == ["RUNNING"]  # no exit record read
    result = CliRunner().invoke(app, ["analyze", str(cut), "--metric", "train/reward"])
    assert result.exit_code == 0, result.output
    assert result.output.count("ends inside a record") == 1


def test_a_bad_checksum_stops_reading_there(written, tmp_path):
    folder, _ = written
    cut = _cut_copy(folder, tmp_path, 1.0)
    log = next(cut.glob("run-*.wandb"))
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0xFF
    scanned = wandb_files.scan(bytes(data))
    assert scanned.problem is not None and "checksum" in scanned.problem
    assert 0 < len(scanned.records) < len(wandb_files.scan(log.read_bytes()).records)


@pytest.mark.subprocess  # wandb writes the run in a process of its own (tests/wandb_runs.py)
def test_a_record_spread_over_blocks_is_joined(tmp_path):
    """A config larger than a 32 KiB block: its run record is a FIRST, MIDDLE..., LAST chain."""
    notes = "abc" * 40_000
    folder = write_runs(tmp_path, [{"name": "big", "config": {"notes": notes},
                                    "rows": [[s, {"reward": s / 10}] for s in range(1, 30)]}])
    log = next(folder.glob("*/run-*.wandb"))
    assert log.stat().st_size > 2 * wandb_files.BLOCK
    df = saturate.load(folder)
    assert df.runs["params.notes"].tolist() == [notes]
    assert df.points["value"].tolist() == [s / 10 for s in range(1, 30)]


def test_not_a_wandb_log_is_one_clear_error(tmp_path):
    bad = tmp_path / "run-x.wandb"
    bad.write_bytes(b"not a log at all")
    with pytest.raises(InputError, match="no W&B header"):
        saturate.load(bad)
    result = CliRunner().invoke(app, ["analyze", str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error:") and "Traceback" not in result.output
    assert bad.read_bytes() == b"not a log at all"
