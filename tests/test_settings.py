"""One settings path: the check_* functions, Settings precedence and views, and the Python API
refusing bad values with a SettingsError that names the option and shows the value."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import saturate
from saturate.analysis import AnalysisSettings
from saturate.diagnostics import DiagnosticSettings
from saturate.errors import SettingsError
from saturate.fit import FitSettings, parse_at
from saturate.settings import OPTIONS, Settings, cli_name
from saturate.settings.checks import (
    check_choices,
    check_confidence,
    check_forecast_at,
    check_forecast_points,
    check_gain,
    check_int,
    check_number,
    check_pair,
    check_pairs,
    check_positive,
    check_target,
    check_targets,
    gain_parts,
    resolve_at,
)

# (option, bad value, words the message must hold besides the option's name)
BAD_VALUES = [
    ("confidence", 1.5, "in [0.5, 1), got 1.5"),
    ("confidence", 0, "in [0.5, 1), got 0"),
    ("confidence", "abc", "got 'abc'"),
    ("min_gain", "-1", ">= 0"),
    ("min_gain", "3%%", "got '3%%'"),
    ("forecast_at", [-5], "> 0, got -5"),
    ("forecast_at", ["0x"], "got '0x'"),
    ("forecast_at", ["nan"], "got nan"),
    ("n_boot", -1, "integer >= 0, got -1"),
    ("budget", "lots", "> 0, got 'lots'"),
    ("budget", -5, "> 0, got -5"),
    ("targets", ["eval/*"], "GLOB=VALUE"),
    ("targets", ["eval/*=high"], "got 'high'"),
    ("pairs", ["train/reward"], "REWARD=BENCHMARK"),
    ("laws", ["cubic"], "got 'cubic'"),
]


# ---- the check_* functions ----------------------------------------------------------------


@pytest.mark.parametrize(("given", "expected"), [
    (0.01, 0.01), ("0.01", 0.01), ("2%", "2%"), (" 2.5 % ", "2.5%"), (0, 0.0), ("1e-3", 0.001),
])
def test_check_gain(given, expected) -> None:
    assert check_gain(given) == expected


@pytest.mark.parametrize("bad", ["lots", "-1", "-2%", "nan", True, "1%%", [1], math.inf])
def test_check_gain_rejects_and_names_the_option(bad) -> None:
    with pytest.raises(SettingsError, match="^--min-gain must be"):
        check_gain(bad, "--min-gain")
    with pytest.raises(SettingsError, match="^min_gain must be"):
        gain_parts(bad)


def test_gain_parts() -> None:
    assert gain_parts("3%") == (3.0, True) and gain_parts(0.02) == (0.02, False)
    assert gain_parts("0.5") == (0.5, False)


def test_forecast_points_and_resolve_at() -> None:
    assert check_forecast_at("2x") == "2x" and check_forecast_at("1.5X") == "1.5x"
    assert check_forecast_at("1e21") == 1e21 and check_forecast_at(300) == 300.0
    assert check_forecast_points("2x,4x") == ("2x", "4x")
    assert check_forecast_points(["2x", 1e6]) == ("2x", 1e6)
    assert resolve_at("2x", 10.0) == 20.0 and resolve_at(7.5, 10.0) == 7.5
    assert parse_at(np.float64(3.0), 1.0) == 3.0
    for bad in ("0x", "-5", -5, "-2x", "soon", "inf", math.nan, True):
        with pytest.raises(SettingsError, match="^--forecast-at must be 'Nx'"):
            check_forecast_at(bad, "--forecast-at")
        with pytest.raises(SettingsError, match="^forecast_at must be"):
            parse_at(bad, 10.0)
    with pytest.raises(SettingsError, match="at least one"):
        check_forecast_points([])


def test_confidence_is_one_rule_everywhere() -> None:
    assert check_confidence("0.8") == 0.8 and check_confidence("95%") == 0.95
    assert check_confidence(0.5) == 0.5
    for bad in ("1", "0", 0.3, "high", 1.5, True, "150%"):
        with pytest.raises(SettingsError, match=r"^--confidence must be"):
            check_confidence(bad, "--confidence")
        for make in (AnalysisSettings.checked, FitSettings.checked, DiagnosticSettings.checked,
                     Settings):  # built from Settings, the stages' views do not check again
            with pytest.raises(SettingsError, match=r"^confidence must be"):
                make(confidence=bad)


def test_numbers_ints_and_choices() -> None:
    assert check_positive("3e2", "--budget") == 300.0
    assert check_int("7", "n") == 7 and check_int(np.int64(3), "n") == 3
    assert check_number(0.5, "x", 0, 1, closed="neither") == 0.5
    for bad in (0, -1, "inf", True, "x", math.nan):
        with pytest.raises(SettingsError, match="^--budget must be"):
            check_positive(bad, "--budget")
    for bad in (2.5, -1, "x", True, None):
        with pytest.raises(SettingsError, match="^n must be an integer >= 0"):
            check_int(bad, "n")
    with pytest.raises(SettingsError, match=r"^x must be in \(0, 1\), got 1"):
        check_number(1, "x", 0, 1, closed="neither")
    assert check_choices(["a,b", "B", " "], "k", ("a", "b")) == ("a", "b")
    with pytest.raises(SettingsError, match="^k must be among a, b, got 'c'"):
        check_choices("a,c", "k", ("a", "b"))


def test_targets_and_pairs() -> None:
    assert check_target("eval/*=0.6") == ("eval/*", 0.6)
    assert check_target(" loss = -1e-2 ") == ("loss", -0.01)
    assert check_targets(["a=1", "b=2"]) == {"a": 1.0, "b": 2.0}
    assert check_targets({"a": "0.5"}) == {"a": 0.5}
    assert check_pair("train/reward=eval/*") == ("train/reward", "eval/*")
    assert check_pairs(["r=b", ("r2", "b2")]) == (("r", "b"), ("r2", "b2"))
    assert check_pairs({"r": ["b1", "b2"]}) == (("r", "b1"), ("r", "b2"))
    for bad in ("eval/*", "=0.6", "x=", "x=nan", "x=soon"):
        with pytest.raises(SettingsError, match="^--target"):
            check_target(bad)
    for bad in ("train/reward", 3, [["only-one"]], {"r": 3}):
        with pytest.raises(SettingsError, match="^pairs must be"):
            check_pairs(bad)


def test_fit_settings_messages_state_the_allowed_range() -> None:
    cases = [
        (dict(f_scale=0), "f_scale must be > 0, got 0"),
        (dict(n_starts=0), "n_starts must be an integer >= 1, got 0"),
        (dict(cv_origins=(0.5, 1.2)), r"cv_origins must be in \(0, 1\), got 1.2"),
        (dict(max_points=4), "max_points must be an integer >= 8, got 4"),
        (dict(boot_min_weight=1), r"boot_min_weight must be in \[0, 1\), got 1"),
        (dict(loss="l3"), "loss must be one of linear, soft_l1, huber, cauchy, got 'l3'"),
        (dict(laws=()), "laws must name at least one of"),
    ]
    for kwargs, message in cases:
        with pytest.raises(SettingsError, match=message):
            FitSettings.checked(**kwargs)


# ---- Settings: precedence and views --------------------------------------------------------


def test_every_option_has_a_check_and_a_field() -> None:
    names = {f for f in Settings.__dataclass_fields__} - {"config", "explicit", "cli"}
    assert names == {o.name for o in OPTIONS}
    assert cli_name("min_gain") == "--min-gain" and cli_name("targets") == "--target"


def test_defaults_are_the_stages_defaults() -> None:
    s = Settings()
    assert AnalysisSettings.from_settings(s) == AnalysisSettings()
    assert DiagnosticSettings.from_settings(s) == DiagnosticSettings()
    assert AnalysisSettings.from_settings(s).fit_settings() == FitSettings()
    assert s.explicit == frozenset() and s.config is None


def test_precedence_defaults_then_file_then_given(tmp_path: Path) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text('min_gain = "7%"\nn_boot = 20\nforecast_at = ["3x"]\n'
                 '[targets]\n"a" = 1\n"b" = 2\n')
    s = Settings.build(p, min_gain=0.5, targets={"b": 3, "c": 4}, forecast_at=[])
    assert s.min_gain == 0.5  # given beats the file
    assert s.n_boot == 20 and s.forecast_at == ("3x",)  # the file beats the default
    assert s.confidence == 0.9  # the default where nothing is set
    assert s.targets == {"a": 1.0, "b": 3.0, "c": 4.0}  # targets merge, a given glob wins
    assert s.explicit == {"min_gain", "n_boot", "forecast_at", "targets"}
    assert s.updated(confidence="80%").confidence == 0.8
    a = AnalysisSettings.from_settings(s)
    assert (a.min_gain, a.n_boot, a.forecast_at) == (0.5, 20, ("3x",))


def test_settings_are_frozen_and_validated_when_made_directly() -> None:
    s = Settings.build(metric="eval/*", laws="power,sigmoid")
    assert s.metric == ("eval/*",) and s.laws == ("power", "sigmoid")
    assert AnalysisSettings.from_settings(s).fit_settings().laws == ("power", "sigmoid")
    assert s.selection() == {"experiment": None, "filter": None, "metric": ["eval/*"],
                             "run": None, "compute": None, "timeout": None,
                             "tracker_url": None}
    with pytest.raises(AttributeError):
        s.n_boot = 3  # type: ignore[misc]
    with pytest.raises(SettingsError, match="^n_boot must be an integer >= 0, got -2"):
        Settings(n_boot=-2)
    with pytest.raises(SettingsError, match="unknown setting"):
        Settings.build(min_gian=1)


def test_require_names_the_option_as_spelled() -> None:
    with pytest.raises(SettingsError, match=r"^--min-gain is required \(e.g. --min-gain 0.01\)"):
        Settings.build(cli=True).require("min_gain", "thresholds", example="--min-gain 0.01")
    with pytest.raises(SettingsError, match="^budget is required"):
        Settings().require("budget", example="budget=5000")
    Settings.build(thresholds={"x": 0.1}).require("min_gain", "thresholds", example="")


# ---- the Python API --------------------------------------------------------------------------


def _tidy_like(n: int = 12) -> pd.DataFrame:
    """A frame with run_id, metric and compute columns but not the tidy table's others."""
    c = np.geomspace(1, 1000, n)
    return pd.DataFrame({"run_id": "r1", "metric": "reward", "compute": c,
                         "value": 0.1 * np.log2(c)})


