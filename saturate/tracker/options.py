"""Options shared by ``watch`` and ``timeline``: the settings file overlaid with given values."""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any

from saturate.errors import SettingsError

__all__ = ["SELECTION_KEYS", "resolve_options"]

SELECTION_KEYS = ("experiment", "filter", "metric", "run", "compute")
_TUPLE_SETTINGS = ("forecast_at", "lower_is_better", "higher_is_better", "laws")


def resolve_options(
    config: str | os.PathLike | bool | None = True, **given: Any
) -> tuple[dict[str, Any], Any]:
    """``(selection, AnalysisSettings)`` from a settings file and the given options.

    ``config``: a path, ``True`` to look from the current folder upward, ``False``/``None`` for
    none. Given values that are ``None`` or empty leave the file's value in place.
    """
    from saturate.analysis import AnalysisSettings
    from saturate.config import load_config

    cfg = load_config(None if config is True else config) if config else None
    merged = cfg.merged(**given) if cfg is not None else {
        k: v for k, v in given.items() if v is not None and v != () and v != []
    }
    selection = {k: merged.get(k) for k in SELECTION_KEYS}
    names = {f.name for f in fields(AnalysisSettings)}
    kwargs: dict[str, Any] = {}
    for key, value in merged.items():
        if key not in names:
            continue
        if key in _TUPLE_SETTINGS:
            value = (value,) if isinstance(value, (str, int, float)) else tuple(value)
        elif key == "thresholds":
            value = dict(value)
        kwargs[key] = value
    try:
        settings = AnalysisSettings(**kwargs)
    except (TypeError, ValueError) as exc:
        raise SettingsError(str(exc)) from None
    return selection, settings
