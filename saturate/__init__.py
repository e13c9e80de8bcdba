"""saturate: is RL still scaling, or has it saturated?"""

from __future__ import annotations

from saturate.errors import InputError, SaturateError, SettingsError, SourceError

__version__ = "0.1.0"

__all__ = ["load", "SaturateError", "InputError", "SourceError", "SettingsError", "__version__"]


def load(source, **selection):  # noqa: ANN001, ANN201 - re-exported with full signature below
    from saturate.ingest import load as _load

    return _load(source, **selection)


load.__doc__ = "See :func:`saturate.ingest.load`."
