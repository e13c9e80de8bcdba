"""The settings: every option declared once (:mod:`~saturate.settings.fields`), checked once
(:mod:`~saturate.settings.checks`), read from the settings file (:mod:`~saturate.settings.file`)
and held in one :class:`Settings` (:mod:`~saturate.settings.model`). Imports no later part of
the flow."""

from __future__ import annotations

from saturate.settings.fields import OPTIONS, Option, cli_name
from saturate.settings.model import SCHEDULER_ENV, Settings

__all__ = ["Settings", "OPTIONS", "Option", "cli_name", "SCHEDULER_ENV"]
