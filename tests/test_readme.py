"""The README keeps its promises: it is short (the rest is the user guide), its Quickstart is two
commands and CI runs the second, and every file and section the README and the guide link to
exists."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from doc_blocks import ROOT, doc_paths

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The pages whose links are checked: the README, the guide, and the pages beside the guide.
PAGES = [*doc_paths(), "docs/many-runs.md", "docs/measurements.md", "ARCHITECTURE.md",
         "sample_runs/README.md"]


def _quickstart() -> list[str]:
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [ln.split("#", 1)[0].strip() for ln in block.splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def test_quickstart_holds_exactly_two_commands() -> None:
    assert [c.split()[:2] for c in _quickstart()] == [["make", "demo"], ["make", "test"]]


def test_ci_runs_the_quickstarts_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    runs = [ln.strip() for ln in ci.splitlines() if not ln.lstrip().startswith("#")]
    assert any(ln.split()[:2] == _quickstart()[1].split()[:2] for ln in runs if ln), ci


def test_the_readme_fits_in_two_screens() -> None:
    assert len(README) <= 15_000, f"{len(README)} characters: move the detail to docs/guide/"


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated one numbered."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)  # no headings in code
    for title in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        plain = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link's text
        slug = "".join(ch for ch in plain.lower() if ch in " -_" or unicodedata.category(ch)[0] in "LN")
        slug = slug.replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_anchors_are_made_as_github_makes_them() -> None:
    page = "# The CI gate\n## What it measures\n## `saturate gate`: exit codes\n## Many runs\n## Many runs\n"
    assert anchors(page) == {"the-ci-gate", "what-it-measures", "saturate-gate-exit-codes",
                             "many-runs", "many-runs-1"}


def test_every_relative_link_picture_and_anchor_exists() -> None:
    missing = []
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            file = (ROOT / page).parent / path if path else ROOT / page
            if not file.exists():
                missing.append(f"{page}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
                missing.append(f"{page}: {target} (no such section)")
    assert not missing, missing
    pictures = re.findall(r"!\[[^\]]*\]\((docs/[^)]+)\)", README)
    assert pictures and all(Path(ROOT, p).is_file() for p in pictures), "the README shows no picture"
