"""saturate: is RL still scaling, or has it saturated?

>>> import saturate
>>> df = saturate.load("sample_runs/")          # doctest: +SKIP
>>> analysis = saturate.analyze(df)             # doctest: +SKIP
>>> analysis.to_frame()[["run", "metric", "verdict"]]  # doctest: +SKIP
"""

from __future__ import annotations

from saturate.api import Analysis, analyze
from saturate.errors import InputError, SaturateError, SettingsError, SourceError
from saturate.ingest import load
from saturate.run_table import run_facts, with_run_facts
from saturate.settings import Settings

__version__ = "0.1.0"

__all__ = [
    "Analysis",
    "InputError",
    "SaturateError",
    "Settings",
    "SettingsError",
    "SourceError",
    "__version__",
    "analyze",
    "load",
    "run_facts",
    "with_run_facts",
]
