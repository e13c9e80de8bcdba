"""The accuracy benchmark's own machinery (benchmarks/accuracy_calibration.py and
accuracy_scoring.py): the calibration map it fits is the tool's, and leave-one-source-out never
chooses a setting on the source it scores."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from accuracy_calibration import brier, calibrate, fit_platt, reliability  # noqa: E402
from accuracy_scoring import Method, score_method, tradeoff  # noqa: E402

from saturate.analysis.call_settings import DecisionSettings  # noqa: E402


def test_the_vectorised_map_is_the_tools_map() -> None:
    s = DecisionSettings(calibration=(0.4, 0.7))
    p = np.array([0.0, 1e-4, 0.2, 0.5, 0.93, 1.0])
    assert calibrate(p, s.calibration) == pytest.approx([s.calibrated(v) for v in p])


def test_platt_scaling_recovers_a_known_map() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.98, 20_000)
    z = 0.5 + 0.6 * np.log(p / (1 - p))
    y = (rng.uniform(size=p.size) < 1 / (1 + np.exp(-z))).astype(float)
    a, b = fit_platt(p, y)
    assert a == pytest.approx(0.5, abs=0.08) and b == pytest.approx(0.6, abs=0.08)
    assert brier(calibrate(p, (a, b)), y) < brier(p, y)
    table = reliability(p, y)
    assert table["n"].sum() == p.size and len(table) == 10


def test_loso_chooses_each_sources_setting_on_the_other_sources() -> None:
    """Source A always pays, B never does; a setting is a constant call. Held out, A gets the
    call that suits B and B the one that suits A: the held-out labels are never seen."""
    rows = pd.DataFrame({
        "source": ["A"] * 6 + ["B"] * 6,
        "label": pd.Series([True] * 6 + [False] * 6, dtype=object),
    })

    def calls(r: pd.DataFrame, setting: bool) -> pd.DataFrame:
        return pd.DataFrame({"call": pd.Series(setting, index=r.index, dtype=object),
                             "err2": 0.0, "err4": 0.0}, index=r.index)

    seen: list[set[str]] = []

    def fit(train: pd.DataFrame) -> list[bool]:
        seen.append(set(train["source"]))
        return [True, False]

    out = score_method(Method("const", calls, fit=fit, default=True), rows, select=tradeoff(0.5))
    assert out["chosen"] == {"A": False, "B": True}
    assert seen[:2] == [{"B"}, {"A"}]
    loso = {r["source"]: r for r in out["loso"]}
    assert loso["ALL"]["bal_acc"] == 0.0
