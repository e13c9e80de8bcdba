"""Where the tests find real public learning curves: the subset vendored under
``tests/data/realcurves/`` (origin, commit and licence of each file in its README.md), so the
real-data tests run in any clone, never skip."""

from __future__ import annotations

from pathlib import Path

REALCURVES = Path(__file__).resolve().parent / "data" / "realcurves"


def realcurves_path(*parts: str) -> Path:
    """The vendored file ``tests/data/realcurves/<parts...>``; a missing one is an error, not a
    reason to skip (rebuild it with ``tests/data/realcurves/make_subset.py``)."""
    path = REALCURVES.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: vendored real curve missing; see tests/data/realcurves/README.md")
    return path
