"""The generic converter (``saturate.results.codec``): for any value of the result types, drawn from their
own fields' type hints, ``from_dict(to_dict(x)) == x`` through real JSON, and ``to_dict(x)`` is
valid under the report schema's part for its class."""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from pathlib import Path  # the hints of the test's classes are read in this module
from typing import Any, ClassVar, Literal, Union

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saturate.analysis.diagnostic_metrics import DiagnosticMetric
from saturate.analysis.inventory import Inventory, MetricLine
from saturate.decide.settings import GroupPrior
from saturate.errors import InputError
from saturate.fit.prep import Normalisation
from saturate.ingest.folder import Skipped
from saturate.report.schema import build_schema
from saturate.results import Collapse, CurveAnalysis, Estimate, ForecastPoint, LawSummary, Trend
from saturate.results.codec import _fields, from_dict, meta, schema_of, to_dict
from saturate.suites.result import AggregateCurve, GroupComparison, TaskResult
from saturate.table.axis import ComputeAxis
from saturate.tracker.timeline import Timeline, TimelinePoint
from saturate.vocabulary.domains import Domain

FLOATS = st.floats(allow_nan=False, allow_infinity=False)
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))


def _strategy(hint: Any) -> st.SearchStrategy:
    """Values of type ``hint`` whose JSON form is exact (finite floats: NaN != NaN)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    simple = {float: FLOATS, int: st.integers(-10**9, 10**9), str: st.text(max_size=12),
              bool: st.booleans()}
    if hint in simple:
        return simple[hint]
    if hint is Path:
        return st.text(max_size=12).map(Path)
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (Union, types.UnionType):
        return st.one_of(*(st.none() if a is type(None) else _strategy(a) for a in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(_strategy(args[0]), max_size=3).map(tuple)
        return st.tuples(*(_strategy(a) for a in args))
    if origin is dict:
        value = JSON_SCALARS if args[1] is Any else _strategy(args[1])
        return st.dictionaries(st.text(max_size=6), value, max_size=3)
    if dataclasses.is_dataclass(hint):
        return _of(hint)
    raise AssertionError(f"no strategy for {hint!r}")


@functools.cache
def _of(cls: type) -> st.SearchStrategy:
    parts = {f.name: _strategy(hint) for f, hint in _fields(cls)}
    if cls is CurveAnalysis:  # the gain's entry says "identified" by having an interval
        parts["gain_per_doubling"] = st.builds(Estimate, FLOATS, FLOATS, FLOATS)
        parts["p_pays"] = st.none() | st.floats(0.0, 1.0)  # the schema's ranges
        parts["n_points"] = st.integers(0, 10**6)
    if cls is DiagnosticMetric:
        parts["role"], parts["n_points"] = st.sampled_from(["diagnostic", "axis"]), st.integers(0, 99)
    return st.fixed_dictionaries(parts).map(lambda kw: cls(**kw))


TYPES = [Estimate, ForecastPoint, LawSummary, Trend, Collapse, CurveAnalysis, AggregateCurve,
         TaskResult, GroupComparison, DiagnosticMetric, Domain, Normalisation, GroupPrior,
         ComputeAxis, Skipped, MetricLine, Inventory, TimelinePoint, Timeline]


@pytest.mark.parametrize("cls", TYPES, ids=lambda c: c.__name__)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_result_round_trips_through_json(cls: type, data: st.DataObject) -> None:
    obj = data.draw(_of(cls))
    text = json.dumps(obj.to_dict(), allow_nan=False)
    back = cls.from_dict(json.loads(text))
    assert back == obj and type(back) is cls
    assert json.dumps(back.to_dict(), allow_nan=False) == text


@pytest.mark.parametrize("cls", [Estimate, CurveAnalysis, DiagnosticMetric],
                         ids=lambda c: c.__name__)
@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_report_schema_of_a_class_holds_its_entries(cls: type, data: st.DataObject) -> None:
    entry = json.loads(json.dumps(data.draw(_of(cls)).to_dict(), allow_nan=False))
    _schema_validator(cls).validate(entry)


@functools.cache
def _schema_validator(cls: type) -> jsonschema.protocols.Validator:
    """What ``jsonschema.validate(entry, schema)`` does for every entry (the report schema built,
    its part for ``cls`` checked against the meta-schema, a validator made), done once a class:
    the same schema for every drawn entry (~0.7 s each time)."""
    defs = build_schema()["$defs"]
    schema = {"$defs": defs, **defs[cls._json_def]}
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def test_the_schema_is_written_from_the_fields() -> None:
    curve = schema_of(CurveAnalysis)
    assert list(curve["properties"]) == list(CurveAnalysis(**_minimal()).to_dict())
    assert curve["properties"]["roi"]["required"] == ["value", "stage"]
    assert "fit" not in curve["properties"] and "points" not in curve["properties"]
    assert build_schema()["$defs"]["curve"] == curve


def _minimal() -> dict[str, Any]:
    e = Estimate(1.0, 0.5, 1.5)
    return dict(source="s", run="r", run_id="i", metric="m", verdict="scaling", n_points=5,
                compute_last=1.0, value_last=1.0, direction="higher", threshold=0.1,
                gain_per_doubling=e, asymptote=e, headroom=e, roi=0.5, roi_stage="knee",
                experiment="", compute_first=0.5, reasons=())


@dataclasses.dataclass(frozen=True)
class _Nested:
    """A nested key and a field read with a default when an entry leaves it out."""

    a: int = dataclasses.field(metadata=meta(key="box.a"))
    b: str = dataclasses.field(metadata=meta("b's words", key="box.b", missing="none"))


def test_nested_keys_missing_values_and_identity_keys() -> None:
    assert to_dict(_Nested(1, "x")) == {"box": {"a": 1, "b": "x"}}
    assert from_dict(_Nested, {"box": {"a": 2}}) == _Nested(2, "none")
    with pytest.raises(InputError, match="'a'"):
        from_dict(_Nested, {"box": {"b": "x"}})
    box = schema_of(_Nested)["properties"]["box"]
    assert box["required"] == ["a"] and box["properties"]["b"]["description"] == "b's words"


def test_views_of_other_results_are_written_by_the_codec_in_their_own_order() -> None:
    """``inline`` writes an encoded object's entries in a field's place, :func:`derived`
    properties are written under their ``key`` (after a field, or at the end), and a class's
    ``_json_order`` orders the entry: the gate's, the diagnostics' and the suites' views of other
    results are made this way, not by hand."""
    from saturate.results.codec import Coded, derived

    @dataclasses.dataclass(frozen=True)
    class Inner(Coded):
        a: int
        b: str

    @dataclasses.dataclass(frozen=True)
    class View(Coded):
        _json_order: ClassVar[tuple[str, ...]] = ("total", "status")

        inner: Inner = dataclasses.field(metadata=meta(inline=True))
        status: str = dataclasses.field(metadata=meta(key="state"))
        notes: tuple[str, ...] = ()

        @derived("status", key="double")
        def _double(self) -> int:
            return 2 * self.inner.a

        @derived()
        def total(self) -> float:
            return float("nan")

    entry = View(Inner(3, "x"), "ok", ("n",)).to_dict()
    assert list(entry) == ["total", "a", "b", "state", "double", "notes"]
    assert entry == {"total": None, "a": 3, "b": "x", "state": "ok", "double": 6, "notes": ["n"]}
    assert json.loads(json.dumps(entry)) == entry

    @dataclasses.dataclass(frozen=True)
    class Wrong(Coded):
        status: str

        @derived("state")
        def other(self) -> int:
            return 1

    with pytest.raises(TypeError, match="no serialised field"):
        Wrong("ok").to_dict()


def test_no_result_writes_its_json_by_hand() -> None:
    """The result objects of the diagnostics, gate and suites have no hand-written ``to_dict``
    or ``from_dict``: the codec's are theirs."""
    from saturate.diagnostics.allocate import Allocation, AllocationChoice
    from saturate.diagnostics.base import Diagnostic
    from saturate.diagnostics.passk import PassKChange
    from saturate.diagnostics.recipes import RecipeComparison, RecipePair, RecipeSummary
    from saturate.diagnostics.target import TargetResult
    from saturate.gate.decide import CurveOutcome, DiagnosticOutcome, GateResult, SuiteOutcome
    from saturate.results.codec import Coded
    from saturate.suites.normalize import Normalization
    from saturate.suites.result import SuiteAnalysis, SuiteGroup

    for cls in (Allocation, AllocationChoice, Diagnostic, PassKChange, RecipeComparison,
                RecipePair, RecipeSummary, TargetResult, CurveOutcome, DiagnosticOutcome,
                GateResult, SuiteOutcome, Normalization, SuiteAnalysis, SuiteGroup, *TYPES):
        assert cls.to_dict is Coded.to_dict, cls
        assert cls.from_dict.__func__ is Coded.from_dict.__func__, cls


