"""The shape of the package, checked from its source with ``ast`` (nothing is imported).

* no import cycle between modules of ``saturate``, nor between its parts (top-level modules and
  packages: the flow goes one way); imports inside functions count too: a lazy import hides a
  cycle from Python, not from the reader;
* no part imports a part after it in the flow (:data:`LAYERS`, the picture of ARCHITECTURE.md);
* click (the command line) only in ``saturate/cli/``, rich only in ``saturate/cli/`` and ``saturate/report/``;
* no function over 80 lines (its docstring excluded); modules are sized by what they are about,
  not by a line count.

The ``ALLOWED_*`` constants list today's offenders, which other branches are fixing; a new offender
fails at once, and an entry that no longer offends fails too, so the lists only ever shrink. When
a list is empty, the matching ``*_at_all`` test stops being an expected failure.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "saturate"
MAX_FUNCTION_LINES = 80
ONLY_IN = {  # third-party package -> the folders of saturate that may import it
    "click": ("saturate/cli/",),
    "rich": ("saturate/cli/", "saturate/report/"),
}

# The flow, bottom to top: a part may import the parts of its own layer and of the layers below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "results", "settings", "vocabulary"),
    ("table",),  # the tidy table
    ("ingest",),
    ("fit",),
    ("measure",),
    ("decide",),
    ("analysis",),
    ("diagnostics",),
    ("report", "suites"),
    ("gate",),
    ("api",),
    ("tracker",),
    ("cli", "__main__", ""),  # "": saturate/__init__.py
)

# Today's offenders, each fixed on another branch of issue 12. The integrator empties these.
ALLOWED_CYCLES: tuple[frozenset[str], ...] = ()
ALLOWED_PACKAGE_CYCLES: tuple[frozenset[str], ...] = ()
ALLOWED_LONG_FUNCTIONS: frozenset[str] = frozenset()
PENDING = "offenders being fixed on another branch of issue 12 (h1-settings)"


# ---- reading the source ----------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    name: str  # dotted, a package by its own name ("saturate.cli")
    path: Path
    tree: ast.Module

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]


def _modules() -> dict[str, Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        out[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return out


MODULES = _modules()


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (imports for type checkers
    only, never executed, so they cannot make an import cycle), unless the module hands that block
    to ``saturate.lazy_exports``: then its imports run on first use, and count."""
    if any(isinstance(n, ast.Name) and n.id == "lazy_exports" for n in ast.walk(tree)):
        return list(ast.walk(tree))
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(module: Module) -> set[str]:
    """Every dotted name ``module`` imports at run time, anywhere in it (``from a import b`` gives
    ``a.b``, so a submodule imported from its package counts as that submodule)."""
    names: set[str] = set()
    for node in _runtime_nodes(module.tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.package.split(".")[: len(module.package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            names.update(f"{origin}.{alias.name}" for alias in node.names)
    return names


def _own_module(name: str) -> str | None:
    """The module of saturate a dotted name lives in (``saturate.fit.fit_curve`` -> saturate.fit)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _defined_in_root() -> set[str]:
    """``saturate.<name>`` for each function, class and constant ``saturate/__init__.py`` defines
    itself (``lazy_exports``): importing one runs nothing, since a package's ``__init__`` has run
    before any of its modules, so it is no edge of the graph."""
    out = set()
    for node in MODULES["saturate"].tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(f"saturate.{node.name}")
        elif isinstance(node, ast.Assign):
            out.update(f"saturate.{t.id}" for t in node.targets if isinstance(t, ast.Name))
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of saturate it imports (the deepest module each name names). A copy
    of the graph of :data:`MODULES`, which is read once: the tests that ask for it share it."""
    return {name: set(targets) for name, targets in _import_graph().items()}


@functools.cache
def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    root = _defined_in_root()
    for name, module in MODULES.items():
        targets = {_own_module(n) for n in imported_names(module) - root
                   if n.split(".")[0] == "saturate"}
        graph[name] = targets - {name, None}
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete cycle through the first module of a component: ``a -> b -> ... -> a``."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & inside):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {component}")


def function_lengths(module: Module) -> dict[str, int]:
    """``qualified name -> lines`` from its ``def`` line to its end, the docstring excluded."""
    out: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                lines = child.end_lineno - child.lineno + 1
                first = child.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                        and isinstance(first.value.value, str):
                    lines -= first.end_lineno - first.lineno + 1
                out[name] = max(lines, out.get(name, 0))
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(module.tree, "")
    return out


def package_graph() -> dict[str, set[str]]:
    """The import graph between the parts of the flow: each top-level module or package of
    saturate (``saturate.fit``, ``saturate.settings``...) with everything inside it."""
    def part(name: str) -> str:
        return ".".join(name.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        graph.setdefault(part(name), set()).update(part(t) for t in targets)
    return {k: v - {k} for k, v in graph.items()}


def cycles() -> list[list[str]]:
    return strongly_connected(import_graph())


def package_cycles() -> list[list[str]]:
    return strongly_connected(package_graph())


@functools.cache
def _long_functions() -> dict[str, int]:
    return {f"{m.rel}::{name}": n for m in MODULES.values()
            for name, n in function_lengths(m).items() if n > MAX_FUNCTION_LINES}


def long_functions() -> dict[str, int]:
    """The functions of :data:`MODULES` longer than the limit (measured once: a copy)."""
    return dict(_long_functions())


def _show(cycle_components: list[list[str]], graph: dict[str, set[str]] | None = None) -> str:
    graph = graph or import_graph()
    return "\n".join(" -> ".join(a_cycle(graph, c)) + f"   (component: {', '.join(c)})"
                     for c in cycle_components)


# ---- the checker checks what it claims --------------------------------------------------------


def test_the_graph_sees_lazy_relative_and_from_imports(tmp_path):
    tree = ast.parse(
        "import saturate.results\n"
        "from saturate.fit import laws\n"
        "from saturate.fit import fit_curve\n"
        "from . import rows\n"
        "from .schema import render_json\n"
        "def f():\n    from saturate.table.curves import tidy\n"
    )
    names = imported_names(Module("saturate.report.html", PACKAGE / "report" / "html.py", tree))
    assert {_own_module(n) for n in names if n.startswith("saturate")} == {
        "saturate.results", "saturate.fit.laws", "saturate.fit", "saturate.report.rows",
        "saturate.report.schema", "saturate.table.curves"}


def test_the_graph_sees_a_packages_lazy_exports_and_not_other_type_checking_imports():
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from saturate.fit.engine import fit_curve\n")
    lazy = source + "__getattr__, __dir__ = lazy_exports(__name__, globals())\n"
    seen = [{_own_module(n) for n in imported_names(Module("saturate.x", PACKAGE / "x.py",
                                                           ast.parse(text)))} - {None}
            for text in (source, lazy)]
    assert seen == [set(), {"saturate.fit.engine"}]
    assert "saturate.api" in import_graph()["saturate"]  # saturate.Analysis, on first use


def test_cycle_finder_and_function_lengths_on_small_cases():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert a_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
    src = 'def f():\n    """Doc\n    string."""\n    x = 1\n    return x\n\nclass K:\n' \
          '    def g(self):\n        def h():\n            pass\n        return h\n'
    lengths = function_lengths(Module("m", PACKAGE / "m.py", ast.parse(src)))
    assert lengths == {"f": 3, "K.g": 4, "K.g.h": 2}


def test_the_allow_lists_name_real_modules():
    names = set(MODULES)
    rels = {m.rel for m in MODULES.values()}
    assert all(c <= names for c in ALLOWED_CYCLES + ALLOWED_PACKAGE_CYCLES)
    assert {f.split("::")[0] for f in ALLOWED_LONG_FUNCTIONS} <= rels


# ---- the rules ---------------------------------------------------------------------------------


def test_no_new_import_cycle():
    """Every cycle lies inside an allowed group, and every allowed group still has one."""
    found = cycles()
    new = [c for c in found if not any(set(c) <= allowed for allowed in ALLOWED_CYCLES)]
    assert not new, f"import cycles between modules of saturate:\n{_show(new)}"
    stale = [sorted(a) for a in ALLOWED_CYCLES if not any(set(c) <= a for c in found)]
    assert not stale, f"no cycle left in {stale}: remove it from ALLOWED_CYCLES"


def test_no_new_cycle_between_packages():
    """The flow between the parts (ingest -> table -> fit -> analysis -> ...) goes one way."""
    found, graph = package_cycles(), package_graph()
    new = [c for c in found if not any(set(c) <= allowed for allowed in ALLOWED_PACKAGE_CYCLES)]
    assert not new, f"import cycles between parts of saturate:\n{_show(new, graph)}"
    stale = [sorted(a) for a in ALLOWED_PACKAGE_CYCLES if not any(set(c) <= a for c in found)]
    assert not stale, f"no cycle left in {stale}: remove it from ALLOWED_PACKAGE_CYCLES"


@pytest.mark.xfail(bool(ALLOWED_CYCLES or ALLOWED_PACKAGE_CYCLES), reason=PENDING, strict=False)
def test_no_import_cycle_at_all():
    found = cycles()
    assert not found, f"import cycles between modules of saturate:\n{_show(found)}"
    found = package_cycles()
    assert not found, f"import cycles between parts of saturate:\n{_show(found, package_graph())}"


def test_the_layers_name_every_part():
    parts = {name.split(".")[1] if "." in name else "" for name in MODULES}
    listed = [p for layer in LAYERS for p in layer]
    assert sorted(parts) == sorted(listed), "LAYERS and the parts of saturate differ"


def test_no_part_imports_a_part_after_it():
    rank = {f"saturate.{p}" if p else "saturate": i for i, layer in enumerate(LAYERS) for p in layer}
    wrong = [f"{a} imports {b}" for a, targets in sorted(package_graph().items())
             for b in sorted(targets) if rank[b] > rank[a]]
    assert not wrong, "imports against the flow (LAYERS):\n" + "\n".join(wrong)


# The table sits right after ingest: ingest makes a Table, every later stage takes one; the table
# itself knows nothing of the stages that read it (only the shared row: errors, metric names).
AFTER_THE_TABLE = ("saturate.ingest", "saturate.fit", "saturate.analysis", "saturate.diagnostics",
                   "saturate.report", "saturate.gate", "saturate.suites", "saturate.tracker",
                   "saturate.cli", "saturate.api")


def test_the_table_imports_no_stage_after_it():
    wrong = sorted(f"{m} imports {t}" for m, targets in import_graph().items()
                   if m == "saturate.table" or m.startswith("saturate.table.")
                   for t in targets if t.startswith(AFTER_THE_TABLE))
    assert not wrong, "\n".join(wrong)
    assert any(t.startswith("saturate.table") for t in import_graph()["saturate.ingest.stream"])


def test_click_and_rich_stay_in_the_interface_layers():
    wrong = []
    for m in MODULES.values():
        for name in imported_names(m):
            top = name.split(".")[0]
            if top in ONLY_IN and not m.rel.startswith(ONLY_IN[top]):
                wrong.append(f"{m.rel} imports {name} (allowed only in {', '.join(ONLY_IN[top])})")
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_no_new_long_function():
    functions = long_functions()
    new = [f"{name}: {n} lines (max {MAX_FUNCTION_LINES}, docstring excluded)"
           for name, n in sorted(functions.items()) if name not in ALLOWED_LONG_FUNCTIONS]
    assert not new, "too long:\n" + "\n".join(new)
    stale = sorted(ALLOWED_LONG_FUNCTIONS - set(functions))
    assert not stale, f"no longer too long, remove from ALLOWED_LONG_FUNCTIONS: {stale}"


@pytest.mark.xfail(bool(ALLOWED_LONG_FUNCTIONS), reason=PENDING, strict=False)
def test_no_long_function_at_all():
    offenders = [f"{name}: {n} lines" for name, n in sorted(long_functions().items())]
    assert not offenders, "too long:\n" + "\n".join(offenders)


def test_help_of_the_package_lists_its_public_parts_only():
    """``help(saturate)`` lists the packages of the flow and the public modules (the API, the
    errors), no internal helper: those live inside the package they serve."""
    import pydoc

    import saturate

    text = pydoc.render_doc(saturate, renderer=pydoc.plaintext)
    contents = text.split("PACKAGE CONTENTS", 1)[1].split("\n\n", 1)[0].split()
    modules = {c for c in contents if c != "(package)"}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert modules - packages == {"__main__", "api", "errors"}
    assert not [m for m in modules if m.startswith("_") and m != "__main__"]


def test_help_of_the_package_opens_with_how_to_use_it():
    """``help(saturate)`` opens with an example of the API, not with how its exports are
    imported; the main result is exported and ``dir()`` is the API."""
    import pydoc

    import saturate
    from saturate import CurveAnalysis
    from saturate.results import CurveAnalysis as Defined

    assert CurveAnalysis is Defined
    text = pydoc.render_doc(saturate, renderer=pydoc.plaintext)
    description = text.split("DESCRIPTION", 1)[1].split("PACKAGE CONTENTS", 1)[0]
    assert "saturate.analyze(" in description and "CurveAnalysis" in description
    assert "lazy" not in description.lower() and "TYPE_CHECKING" not in description
    assert dir(saturate) == sorted(saturate.__all__)
    assert "lazy_exports" not in text
