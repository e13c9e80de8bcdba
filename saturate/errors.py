"""One family of domain errors; the CLI turns any of them into one line on stderr and exit code 2."""

from __future__ import annotations


class SaturateError(Exception):
    """Base class of every error saturate raises on purpose (bad input, bad settings, unreachable source)."""

    exit_code: int = 2


class InputError(SaturateError):
    """The data given cannot be used: missing or unreadable file, wrong columns, no curves."""


class SourceError(SaturateError):
    """A tracking source cannot be reached or answered with an error (server down, bad URI)."""


class SettingsError(SaturateError):
    """An option or configuration value is invalid."""
