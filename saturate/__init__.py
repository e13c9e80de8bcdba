"""saturate: is RL still scaling, or has it saturated?

>>> import saturate
>>> table = saturate.load("sample_runs/")       # doctest: +SKIP
>>> analysis = saturate.analyze(table)          # doctest: +SKIP
>>> analysis.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP

The names below are loaded on first use (:mod:`saturate.lazy`): ``import saturate`` and the
command line's ``--help`` do not pay for pandas, scipy or numba before they are needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate.errors import InputError, SaturateError, SettingsError, SourceError
from saturate.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:  # the exports, each imported on first use (saturate.lazy)
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
