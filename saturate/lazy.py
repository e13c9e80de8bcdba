"""Names a package exports, loaded from their modules on first use (PEP 562).

A package's ``__init__`` that imported every submodule would make ``import saturate`` (and the
command line's ``--help``) pay for pandas, scipy and numba before anything is asked of them;
:func:`lazy_exports` gives it a module ``__getattr__`` and ``__dir__`` instead.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each exported name to
    its submodule of ``package``; a name is imported on first
    use and kept in ``namespace`` (the package's ``globals()``), so the next use costs nothing.
    A submodule is imported on first use as well (``saturate.fit`` after ``import saturate``)."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module attribute hook
        where = exports.get(name)
        if where is not None:
            value = getattr(importlib.import_module(f"{package}.{where}"), name)
        elif not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")  # a submodule: saturate.fit
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
