"""The ``saturate`` command: a thin Typer layer over the Python API.

Each command lives in its own module and registers itself on :data:`app`.
"""

from __future__ import annotations

from saturate.cli import allocate as _allocate  # noqa: F401  (each registers its command)
from saturate.cli import analyze as _analyze  # noqa: F401
from saturate.cli import compare as _compare  # noqa: F401
from saturate.cli import gate as _gate  # noqa: F401
from saturate.cli import history as _history  # noqa: F401
from saturate.cli import ls as _ls  # noqa: F401
from saturate.cli import plot as _plot  # noqa: F401
from saturate.cli import timeline as _timeline  # noqa: F401
from saturate.cli import watch as _watch  # noqa: F401
from saturate.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    app()
