"""The diagnostics registry: one registration per diagnostic feeds KINDS, the run order, the JSON
schema (kind enum and per-kind details), the gate's --fail-on kinds and help, and the docs."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
from diag_helpers import ar1, ref

import saturate
import saturate.diagnostics as diagnostics
from saturate.diagnostics import DiagnosticSettings, registry, run_diagnostics
from saturate.diagnostics.base import Diagnostic
from saturate.diagnostics.instability import gradient_conflict, length_runaway
from saturate.errors import SettingsError
from saturate.gate import fail_kinds, fail_on_help, parse_fail_on, register_fail_kind
from saturate.report.schema import build_schema, render_schema, schema

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
C = np.linspace(5, 1000, 250)


def _tidy(*runs: str) -> pd.DataFrame:
    """A tidy table with one rising reward curve per run."""
    return pd.DataFrame([
        {"source": "test", "run_id": run, "run": run, "metric": "train/reward", "step": i,
         "compute": c, "value": 0.1 * np.log(c)}
        for run in runs for i, c in enumerate(C)
    ])


def _document(found) -> dict:
    return {"schema_version": 1, "settings": {}, "curves": [],
            "diagnostics": [d.to_dict() for d in found]}


def _errors(doc: dict) -> list[jsonschema.ValidationError]:
    return list(jsonschema.Draft202012Validator(schema()).iter_errors(doc))


@pytest.fixture
def gremlins():
    """A throwaway diagnostic: one ``gremlins`` warning per run, registered for one test."""

    def find(given: registry.DiagnosticInput) -> list[Diagnostic]:
        runs = dict.fromkeys((r.source, r.run_id, r.run) for r in given.refs)
        return [Diagnostic(kind="gremlins", severity="warning", run=run, run_id=rid, source=src,
                           metrics=(), message="gremlins in the run", details={"count": 3})
                for src, rid, run in runs]

    registry.register(
        find,
        registry.kind("gremlins", "warning", "gremlins were seen in the run",
                      registry.fields(count=registry.INT)),
        order=999,
    )
    yield "gremlins"
    registry.unregister("gremlins")


def test_the_shipped_kinds_in_their_sorting_order() -> None:
    assert diagnostics.KINDS == (
        "divergence", "sharpening", "slice_saturated", "slices", "entropy_collapse", "kl_blowup",
        "length_runaway", "gradient_conflict", "recipe", "target", "target_unreachable",
        "allocation", "cost",
    )
    for spec in registry.kind_specs():
        assert spec.help and spec.severities and spec.details["type"] == "object"


def test_a_registered_kind_appears_everywhere(gremlins: str) -> None:
    assert diagnostics.KINDS[-1] == gremlins
    diag = schema()["$defs"]["diagnostic"]
    assert diag["properties"]["kind"]["enum"][-1] == gremlins
    rule = next(r for r in diag["allOf"] if r["if"]["properties"]["kind"]["const"] == gremlins)
    assert rule["then"]["properties"]["severity"]["enum"] == ["warning"]
    assert gremlins in fail_kinds() and f"{gremlins}; information only" in fail_on_help()
    assert parse_fail_on(f"divergence,{gremlins}") == (
        "saturated", "regressing", "divergence", gremlins)
    with pytest.raises(ValueError, match=gremlins):
        register_fail_kind(gremlins, lambda c: None)
    assert f"``{gremlins}``" in diagnostics.kinds_table()
    # It runs, sorts after the shipped warnings, and its details are checked by the schema.
    found = run_diagnostics([], _tidy("b", "a"))
    assert [(d.kind, d.run) for d in found] == [(gremlins, "a"), (gremlins, "b")]
    doc = _document(found)
    assert _errors(doc) == []
    doc["diagnostics"][0]["details"]["count"] = "three"
    doc["diagnostics"][1]["severity"] = "error"
    assert {tuple(e.absolute_path) for e in _errors(doc)} == {
        ("diagnostics", 0, "details", "count"), ("diagnostics", 1, "severity")}


def test_an_unregistered_kind_is_gone(gremlins: str) -> None:
    registry.unregister(gremlins)
    assert gremlins not in diagnostics.KINDS and gremlins not in fail_on_help()
    assert gremlins not in schema()["$defs"]["diagnostic"]["properties"]["kind"]["enum"]
    with pytest.raises(SettingsError, match=gremlins):
        parse_fail_on(gremlins)


def test_registrations_are_checked() -> None:
    details = registry.fields(n=registry.INT)
    for bad in [("Gremlins", "info"), ("saturated", "info"), ("gremlins", "fatal"),
                ("gremlins", ())]:
        with pytest.raises(ValueError, match="kind"):
            registry.kind(*bad, "help", details)
    with pytest.raises(ValueError, match="one non-empty line"):
        registry.kind("gremlins", "info", "two\nlines")
    with pytest.raises(ValueError, match="object"):
        registry.kind("gremlins", "info", "help", {"type": "array"})
    with pytest.raises(ValueError, match="already registered"):
        registry.register(lambda given: [], registry.kind("divergence", "info", "again"),
                          order=1, name="copycat")
    assert "copycat" not in {p.name for p in registry.producers()}


def test_a_finding_outside_its_registration_is_refused() -> None:
    def find(given):
        return [Diagnostic(kind="gremlins", severity="error", run="r", run_id="r", metrics=(),
                           message="m")]

    registry.register(find, registry.kind("gremlins", "warning", "gremlins"), order=999)
    try:
        with pytest.raises(ValueError, match="gremlins.*'error'"):
            run_diagnostics([], _tidy("a"))
    finally:
        registry.unregister("gremlins")


def test_the_committed_schema_is_what_the_registry_writes() -> None:
    committed = (ROOT / "saturate" / "report" / "schema.json").read_text(encoding="utf-8")
    assert committed == render_schema(build_schema()), (
        "saturate/report/schema.json is out of date: run `python -m saturate.report.schema`")
    assert json.loads(committed) == schema()


def test_the_package_docs_list_every_kind() -> None:
    assert all(f"``{k}``" in diagnostics.__doc__ for k in diagnostics.KINDS)
    assert ":mod:`.instability`" in diagnostics.kinds_table()


def test_the_instability_details_match_the_schema() -> None:
    """The kinds the sample runs do not show, validated against their registered details."""
    rng = np.random.default_rng(2)
    length = 300 * np.exp(3 * C / 1000) + rng.normal(0, 10, C.size)
    flat = 0.5 + ar1(rng, C.size, 0.01)
    found = [length_runaway(ref("response_length/mean", C, length), ref("train/reward", C, flat),
                            DiagnosticSettings())]
    up = 0.3 + 0.04 * np.log2(C / 5) + ar1(rng, C.size, 0.01)
    down = 0.6 - 0.03 * np.log2(C / 5) + ar1(rng, C.size, 0.01)
    found += gradient_conflict({m: ref(m, C, y) for m, y in (("eval/math", up),
                                                              ("eval/code", down))},
                               DiagnosticSettings())
    assert [d.kind for d in found] == ["length_runaway", "gradient_conflict"]
    assert _errors(_document(found)) == []


@pytest.mark.skipif(not (SAMPLES / "README.md").is_file(), reason="no sample_runs/")
def test_the_info_kinds_match_the_schema(tmp_path: Path) -> None:
    """Slices that all scale, recipes, an allocation, targets and cost, as JSON."""
    frame = pd.read_csv(SAMPLES / "10_eval_slices.csv")
    scaling = tmp_path / "scaling_slices.csv"
    frame[frame["metric"].isin(["eval/hard/score", "eval/olympiad/score"])].to_csv(scaling)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(str(scaling), n_boot=40)
        b = saturate.analyze(str(SAMPLES / "08_recipe_comparison.csv"), n_boot=40,
                             group_by="recipe", metric="train/reward", budget=50.0,
                             gpu_hour_cost=2.0, pretrain_compute=1e6, gpu_hours="compute",
                             targets={"train/*": 10.0})
    found = [*a.diagnostics, *b.diagnostics]
    assert {"slices", "recipe", "allocation", "cost", "target_unreachable"} <= {
        d.kind for d in found}
    assert _errors(_document(found)) == []


@pytest.mark.subprocess  # python -m saturate.report.schema
def test_the_schema_generator_checks_and_takes_help_without_writing_files(tmp_path) -> None:
    import subprocess
    import sys

    for args, code in ((["--check"], 0), (["--help"], 0)):
        proc = subprocess.run([sys.executable, "-m", "saturate.report.schema", *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert proc.returncode == code, proc.stderr
    assert list(tmp_path.iterdir()) == []
