"""Fuzzing the loaders: whatever file saturate is pointed at, the outcome is the tidy table or one
:class:`~saturate.errors.SaturateError` (exit 2 from the CLI), never another exception.

Strategies in ``fuzz_files.py``; settings and the per-case guard in ``fuzzing.py`` (``make fuzz``
runs the same tests with 10,000 cases in all).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz_files import fuzzed_file, mutated_bytes, tensorboard_events, wandb_history
from fuzzing import CASE_SECONDS, case, check_tidy, fuzz_settings, record
from hypothesis import given
from hypothesis import strategies as st

import saturate


def _load(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_tidy(saturate.load(path).points)


@fuzz_settings(ci=40, share=0.55)
@given(fuzzed_file())
def test_any_table_file_gives_the_tidy_table_or_one_clear_error(blob: tuple[str, bytes]) -> None:
    name, data = blob
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        path.write_bytes(data)
        with case("table file"):
            _load(path)


@fuzz_settings(ci=10, share=0.06)
@given(st.lists(fuzzed_file(), min_size=1, max_size=4))
def test_a_folder_of_fuzzed_files_gives_the_tidy_table_or_one_clear_error(
    blobs: list[tuple[str, bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as d:
        for i, (name, data) in enumerate(blobs):
            sub = Path(d) / f"r{i}"
            sub.mkdir()
            (sub / name).write_bytes(data)
        with case("folder"):
            _load(Path(d))


def _event_file_bytes(events: list[tuple[str, int, Any]]) -> bytes:
    """An event file as TensorBoard writes it, with fixed wall times (so a case replays exactly)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter
    from tensorboard.util import tensor_util

    buf = io.BytesIO()
    writer = RecordWriter(buf)
    writer.write(event_pb2.Event(wall_time=1000.0, file_version="brain.Event:2").SerializeToString())
    for i, (tag, step, value) in enumerate(events):
        if isinstance(value, np.ndarray):
            meta = summary_pb2.SummaryMetadata(
                plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
            v = summary_pb2.Summary.Value(tag=tag, metadata=meta,
                                          tensor=tensor_util.make_tensor_proto(value))
        else:
            v = summary_pb2.Summary.Value(tag=tag, simple_value=value)
        event = event_pb2.Event(wall_time=1001.0 + i, step=step, summary=summary_pb2.Summary(value=[v]))
        writer.write(event.SerializeToString())
    return buf.getvalue()


@fuzz_settings(ci=15, share=0.12)
@given(tensorboard_events(), st.data())
def test_any_tensorboard_file_gives_the_tidy_table_or_one_clear_error(
    events: list[tuple[str, int, Any]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as d:
        logdir = Path(d) / "runs" / "exp"
        logdir.mkdir(parents=True)
        blob = data.draw(mutated_bytes(_event_file_bytes(events)))
        (logdir / "events.out.tfevents.1000.fuzz").write_bytes(blob)
        with case("tensorboard"):
            _load(Path(d) / "runs")


@pytest.mark.subprocess  # a real process per case: its exit code, stderr and a hang
@fuzz_settings(ci=2, share=0.005)
@given(fuzzed_file())
def test_the_cli_exits_0_or_2_with_one_line_and_no_traceback(blob: tuple[str, bytes]) -> None:
    name, data = blob
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        path.write_bytes(data)
        cmd = [sys.executable, "-m", "saturate", "analyze", str(path), "--format", "json",
               "--n-boot", "20"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=CASE_SECONDS)
        except subprocess.TimeoutExpired:
            record("cli", "hang", name)
            raise
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    ok = proc.returncode == 0 and not errors and isinstance(json.loads(proc.stdout), dict)
    refused = proc.returncode == 2 and len(errors) == 1 and len(errors[0]) <= 300
    clean = "Traceback" not in proc.stderr
    record("cli", "ok" if ok and clean else "refused" if refused and clean else "traceback",
           proc.stderr[-300:])
    assert clean and (ok or refused), proc.stderr[-2000:]



def _wandb_log(history: list[dict[str, str]]) -> bytes:
    """A W&B transaction log (the wandb package's header and protobuf records, framed as it
    frames them) holding ``history``."""
    from wandb_runs import append_records, history_record

    from saturate.ingest.wandb_files import HEADER, MAGIC

    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "run-x.wandb"
        log.write_bytes(MAGIC + b"\0")
        assert len(MAGIC) + 1 == HEADER
        append_records(log, [history_record(items) for items in history])
        return log.read_bytes()


@fuzz_settings(ci=15, share=0.06)
@given(wandb_history(), st.data())
def test_any_wandb_log_with_odd_records_gives_the_tidy_table_or_one_clear_error(
    history: list[dict[str, str]], data: st.DataObject
) -> None:
    pytest.importorskip("wandb")
    blob = _wandb_log(history)
    if data.draw(st.booleans()):
        blob = data.draw(mutated_bytes(blob))
    with tempfile.TemporaryDirectory() as d:
        run_dir = Path(d) / "wandb" / "offline-run-20260101_000000-x"
        (run_dir / "files").mkdir(parents=True)
        (run_dir / "run-x.wandb").write_bytes(blob)
        with case("wandb-odd-records"):
            _load(run_dir / "run-x.wandb")
        with case("wandb-odd-records"):
            _load(Path(d))


@fuzz_settings(ci=6, share=0.02)
@given(wandb_history(), st.sets(st.sampled_from(
    ["no-log", "empty-log", "damaged-header", "fifo-log", "fifo-table", "socket"]), min_size=1))
def test_a_wandb_folder_with_special_files_gives_the_tidy_table_or_one_clear_error(
    history: list[dict[str, str]], odd: set[str]
) -> None:
    """Run folders without their log, logs empty or damaged, FIFOs and sockets named like what
    saturate reads: never a hang (a FIFO opened waits for a writer), never a traceback."""
    import socket

    pytest.importorskip("wandb")
    with tempfile.TemporaryDirectory() as d:
        wandb_dir = Path(d) / "wandb"
        good = wandb_dir / "offline-run-20260101_000000-good"
        (good / "files").mkdir(parents=True)
        (good / "run-good.wandb").write_bytes(_wandb_log(
            [{"_step": str(s), "reward": str(s / 10)} for s in range(1, 8)] + history))
        for i, kind in enumerate(sorted(odd)):
            run_dir = wandb_dir / f"offline-run-20260101_00000{i}-r{i}"
            (run_dir / "files").mkdir(parents=True)
            (run_dir / "files" / "requirements.txt").write_text("numpy==2.0\nvalue==1\n")
            log = run_dir / f"run-r{i}.wandb"
            if kind == "empty-log":
                log.write_bytes(b"")
            elif kind == "damaged-header":
                log.write_bytes(b"XXXXXXX" + _wandb_log(history)[7:])
            elif kind == "fifo-log":
                os.mkfifo(log)
            elif kind == "fifo-table":
                os.mkfifo(wandb_dir / f"metrics{i}.csv")
            elif kind == "socket":
                with socket.socket(socket.AF_UNIX) as s:
                    s.bind(str(run_dir / f"run-s{i}.wandb"))
        with case("wandb-special-files"):
            _load(Path(d))
