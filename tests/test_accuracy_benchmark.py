"""The accuracy benchmark's own machinery (benchmarks/accuracy_calibration.py, accuracy_calls.py
and accuracy_scoring.py): its scores of a probability, its calls are the tool's, and
leave-one-source-out never chooses a setting on the source it scores."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from accuracy_calibration import brier, ece, reliability  # noqa: E402
from accuracy_scoring import Method, auc, most_confident, score_method, tradeoff  # noqa: E402


def test_the_calibration_tables_and_probability_scores() -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    p = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < p).astype(float)  # calibrated by construction
    assert ece(p, y) < 0.02 and brier(p, y) < brier(np.full(n, 0.5), y)
    skewed = np.clip(p + 0.2, 0, 1)
    assert ece(skewed, y) > 0.15
    table = reliability(p, y)
    assert table["n"].sum() == p.size and len(table) == 10
    assert auc(p, y) == pytest.approx(auc(p * 0.5, y))  # a ranking, not a scale
    assert auc(p, 1.0 - y) == pytest.approx(1.0 - auc(p, y))
    # the most confident share: forced calls at 1/2 on the cases furthest from it
    sure = np.r_[np.full(30, 0.99), np.full(70, 0.5)]
    assert most_confident(sure, np.r_[np.ones(30), np.zeros(70)], 0.3) == 1.0


def test_the_benchmarks_calls_are_the_tools() -> None:
    """The vectorised band of the accuracy benchmark calls each probability as decide() does,
    the tip of an unrecovered collapse included."""
    from accuracy_calls import band_calls

    from saturate.decide import DecisionSettings

    s = DecisionSettings()
    p = np.array([0.1, s.stop_below, 0.5, s.go_above - 1e-9, s.go_above, 0.9, 0.47, np.nan])
    collapsed = np.array([False] * 6 + [True, True])
    got = band_calls(p, collapsed, s)
    assert list(got) == [False, None, None, None, True, True, False, None]


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
