"""The generic converter (``saturate.results.codec``): for any value of the result types, drawn from their
own fields' type hints, ``from_dict(to_dict(x)) == x`` through real JSON, and ``to_dict(x)`` is
valid under the report schema's part for its class."""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, ClassVar, Literal, Union

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saturate.analysis.diagnostic_metrics import DiagnosticMetric
from saturate.errors import InputError
from saturate.report.schema import build_schema
from saturate.results import Collapse, CurveAnalysis, Estimate, ForecastPoint, LawSummary, Trend
from saturate.results.codec import _fields, from_dict, meta, schema_of, to_dict
from saturate.suites.result import AggregateCurve, GroupComparison, TaskResult

FLOATS = st.floats(allow_nan=False, allow_infinity=False)
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))


def _strategy(hint: Any) -> st.SearchStrategy:
    """Values of type ``hint`` whose JSON form is exact (finite floats: NaN != NaN)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    simple = {float: FLOATS, int: st.integers(-10**9, 10**9), str: st.text(max_size=12),
              bool: st.booleans()}
    if hint in simple:
        return simple[hint]
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
         TaskResult, GroupComparison, DiagnosticMetric]


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
                GateResult, SuiteOutcome, Normalization, SuiteAnalysis, SuiteGroup):
        assert cls.to_dict is Coded.to_dict, cls
        assert cls.from_dict.__func__ is Coded.from_dict.__func__, cls
