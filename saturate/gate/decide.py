"""The gate's decision: which curves, suite groups and diagnostics fail.

``fail_on`` kinds are verdicts, per-curve checks (``collapse``, or any added with
:func:`register_fail_kind`) and diagnostic kinds. With a suite the gate is on each group's
aggregate, and single curves fail only on the kinds named in ``--fail-on`` (their other verdicts
that do not pay only warn): one task saturating is what the suite verdict weighs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from saturate.diagnostics.base import Diagnostic
from saturate.diagnostics.registry import kind_specs
from saturate.diagnostics.registry import kinds as diagnostic_kinds
from saturate.errors import InputError
from saturate.report.text import for_terminal
from saturate.results import VERDICTS, CurveAnalysis, verdict_counts
from saturate.results.codec import Coded, derived, meta
from saturate.settings.checks import check_choices

if TYPE_CHECKING:
    from saturate.suites import SuiteAnalysis, SuiteGroup


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
    """The help of ``--fail-on``: every kind beyond the defaults (``scaling``, accepted too, is
    left out: failing on it makes no sense)."""
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
    """``--fail-on`` values (comma lists, repeatable) checked against :func:`fail_kinds`; with
    ``extend`` they add to :data:`DEFAULT_FAIL_ON`, without it they replace it."""
    if isinstance(values, str):
        values = [values]
    kinds = check_choices(values or (), "--fail-on", fail_kinds())
    return tuple(dict.fromkeys((*DEFAULT_FAIL_ON, *kinds))) if extend else kinds


Status = Literal["pass", "fail", "warn"]


def _at_p(p: float | None) -> str:
    """`` at P(pays) 0.43`` after a verdict (nothing when it could not be judged)."""
    return "" if p is None else f" at P(pays) {p:.2f}"


def _curve_entry(c: CurveAnalysis) -> dict[str, Any]:
    """What a gate's entry says of its curve."""
    return {"run": c.run, "run_id": c.run_id, "metric": c.metric, "verdict": c.verdict,
            "p_pays": c.p_pays}


@dataclass(frozen=True)
class CurveOutcome(Coded):
    """One curve: ``fail``, ``warn`` (inconclusive, not failing) or ``pass``."""

    curve: CurveAnalysis = field(metadata=meta(encode=_curve_entry, inline=True))
    status: Status
    kinds: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.curve.run} / {self.curve.metric}"

    @property
    def message(self) -> str:
        """``<verdict> (P(pays) p): <first reason>`` plus the reasons of any non-verdict kinds."""
        head = f"{self.curve.verdict}{_at_p(self.curve.p_pays)}"
        parts = [r for r in self.reasons if r]
        return f"{head}: " + "; ".join(parts) if parts else head


@dataclass(frozen=True)
class DiagnosticOutcome(Coded):
    """One diagnostic: ``fail`` (its kind is in ``fail_on``) or ``warn`` (a warning or error the
    gate was not asked to fail on, shown so that it is not missed)."""

    _json_order: ClassVar[tuple[str, ...]] = ("status",)

    diagnostic: Diagnostic = field(metadata=meta(inline=True))
    status: Literal["fail", "warn"]

    @property
    def name(self) -> str:
        """``<run> / <metrics>``: where the finding is."""
        d = self.diagnostic
        return f"{d.run} / {', '.join(d.metrics)}" if d.metrics else d.run

    @property
    def label(self) -> str:
        """``FAIL`` when it fails the gate, else its severity: ``ERROR`` or ``WARN``."""
        if self.status == "fail":
            return "FAIL"
        return "ERROR" if self.diagnostic.severity == "error" else "WARN"

    @property
    def message(self) -> str:
        """``<kind>: <message>``, and how to make it fail the gate when it does not."""
        d = self.diagnostic
        text = d.message if d.message.startswith(f"{d.kind}:") else f"{d.kind}: {d.message}"
        if self.status == "fail":
            return text
        return f"{text} (does not fail the gate; --fail-on {d.kind} would)"


def _group_entry(g: SuiteGroup) -> dict[str, Any]:
    return {"group": g.group, "verdict": g.verdict}


