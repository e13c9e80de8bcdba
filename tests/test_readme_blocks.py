"""What the README and the user guide say of their code holds: the commands they name exist, the
notebooks are as many as they count, and ``make setup`` installs what runs the notebooks as
Jupyter does. Running every code block of the pages is tests/test_doc_blocks.py's subject."""

from __future__ import annotations

import importlib.util
import re

from cli_run import run_cli
from doc_blocks import ROOT, doc_text, saturate_commands

DOCS = doc_text()


def test_every_command_the_pages_name_exists() -> None:
    named = {c.argv[1] for c in saturate_commands()}
    assert {"analyze", "gate", "watch", "history", "timeline"} <= named  # the parser sees them
    done = run_cli("--help")
    listed = set(re.findall(r"^\s{2}(\w+)\s", done.stdout, re.M))
    assert named <= listed, (named - listed, done.stdout)
    inline = set(re.findall(r"`saturate (\w+)[ `]", DOCS))  # `saturate watch SOURCE` in the text
    assert inline <= listed, inline - listed


def test_the_guide_counts_the_notebooks() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    words = {3: "three", 4: "four", 5: "five"}
    assert re.search(rf"runs\s+all {words[len(notebooks)]}\b", DOCS)


def test_make_setup_installs_what_runs_the_notebooks() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'"nbconvert>=', pyproject)  # in the extras `make setup` installs
    assert importlib.util.find_spec("nbconvert") is not None  # ... and in this environment
    assert "jupyter nbconvert" in DOCS
