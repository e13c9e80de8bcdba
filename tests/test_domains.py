"""Metric domains: from the name and the data, overridable, and respected by the fit (bounded in
the fit, not clipped afterwards)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import saturate
from saturate.analysis.settings import AnalysisSettings
from saturate.errors import SettingsError
from saturate.fit import FitSettings, fit_curve
from saturate.measure.quantities import widen_within
from saturate.settings import Settings
from saturate.settings.checks import check_domain, check_domains
from saturate.vocabulary.domains import Domain, domain_from_name, metric_domain

SHARE = np.array([0.1, 0.4, 0.8])


@pytest.mark.parametrize(
    ("metric", "values", "domain"),
    [
        ("eval/math500/accuracy", SHARE, (0.0, 1.0)),
        ("eval/aime_amc/pass@64", SHARE, (0.0, 1.0)),
        ("eval/alpaca_eval/win_rate", SHARE, (0.0, 1.0)),
        ("eval/success_rate", SHARE, (0.0, 1.0)),
        ("val/gsm8k/acc", SHARE, (0.0, 1.0)),
        ("eval/exact_match", SHARE, (0.0, 1.0)),
        ("eval_gsm8k_pass1", SHARE, (0.0, 1.0)),  # pass@1 written as one word
        ("val-core/math_dapo/acc/mean@32", SHARE, (0.0, 1.0)),
        ("eval/acc_pct", SHARE * 100, (0.0, 100.0)),
        ("eval/accuracy", SHARE * 100, (0.0, 100.0)),  # a share whose values run above 1
        ("train/reward", SHARE, None),
        ("eval/olympiad/score", SHARE, None),
        ("train/loss", SHARE, None),
        ("passenger_count", SHARE, None),
        ("eval/accuracy", np.array([-0.1, 0.5]), None),  # the data refuse the name's domain
        ("eval/accuracy", np.array([0.5, 250.0]), None),
    ],
)
def test_the_domain_comes_from_the_name_and_is_confirmed_by_the_data(metric, values, domain):
    got, why = metric_domain(metric, values)
    assert (None if got is None else (got.lo, got.hi)) == domain
    assert why == ""


def test_a_setting_wins_over_the_name_and_none_removes_the_domain() -> None:
    got, _ = metric_domain("eval/olympiad/score", SHARE, {"eval/*/score": (0.0, 1.0)})
    assert got == Domain(0.0, 1.0, "setting", "eval/*/score")
    assert metric_domain("eval/accuracy", SHARE, {"eval/*": None}) == (None, "")


def test_a_setting_the_data_refuse_is_not_applied_and_says_why() -> None:
    got, why = metric_domain("train/reward", np.array([0.5, 3.0]), {"train/*": (0, 1)})
    assert got is None
    assert "[0, 1]" in why and "'train/*'" in why and "outside" in why


def test_domain_settings_are_validated_with_one_clear_message() -> None:
    assert check_domain("0,1") == (0.0, 1.0)
    assert check_domain([0, "inf"]) == (0.0, math.inf)
    assert check_domain("none") is None
    assert check_domains(["eval/*=0,100", "x=none"]) == {"eval/*": (0.0, 100.0), "x": None}
    assert check_domains({"eval/*": [0, 1]}) == {"eval/*": (0.0, 1.0)}
    for bad in ("1,0", "0", "a,b", "nan,1"):
        with pytest.raises(SettingsError, match="LO,HI"):
            check_domain(bad)
    with pytest.raises(SettingsError, match="--domain"):
        Settings.build(cli=True, domains=["eval/*=1,0"])
    s = Settings.build(domains=["eval/*=0,1"]).updated(domains=["train/*=none"])
    assert AnalysisSettings.from_settings(s).domains == {"eval/*": (0.0, 1.0), "train/*": None}


def test_the_command_line_takes_domain(tmp_path) -> None:
    from click.testing import CliRunner

    from saturate.cli import app

    path = tmp_path / "runs.csv"
    c = np.geomspace(1, 100, 30)
    pd.DataFrame({"run": "r", "metric": "eval/score", "step": range(30), "compute": c,
                  "value": 0.2 + 0.15 * np.log10(c)}).to_csv(path, index=False)
    runner = CliRunner()
    res = runner.invoke(app, ["analyze", str(path), "--format", "json", "--n-boot", "20",
                              "--domain", "eval/*=0,1"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["curves"][0]["domain"] == {"lo": 0.0, "hi": 1.0}
    bad = runner.invoke(app, ["analyze", str(path), "--domain", "eval/*=one,two"])
    assert bad.exit_code == 2
    assert "--domain" in bad.output


def _climbing_accuracy(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """An accuracy climbing straight in log compute up to 0.93: a log-linear law crosses 1
    within a few doublings."""
    rng = np.random.default_rng(seed)
    c = np.geomspace(10, 1000, n)
    return c, 0.3 + 0.63 * np.log(c / 10) / np.log(100) + rng.normal(0, 0.01, n)


def test_the_fit_is_bounded_by_the_domain_not_clipped() -> None:
    c, v = _climbing_accuracy()
    free = fit_curve(c, v, settings=FitSettings(n_boot=60, forecast_at=("2x", "16x")))
    assert free.forecast(("16x",))[0].hi > 1.0  # without a domain the band leaves [0, 1]
    held = fit_curve(c, v, settings=FitSettings(n_boot=60, forecast_at=("2x", "16x"),
                                                domain=(0.0, 1.0)))
    far = np.geomspace(c[0], 128 * c[-1], 60)
    lo, hi = held.interval(far)
    assert np.all(held.predict(far) <= 1.0) and np.all(hi <= 1.0) and np.all(lo >= 0.0)
    for lf in held.laws:  # asymptotes held inside by the laws' bounds, not clipped
        if lf.weight > 0 and "A" in lf.params:
            assert lf.params["A"].value <= 1.0 and lf.params["A"].hi <= 1.0
    loglinear = held.law_fit("loglinear")
    assert loglinear.weight == 0 and any("outside_domain" in f for f in loglinear.flags)
    # inside the data the bounded fit still follows the curve
    assert np.max(np.abs(held.predict(c) - v)) < 0.06


def test_the_analysis_reports_the_domain_and_where_it_binds() -> None:
    c, v = _climbing_accuracy()
    df = pd.DataFrame({"run": "r", "metric": "eval/accuracy", "step": range(c.size),
                       "compute": c, "value": v})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = saturate.analyze(df, n_boot=60, diagnostics=False, forecast_at=["2x", "16x"])
    curve = a.curves[0]
    assert curve.domain == (0.0, 1.0)
    assert curve.to_dict()["domain"] == {"lo": 0.0, "hi": 1.0}
    for f in curve.forecast:
        assert 0.0 <= f.lo <= f.value <= f.hi <= 1.0
    assert any("domain [0, 1]" in r for r in curve.reasons)
    assert type(curve).from_dict(curve.to_dict()).domain == (0.0, 1.0)


def test_widening_within_a_domain_stays_inside_and_holds_the_estimate() -> None:
    for value, lo, hi, extra in [(0.95, 0.93, 0.97, 0.2), (0.02, 0.01, 0.05, 1.0),
                                 (0.5, 0.45, 0.55, 0.05), (1.0, 0.99, 1.0, 0.3)]:
        a, b = widen_within(value, lo, hi, extra, (0.0, 1.0))
        assert 0.0 <= a <= min(lo, value) and max(hi, value) <= b <= 1.0
    a, b = widen_within(5.0, 4.0, 6.0, 10.0, (0.0, math.inf))
    assert 0.0 <= a < 4.0 and b > 6.0
    assert widen_within(0.5, 0.4, 0.6, 0.3) == pytest.approx((0.5 - math.hypot(0.1, 0.3),
                                                              0.5 + math.hypot(0.1, 0.3)))


def test_a_name_alone_does_not_make_a_domain() -> None:
    assert domain_from_name("timing/tokens_per_sec") is None
    assert domain_from_name("train/reward") is None