@dataclass(frozen=True)
class SuiteOutcome(Coded):
    """One suite group's aggregate: ``fail`` when its verdict is among ``fail_on``, ``warn`` when
    inconclusive, else ``pass``."""

    suite: str
    group: SuiteGroup = field(metadata=meta(encode=_group_entry, inline=True))
    status: Status

    @derived("status")
    def p_pays(self) -> float | None:
        return self.group.p_pays

    @derived("status")
    def p_next_doubling_pays(self) -> float | None:
        return self.group.p_next_doubling_pays

    @derived("status")
    def tasks(self) -> int:
        return len(self.group.tasks)

    @derived("status")
    def tasks_paying(self) -> int | None:
        return len(self.group.paying) if self.group.task_results else None

    @derived("status")
    def reasons(self) -> tuple[str, ...]:
        return self.group.analysis.reasons

    @property
    def name(self) -> str:
        return f"suite {self.suite} / {self.group.group}"

    @property
    def message(self) -> str:
        """``<verdict> at P(pays) p: <first reason>; k/n tasks still pay``."""
        g = self.group
        head = f"{g.verdict}{_at_p(g.p_pays)}"
        parts = [f"{head}: {g.analysis.reasons[0]}" if g.analysis.reasons else head]
        if g.task_results:
            parts.append(f"{len(g.paying)}/{len(g.task_results)} tasks still pay")
        return "; ".join(parts)


#: One line of the gate's decision: a curve's, a diagnostic's or a suite group's.
Outcome = CurveOutcome | DiagnosticOutcome | SuiteOutcome


@dataclass(frozen=True)
class GateResult(Coded):
    """The gate's decision over all curves, diagnostics and suite groups."""

    _json_order: ClassVar[tuple[str, ...]] = ("passed", "exit_code", "fail_on", "summary")

    outcomes: tuple[CurveOutcome, ...] = field(metadata=meta(key="curves"))
    fail_on: tuple[str, ...]
    diagnostics: tuple[DiagnosticOutcome, ...] = ()
    suite: tuple[SuiteOutcome, ...] = ()

    @property
    def failures(self) -> tuple[CurveOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "fail")

    @property
    def warnings(self) -> tuple[CurveOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "warn")

    @property
    def failed_diagnostics(self) -> tuple[DiagnosticOutcome, ...]:
        return tuple(o for o in self.diagnostics if o.status == "fail")

    @property
    def warned_diagnostics(self) -> tuple[DiagnosticOutcome, ...]:
        return tuple(o for o in self.diagnostics if o.status == "warn")

    @property
    def failed_groups(self) -> tuple[SuiteOutcome, ...]:
        return tuple(o for o in self.suite if o.status == "fail")

    @property
    def warned_groups(self) -> tuple[SuiteOutcome, ...]:
        return tuple(o for o in self.suite if o.status == "warn")

    @derived()
    def passed(self) -> bool:
        return not self.failures and not self.failed_diagnostics and not self.failed_groups

    @derived()
    def exit_code(self) -> int:
        """0 when everything passes, 1 when anything fails (2 is the CLI's)."""
        return 0 if self.passed else 1

    @derived(key="summary")
    def counts(self) -> str:
        """``12 curves: 7 scaling, ...``: the verdicts counted."""
        return verdict_counts([o.curve for o in self.outcomes])

    def summary(self) -> str:
        """What a CI log shows: PASS/FAIL, the counts, then a line for every suite group and
        curve (failing, then warned, then passing: its verdict and P(pays)) and for each failing
        or warned diagnostic (escaped by :func:`for_terminal`)."""
        lines = [self._head()]
        failed: tuple[Outcome, ...] = (*self.failed_groups, *self.failures,
                                       *self.failed_diagnostics)
        warns: tuple[Outcome, ...] = (*self.warned_groups, *self.warnings)
        lines += [f"  FAIL {o.name}: {o.message}" for o in failed]
        lines += [f"  WARN {o.name}: {o.message}" for o in warns]
        warned = sorted(self.warned_diagnostics, key=lambda o: o.label != "ERROR")
        lines += [f"  {o.label} {o.name}: {o.message}" for o in warned]
        lines += [f"  ok   {o.name}: {o.group.verdict}{_at_p(o.group.p_pays)}"
                  for o in self.suite if o.status == "pass"]
        lines += [f"  ok   {o.name}: {o.curve.verdict}{_at_p(o.curve.p_pays)}"
                  for o in self.outcomes if o.status == "pass"]
        # The plain-CI-line boundary: a name holding a newline or an escape stays on its line.
        return "\n".join(for_terminal(line) for line in lines)

    def _head(self) -> str:
        n = len(self.outcomes)
        counts = verdict_counts([o.curve for o in self.outcomes])
        bad_d, bad_g = self.failed_diagnostics, self.failed_groups
        if self.passed:
            return self._pass_head(counts)
        parts = []
        if bad_g:
            parts.append(f"{len(bad_g)} of {len(self.suite)} group(s) of suite "
                         f"{self.suite[0].suite} failed")
        if self.failures or not (bad_d or bad_g):
            parts.append(f"{len(self.failures)} of {n} curve(s) failed")
        if bad_d:
            parts.append(f"{len(bad_d)} diagnostic(s) failed")
        return f"FAIL: {', '.join(parts)} (fail on: {', '.join(self.fail_on)}; {counts})"

    def _pass_head(self, counts: str) -> str:
        """The head of a gate that passed: how many curves (or suite groups) still gain enough and
        how many the data could not judge (a gate where nothing could be judged says so)."""
        if self.suite:
            what = f"group(s) of suite {self.suite[0].suite}"
            verdicts = [o.group.verdict for o in self.suite]
        else:
            what, verdicts = "curve(s)", [o.curve.verdict for o in self.outcomes]
        n, open_ = len(verdicts), sum(v == "inconclusive" for v in verdicts)
        hint = "--fail-on inconclusive fails them"
        if open_ == n:
            return (f"PASS, nothing judged: all {n} {what} inconclusive, the data cannot say "
                    f"whether the next doubling pays ({counts}); {hint}")
        if open_:
            return (f"PASS: {n - open_} of {n} {what} still gain enough per doubling, "
                    f"{open_} inconclusive ({counts}); {hint}")
        return f"PASS: all {n} {what} still gain enough per doubling ({counts})"


