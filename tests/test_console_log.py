"""Trainers' console logs (verl's ``step:N - key:value - ...`` lines) read as curves: the same
points as the parsed table of the same runs, other lines and other logs left alone, and a file
that is not one refused with one line."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from realdata import realcurves_path

import saturate
from saturate.cli.app import app
from saturate.errors import InputError
from saturate.ingest.console_log import looks_like_console_log, run_name

runner = CliRunner()
ESC = "\x1b"


def _verl_lines(points: pd.DataFrame, pid: int = 64899) -> list[str]:
    """Console lines as verl prints them (colour codes, the Ray actor's prefix), one per step,
    with the other chatter a real log holds between them."""
    lines = [f"{ESC}[2m{ESC}[36m(main_task pid={pid}){ESC}[0m validation generation end",
             "Training Progress:  10%|#         | 11/106 [02:03<17:44, 11.2s/it]"]
    for step, g in points.groupby("step", sort=True):
        pairs = " - ".join(f"{m}:{v!r}" for m, v in zip(g["metric"], g["value"], strict=True))
        lines.append(f"{ESC}[2m{ESC}[36m(main_task pid={pid}){ESC}[0m step:{step} - {pairs}"
                     " - actor/lr(1e-4):0.010 - note:warmup")
        lines.append(f"{ESC}[36m(WorkerDict pid=1234){ESC}[0m kwargs: {{'n': 1, 'step': {step}}}")
    return lines


@pytest.fixture(scope="module")
def verl_points() -> pd.DataFrame:
    table = pd.read_csv(realcurves_path("verl_llm_ppo", "verl_gsm8k_ppo_metrics_long.csv.gz"))
    return table[table["log"].str.startswith("gemma")].drop(columns="log")


def test_a_verl_console_log_gives_the_points_of_its_parsed_table(tmp_path: Path,
                                                                  verl_points) -> None:
    path = tmp_path / "gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log"
    path.write_text("\n".join(_verl_lines(verl_points)) + "\n")
    df = saturate.load(path).points
    assert set(df["run"]) == {"gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640"}
    got = df[df["metric"] != "actor/lr(1e-4)"][["metric", "step", "value"]]
    merged = got.merge(verl_points, on=["metric", "step"], how="outer", suffixes=("_log", "_csv"),
                       indicator=True)
    assert (merged["_merge"] == "both").all(), merged[merged["_merge"] != "both"]
    assert np.array_equal(merged["value_log"], merged["value_csv"])
    assert "note" not in set(df["metric"])  # a pair whose value is not a number is skipped


def test_a_metric_printed_once_under_a_shorter_name_joins_the_longer_one(tmp_path: Path) -> None:
    lines = ["step:0 - test_score/openai/gsm8k:0.521 - critic/score/mean:0.30"]
    lines += [f"step:{s} - critic/score/mean:{0.3 + 0.01 * s} - val/test_score/openai/gsm8k:"
              f"{0.5 + 0.01 * s}" for s in range(1, 12)]
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines))
    df = saturate.load(path).points
    assert set(df["metric"]) == {"critic/score/mean", "val/test_score/openai/gsm8k"}
    val = df[df["metric"] == "val/test_score/openai/gsm8k"]
    assert val["step"].tolist() == list(range(12)) and val["value"].iloc[0] == 0.521


def test_a_folder_reads_console_logs_and_leaves_other_logs_alone(tmp_path: Path,
                                                                 verl_points) -> None:
    (tmp_path / "ppo.log").write_text("\n".join(_verl_lines(verl_points)))
    (tmp_path / "server.log").write_text("INFO starting\nWARNING step: unknown - retrying\n")
    with gzip.open(tmp_path / "grpo.log.gz", "wt") as fh:
        fh.write("\n".join(_verl_lines(verl_points, pid=7)))
    df = saturate.load(tmp_path).points
    assert set(df["run"]) == {"ppo", "grpo"}
    assert len(df) == 2 * (len(verl_points) + verl_points["step"].nunique())  # + actor/lr


def test_a_log_that_holds_no_metrics_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text("INFO starting\nINFO listening on 127.0.0.1:5000\n")
    with pytest.raises(InputError):
        saturate.load(path)
    result = runner.invoke(app, ["analyze", str(path)])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output


def test_what_looks_like_a_console_log() -> None:
    assert looks_like_console_log("step:1 - reward:0.5\nstep:2 - reward:0.6\n")
    assert looks_like_console_log(f"{ESC}[36m(main_task pid=1){ESC}[0m step:3 - a/b:1e-3")
    assert not looks_like_console_log("step,reward\n1,0.5\n2,0.6\n")  # a CSV
    assert not looks_like_console_log("global_step:1 - loss:0.5\nmy_step:2 - loss:0.4\n")
    assert not looks_like_console_log("step:1 - starting the trainer\nstep:2 - done\n")
    assert run_name(Path("Qwen2.5-0.5B-bsz256.log.gz")) == "Qwen2.5-0.5B-bsz256"
