"""The kinds ``saturate gate --fail-on`` accepts: verdicts (``saturated``, ``regressing``,
``inconclusive``, even ``slowing``), registered per-curve checks (``collapse``, or any added with
:func:`register_fail_kind`) and diagnostic kinds (read from :mod:`saturate.diagnostics.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from saturate.diagnostics.registry import kind_specs
from saturate.diagnostics.registry import kinds as diagnostic_kinds
from saturate.results import VERDICTS, CurveAnalysis
from saturate.validation import check_choices

DEFAULT_FAIL_ON: tuple[str, ...] = ("saturated", "regressing")

Check = Callable[[CurveAnalysis], str | None]


def _collapse(curve: CurveAnalysis) -> str | None:
    col = curve.collapse
    if col is None and "collapse" not in curve.flags:
        return None
    if col is None:
        return "collapse detected"
    return f"collapse at {curve.compute_name} {col.compute:.4g} (drop {col.drop:.3g})"


# Kinds beyond the verdicts: name -> check returning why the curve fails, or None.
FAIL_CHECKS: dict[str, Check] = {"collapse": _collapse}


def register_fail_kind(name: str, check: Check) -> None:
    """Make ``--fail-on NAME`` available: ``check(curve)`` returns a reason to fail, or None."""
    key = name.strip().lower()
    if not key or key in VERDICTS or key in diagnostic_kinds():
        raise ValueError(f"fail-on kind {name!r} is empty, a verdict or a diagnostic kind")
    FAIL_CHECKS[key] = check


def fail_kinds() -> tuple[str, ...]:
    """Every kind ``--fail-on`` accepts: verdicts, per-curve checks, diagnostic kinds."""
    return tuple(dict.fromkeys((*VERDICTS, *FAIL_CHECKS, *diagnostic_kinds())))


def fail_on_help() -> str:
    """The help of ``--fail-on``, naming every kind it accepts beyond the defaults (``scaling``,
    accepted too, is left out: failing on it makes no sense)."""
    verdicts = [v for v in VERDICTS if v not in (*DEFAULT_FAIL_ON, "scaling")]
    specs = kind_specs()
    warns = [k.name for k in specs if k.severities != ("info",)]
    infos = [k.name for k in specs if k.severities == ("info",)]
    return (
        f"Also fail on these kinds (comma list or repeatable): verdicts ({', '.join(verdicts)}), "
        f"per-curve checks ({', '.join(FAIL_CHECKS)}), or diagnostics ({', '.join(warns)}; "
        f"information only: {', '.join(infos)}). "
        f"{' and '.join(DEFAULT_FAIL_ON).capitalize()} always fail."
    )


def parse_fail_on(values: Iterable[str] | str | None, *, extend: bool = True) -> tuple[str, ...]:
    """``--fail-on`` values (comma lists, repeatable) checked against :func:`fail_kinds`.

    With ``extend`` the kinds add to :data:`DEFAULT_FAIL_ON` (``--fail-on inconclusive`` still fails
    saturated curves); without it they replace it.
    """
    if isinstance(values, str):
        values = [values]
    kinds = check_choices(values or (), "--fail-on", fail_kinds())
    return tuple(dict.fromkeys((*DEFAULT_FAIL_ON, *kinds))) if extend else kinds
