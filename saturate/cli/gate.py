"""``saturate gate``: exit 0 when every selected curve still scales, 1 when any curve or named
diagnostic fails, 2 on errors.

Only objectives are gated. Under GitHub Actions (GITHUB_ACTIONS=true) it also writes ::error /
::warning annotations and appends its decision and the Markdown report to $GITHUB_STEP_SUMMARY.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from saturate.cli.common import (
    check_sources_listening,
    fast_option,
    run_analysis,
    sources_argument,
)
from saturate.cli.options import settings_command
from saturate.settings import Settings

_JUNIT = click.Option(["--junit"], type=click.Path(path_type=Path), metavar="PATH",
                      help="Write JUnit XML (one test case per curve, per suite group and per "
                      "failing diagnostic) to this path.")


@settings_command("selection", "analysis", "suite", "fail_on", "diagnostics", "engine",
                  params=[sources_argument(), _JUNIT, fast_option()])
def gate(
    settings: Settings,
    sources: list[str] | None,
    junit: Path | None,
    fast: bool,
) -> None:
    """CI gate: fail (exit 1) when a curve has saturated or regresses, or a diagnostic named in
    --fail-on is found; 0 when all pass. The threshold is analyze's: --min-gain, else min_gain in
    the settings file, else 3% of each curve's range per doubling. With --suite the gate is on
    each --group-by group's aggregate over the suite's tasks: a group fails when the aggregate's
    next doubling does not pay (saturated or regressing); single curves then fail only on the
    kinds named in --fail-on, and warn otherwise."""
    check_sources_listening(sources)
    from saturate.gate import (
        append_step_summary,
        decide,
        gate_markdown,
        github_annotations,
        parse_fail_on,
        write_junit,
    )
    from saturate.report.markdown import render_markdown

    analysis = run_analysis(sources, settings, fast=fast, outputs={"--junit": junit})
    named = parse_fail_on(settings.fail_on, extend=False) if analysis.suite is not None else None
    result = decide(analysis.curves, fail_on=parse_fail_on(settings.fail_on),
                    diagnostics=analysis.diagnostics, suite=analysis.suite, curve_fail_on=named)
    if junit is not None:
        write_junit(result, junit)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github_annotations(result):
            print(line)
        verdict = "passed" if result.passed else "failed"
        report = render_markdown(analysis, title=f"saturate gate {verdict}")
        head, _, rest = report.partition("\n\n")
        append_step_summary(f"{head}\n\n{gate_markdown(result)}{rest}")
    print(result.summary())
    sys.stdout.flush()
    if result.exit_code:
        raise click.exceptions.Exit(result.exit_code)
