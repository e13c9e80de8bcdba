"""saturate: is RL still scaling, or has it saturated?

>>> import saturate
>>> table = saturate.load("sample_runs/")       # doctest: +SKIP
>>> analysis = saturate.analyze(table)          # doctest: +SKIP
>>> analysis.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP

The names below are loaded on first use (:mod:`saturate.lazy`): ``import saturate`` and the
command line's ``--help`` do not pay for pandas, scipy or numba before they are needed.
"""

from __future__ import annotations

from saturate.errors import InputError, SaturateError, SettingsError, SourceError
from saturate.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "Analysis": "api", "analyze": "api", "load": "ingest", "Table": "table",
    "Settings": "settings",
}  # fmt: skip

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "Analysis",
    "InputError",
    "SaturateError",
    "Settings",
    "SettingsError",
    "Table",
    "SourceError",
    "__version__",
    "analyze",
    "load",
]
