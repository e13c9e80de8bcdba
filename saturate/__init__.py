"""saturate: is RL still scaling, or has it saturated?

The exports are imported on first use, so ``import saturate`` and ``--help`` do not pay for
pandas or scipy. Each package declares them as imports under ``if TYPE_CHECKING:``, which type
checkers read as they are and :func:`lazy_exports` parses (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

from collections.abc import Callable as _Callable  # underscored: the namespace stays the API
from typing import TYPE_CHECKING
from typing import Any as _Any

from saturate.errors import InputError, SaturateError, SettingsError, SourceError

__version__ = "0.1.0"


def _declared_exports(path: str, package: str) -> dict[str, tuple[str, str]]:
    """Exported name -> (module, name there), as the ``if TYPE_CHECKING:`` block of the package's
    ``__init__`` at ``path`` declares it (relative imports resolved)."""
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
    """``__getattr__`` and ``__dir__`` for ``package`` (``namespace``: its ``globals()``) that
    import each declared export, or a submodule, on first use and keep it in ``namespace``."""
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

__all__ = ["Analysis", "InputError", "Model", "SaturateError", "Settings", "SettingsError", "Table",
           "SourceError", "__version__", "analyze", "load"]
