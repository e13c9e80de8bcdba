"""Read scalar series from TensorBoard event files, every point (no reservoir sampling).

Both TF1-style ``simple_value`` summaries (PyTorch's SummaryWriter) and TF2 scalar tensors are read.
The run is the event file's folder relative to the folder the user gave (or the folder's name).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from saturate.errors import PATH_LIMIT, InputError, shorten
from saturate.table.curves import tidy
from saturate.table.table import Table


def is_event_file(path: Path) -> bool:
    """TensorBoard names its files ``events.out.tfevents.<time>.<host>...``."""
    return "tfevents" in path.name


def _events(path: Path) -> Iterator[Any]:
    """The events of one file, every record's checksum checked (TensorBoard's own loader stops
    silently): a bad record is an :class:`InputError`, a cut-short last one :class:`_CutShort`."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.compat.tensorflow_stub import errors
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import PyRecordReader_New

    reader = PyRecordReader_New(str(path))
    try:
        n = 0
        while True:
            try:
                reader.GetNext()
            except errors.OutOfRangeError:
                return
            except errors.DataLossError as exc:
                if "truncated record" in str(exc.message):
                    raise _CutShort(n) from None
                raise InputError(
                    f"{shorten(path, PATH_LIMIT)}: corrupt TensorBoard event file (record "
                    f"{n + 1} fails its checksum); its points from there on would be lost"
                ) from None
            n += 1
            yield event_pb2.Event.FromString(reader.record())
    finally:
        reader.file_handle.close()


class _CutShort(Exception):
    """The last record of an event file is incomplete (``records`` were whole before it)."""

    def __init__(self, records: int) -> None:
        super().__init__(records)
        self.records = records


def _scalars(path: Path) -> list[tuple[str, int, float, float]]:
    # tensorboard pulls in protobuf and more: loaded only when event files are read.
    from tensorboard.util import tensor_util

    rows: list[tuple[str, int, float, float]] = []
    try:
        for event in _events(path):
            if not event.HasField("summary"):
                continue
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    val = float(v.simple_value)
                elif kind == "tensor" and (
                    v.metadata.plugin_data.plugin_name in ("scalars", "")
                    and len(v.tensor.tensor_shape.dim) == 0
                ):
                    try:
                        val = float(tensor_util.make_ndarray(v.tensor))
                    except (TypeError, ValueError):
                        continue
                else:
                    continue
                rows.append((v.tag, int(event.step), val, float(event.wall_time)))
    except _CutShort:
        warnings.warn(f"{shorten(path, PATH_LIMIT)}: the TensorBoard event file is cut short "
                      f"(its last record is incomplete: still being written, or copied in part); "
                      f"{len(rows)} point(s) read before it, the rest of the file lost",
                      stacklevel=2)
    except InputError:
        raise
    except Exception as exc:  # protobuf and the reader raise a variety of errors on bad files
        why = shorten(str(exc).strip() or type(exc).__name__, 120)
        raise InputError(f"{shorten(path, PATH_LIMIT)}: not a readable TensorBoard event file "
                         f"({why})") from None
    return rows


def _run_name(f: Path, root: Path) -> str:
    rel = f.parent.relative_to(root) if f.parent != root and root in f.parents else None
    return str(rel) if rel is not None and str(rel) != "." else (root.name if root.is_dir() else f.parent.name)


def _frame(f: Path, root: Path) -> pd.DataFrame | None:
    """The scalar points of one event file, its run named; None when it holds none."""
    rows = _scalars(f)
    if not rows:
        return None
    return pd.DataFrame(rows, columns=["metric", "step", "value", "timestamp"]).assign(
        run=_run_name(f, root))


def read_event_files(files: list[Path], root: Path, *, source: str | None = None) -> Table:
    """Read event files under ``root`` into a :class:`~saturate.table.table.Table`, one run per
    folder (on their step)."""
    frames = [frame for f in sorted(files) if (frame := _frame(f, root)) is not None]
    if not frames:
        raise InputError(f"{shorten(root, PATH_LIMIT)}: TensorBoard event files hold no scalar "
                         "summaries")
    df = pd.concat(frames, ignore_index=True).assign(source=source or str(root))
    return Table.of(tidy(df, origin=str(root)))


def iter_event_runs(files: list[Path], root: Path, *, source: str | None = None) -> Iterator[Table]:
    """:func:`read_event_files` one run (folder) at a time, for bounded memory; the same error
    when no file holds a scalar."""
    by_run: dict[str, list[Path]] = {}
    for f in sorted(files):
        by_run.setdefault(_run_name(f, root), []).append(f)
    found = False
    for run_files in by_run.values():
        frames = [frame for f in run_files if (frame := _frame(f, root)) is not None]
        if frames:
            found = True
            df = pd.concat(frames, ignore_index=True).assign(source=source or str(root))
            yield Table.of(tidy(df, origin=str(root)))
    if not found:
        raise InputError(f"{root}: TensorBoard event files hold no scalar summaries")