def decide(
    curves: Sequence[CurveAnalysis],
    fail_on: Iterable[str] = DEFAULT_FAIL_ON,
    diagnostics: Sequence[Diagnostic] = (),
    *,
    suite: SuiteAnalysis | None = None,
    curve_fail_on: Iterable[str] | None = None,
) -> GateResult:
    """Fail every curve whose verdict or registered check is among ``fail_on``, every diagnostic
    whose kind is, and every ``suite`` group whose aggregate's verdict is.

    ``curve_fail_on`` (default ``fail_on``) are the kinds that fail a single curve (with a suite,
    only those named in ``--fail-on``). Inconclusive curves and groups, and unnamed diagnostics
    of severity warning or error, are warnings. No curves is an :class:`InputError`: a gate that
    checked nothing must not pass.
    """
    kinds = check_choices(fail_on, "--fail-on", fail_kinds())
    own = kinds if curve_fail_on is None else check_choices(curve_fail_on, "--fail-on",
                                                            fail_kinds())
    if not curves:
        raise InputError("the gate has no curves to check (the selection matched none)")
    outcomes = tuple(_curve_outcome(c, own, kinds) for c in curves)
    judged = tuple(DiagnosticOutcome(d, "fail" if d.kind in kinds else "warn") for d in diagnostics
                   if d.kind in kinds or d.severity != "info")
    groups = () if suite is None else tuple(
        SuiteOutcome(suite.suite, g, "fail" if g.verdict in kinds else
                     "warn" if g.verdict == "inconclusive" else "pass") for g in suite.groups)
    return GateResult(outcomes, kinds, judged, groups)


def _curve_outcome(c: CurveAnalysis, kinds: tuple[str, ...], warn_on: tuple[str, ...]
                   ) -> CurveOutcome:
    """One curve judged on ``kinds``; a verdict among ``warn_on`` (but not ``kinds``) or an
    inconclusive one is a warning."""
    hit: list[str] = []
    why: list[str] = []
    if c.verdict in kinds:
        hit.append(c.verdict)
        why.append(c.reasons[0] if c.reasons else "")
    for kind in kinds:
        check = FAIL_CHECKS.get(kind)
        reason = check(c) if check is not None else None
        if reason:
            hit.append(kind)
            why.append(reason)
    if hit:
        return CurveOutcome(c, "fail", tuple(hit), tuple(why))
    warn = c.verdict == "inconclusive" or c.verdict in warn_on
    return CurveOutcome(c, "warn" if warn else "pass", (), c.reasons[:1])


def gate_markdown(result: GateResult) -> str:
    """The gate's decision in Markdown, for the top of the step summary: what failed and why."""
    from saturate.report.markdown import escape_md

    verdict = "passed" if result.passed else "failed"
    lines = [f"### Gate {verdict}", "",
             f"Fail on: {escape_md(', '.join(result.fail_on))}. Exit code {result.exit_code}.", ""]
    failed: tuple[Outcome, ...] = (*result.failed_groups, *result.failures)
    warned: tuple[Outcome, ...] = (*result.warned_groups, *result.warnings)
    for o in failed:
        lines.append(f"- ❌ {escape_md(o.name)}: {escape_md(o.message)}")
    for o in warned:
        lines.append(f"- ⚠️ {escape_md(o.name)}: {escape_md(o.message)}")
    for o in result.failed_diagnostics:
        lines.append(f"- ❌ {escape_md(o.name)}: {escape_md(o.message)}")
    for o in result.warned_diagnostics:
        lines.append(f"- ⚠️ **{o.label}** {escape_md(o.name)}: {escape_md(o.message)}")
    return "\n".join(lines).rstrip() + "\n\n"
