"""Fuzzing what the user owns: metric names drawn from all of Unicode through analysis, every
report format and the MLflow tag keys; report outputs onto every kind of file; MLflow sqlite
stores cut and garbled at random. The outcome is a result or one SaturateError, the target keeps
its kind, and no report line begins with ``::`` from the data.

Settings and the per-case guard in ``fuzzing.py`` (``make fuzz`` runs more cases).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fuzz_files import mutated_bytes
from fuzzing import case, check_tidy, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from synthetic_store import synthetic_runs, write_store

import saturate
from saturate.errors import InputError
from saturate.report.output import write_atomic

pytestmark = pytest.mark.slow  # a fuzz budget

# Any code point but lone surrogates (which no file, database or terminal can hold).
unicode_names = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
RAW = ("\x00", "\x1b", "\u202e", "\r")


def _curves(metrics: list[str]) -> pd.DataFrame:
    c = np.geomspace(1, 1000, 16)
    rows = [{"run": f"r{i}", "metric": m, "step": k, "compute": float(c[k]),
             "value": float(1 - np.exp(-c[k] / (30 + i)))}
            for i, m in enumerate(metrics) for k in range(len(c))]  # fmt: skip
    return pd.DataFrame(rows)


@fuzz_settings(ci=6, share=0.01)
@given(st.lists(unicode_names, min_size=1, max_size=3, unique=True))
def test_metric_names_from_all_of_unicode(metrics: list[str]) -> None:
    from saturate.report import render
    from saturate.report.html import render_html
    from saturate.tracker.writeback import tags_for

    with case("unicode names"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = saturate.analyze(_curves(metrics), n_boot=10, workers=1)
        outputs = [render(analysis, fmt) for fmt in ("json", "markdown")]
        outputs.append(render_html(analysis))
        for text in outputs:
            assert not any(raw in text for raw in RAW), text[:200]
            assert not any(line.lstrip().startswith("::") for line in text.splitlines())
        for curve in analysis.curves:
            assert all(len(key) <= 250 for key in tags_for(curve))


KINDS = ("missing", "regular", "symlink", "dangling", "fifo", "folder", "socket", "tty",
         "no parent")


def _make(kind: str, d: Path) -> tuple[Path, object]:
    target = d / "report.out"
    keep: object = None
    if kind == "regular":
        target.write_text("old")
    elif kind == "symlink":
        (d / "real").write_text("old")
        target.symlink_to(d / "real")
    elif kind == "dangling":
        target.symlink_to(d / "nowhere")
    elif kind == "fifo":
        os.mkfifo(target)
        keep = threading.Thread(target=lambda: Path(target).read_bytes(), daemon=True)
        keep.start()
    elif kind == "folder":
        target.mkdir()
    elif kind == "socket":
        keep = socket.socket(socket.AF_UNIX)
        keep.bind(str(target))
    elif kind == "tty":
        master, slave = os.openpty()
        target = Path(os.ttyname(slave))
        keep = (master, slave)
    elif kind == "no parent":
        (d / "file").write_text("x")
        target = d / "file" / "report.out"
    return target, keep


def _kind_of(path: Path) -> str:
    return ("symlink" if path.is_symlink() else "fifo" if path.is_fifo() else
            "socket" if path.is_socket() else "char" if path.is_char_device() else
            "folder" if path.is_dir() else "file" if path.exists() else "none")


@fuzz_settings(ci=9, share=0.01)
@given(st.sampled_from(KINDS), st.binary(max_size=2000))
def test_outputs_onto_every_kind_of_file(kind: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        target, keep = _make(kind, Path(tmp))
        before = _kind_of(target)
        try:
            with case("output target"):
                write_atomic(target, data)
                if kind in ("regular", "missing", "symlink", "dangling"):
                    assert Path(os.path.realpath(target)).read_bytes() == data
            after = _kind_of(target)  # before a terminal is closed (its node goes with it)
        finally:
            if isinstance(keep, tuple):
                for fd in keep:
                    os.close(fd)
            elif isinstance(keep, socket.socket):
                keep.close()
        assert after == before or (before == "none" and after == "file"), (kind, before, after)
        left = [p.name for p in Path(tmp).rglob("*.tmp")]
        assert not left, left


@pytest.fixture(scope="module")
def store_bytes(mlflow_template: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    db = tmp_path_factory.mktemp("fuzz-store") / "mlflow.db"
    write_store(db, mlflow_template, synthetic_runs(2, 1, 20))
    return db.read_bytes()


@fuzz_settings(ci=8, share=0.01)
@given(st.data(), st.booleans())
def test_sqlite_stores_cut_and_garbled_at_random(store_bytes: bytes, data: st.DataObject,
                                                 fast: bool) -> None:
    blob = data.draw(mutated_bytes(store_bytes))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "mlflow.db"
        db.write_bytes(blob)
        with case("sqlite store"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_tidy(saturate.load(f"sqlite:///{db}", fast=fast, timeout=20).points)
        assert db.read_bytes() == blob  # read, never written
        shutil.rmtree(Path(tmp) / "artifacts", ignore_errors=True)


def test_a_socket_output_is_one_input_error(tmp_path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s"))
    try:
        with pytest.raises(InputError, match="is a socket"):
            write_atomic(tmp_path / "s", "x")
    finally:
        sock.close()
