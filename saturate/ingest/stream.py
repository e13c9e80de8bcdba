"""Read the sources part by part: each part a :class:`~saturate.table.table.Table` of whole runs,
selected and on its x axis (files one at a time, TensorBoard and W&B logs a run at a time, MLflow
databases a few runs at a time), so memory follows the largest part, not the sweep.

Parts are prepared run by run, so they give the same points as the whole table would; what needs
all of them (errors for an empty selection, summed warnings, :attr:`Tables.axis`) comes at the end.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from saturate.errors import (
    PATH_LIMIT,
    InputError,
    NoCurvesError,
    SettingsError,
    miss_text,
    names_text,
    shorten,
    step,
)
from saturate.ingest import axis_join
from saturate.ingest.files import read_table_file
from saturate.ingest.folder import (
    Found,
    Skipped,
    skipped_line,
    special_kind,
    walk,
    walk_all,
    walk_folder,
)
from saturate.ingest.mlflow_common import is_legacy_store, is_mlflow_sqlite
from saturate.ingest.redaction import redact_uri
from saturate.ingest.tensorboard import is_event_file, iter_event_runs, read_event_files
from saturate.ingest.wandb_files import iter_wandb_runs, read_wandb_files
from saturate.settings import Settings
from saturate.settings.checks import check_url
from saturate.table import curves
from saturate.table.axis import (
    ComputeAxis,
    axis_from,
    given_note,
    joined_axis,
    named_axis,
    run_step_flags,
)
from saturate.table.curves import AXIS_METRICS, PARAM_PREFIX, REQUIRED_COLUMNS, TAG_PREFIX
from saturate.table.run_table import run_count
from saturate.table.selection import Offered, selection_miss, unmatched_lines
from saturate.table.table import Table


def check_gpus_axis(settings: Settings) -> bool:
    """True when ``gpus`` makes the x axis GPU-hours from wall time (the points are then read on
    their steps); ``gpus`` with ``compute`` is an error."""
    if settings.gpus is None:
        return False
    if settings.compute is not None:
        raise SettingsError(f"{settings.option('gpus')} makes the x axis GPU-hours from wall "
                            f"time; give it or {settings.option('compute')}, not both")
    return True


def read_tables(source: Any, settings: Settings, *, fast: bool = True,
                on_read: Callable[[ReadProgress], None] | None = None) -> Tables:
    """The sources' tables as ``settings`` selects them, part by part on their x axis (what
    :func:`saturate.api.analyze_read` takes).

    The GPU-hours metric is read even when ``--metric`` leaves it out (the cost diagnostics need
    it) and kept apart from the analysed curves.
    """
    selection = settings.selection()
    check_gpus_axis(settings)
    metric, hours, apart = selection["metric"], settings.gpu_hours, None
    if metric and hours and not any(fnmatch.fnmatchcase(hours, g) for g in metric):
        selection["metric"], apart = [*metric, hours], hours
    return Tables(source, **selection, gpus=settings.gpus, fast=fast, as_given=True, apart=apart,
                  on_part=on_read)


__all__ = ["Tables", "ReadProgress", "walk", "walk_all", "Source", "read_tables", "check_gpus_axis"]

Source: TypeAlias = str | os.PathLike | pd.DataFrame | Table
_URI_SCHEMES = ("http://", "https://", "sqlite://", "postgresql://", "postgresql+", "postgres://",
                "postgres+", "mysql://", "mysql+", "mssql", "file:", "databricks")


@dataclass(frozen=True)
class ReadProgress:
    """How far reading has got, as :class:`Tables` reports it to ``on_part``: ``done`` of
    ``total`` reads (``kind``: ``"files"`` when every read is a table file, else ``"sources"``),
    ``runs`` and ``points`` read so far (before any selection)."""

    done: int
    total: int
    runs: int
    points: int
    kind: str = "sources"

    def summary(self) -> str:
        """``"12/40 files · 310 runs · 1.2M points"``."""
        return (f"{self.done}/{self.total} {self.kind} · {self.runs:,} run{'s' * (self.runs != 1)}"
                f" · {_count(self.points)} point{'s' * (self.points != 1)}")


def _count(n: int) -> str:
    """A count made short: 950, 12.3k, 1.2M."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + suffix
    return str(n)


