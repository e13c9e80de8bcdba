"""Read scalar series from TensorBoard event files, every point (no reservoir sampling).

Both TF1-style ``simple_value`` summaries (PyTorch's SummaryWriter) and TF2 scalar tensors are read.
The run is the event file's folder relative to the folder the user gave (or the folder's name).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from saturate.curves import tidy
from saturate.errors import PATH_LIMIT, InputError, shorten

__all__ = ["is_event_file", "read_event_files", "iter_event_runs"]


def is_event_file(path: Path) -> bool:
    """TensorBoard names its files ``events.out.tfevents.<time>.<host>...``."""
    return "tfevents" in path.name


def _scalars(path: Path) -> list[tuple[str, int, float, float]]:
    # tensorboard pulls in protobuf and more: loaded only when event files are read.
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    rows: list[tuple[str, int, float, float]] = []
    try:
        for event in EventFileLoader(str(path)).Load():
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
    except Exception as exc:  # the loader raises a variety of errors on truncated/corrupt files
        why = shorten(str(exc).strip() or type(exc).__name__, 120)
        raise InputError(
            f"{shorten(path, PATH_LIMIT)}: not a readable TensorBoard event file ({why})"
        ) from None
    return rows


def _run_name(f: Path, root: Path) -> str:
    rel = f.parent.relative_to(root) if f.parent != root and root in f.parents else None
    return str(rel) if rel is not None and str(rel) != "." else (root.name if root.is_dir() else f.parent.name)


def read_event_files(files: list[Path], root: Path, *, source: str | None = None) -> pd.DataFrame:
    """Read event files under ``root`` into the tidy table, one run per folder."""
    frames = []
    for f in sorted(files):
        rows = _scalars(f)
        if not rows:
            continue
        frame = pd.DataFrame(rows, columns=["metric", "step", "value", "timestamp"])
        frame["run"] = _run_name(f, root)
        frames.append(frame)
    if not frames:
        raise InputError(
            f"{shorten(root, PATH_LIMIT)}: TensorBoard event files hold no scalar summaries"
        )
    df = pd.concat(frames, ignore_index=True).assign(source=source or str(root))
    return tidy(df, origin=str(root))


def iter_event_runs(
    files: list[Path], root: Path, *, source: str | None = None
) -> Iterator[pd.DataFrame]:
    """:func:`read_event_files` one run (folder) at a time, for bounded memory; the same error
    when no file holds a scalar."""
    by_run: dict[str, list[Path]] = {}
    for f in sorted(files):
        by_run.setdefault(_run_name(f, root), []).append(f)
    found = False
    for run_files in by_run.values():
        frames = []
        for f in run_files:
            rows = _scalars(f)
            if rows:
                frames.append(pd.DataFrame(rows, columns=["metric", "step", "value", "timestamp"])
                              .assign(run=_run_name(f, root)))
        if frames:
            found = True
            df = pd.concat(frames, ignore_index=True).assign(source=source or str(root))
            yield tidy(df, origin=str(root))
    if not found:
        raise InputError(f"{root}: TensorBoard event files hold no scalar summaries")