def test_views_that_cannot_be_read_back_are_written_by_the_codec() -> None:
    """The fits (their arrays are not in the JSON), the watcher's events and passes (the time to
    the second; analyses counted) and the report are :class:`Written`: the codec's ``to_dict``,
    no ``from_dict``."""
    from saturate.api import Analysis
    from saturate.fit.result import CurveFit, LawFit
    from saturate.results.codec import Written
    from saturate.tracker.events import Event
    from saturate.tracker.watch import PassResult

    for cls in (LawFit, CurveFit, Event, PassResult, Analysis):
        assert cls.to_dict is Written.to_dict and not hasattr(cls, "from_dict"), cls
    event = Event("verdict_changed", "s", "r1", "r", "m", 2.0, "scaling", "saturated", 90061.5)
    assert event.to_dict() == {"time": "1970-01-02T01:01:01Z", "event": "verdict_changed",
                               "source": "s", "run_id": "r1", "run": "r", "metric": "m",
                               "from": "scaling", "to": "saturated", "compute": 2.0, "detail": ""}
    assert PassResult(1.0, 5, 2, 1, events=(event,)).to_dict() == {
        "time": 1.0, "fetched": 5, "new_points": 2, "curves_changed": 1, "analysed": 0,
        "baseline": False, "events": [event.to_dict()]}
    report = Analysis((), {}).to_dict()
    assert list(report) == ["schema_version", "settings", "summary", "axis", "curves",
                            "diagnostics", "diagnostic_metrics"]  # no suite: no "suite" key


