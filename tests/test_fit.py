"""fit_curve: recovery, direction, edge cases, determinism, calibration, and the BNSL check."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest
from realdata import realcurves_path

from saturate.errors import InputError, SettingsError
from saturate.fit import CurveFit, FitSettings, fit_curve
from saturate.table.curves import DataWarning

FAST = FitSettings(n_boot=60)


def sigmoid(c, a=0.8, r0=0.2, b=1.5, cmid=1500.0):
    return r0 + (a - r0) / (1 + (cmid / c) ** b)


def ar1(n, phi, sigma, rng):
    out = np.empty(n)
    out[0] = rng.standard_normal() * sigma
    e = rng.standard_normal(n) * sigma * np.sqrt(1 - phi**2)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + e[i]
    return out


@pytest.fixture(scope="module")
def saturating():
    rng = np.random.default_rng(0)
    c = np.linspace(0, 5000, 300)
    y = sigmoid(np.maximum(c, 1e-9)) + ar1(c.size, 0.3, 0.02, rng)
    return c, y, fit_curve(c, y, settings=FitSettings(n_boot=100))


def test_saturating_curve_finds_its_asymptote(saturating):
    c, y, fit = saturating
    assert "compute_shifted" in fit.flags  # step 0 is held explicitly
    assert fit.asymptote.identified
    assert fit.asymptote.lo <= 0.8 <= fit.asymptote.hi
    assert abs(fit.asymptote.value - 0.8) < 0.05
    assert abs(fit.start_level.value - 0.2) < 0.05
    assert sum(fit.weights().values()) == pytest.approx(1.0)
    assert fit.weights()["loglinear"] < 0.05
    pred = fit.predict(c)
    assert np.sqrt(np.mean((pred - sigmoid(np.maximum(c, 1e-9))) ** 2)) < 0.01
    assert np.all(np.isfinite(fit.predict([0.0, 1.0, 1e6])))


def test_curve_fit_is_built_once_and_caches_what_it_derives(saturating):
    import dataclasses

    c, _, fit = saturating
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.asymptote = None
    lo, hi = fit.interval(fit.compute_first)
    assert fit.start_level.value == pytest.approx(float(fit.predict(fit.compute_first)[0]))
    assert (fit.start_level.lo, fit.start_level.hi) == (float(lo[0]), float(hi[0]))
    assert fit.start_level is fit.start_level and fit.forecast() is fit.forecast()
    assert fit.identified_share == pytest.approx(
        sum(lf.weight for lf in fit.laws if lf.identified)
    )
    assert fit.forecast() == fit.forecast(["2x", "4x"])  # the cached default is the same forecast
    assert fit.forecast(("2x", "4x"), confidence=0.5) != fit.forecast()
    assert fit.to_dict()["forecast"] == [f.to_dict() for f in fit.forecast()]


def test_samples_intervals_and_forecasts(saturating):
    c, _, fit = saturating
    at = np.array([1000.0, 5000.0, 20000.0])
    samples = fit.predict_samples(at)
    assert samples.shape == (100, 3) and np.all(np.isfinite(samples))
    lo, hi = fit.interval(at)
    assert np.all(lo <= fit.predict(at) + 1e-9) and np.all(fit.predict(at) <= hi + 1e-9)
    lo80, hi80 = fit.interval(at, confidence=0.5)
    assert np.all(hi80 - lo80 <= hi - lo + 1e-12)
    fc = fit.forecast(["2x", "4x", 7500])
    assert [f.compute for f in fc] == [10000.0, 20000.0, 7500.0]
    assert all(f.lo <= f.value <= f.hi for f in fc)
    for bad in ("twice", -5, "0x", float("nan")):
        with pytest.raises(SettingsError, match="forecast_at"):
            fit.forecast([bad])
    with pytest.raises(SettingsError, match="law"):
        fit.predict_law("nope", [1.0])


def test_results_serialise_and_pickle(saturating):
    _, _, fit = saturating
    d = fit.to_dict()
    json.dumps(d, allow_nan=False)
    assert {law["name"] for law in d["laws"]} == set(fit.names)
    assert "sigmoid" in fit.summary() and "asymptote" in fit.summary()
    assert len(fit.law_summaries()) == len(fit.laws)
    back = pickle.loads(pickle.dumps(fit))
    np.testing.assert_array_equal(back.predict_samples([9000.0]), fit.predict_samples([9000.0]))


def test_deterministic_for_a_seed():
    rng = np.random.default_rng(1)
    c = np.arange(1, 120) * 10.0
    y = sigmoid(c) + 0.02 * rng.standard_normal(c.size)
    a = fit_curve(c, y, settings=FAST).predict_samples([2000.0])
    b = fit_curve(c, y, settings=FAST).predict_samples([2000.0])
    other = fit_curve(c, y, settings=FitSettings(n_boot=60, seed=1)).predict_samples([2000.0])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, other)


def test_lower_is_better_mirrors_higher():
    rng = np.random.default_rng(2)
    c = np.arange(1, 200) * 5.0
    loss = 2.0 + 3.0 * (c / 1000) ** -0.5 + 0.02 * rng.standard_normal(c.size)
    low = fit_curve(c, loss, direction="lower", settings=FAST)
    high = fit_curve(c, -loss, direction="higher", settings=FAST)
    at = [500.0, 2000.0, 8000.0]
    np.testing.assert_allclose(low.predict(at), -high.predict(at), rtol=1e-6)
    assert low.asymptote.value == pytest.approx(-high.asymptote.value, rel=1e-6)
    assert low.predict([8000.0])[0] < low.predict([1000.0])[0]  # the loss keeps falling
    assert low.forecast(["4x"])[0].value < loss[-20:].mean()


def test_loglinear_data_is_not_called_saturated():
    rng = np.random.default_rng(3)
    c = np.arange(1, 300) * 3.0
    y = 0.1 + 0.05 * np.log(c) + 0.01 * rng.standard_normal(c.size)
    fit = fit_curve(c, y, settings=FAST)
    assert not fit.asymptote.identified
    gain = fit.predict([4 * c[-1]])[0] - fit.predict([2 * c[-1]])[0]
    assert gain == pytest.approx(0.05 * np.log(2), rel=0.3)


def test_huge_offsets_give_the_same_shape():
    rng = np.random.default_rng(4)
    c = np.arange(1, 150) * 1e20
    y = sigmoid(c / 1e20 * 30) + 0.02 * rng.standard_normal(c.size)
    base = fit_curve(c, y, settings=FAST)
    shifted = fit_curve(c, y + 1e9, settings=FAST)
    at = [c[-1], 2 * c[-1]]
    np.testing.assert_allclose(shifted.predict(at) - 1e9, base.predict(at), atol=1e-4)


def test_long_curves_are_binned_and_still_accurate():
    rng = np.random.default_rng(5)
    c = np.arange(0, 10_000) * 1.0
    y = sigmoid(np.maximum(c, 1e-9), cmid=3000.0) + ar1(c.size, 0.5, 0.03, rng)
    fit = fit_curve(c, y, settings=FAST)
    assert any(f.startswith("binned:10000->") for f in fit.flags)
    truth = sigmoid(np.array([5000.0, 20000.0]), cmid=3000.0)
    assert np.max(np.abs(fit.predict([5000.0, 20000.0]) - truth)) < 0.03


def test_constant_curve_degrades_to_flags():
    fit = fit_curve(np.arange(20.0), np.full(20, 0.5), settings=FAST)
    assert "constant" in fit.flags
    np.testing.assert_allclose(fit.predict([5.0, 100.0]), 0.5, atol=1e-9)
    lo, hi = fit.interval([100.0])
    assert lo[0] == pytest.approx(0.5) and hi[0] == pytest.approx(0.5)
    assert not any(lf.identified for lf in fit.laws if lf.fitted)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_very_short_curves_do_not_crash(n):
    c = np.arange(1, n + 1) * 10.0
    y = np.log(c) + np.array([0.0, 0.01, -0.01, 0.02, 0.0])[:n]
    fit = fit_curve(c, y, settings=FAST)
    assert np.all(np.isfinite(fit.predict([c[-1], 2 * c[-1]])))
    assert "loglinear" in fit.names
    not_fitted = [lf for lf in fit.laws if not lf.fitted]
    assert all(lf.weight == 0 and any("not_fitted" in f for f in lf.flags) for lf in not_fitted)
    if n < 4:
        assert "too_few_points" in fit.flags


def test_dirty_input_is_repaired_with_a_warning():
    rng = np.random.default_rng(6)
    c = np.arange(1, 80) * 2.0
    y = sigmoid(c, cmid=60.0) + 0.01 * rng.standard_normal(c.size)
    y[[5, 30]] = np.nan
    order = rng.permutation(c.size)
    with pytest.warns(DataWarning, match="dropped 2 of 79"):
        fit = fit_curve(c[order], y[order], settings=FAST)
    assert fit.n_points == 77 and "dropped_nonfinite" in fit.flags
    assert fit.compute_first == 2.0 and fit.compute_last == 158.0


def test_bad_input_and_settings_raise_clear_errors():
    with pytest.raises(InputError, match="lengths differ"):
        fit_curve([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="at least 2"):
        fit_curve([1.0], [1.0])
    with pytest.raises(InputError, match="same compute"):
        fit_curve([3.0, 3.0, 3.0], [1.0, 2.0, 3.0])
    with pytest.raises(SettingsError, match="direction"):
        fit_curve([1, 2, 3], [1, 2, 3], direction="up")
    with pytest.raises(SettingsError, match="laws"):
        FitSettings.checked(laws=("sigmoid", "cubic"))
    with pytest.raises(SettingsError, match="confidence"):
        FitSettings.checked(confidence=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_curve(np.arange(1.0, 30.0), np.log(np.arange(1.0, 30.0)), settings=FAST)


# ---- calibration --------------------------------------------------------------------------------
TRUE = {
    "sigmoid": dict(A=0.8, R0=0.2, B=1.5, Cmid=1500.0),
    "power": dict(A=0.9, D=0.25, b=0.6),
    "power_shifted": dict(A=0.9, G=0.2, b=1.2, Cs=800.0),
    "weibull": dict(A=0.85, R0=0.1, d=1.3, s=1200.0),
    "loglinear": dict(a=0.7, b=0.1),
}


def _truth(name, c, c_last):
    p, x = TRUE[name], c / c_last
    if name == "sigmoid":
        return sigmoid(c, p["A"], p["R0"], p["B"], p["Cmid"])
    if name == "power":
        return p["A"] - p["D"] * x ** -p["b"]
    if name == "power_shifted":
        return p["A"] - p["G"] * ((c + p["Cs"]) / (c_last + p["Cs"])) ** -p["b"]
    if name == "weibull":
        return p["A"] - (p["A"] - p["R0"]) * np.exp(-((c / p["s"]) ** p["d"]))
    return p["a"] + p["b"] * np.log(x)


def test_parameter_intervals_cover_the_truth_about_90_percent():
    """Curves of 40-300 points from each law with AR(1) noise (phi 0.4): the 90% intervals of
    the identified parameters hold the true values 80-97% of the time (measured 0.874).
    Intervals that were too narrow by a quarter or twice too wide would fail."""
    rng = np.random.default_rng(11)
    hits = total = 0
    for name in TRUE:
        for rep in range(14):
            n = int(rng.integers(40, 300))
            c = np.linspace(5000 / n, 5000, n)
            y = _truth(name, c, 5000.0) + ar1(n, 0.4, 0.02, rng)
            lf = fit_curve(c, y, settings=FitSettings(laws=(name,), seed=rep)).laws[0]
            for pname, true in TRUE[name].items():
                est = lf.params[pname]
                if est.identified:
                    hits += est.lo <= true <= est.hi
                    total += 1
    assert total >= 0.9 * 14 * sum(len(p) for p in TRUE.values())
    assert 0.80 <= hits / total <= 0.97, f"coverage {hits / total:.3f} over {total}"


# ---- model averaging: weights and forecast bands ------------------------------------------------
def _random_curve(kind, rng):
    """A curve of 60-250 points up to compute 1000 from ``kind`` with random parameters and
    AR(1) noise (phi 0.2-0.6, sd 0.01-0.03); returns compute, values and the true value at 2x."""
    n = int(rng.integers(60, 250))
    c = np.linspace(1000 / n, 1000, n)
    if kind == "sigmoid":
        a, r0, b, cm = rng.uniform(0.6, 0.9), rng.uniform(0.05, 0.3), rng.uniform(1, 2.5), \
            rng.uniform(150, 800)
        f = lambda c: sigmoid(c, a, r0, b, cm)  # noqa: E731
    elif kind == "power":
        a, d, b = rng.uniform(0.7, 0.95), rng.uniform(0.1, 0.3), rng.uniform(0.3, 1.0)
        f = lambda c: a - d * (c / 1000) ** -b  # noqa: E731
    elif kind == "weibull":
        a, r0, d, s = rng.uniform(0.6, 0.9), rng.uniform(0.05, 0.3), rng.uniform(0.8, 2), \
            rng.uniform(200, 700)
        f = lambda c: a - (a - r0) * np.exp(-((c / s) ** d))  # noqa: E731
    else:
        b = rng.uniform(0.03, 0.1)
        f = lambda c: 0.6 + b * np.log(c / 1000)  # noqa: E731
    y = f(c) + ar1(n, rng.uniform(0.2, 0.6), rng.uniform(0.01, 0.03), rng)
    return c, y, float(f(np.array([2000.0]))[0])


@pytest.mark.slow
def test_forecast_bands_cover_the_truth_at_2x():
    """90% bands at 2x the last compute, on curves from four laws fitted with all laws, and on
    sigmoid curves fitted WITHOUT the sigmoid (the generating law missing): together they hold
    the true value 75-97% of the time (measured 0.80 over these 60 curves). All-or-nothing
    weights held it in 60% (each law's own band is narrow and the winner is often not
    the generating law), so this fails if the averaging stops carrying model uncertainty."""
    rng = np.random.default_rng(21)
    without_sigmoid = tuple(name for name in FitSettings().laws if name != "sigmoid")
    hits = {}
    for kind, laws in [("sigmoid", None), ("power", None), ("weibull", None),
                       ("loglinear", None), ("sigmoid", without_sigmoid)]:
        key = kind if laws is None else f"{kind} (not fitted)"
        hits[key] = []
        for rep in range(12):
            c, y, truth = _random_curve(kind, rng)
            settings = FitSettings(n_boot=80, seed=rep, laws=laws or FitSettings().laws)
            lo, hi = fit_curve(c, y, settings=settings).interval([2000.0])
            hits[key].append(bool(lo[0] <= truth <= hi[0]))
    coverage = float(np.mean([h for v in hits.values() for h in v]))
    detail = {k: f"{sum(v)}/{len(v)}" for k, v in hits.items()}
    assert 0.75 <= coverage <= 0.97, (coverage, detail)
    assert all(sum(v) >= 6 for v in hits.values()), detail  # no kind of curve left behind


def test_laws_that_disagree_beyond_the_data_share_the_weight():
    """A pooled sigmoid-shaped RL curve (A=0.66, B=1.3, Cmid=300, data to ~3x Cmid): laws that
    fit it equally well but level off differently share the weight, and the averaged
    asymptote's interval holds the truth (it used to be one law's narrow interval)."""
    tops = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        c = np.linspace(0, 880, 200)
        y = sigmoid(np.maximum(c, 1e-9), 0.66, 0.22, 1.3, 300.0) + ar1(200, 0.3, 0.01, rng)
        fit = fit_curve(c, y, settings=FitSettings(n_boot=100))
        assert fit.asymptote.lo <= 0.66 <= fit.asymptote.hi, (seed, fit.asymptote)
        tops.append(max(fit.weights().values()))
        assert sum(fit.weights().values()) == pytest.approx(1.0)
    assert np.mean(tops) < 0.9, tops


def test_bootstrap_that_stalls_is_widened_and_flagged():
    """BNSL refits stall in flat directions; the interval then takes in the linearised one and
    the law says so (or the parameter is reported as not identified)."""
    rng = np.random.default_rng(3)
    c = np.linspace(5, 1000, 150)
    x = c / 1000
    y = 0.9 - 0.25 * x**-0.1 * ((1 + (x / 0.3) ** (1 / 0.3)) / (1 + 0.3 ** (-1 / 0.3))) ** -0.3
    lf = fit_curve(c, y + ar1(150, 0.4, 0.01, rng), settings=FitSettings(laws=("bnsl",))).laws[0]
    stalled = [f for f in lf.flags if f.startswith("bootstrap_stalled")]
    assert stalled, lf.flags
    for name in stalled[0].split(":")[1].split("(")[0].replace(" ", "").split(","):
        est = lf.params[name]
        assert not est.identified or est.lo < est.value < est.hi


# ---- the published broken-power-law check -------------------------------------------------------
PUBLISHED_RMSLE = 0.010916  # Caballero et al.'s own fit (reproduced from their script)


def test_bnsl_four_digit_addition_forecast():
    path = realcurves_path("bnsl", "four_digit_addition_dataset_size.csv")
    data = np.genfromtxt(path, delimiter=",", skip_header=1, usecols=(0, 1))
    x, y = data[:, 0], data[:, 1]
    fit = fit_curve(x[:14], y[:14], direction="lower")
    rmsle = np.sqrt(np.mean((np.log(fit.predict(x[14:])) - np.log(y[14:])) ** 2))
    # ~0.0113 vs the published 0.0109: equal at the precision the issue states (~0.011)
    assert rmsle <= 1.05 * PUBLISHED_RMSLE, rmsle
    assert fit.weights()["bnsl"] > 0.5
    # a plain power law fitted to the same points misses badly (the adversarial part)
    power = fit_curve(x[:14], y[:14], direction="lower", settings=FitSettings(laws=("power",)))
    assert np.sqrt(np.mean((np.log(power.predict(x[14:])) - np.log(y[14:])) ** 2)) > 5 * rmsle
    assert isinstance(fit, CurveFit)


def test_rolling_origin_backtest_measures_the_extrapolation_error():
    rng = np.random.default_rng(11)
    c = np.geomspace(1, 1000, 120)
    # A saturating power law: every prefix already shows the shape, forecasts of the next
    # doubling hold up.
    smooth = fit_curve(c, 1 - 0.8 * c**-0.5 + rng.normal(0, 0.005, c.size), settings=FAST)
    assert smooth.gain_backtest and all(h > 0 for _, h, _ in smooth.gain_backtest)
    assert all(1 <= at < 1000 for at, _, _ in smooth.gain_backtest)
    # A sigmoid whose rise comes after the earlier origins: their prefixes cannot see it.
    turn = fit_curve(c, sigmoid(c, a=1.0, r0=0.0, b=3.0, cmid=500.0)
                     + rng.normal(0, 0.005, c.size), settings=FAST)
    assert turn.extrapolation_se > 5 * smooth.extrapolation_se
    assert json.dumps(turn.to_dict())  # still serialisable
    assert turn.to_dict()["extrapolation_se"] == pytest.approx(turn.extrapolation_se)
