"""The vendored real curves are small, documented file by file, and carry their licence."""

from __future__ import annotations

import pytest
from realdata import REALCURVES, realcurves_path

README = (REALCURVES / "README.md").read_text(encoding="utf-8")
NOT_DATA = {"README.md", "LICENSE", "make_subset.py"}
DATA = sorted(p for p in REALCURVES.rglob("*")
              if p.is_file() and p.name not in NOT_DATA and "__pycache__" not in p.parts)


def test_every_vendored_file_is_documented_with_its_origin_and_licence():
    assert DATA, REALCURVES
    for path in DATA:
        rel = path.relative_to(REALCURVES).as_posix()
        row = next((line for line in README.splitlines() if line.startswith(f"| `{rel}`")), None)
        assert row is not None, f"{rel} is not in the table of {REALCURVES / 'README.md'}"
        licence = row.rstrip(" |").rsplit("|", 1)[1]
        assert licence.strip(), f"{rel}: say its licence (or that none is stated)"
        assert f"## {rel}" in README, f"{rel} has no section saying where it comes from"
        if "Apache" in licence or "MIT" in licence:
            assert (path.parent / "LICENSE").is_file(), f"{rel}: licence text missing"


def test_small_enough_to_vendor():
    total = sum(p.stat().st_size for p in DATA)
    assert total < 400_000, f"tests/data/realcurves holds {total} bytes"


def test_a_missing_file_is_an_error_not_a_skip():
    with pytest.raises(FileNotFoundError, match="vendored real curve missing"):
        realcurves_path("dopamine", "no_such_file.csv")