def test_an_unbounded_domain_is_null_in_json_and_infinite_read_back() -> None:
    import math

    domain = Domain(-math.inf, 1.0, "setting", "eval/*")
    assert domain.to_dict() == {"lo": None, "hi": 1.0, "source": "setting", "pattern": "eval/*"}
    assert Domain.from_dict(domain.to_dict()) == domain
    assert Domain.from_dict({"lo": 0, "hi": None}).hi == math.inf


def test_write_only_views_cached_derived_values_omitted_nones_and_paths() -> None:
    """:class:`Written` gives a view only ``to_dict``; ``derived(cached=True)`` writes a cached
    property; ``omit_none`` leaves a None out; ``missing_from`` reads a missing key from the
    entry's others; a path is written as its text and read back as a path."""
    import functools

    from saturate.results.codec import Coded, Written, derived

    @dataclasses.dataclass(frozen=True)
    class Seen(Written):
        _json_order: ClassVar[tuple[str, ...]] = ("twice", "n")

        n: int
        hidden: list[int] = dataclasses.field(default_factory=list, compare=False)
        extra: str | None = dataclasses.field(default=None, metadata=meta(omit_none=True))

        @derived(cached=True)
        def twice(self) -> int:
            self.hidden.append(1)  # counts the calls
            return 2 * self.n

    seen = Seen(3)
    assert seen.to_dict() == {"twice": 6, "n": 3} and list(seen.to_dict()) == ["twice", "n"]
    assert seen.hidden == [1] and isinstance(vars(Seen)["twice"], functools.cached_property)
    assert Seen(3, extra="x").to_dict() == {"twice": 6, "n": 3, "extra": "x"}
    assert not hasattr(Seen, "from_dict")

    @dataclasses.dataclass(frozen=True)
    class Read(Coded):
        path: Path
        lo: float = float("nan")
        sure: bool = dataclasses.field(default=True, metadata=meta(
            missing_from=lambda entry: entry.get("lo") is not None))

    entry = Read(Path("a/b.csv"), 1.0, False).to_dict()
    assert entry == {"path": "a/b.csv", "lo": 1.0, "sure": False}
    assert Read.from_dict(entry) == Read(Path("a/b.csv"), 1.0, False)
    assert Read.from_dict({"path": "x", "lo": 2.0}).sure is True
    assert Read.from_dict({"path": "x"}).sure is False
    assert schema_of(Read)["properties"]["path"] == {"type": "string"}
    assert schema_of(Read)["required"] == ["path"]


@pytest.mark.subprocess  # the subject: what a fresh interpreter imports
def test_the_codec_and_results_import_neither_numpy_nor_pandas() -> None:
    """Light modules (the settings) hold coded classes: the codec finds numpy values only once
    numpy is imported, and the results name pandas only for the type checker."""
    import subprocess
    import sys

    code = ("import sys, saturate.results, saturate.decide.settings\n"
            "print(sorted(m for m in ('numpy', 'pandas') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
