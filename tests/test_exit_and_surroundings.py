"""Silent loss said aloud (corrupt TensorBoard files, a source given twice), exit codes that mean
one thing (bad input 2 with --debug too, a closed stdout), and the surroundings: --workers capped
at the cores, the settings file found no further than the repository root and named in the report,
long metric names as valid MLflow tag keys."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from cli_run import run_cli

import saturate
from saturate.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
SAT = [sys.executable, "-m", "saturate"]


def _event_file(points: int) -> bytes:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    buf = io.BytesIO()
    writer = RecordWriter(buf)
    writer.write(event_pb2.Event(wall_time=1000.0, file_version="brain.Event:2")
                 .SerializeToString())
    for i in range(points):
        v = summary_pb2.Summary.Value(tag="reward", simple_value=1.0 - 0.9 ** (i + 1))
        writer.write(event_pb2.Event(wall_time=1001.0 + i, step=i + 1,
                                     summary=summary_pb2.Summary(value=[v])).SerializeToString())
    return buf.getvalue()


def _logdir(tmp_path: Path, blob: bytes) -> Path:
    run = tmp_path / "runs" / "a"
    run.mkdir(parents=True)
    (run / "events.out.tfevents.1000.host").write_bytes(blob)
    return tmp_path / "runs"


def test_a_flipped_byte_in_an_event_file_is_an_input_error(tmp_path: Path) -> None:
    blob = bytearray(_event_file(30))
    blob[len(blob) // 2] ^= 0x40
    with pytest.raises(InputError, match=r"corrupt TensorBoard event file \(record \d+ fails its "
                                         r"checksum\)"):
        saturate.load(_logdir(tmp_path, bytes(blob)))


def test_an_event_file_cut_short_is_read_with_a_warning_that_counts(tmp_path: Path) -> None:
    whole = _event_file(30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = saturate.load(_logdir(tmp_path, whole[: len(whole) - 20])).points
    notes = [str(w.message) for w in caught if "cut short" in str(w.message)]
    assert len(notes) == 1 and f"{len(df)} point(s) read before it" in notes[0], notes
    assert 0 < len(df) < 30


def test_the_same_source_given_three_ways_is_read_once(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(DATA.parent)
    once = saturate.load(DATA.name).points
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        thrice = saturate.load([DATA.name, str(DATA), f"./{DATA.name}"]).points
    assert len(thrice) == len(once)
    assert thrice["run"].nunique() == once["run"].nunique()
    assert any("given more than once" in str(w.message) for w in caught)


def test_debug_keeps_the_exit_code_of_a_bad_input(tmp_path: Path) -> None:
    res = run_cli("--debug", "analyze", tmp_path / "missing.csv")
    assert res.returncode == 2, res.stderr
    assert "Traceback" in res.stderr  # --debug shows it, and still means "bad input"


@pytest.mark.parametrize(("args", "said"), [
    (["analyze", "--bogus"], "No such option: --bogus (Possible options: --gpus, --out) "
                             "(see 'saturate analyze --help')"),
    (["analyse", "runs/"], "No such command 'analyse'. Did you mean 'analyze'? "
                           "(see 'saturate --help')"),
    (["gate", "--format", "json"], "No such option: --format"),
    (["watch", "--interval"], "Option '--interval' requires an argument. "
                              "(see 'saturate watch --help')"),
    (["--bogus"], "No such option: --bogus (see 'saturate --help')"),
])
def test_a_slip_on_the_command_line_is_one_error_line(args: list[str], said: str) -> None:
    """A misspelt option or command, or an option without its value: one ``error:`` line that
    says which help to read, exit 2, as every other bad input (not click's usage block)."""
    res = run_cli(*args)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith(f"error: {said}") and res.stderr.count("\n") == 1, res.stderr


def test_saturate_alone_still_shows_the_help() -> None:
    res = run_cli()
    assert res.returncode == 2 and "Commands:" in res.stderr and "error:" not in res.stderr


@pytest.mark.subprocess  # the subject: a process started with file descriptor 1 closed
def test_a_closed_stdout_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    """The report is lost, so it is said (a reader that went away, `| head`, stays a quiet 141:
    test_outputs)."""
    def close_stdout() -> None:
        os.close(1)

    for fmt in ("json", "table"):
        res = subprocess.run([*SAT, "analyze", str(DATA), "--n-boot", "10", "--format", fmt],
                             stderr=subprocess.PIPE, text=True, timeout=300,
                             preexec_fn=close_stdout)
        assert res.returncode == 2, res.stderr
        assert res.stderr == ("error: cannot write the report to standard output (standard "
                              "output is closed)\n")
    res = subprocess.run([*SAT, "ls", str(DATA)], stderr=subprocess.PIPE, text=True, timeout=300,
                         preexec_fn=close_stdout)  # was exit 3: its width was read of no stdout
    assert (res.returncode, res.stderr.count("\n")) == (2, 1), res.stderr
    assert res.stderr.startswith("error: ") and "closed" in res.stderr
    out = tmp_path / "r.json"  # nothing is written to stdout: the run is unaffected
    res = subprocess.run([*SAT, "analyze", str(DATA), "--n-boot", "10", "--format", "json",
                          "--out", str(out)], stderr=subprocess.PIPE, text=True, timeout=300,
                         preexec_fn=close_stdout)
    assert res.returncode == 0, res.stderr
    assert out.read_text().startswith("{")


def test_workers_are_capped_at_the_cores_and_counts_are_digits() -> None:
    from saturate.analysis.work import engine_for
    from saturate.errors import SettingsError
    from saturate.settings import Settings

    cores = os.cpu_count() or 1
    with pytest.warns(UserWarning, match=f"this machine has {cores} core"):
        engine = engine_for(Settings.build(None, cli=True, workers=cores + 10))
    assert engine.workers == cores
    assert engine_for(Settings.build(None, workers=1)).workers == 1
    with pytest.raises(SettingsError, match="whole number"):
        Settings.build(None, cli=True, workers="1e3")
    remote = Settings.build(None, workers=cores + 10, scheduler="tcp://10.1.2.3:8786")
    assert engine_for(remote).workers == cores + 10  # workers on other machines: not capped


def test_settings_stop_at_the_repository_root_and_are_named(tmp_path: Path) -> None:
    from saturate.settings.file import find_config

    (tmp_path / "pyproject.toml").write_text('[tool.saturate]\nmin_gain = "50%"\n')
    project = tmp_path / "shared" / "project"
    (project / ".git").mkdir(parents=True)
    deep = project / "runs"
    deep.mkdir()
    assert find_config(deep) is None  # the file above the repository is someone else's
    (project / "saturate.toml").write_text('min_gain = "2%"\n')
    assert find_config(deep) == project / "saturate.toml"
    res = run_cli("analyze", DATA, "--n-boot", "10", cwd=deep, env={**os.environ, "COLUMNS": "200"})
    assert res.returncode == 0, res.stderr
    assert f"settings from {project / 'saturate.toml'}" in res.stdout.splitlines()[1]
    for fmt in ("markdown", "html"):  # every report says in its header which file decided
        out = run_cli("analyze", DATA, "--n-boot", "10", "--format", fmt, cwd=deep)
        assert out.returncode == 0, out.stderr
        header = out.stdout.split("<table")[0] if fmt == "html" else out.stdout[:300]
        assert f"settings from {project / 'saturate.toml'}" in header.replace("\\", "")


def test_long_metric_names_become_valid_tag_keys() -> None:
    from mlflow.utils.validation import _validate_tag_name

    from saturate.tracker.writeback import tag_name, tags_for

    for metric in ("eval/" + "x" * 240, "\u7cbe\u5ea6/\U0001f680", "a//b", "eval/acc"):
        name = tag_name(metric)
        assert name == tag_name(metric)  # stable: a re-run replaces the same tags
        curve = _curve(metric)
        for key in tags_for(curve):
            assert len(key) <= 250
            _validate_tag_name(key)
    assert tag_name("eval/acc") == "eval/acc"
    assert tag_name("a" * 300) != tag_name("a" * 301)
    assert tags_for(_curve("x" * 300))[f"saturate.{tag_name('x' * 300)}.metric"] == "x" * 300


def _curve(metric: str):
    import numpy as np

    from saturate.analysis import AnalysisSettings, analyze_curve
    from saturate.table.curves import tidy

    c = np.geomspace(1, 100, 20)
    df = tidy(pd.DataFrame({"run": "r", "metric": metric, "step": range(20), "compute": c,
                            "value": 1 - np.exp(-c / 10)}))
    return analyze_curve(df, AnalysisSettings(n_boot=10))