@pytest.mark.parametrize(("option", "value", "words"), BAD_VALUES)
def test_api_refuses_bad_values_naming_the_option(option: str, value, words: str) -> None:
    with pytest.raises(SettingsError) as info:
        saturate.analyze(_tidy_like(), **{option: value})
    message = str(info.value)
    assert message.startswith(option) and words in message, message
    assert "\n" not in message


@pytest.mark.parametrize(("option", "value", "words"), BAD_VALUES)
def test_settings_file_refuses_bad_values_naming_the_key(
    tmp_path: Path, option: str, value, words: str
) -> None:
    import json

    p = tmp_path / "saturate.toml"
    p.write_text(f"{option} = {json.dumps(value)}\n")  # these JSON values are TOML values too
    with pytest.raises(SettingsError) as info:
        saturate.analyze(_tidy_like(), config=p)
    assert str(info.value).startswith(f"{p}: {option}"), str(info.value)


def test_api_forecast_at_minus_five_is_refused_before_any_work() -> None:
    with pytest.raises(SettingsError, match="^forecast_at must be 'Nx'.*got -5"):
        saturate.analyze(_tidy_like(), forecast_at=[-5])


def test_api_reads_a_raw_frame_like_load_does() -> None:
    raw = _tidy_like()
    a = saturate.analyze(raw, n_boot=20)
    assert len(a.curves) == 1 and a.curves[0].run_id == "r1"
    assert a.settings["n_boot"] == 20 and a.settings["compute"] == "compute"
    tidy = saturate.load(raw)
    b = saturate.analyze(tidy, n_boot=20)
    assert a.curves[0].verdict == b.curves[0].verdict


def test_api_takes_built_settings_and_lays_keywords_over_them(tmp_path: Path) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text("n_boot = 30\nforecast_at = ['3x']\n")
    s = Settings.build(p)
    a = saturate.analyze(_tidy_like(), settings=s, n_boot=10)
    assert a.settings["n_boot"] == 10 and a.settings["forecast_at"] == ["3x"]
    assert a.settings["config"] == str(p)
    with pytest.raises(SettingsError, match="not both"):
        saturate.analyze(_tidy_like(), settings=s, config=p)
