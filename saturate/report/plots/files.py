"""Figures as bytes and as files: :func:`figure_bytes` for embedding, :func:`save_curve_figures`
and :func:`save_diagnostic_figures` for ``saturate plot`` (one file per figure and format)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from saturate.errors import InputError, SettingsError
from saturate.report.output import save_with
from saturate.report.plots.curves import curve_figure
from saturate.report.plots.diagnostics import diagnostic_figure
from saturate.report.plots.style import confidence_of, curves_of, select
from saturate.report.rows import Analysed

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure

FILE_FORMATS = ("png", "svg", "pdf")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def figure_bytes(fig: Figure, fmt: str = "png", dpi: int = 96) -> bytes:
    """The figure encoded as PNG or SVG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()


def _slug(text: str, n: int = 60) -> str:
    return (_UNSAFE.sub("_", text).strip("._") or "x")[:n]


def _check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    """The file formats asked for, lower-case and without repeats; a SettingsError names the bad."""
    out = tuple(dict.fromkeys(f.lower().lstrip(".") for f in formats))
    bad = [f for f in out if f not in FILE_FORMATS]
    if bad or not out:
        raise SettingsError(f"--format: expected png, svg or pdf, got {', '.join(bad) or 'none'}")
    return out


def _make_folder(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create the folder ({exc.strerror})") from None


def _unique(stem: str, used: set[str]) -> str:
    """``stem``, or ``stem-2``, ``stem-3``... the first not in ``used`` (which it joins)."""
    name, i = stem, 1
    while name in used:
        i += 1
        name = f"{stem}-{i}"
    used.add(name)
    return name


def _save(fig: Figure, out: Path, name: str, formats: tuple[str, ...], dpi: int) -> list[Path]:
    paths = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        def write(fh: BinaryIO, fmt: str = fmt) -> None:
            fig.savefig(fh, format=fmt, dpi=dpi)

        save_with(path, write, what="--out")
        paths.append(path)
    return paths


def save_curve_figures(analysis: Analysed, out_dir: str | Path, formats: Iterable[str] = ("png",), *,
                       run: str | None = None, metric: str | None = None,
                       dpi: int = 120) -> list[Path]:
    """Write one figure per curve to ``out_dir`` as ``<run>__<metric>.<fmt>`` (only
    ``[A-Za-z0-9._-]`` kept, clashes get ``-2``, ``-3``); return the paths."""
    formats = _check_formats(formats)
    curves = select(curves_of(analysis), run, metric)
    if not curves:
        raise InputError(f"no analysed curve matches run={run!r}, metric={metric!r}")
    out = Path(out_dir)
    _make_folder(out)
    confidence = confidence_of(analysis)
    used: set[str] = set()
    written: list[Path] = []
    for curve in curves:
        name = _unique(f"{_slug(curve.run)}__{_slug(curve.metric)}", used)
        written += _save(curve_figure(curve, confidence=confidence), out, name, formats, dpi)
    return written


def save_diagnostic_figures(analysis: Analysed, out_dir: str | Path, formats: Iterable[str] = ("png",),
                            *, dpi: int = 120) -> list[Path]:
    """Write the figure of every diagnostic that has one to ``out_dir`` as
    ``diagnostic__<kind>__<run>__<metric>.<fmt>``; return the paths (none when no diagnostic
    has a figure)."""
    formats = _check_formats(formats)
    out = Path(out_dir)
    used: set[str] = set()
    written: list[Path] = []
    for d in getattr(analysis, "diagnostics", ()) or ():
        fig = diagnostic_figure(d, analysis)
        if fig is None:
            continue
        _make_folder(out)  # only when there is a figure to write
        what = d.metrics[-1] if d.metrics else ""
        name = _unique(f"diagnostic__{d.kind}__{_slug(d.run)}__{_slug(what)}", used)
        written += _save(fig, out, name, formats, dpi)
    return written
