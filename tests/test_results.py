"""Result objects: ``from_dict`` inverts ``to_dict`` (through real JSON), and the one estimate
formatter's variants."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from saturate.analysis import AnalysisSettings, analyze_curve
from saturate.errors import InputError
from saturate.fit import FitSettings, fit_curve
from saturate.report.rows import interval
from saturate.results import (
    Collapse,
    CurveAnalysis,
    Estimate,
    ForecastPoint,
    LawSummary,
    Trend,
    format_estimate,
)
from saturate.table.curves import tidy


def _through_json(d: dict) -> dict:
    return json.loads(json.dumps(d))


def _full_analysis() -> CurveAnalysis:
    """A hand-built analysis with every optional part filled in and no NaN (NaN != NaN would make
    equality meaningless)."""
    return CurveAnalysis(
        source="runs/", experiment="exp", run_id="r1", run="dapo-seed1", metric="reward",
        direction="higher", n_points=120, compute_first=1.0, compute_last=4096.0,
        value_last=0.61, threshold=0.012, verdict="slowing",
        reasons=("fitted gain per doubling 0.02 [0.015, 0.03] is above the threshold", "ROI 0.5"),
        gain_per_doubling=Estimate(0.02, 0.015, 0.03, identified=True),
        asymptote=Estimate(0.7, 0.65, 0.8, identified=True),
        headroom=Estimate(0.09, 0.04, 0.19, identified=False),
        roi=0.5, roi_stage="knee", knee=1024.0,
        stop_point=Estimate(20000.0, 9000.0, 60000.0, identified=True),
        forecast=(ForecastPoint("2x", 8192.0, 0.63, 0.6, 0.66),
                  ForecastPoint(10000.0, 10000.0, 0.635, 0.6, 0.67, identified=False)),
        laws=(LawSummary("sigmoid", {"A": Estimate(0.7, 0.65, 0.8), "B": Estimate(1.2, 0.9, 1.5)},
                         0.7, aicc=-310.5, cv_error=0.01, converged=True),
              LawSummary("power", {"A": Estimate(0.9, 0.6, 2.0, identified=False)}, 0.3,
                         aicc=-305.0, cv_error=0.02, converged=False)),
        trend=Trend(Estimate(0.018, 0.01, 0.026), 0.001, "OLS on log2 compute", 2048.0, 4096.0,
                    40),
        collapse=Collapse(compute=512.0, step=512, level_before=0.5, level_after=0.3, drop=0.2,
                          drop_fraction=0.33),
        flags=("collapse", "binned:400->200"), run_status="FINISHED",
        group={"n_seeds": 3, "runs": ["a", "b", "c"], "by": "params.recipe", "value": "dapo"},
        compute_name="tokens",
    )


@pytest.mark.parametrize(
    "obj",
    [
        Estimate(0.1, 0.05, 0.2),
        Estimate(0.1, 0.05, 0.2, identified=False),
        ForecastPoint("4x", 400.0, 0.7, 0.6, 0.8, identified=False),
        ForecastPoint(1e6, 1e6, 0.7, 0.6, 0.8),
        LawSummary("weibull", {"A": Estimate(1.0, 0.9, 1.1)}, 0.25, -12.0, 0.03, False),
        Trend(Estimate(-0.01, -0.02, 0.0), 0.04, "OLS", 10.0, 20.0, 12),
        Collapse(300.0, 30, 0.8, 0.2, 0.6, 0.75),
    ],
    ids=lambda o: type(o).__name__,
)
def test_small_results_round_trip_through_json(obj) -> None:
    back = type(obj).from_dict(_through_json(obj.to_dict()))
    assert back == obj
    assert type(back) is type(obj)


def test_an_estimate_without_numbers_comes_back_as_nan_and_missing_ones_as_not_identified() -> None:
    e = Estimate(math.nan, identified=False)
    back = Estimate.from_dict(_through_json(e.to_dict()))
    assert math.isnan(back.value) and math.isnan(back.lo) and not back.identified
    assert back.to_dict() == e.to_dict()
    assert not Estimate.from_dict(None).identified and not Estimate.from_dict({}).identified


def test_curve_analysis_round_trips_with_every_part_filled_in() -> None:
    a = _full_analysis()
    back = CurveAnalysis.from_dict(_through_json(a.to_dict()))
    assert back == a
    assert back.to_dict() == a.to_dict()
    assert back.fit is None and back.points is None


def test_curve_analysis_of_a_real_fit_round_trips_except_its_fit_and_points() -> None:
    rng = np.random.default_rng(3)
    s = np.arange(1, 61) * 10
    df = tidy(pd.DataFrame({"run": "r", "metric": "reward", "step": s,
                            "value": 1 - np.exp(-s / 200) + rng.normal(0, 0.01, s.size)}))
    a = analyze_curve(df, AnalysisSettings(n_boot=30))
    assert a.fit is not None and a.laws and a.forecast and a.trend is not None
    back = CurveAnalysis.from_dict(_through_json(a.to_dict()))
    assert back.to_dict() == a.to_dict()
    # The gain's entry has no "identified": it is rebuilt from whether it has an interval.
    assert back.gain_per_doubling.identified == a.gain_per_doubling.identified
    assert back.fit is None and back.points is None


def test_an_inconclusive_short_curve_round_trips() -> None:
    df = tidy(pd.DataFrame({"run": "r", "metric": "loss", "step": [1, 2, 3],
                            "value": [3.0, 2.0, 1.5]}))
    a = analyze_curve(df, AnalysisSettings())
    assert a.verdict == "inconclusive"
    back = CurveAnalysis.from_dict(_through_json(a.to_dict()))
    assert back.to_dict() == a.to_dict()
    assert not back.gain_per_doubling.identified and math.isnan(back.roi)


def test_entries_stored_before_a_key_existed_take_its_default() -> None:
    d = _full_analysis().to_dict()
    for key in ("experiment", "compute_name", "group", "run_status", "trend", "collapse"):
        del d[key]
    back = CurveAnalysis.from_dict(d)
    assert (back.experiment, back.compute_name, back.group, back.trend) == ("", "step", None, None)


def test_an_entry_without_its_identity_is_an_input_error_naming_the_key() -> None:
    d = _full_analysis().to_dict()
    del d["run_id"]
    with pytest.raises(InputError, match="'run_id'"):
        CurveAnalysis.from_dict(d)
    with pytest.raises(InputError, match="'compute'"):
        ForecastPoint.from_dict({"at": "2x"})


def test_law_summary_reads_the_reported_part_of_a_law_fit() -> None:
    c = np.linspace(1, 5000, 150)
    y = 0.8 - 0.6 * (c / 100 + 1) ** -0.5 + np.random.default_rng(0).normal(0, 0.01, c.size)
    fit = fit_curve(c, y, settings=FitSettings(n_boot=20, laws=("power", "loglinear")))
    for lf in fit.laws:
        back = LawSummary.from_dict(_through_json(lf.to_dict()))
        assert back.to_dict() == lf.summary_row().to_dict()


# ---- the one estimate formatter -----------------------------------------------------------------


def test_format_estimate_default_marks_what_is_not_identified_and_what_is_missing() -> None:
    assert format_estimate(Estimate(0.12345, 0.08, 0.15)) == "0.123 [0.08, 0.15]"
    assert format_estimate(Estimate(0.12345, 0.08, 0.15), 4) == "0.1235 [0.08, 0.15]"
    assert format_estimate(Estimate(0.5, identified=False)) == "0.5 (not identified)"
    assert format_estimate(Estimate(math.nan)) == "n/a"
    assert format_estimate(None) == "n/a"
    assert str(Estimate(2.0, 1.0, 3.0)) == "2 [1, 3]"


def test_format_estimate_plain_variant_for_reasons_shows_the_value_as_it_is() -> None:
    plain = {"missing": None, "unidentified": ""}
    assert format_estimate(Estimate(0.05, 0.03, 0.07), **plain) == "0.05 [0.03, 0.07]"
    assert format_estimate(Estimate(0.05, identified=False), **plain) == "0.05"
    assert format_estimate(Estimate(math.nan, identified=False), **plain) == "nan"


def test_report_interval_is_the_table_variant() -> None:
    assert interval(Estimate(0.12, 0.08, 0.15)) == "0.12 [0.08, 0.15]"
    assert interval(Estimate(0.12, 0.08, math.nan, identified=False)) == "0.12 [0.08, ∞) ?"
    assert interval(Estimate(math.nan)) == "–" and interval(None) == "–"
    assert format_estimate(Estimate(0.12, 0.08, math.nan)) == "0.12"
