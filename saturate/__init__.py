"""saturate: is RL still scaling, or has it saturated?

Read training curves (files, folders, MLflow, W&B, TensorBoard), fit scaling and saturation laws
to each (run, metric) curve, and say whether the next doubling of compute pays::

    import saturate

    analysis = saturate.analyze("sample_runs/", metric="eval/*")
    for curve in analysis:                  # one CurveAnalysis per objective curve
        print(curve.run, curve.metric, curve.verdict, curve.p_pays)
    print(analysis[0].summary())            # gain per doubling, asymptote, knee, forecasts
    report = analysis.to_dict()             # the JSON report of ``saturate analyze -f json``

:func:`analyze` returns an :class:`Analysis`; each curve's :class:`CurveAnalysis` holds its
verdict (scaling, slowing, saturated, regressing or inconclusive), P(pays), the fitted laws and
the reasons in words. :func:`load` reads a source into a :class:`Table` without fitting;
:class:`Settings` holds every option; :class:`Model` adds a law of your own. On the command
line: ``saturate analyze SOURCE``.
"""

from __future__ import annotations

from collections.abc import Callable as _Callable  # underscored: the namespace stays the API
from typing import TYPE_CHECKING
from typing import Any as _Any

from saturate.errors import InputError, SaturateError, SettingsError, SourceError

__version__ = "0.1.0"

# The exports are imported on first use (PEP 562 ``__getattr__``), so that ``import saturate``
# and ``--help`` do not pay for pandas or scipy. Each package declares them as imports under
# ``if TYPE_CHECKING:``, which type checkers read as they are and ``lazy_exports`` parses; the
# machinery stays out of ``__all__`` and ``dir()``, so ``help(saturate)`` shows the API.


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
    from saturate.results import CurveAnalysis
    from saturate.settings import Settings
    from saturate.table import Table

__all__ = ["Analysis", "CurveAnalysis", "InputError", "Model", "SaturateError", "Settings",
           "SettingsError", "SourceError", "Table", "__version__", "analyze", "load"]

__getattr__ = lazy_exports(__name__, globals())[0]


def __dir__() -> list[str]:
    """The API (``__all__``), without the lazy-import machinery and the helpers it imports."""
    return sorted(__all__)
