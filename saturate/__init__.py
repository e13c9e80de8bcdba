"""saturate: is RL still scaling, or has it saturated?

>>> import saturate
>>> table = saturate.load("sample_runs/")       # doctest: +SKIP
>>> analysis = saturate.analyze(table)          # doctest: +SKIP
>>> analysis.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP

The names below are loaded on first use: ``import saturate`` and the command line's ``--help``
do not pay for pandas, scipy or numba before they are needed. Each package declares its exports
as plain imports under ``if TYPE_CHECKING:``, which type checkers, editors and
``tests/test_architecture.py`` read as they are, and :func:`lazy_exports` reads the same block
(with :mod:`ast`, without running it) to give the package a module ``__getattr__`` and
``__dir__`` that import each name on first use (PEP 562): the one declaration of what is
exported, and from where.
"""

from __future__ import annotations

from collections.abc import Callable as _Callable  # underscored: the namespace stays the API
from typing import TYPE_CHECKING
from typing import Any as _Any

from saturate.errors import InputError, SaturateError, SettingsError, SourceError

__version__ = "0.1.0"


def _declared_exports(path: str, package: str) -> dict[str, tuple[str, str]]:
    """Exported name -> (the module it is imported from, its name there), as the ``if TYPE_CHECKING:`` block of
    the package's ``__init__`` at ``path`` declares it (``from .curve import analyze_curve`` and
    ``from saturate.analysis.curve import analyze_curve`` both give ``saturate.analysis.curve``)."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"):
            continue
        for imp in node.body:
            if isinstance(imp, ast.ImportFrom):
                parts = package.split(".")
                base = parts[: len(parts) - imp.level + 1] if imp.level else []
                module = ".".join([*base, *([imp.module] if imp.module else [])])
                out.update({a.asname or a.name: (module, a.name) for a in imp.names})
    return out


def lazy_exports(
    package: str, namespace: dict[str, _Any]
) -> tuple[_Callable[[str], _Any], _Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` (``namespace``: its ``globals()``): each
    name its ``TYPE_CHECKING`` block imports is imported on first use and kept in ``namespace``,
    so the next use costs nothing. A submodule is imported on first use as well (``saturate.fit``
    after ``import saturate``)."""
    import importlib
    import importlib.util

    exports = _declared_exports(namespace["__file__"], package)

    def __getattr__(name: str) -> _Any:  # noqa: N807 - the module attribute hook
        where = exports.get(name)
        if where is not None:
            value = getattr(importlib.import_module(where[0]), where[1])
        elif not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")  # a submodule: saturate.fit
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


if TYPE_CHECKING:  # the exports, each imported on first use (lazy_exports)
    from saturate.api import Analysis, analyze
    from saturate.fit.model import Model
    from saturate.ingest import load
    from saturate.settings import Settings
    from saturate.table import Table

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = [
    "Analysis",
    "InputError",
    "Model",
    "SaturateError",
    "Settings",
    "SettingsError",
    "Table",
    "SourceError",
    "__version__",
    "analyze",
    "load",
]
