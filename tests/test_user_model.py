"""A user's own law (``saturate.Model``): fitted by the general path beside the compiled laws,
judged by the same verdict path, refused with one clear error when its starts or bounds are bad."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pandas as pd
import pytest

import saturate
from saturate.errors import SettingsError
from saturate.fit import FitSettings, fit_curve
from saturate.fit.model import Model
from saturate.report.schema import build_schema, render_json

TRUE = {"top": 0.8, "gap": 0.5, "rate": 0.3}


def user_power(x, top, gap, rate):
    """A saturating power law written in the user's units."""
    return top - gap * x ** (-rate)


def _model() -> Model:
    return Model(user_power, params={"top": dict(value=1.0, min=0.0, max=10.0),
                                     "gap": dict(value=1.0, min=0.0, max=10.0),
                                     "rate": dict(value=0.5, min=0.01, max=3.0)})


def _curve(n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    c = np.geomspace(10.0, 10_000.0, n).round()
    return c, user_power(c, **TRUE)


def test_a_user_law_on_a_curve_it_fits_exactly_recovers_its_parameters() -> None:
    c, v = _curve()
    fit = fit_curve(c, v, settings=FitSettings(laws=(_model(),), n_boot=40))
    (law,) = fit.laws
    assert law.name == "user_power" and law.converged and law.weight == pytest.approx(1.0)
    for name, value in TRUE.items():
        assert law.params[name].value == pytest.approx(value, rel=1e-4), name
    assert law.law.asymptote(law.theta) == pytest.approx(fit.norm.y(TRUE["top"]), rel=1e-3)
    np.testing.assert_allclose(fit.predict(c), v, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:no compute axis found")
def test_a_user_law_goes_through_the_verdict_path_beside_the_compiled_ones() -> None:
    c, v = _curve()
    noise = np.random.default_rng(0).normal(0.0, 0.003, c.shape[0])
    df = pd.DataFrame({"metric": "reward", "step": c.astype(int), "value": v + noise})
    analysis = saturate.analyze(df, laws=["power", _model()], n_boot=40, diagnostics=False)
    (curve,) = analysis.curves
    assert {law.name for law in curve.laws} == {"power", "user_power"}
    assert curve.p_pays is not None and 0.0 <= curve.p_pays <= 1.0
    assert np.isfinite(curve.gain_per_doubling.value)
    doc = json.loads(render_json(analysis))
    jsonschema.validate(doc, build_schema())
    assert doc["settings"]["laws"][1]["name"] == "user_power"


@pytest.mark.parametrize(("params", "says"), [
    ({"top": dict(value=1, min=5, max=0)}, "min must be below max"),
    ({"top": dict(value=20, min=0, max=10)}, "must be a finite number within [0, 10]"),
    ({"top": dict(value="high")}, "must be numbers"),
    ({"top": dict(start=1)}, "unknown keys ['start']"),
])
def test_bad_starts_or_bounds_give_one_clear_settings_error(params: dict, says: str) -> None:
    with pytest.raises(SettingsError) as err:
        Model(user_power, params={**params, "gap": 1.0, "rate": 0.5})
    assert "parameter 'top'" in str(err.value) and says in str(err.value)


def test_a_user_law_needs_its_own_name() -> None:
    with pytest.raises(SettingsError, match="built-in laws"):
        Model(user_power, name="power")
    with pytest.raises(SettingsError, match="two laws are named"):
        FitSettings.checked(laws=(_model(), _model()))
    with pytest.raises(SettingsError, match="laws"):
        FitSettings.checked(laws=("power", "no_such_law"))


def test_parameters_default_to_the_functions_arguments() -> None:
    m = Model(user_power)
    assert [p[0] for p in m.params] == ["top", "gap", "rate"]
    assert all(p[1:] == (0.0, -np.inf, np.inf) for p in m.params)