@dataclass(frozen=True)
class _Read:
    """One read planned: its parts and what kind of source it is."""

    parts: Callable[[], Iterator[Table]]
    mlflow: bool = False
    as_given: bool = False
    file: bool = False
    key: object = None  # the file or store it reads (device and inode), to read it once
    wandb: bool = False
    walked: Path | None = None  # a file a folder walk found: skipped if it holds no curves


@dataclass(frozen=True)
class _Options:
    experiment: list[str] | None
    filter: str | None
    metric: list[str] | None
    fast: bool
    stream: bool
    timeout: float | None = None
    run: list[str] | None = None
    tracker_url: str | None = None
    offered: Offered | None = None  # the names the sources offered (for a miss)


def _identity(path: str | os.PathLike) -> object:
    """The file or folder ``path`` names, however spelled (device and inode); None if unseen."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _once(reads: list[_Read]) -> list[_Read]:
    """``reads`` without a second read of the same file or store, said in one warning (copies
    would be counted as more runs and pooled as seeds)."""
    seen: set[object] = set()
    kept = []
    for r in reads:
        if r.key is not None and r.key in seen:
            continue
        seen.add(r.key)
        kept.append(r)
    if len(kept) < len(reads):
        warnings.warn(f"{len(reads) - len(kept)} source(s) given more than once (the same file "
                      "or store under another name) were read once", stacklevel=3)
    return kept


def _mlflow(source: str | Path, opt: _Options) -> _Read:
    def parts() -> Iterator[Table]:
        # Imported on first use: the MLflow readers load SQLAlchemy, which files do not need.
        from saturate.ingest.mlflow import iter_mlflow

        yield from iter_mlflow(source, experiment=opt.experiment, filter=opt.filter,
                               metric=opt.metric, fast=opt.fast, stream=opt.stream,
                               timeout=opt.timeout, tracker_url=opt.tracker_url,
                               offered=opt.offered)

    local = os.fspath(source).removeprefix("sqlite:///")
    return _Read(parts, mlflow=True, key=None if "://" in local else _identity(local))


def _one(value: Callable[[], Table]) -> Callable[[], Iterator[Table]]:
    return lambda: iter([value()])


def _given(source: Table | pd.DataFrame, as_given: bool) -> Table:
    """A Table, or a DataFrame that is already the tidy table (``as_given``), as it is (its x
    axis kept, less the note on runs left on their step); any other DataFrame tidied."""
    if isinstance(source, Table):
        axis = source.axis
        return source.with_points(source.points, ComputeAxis(axis.name, axis.unit, given_note(axis)))
    if as_given and set(REQUIRED_COLUMNS) <= set(source.columns):
        return Table.of(source)
    tidied = curves.tidy_points(source, origin="DataFrame")
    return Table.of(tidied.table, named_axis(tidied.compute_name))


def _plan(source: Source, opt: _Options, as_given: bool) -> tuple[list[_Read], list[Skipped]]:
    """The reads of one source, and the files a walk of it skipped by name or kind; a missing
    path, a path that is not a file or folder, or an unknown source is an error at once."""
    if isinstance(source, (pd.DataFrame, Table)):
        given = isinstance(source, Table) or (as_given and set(REQUIRED_COLUMNS) <= set(source.columns))
        return [_Read(_one(lambda: _given(source, as_given)), as_given=given)], []
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"cannot read a source of type {type(source).__name__}")
    text = os.fspath(source)
    if text.startswith("wandb://"):
        def parts() -> Iterator[Table]:
            from saturate.ingest.wandb_api import iter_wandb_api

            yield from iter_wandb_api(text, filter=opt.filter, run=opt.run, metric=opt.metric,
                                      timeout=opt.timeout, tracker_url=opt.tracker_url,
                                      offered=opt.offered)

        return [_Read(parts, wandb=True)], []
    if text.startswith(_URI_SCHEMES):
        return [_mlflow(text, opt)], []
    path = Path(text).expanduser()
    if not path.exists():
        if "://" in text:
            raise InputError(f"{shorten(redact_uri(text), PATH_LIMIT)}: not a source saturate knows (no such file, and not "
                             "an http(s)://, sqlite://, postgresql:// or mysql:// URI)")
        raise InputError(f"{shorten(text, PATH_LIMIT)}: no such file or directory")
    if not path.is_dir() and (kind := special_kind(path)) is not None:
        raise InputError(f"{shorten(text, PATH_LIMIT)}: not a file ({kind})")  # never opened
    if is_legacy_store(path) if path.is_dir() else is_mlflow_sqlite(path):
        return [_mlflow(path, opt)], []
    if path.is_file():
        return [_named_file(path, text, opt.tracker_url)], []
    found = walk_folder(path)
    if not found:
        skipped = f"; {skipped_line(found.skipped, most=3)}" if found.skipped else ""
        raise InputError(f"{shorten(text, PATH_LIMIT)}: holds no files saturate can read (CSV, TSV, "
                         f"JSONL, Parquet, TensorBoard, W&B or MLflow){skipped}")
    return _folder_reads(path, text, found, opt), found.skipped


def _named_file(path: Path, text: str, app: str | None) -> _Read:
    """The read of a file the user named: read whatever its name (``app``: the W&B app its
    run's page is on)."""
    if is_event_file(path):
        return _Read(_one(lambda: read_event_files([path], path.parent, source=text)),
                     key=_identity(path))
    if path.suffix == ".wandb":
        return _Read(_one(lambda: read_wandb_files([path], path.parent, source=text, app=app)),
                     key=_identity(path))
    return _Read(_one(lambda: read_table_file(path, source=text, split=True)), file=True,
                 key=_identity(path))


def _folder_reads(path: Path, text: str, found: Found, opt: _Options) -> list[_Read]:
    """The reads of what a walk of the folder ``path`` found."""
    events, runs = found.events, found.runs
    reads = [_Read(_one(functools.partial(read_table_file, t, source=str(t), split=True)), file=True,
                   key=_identity(t), walked=t) for t in found.tables]
    if events and opt.stream:
        reads.append(_Read(lambda: iter_event_runs(events, path, source=text),
                           key=("events", _identity(path))))
    elif events:
        reads.append(_Read(_one(lambda: read_event_files(events, path, source=text)),
                           key=("events", _identity(path))))
    if runs and opt.stream:
        reads.append(_Read(lambda: iter_wandb_runs(runs, path, source=text, app=opt.tracker_url),
                           key=("wandb", _identity(path))))
    elif runs:
        reads.append(_Read(_one(lambda: read_wandb_files(runs, path, source=text,
                                                         app=opt.tracker_url)),
                           key=("wandb", _identity(path))))
    return reads + [_mlflow(store, opt) for store in found.stores]


class _Notes:
    """Warnings raised while parts are prepared, given once at the end (``dropped N ...`` ones of
    a kind summed)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[type[Warning], str, str], int | None] = {}

    def add(self, caught: list[warnings.WarningMessage]) -> None:
        for w in caught:
            text = str(w.message)
            match = re.match(r"(.*?dropped )(\d+)( .*)", text, flags=re.S)
            if match is None:
                self.counts[(w.category, text, "")] = None
            else:
                self.count(w.category, match[1], int(match[2]), match[3])

    def count(self, category: type[Warning], head: str, n: int, tail: str) -> None:
        key = (category, head, tail)
        self.counts[key] = (self.counts.get(key) or 0) + n

    def emit(self) -> None:
        for (category, head, tail), n in self.counts.items():
            warnings.warn(head if n is None else f"{head}{n}{tail}", category, stacklevel=4)


class Tables:
    """The sources' :class:`~saturate.table.table.Table` s, part by part (iterate once); after the
    last part, :attr:`axis` is the x axis of the whole read, :attr:`apart` the points of the
    ``apart`` metric (read for the diagnostics, not analysed) and :attr:`skipped` the files the
    folder walks passed over (:mod:`saturate.ingest.folder`), named in one warning.

    Arguments as :func:`saturate.load`; ``as_given``: a tidy DataFrame is only selected from;
    ``on_part``: called with a :class:`ReadProgress` after each part and each read.
    """

    def __init__(
        self,
        source: Source | Sequence[Source] | None,
        *,
        experiment: Sequence[str] | str | None = None,
        filter: str | None = None,  # noqa: A002 - the CLI's option name
        metric: Sequence[str] | str | None = None,
        run: Sequence[str] | str | None = None,
        compute: str | None = None,
        gpus: float | str | None = None,
        fast: bool = True,
        stream: bool = True,
        as_given: bool = False,
        apart: str | None = None,
        timeout: float | None = None,
        tracker_url: str | None = None,
        on_part: Callable[[ReadProgress], None] | None = None,
    ) -> None:
        if source is None:
            source = os.environ.get("MLFLOW_TRACKING_URI")
            if not source:
                raise InputError("no source given and MLFLOW_TRACKING_URI is not set")
        self.sources = list(source) if isinstance(source, (list, tuple)) else [source]
        if not self.sources:
            raise InputError("no source given")
        if gpus is not None and compute is not None:
            raise SettingsError("--gpus makes the x axis GPU-hours from wall time; give it or "
                                "--compute, not both")
        self.explicit, self.gpus = compute is not None, gpus
        compute = "step" if gpus is not None else compute  # GPU-hours are made from the steps
        self.experiment, self.metric = _as_list(experiment), _as_list(metric)
        self.run, self.compute, self.apart_metric = _as_list(run), compute, apart
        # The compute axis may be a metric: fetch it along with the selected metrics.
        fetch = None if self.metric is None else [
            *self.metric, *([compute] if compute else []), *([apart] if apart else []),
            *AXIS_METRICS,
        ]
        if tracker_url is not None:
            tracker_url = check_url(tracker_url, "tracker_url")
        self.offered = Offered()  # the names there were to select from, for a miss
        opt = _Options(self.experiment, filter, fetch, fast, stream, timeout, self.run,
                       tracker_url, self.offered)
        planned = [_plan(s, opt, as_given) for s in self.sources]
        self.reads = _once([r for reads, _ in planned for r in reads])
        #: The files the walks skipped (by name or kind, then while reading: for their content).
        self.skipped: list[Skipped] = list(dict.fromkeys(s for _, sk in planned for s in sk))
        self.any_mlflow = any(r.mlflow for r in self.reads)
        if filter and not any(r.mlflow or r.wandb for r in self.reads):
            raise SettingsError("--filter is an MLflow search filter (or W&B's JSON run filter "
                                "for wandb://); none of the sources is MLflow or W&B")
        self.axis: ComputeAxis | None = None
        self.apart: list[Table] = []
        self._axis_error: InputError | None = None
        self._has_axis = False
        self.on_part = on_part

    def __iter__(self) -> Iterator[Table]:
        notes, axes, flags, kept = _Notes(), [], [], 0
        where = f"reading {names_text(map(_label, self.sources), most=3, limit=PATH_LIMIT)}"
        kind = "files" if all(r.file for r in self.reads) else "sources"
        runs = points = 0
        for done, read in enumerate(self.reads):
            for raw in self._parts_of(read, where):
                with warnings.catch_warnings(record=True) as caught, step(where):
                    warnings.simplefilter("always")
                    part = self._prepare(raw, read.as_given, notes)
                notes.add(caught)
                runs += run_count(raw.points)
                points += len(raw)
                self._report(ReadProgress(done, len(self.reads), runs, points, kind))
                if part.empty:
                    continue
                axes.append(part.axis)
                flags += run_step_flags(part.points)
                kept += len(part)
                yield part
            self._report(ReadProgress(done + 1, len(self.reads), runs, points, kind))
        if not kept:
            self._nothing_kept()  # the error says why; what was dropped on the way is moot
        for line in unmatched_lines(self.offered, **self._selection()):
            warnings.warn(line, curves.DataWarning, stacklevel=2)
        if self.skipped:
            warnings.warn(skipped_line(self.skipped), curves.DataWarning, stacklevel=2)
        notes.emit()
        axis = joined_axis(axes)
        self.axis = axis_from(axis.name, axis.unit, axis.note, flags, explicit=self.explicit)

    def read_axis(self) -> ComputeAxis:
        """The x axis of the whole read (:attr:`axis`), known once every part is read."""
        assert self.axis is not None, "the x axis is known once the parts are read"
        return self.axis

    def _parts_of(self, read: _Read, where: str) -> Iterator[Table]:
        """The parts of one read; a file a walk found that holds no curves is skipped (named at
        the end), one the user named is an error."""
        try:
            yield from _named(read.parts, where)
        except NoCurvesError as exc:
            if read.walked is None:
                raise
            self.skipped.append(Skipped(read.walked, exc.why.removeprefix("holds no curves: "),
                                        "content"))

    def _selection(self) -> dict[str, list[str] | None]:
        """The selectors that apply here (an MLflow store picks its experiments itself)."""
        return {"metric": self.metric, "run": self.run,
                "experiment": None if self.any_mlflow else self.experiment}

    def _report(self, progress: ReadProgress) -> None:
        if self.on_part is not None:
            self.on_part(progress)

    def _prepare(self, part: Table, as_given: bool, notes: _Notes) -> Table:
        """``part`` selected and on its x axis, the ``apart`` metric's points taken out."""
        if self.metric or self.run or self.experiment or self.compute:
            self.offered.add(part.points)  # what a miss would name
        if self.experiment and not self.any_mlflow:
            part = part.with_points(curves.select(part.points, experiment=self.experiment))
        if self.compute:
            part = self._on_axis(part, self.compute, notes)
        elif not as_given:
            part = axis_join.auto_compute(part)
        part = part.with_points(curves.select(part.points, metric=self.metric, run=self.run))
        if self.apart_metric is not None and not part.empty:
            is_apart = (part.points["metric"] == self.apart_metric).to_numpy()
            if is_apart.any():
                self.apart.append(part.with_points(part.points.loc[is_apart]))
                part = part.with_points(part.points.loc[~is_apart].reset_index(drop=True))
        if self.gpus is not None and not part.empty:
            part = axis_join.gpu_hours(part, self.gpus)
        return part

    def _on_axis(self, part: Table, name: str, notes: _Notes) -> Table:
        """``part`` on the ``compute`` axis (``name``); a part that lacks it loses its points
        (counted), and errors wait for the end."""
        points = part.points
        if name not in points.columns and name.startswith((PARAM_PREFIX, TAG_PREFIX)):
            self._has_axis = True  # a run fact as the x axis
            return axis_join.set_compute(part, name)
        has = (name == "step" or (name in points.columns and name not in REQUIRED_COLUMNS)
               or bool((points["metric"] == name).any()))
        if not has:
            notes.count(curves.DataWarning, "dropped ", len(points),
                        f" point(s) with no {name!r} value at their step")
            return part.with_points(points.iloc[0:0])
        try:
            out = axis_join.set_compute(part, name)
        except InputError as exc:
            self._axis_error = exc
            return part.with_points(points.iloc[0:0])
        self._has_axis = True
        return out

    def _nothing_kept(self) -> None:
        """Raise the error of a read that kept no curve: the x axis named is not there, a
        selection matched nothing (naming what exists), or the sources hold no curves."""
        where = names_text(map(_label, self.sources), most=3, limit=PATH_LIMIT)
        if self.compute and not self._has_axis:
            if self._axis_error is not None:
                raise self._axis_error
            raise InputError(miss_text(f"--compute {shorten(repr(self.compute))} is neither a "
                                       "column nor a metric of the data", [self.compute],
                                       self.offered.metrics, "metrics"))
        miss = selection_miss(self.offered, **self._selection(), where=where)
        if miss is not None:
            raise miss
        skipped = f"; {skipped_line(self.skipped, most=3)}" if self.skipped else ""
        raise InputError(f"{where}: no curves{skipped}")


def _named(read: Callable[[], Iterator[Table]], where: str) -> Iterator[Table]:
    """The parts ``read()`` gives, an unexpected error named as happening ``where``."""
    with step(where):
        parts = read()
    while True:
        with step(where):
            part = next(parts, None)
        if part is None:
            return
        yield part


def _label(source: Any) -> str:
    return "DataFrame" if isinstance(source, pd.DataFrame) else str(source)


def _as_list(x: Sequence[str] | str | None) -> list[str] | None:
    return None if x is None else [x] if isinstance(x, str) else list(x)
