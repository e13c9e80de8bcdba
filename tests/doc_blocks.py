"""The fenced code blocks of the README and the user guide (``docs/guide/**.md``), and what each
of their lines is, for ``tests/test_doc_blocks.py`` (which runs them) and
``tests/test_readme_blocks.py`` (which checks what the pages say of them).

A block's language says its kind (:data:`KINDS`): ``sh``/``bash`` commands, ``python``, ``toml``
(a settings file), ``yaml`` (a GitHub Actions workflow) or ``text`` (output shown, not code). A
shell block is cut into commands (continued lines joined, comments dropped, as a shell reads
them), each classed by what it runs (:func:`command_kind`). Whatever has no kind or class is
``unknown``: the test that every block is run (or listed with its reason) fails on it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The language of a fence -> the kind of block.
KINDS = {"sh": "shell", "bash": "shell", "shell": "shell", "python": "python", "py": "python",
         "toml": "toml", "yaml": "yaml", "yml": "yaml", "text": "output"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^`\s]*)[^`]*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def doc_paths(root: Path = ROOT) -> list[str]:
    """The README and every page of the user guide, relative to ``root``."""
    guide = sorted(p.relative_to(root).as_posix() for p in (root / "docs" / "guide").rglob("*.md"))
    return ["README.md", *guide]


@dataclass(frozen=True)
class Block:
    """One fenced block: the page (relative path), the line of its opening fence, the fence's
    language and the text between the fences (dedented by the fence's own indent)."""

    doc: str
    line: int
    lang: str
    text: str

    @property
    def kind(self) -> str:
        return KINDS.get(self.lang.lower(), "unknown")

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks_of(text: str, doc: str) -> list[Block]:
    """The fenced blocks of one Markdown text, in order. An unclosed fence runs to the end, as
    GitHub renders it."""
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines[i + 1:j]]
        out.append(Block(doc, i + 1, m["lang"], "\n".join(body) + ("\n" if body else "")))
        i = j + 1
    return out


def all_blocks(root: Path = ROOT) -> list[Block]:
    """Every fenced block of the README and the user guide."""
    return [b for doc in doc_paths(root)
            for b in blocks_of((root / doc).read_text(encoding="utf-8"), doc)]


@dataclass(frozen=True)
class Command:
    """One command of a shell block: where it is, its text (comment dropped), its words (after
    any leading ``NAME=value`` assignments, which are in ``env``)."""

    block: Block
    line: int
    text: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        return f"{self.block.doc}:{self.line}"

    @property
    def kind(self) -> str:
        return command_kind(self.argv)


def commands_of(block: Block) -> list[Command]:
    """The commands of a shell block, one a logical line (a line ending in ``\\`` continues)."""
    out: list[Command] = []
    pending, first = "", 0
    for n, raw in enumerate(block.text.splitlines(), start=block.line + 1):
        if not pending:
            first = n
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = pending + raw, ""
        words = shlex.split(line, comments=True)
        if not words:
            continue
        text = re.split(r"\s+#", line.strip(), maxsplit=1)[0]  # as written, comment dropped
        if shlex.split(text) != words:  # a '#' inside quotes
            text = shlex.join(words)
        env = []
        while words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            env.append((name, value))
        out.append(Command(block, first, text, tuple(words), tuple(env)))
    return out


def command_kind(argv: tuple[str, ...]) -> str:
    """What a command runs: ``saturate`` (the CLI), ``make`` (a Makefile target), ``pip`` (an
    install of this project), ``venv`` (activating the Makefile's virtualenv), else ``unknown``."""
    if not argv:
        return "unknown"
    if argv[0] == "saturate":
        return "saturate"
    if argv[0] == "make" and len(argv) >= 2:
        return "make"
    if argv[:2] == ("pip", "install") and len(argv) == 3:
        return "pip"
    if argv[0] in (".", "source") and len(argv) == 2 and argv[1].endswith("/bin/activate"):
        return "venv"
    return "unknown"


def saturate_commands(root: Path = ROOT) -> list[Command]:
    """Every ``saturate ...`` command of the README's and the guide's shell blocks."""
    return [c for b in all_blocks(root) if b.kind == "shell" for c in commands_of(b)
            if c.kind == "saturate"]


def doc_text(root: Path = ROOT) -> str:
    """The README and the guide's pages, one after the other."""
    return "\n".join((root / doc).read_text(encoding="utf-8") for doc in doc_paths(root))
