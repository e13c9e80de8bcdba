"""The README keeps its promises: two Quickstart commands, and every file it links exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_quickstart_holds_exactly_two_commands() -> None:
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert [c.split()[:2] for c in commands] == [["make", "demo"], ["make", "test"]]


def test_every_relative_link_and_picture_exists() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)\)", README)
    local = [t for t in targets if "://" not in t and not t.startswith("mailto:")]
    assert any(t.startswith("docs/") for t in local), "the README shows no picture"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing
