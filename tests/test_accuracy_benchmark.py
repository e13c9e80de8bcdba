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

from accuracy_calibration import apply_map, brier, ece, fit_map, reliability  # noqa: E402
from accuracy_scoring import Method, score_method, tradeoff  # noqa: E402

from saturate.analysis.call_settings import EVIDENCE_FEATURES, EvidenceMap  # noqa: E402


def test_the_vectorised_map_is_the_tools_map() -> None:
    rng = np.random.default_rng(0)
    m = EvidenceMap(0.4, (("model", 0.7), ("trend_z", -0.1), ("drawdown", -1.5)))
    p = np.array([1e-4, 0.2, 0.5, 0.93, 1.0 - 1e-4])
    x = rng.uniform(-1, 1, (p.size, len(EVIDENCE_FEATURES)))
    x[:, 0] = np.log(p / (1 - p))
    want = [m.probability(v, dict(zip(EVIDENCE_FEATURES, row, strict=True)))
            for v, row in zip(p, x, strict=True)]
    assert apply_map(p, x, m) == pytest.approx(want)


def test_the_map_fit_recovers_a_known_map_and_improves_the_brier_score() -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    p = rng.uniform(0.02, 0.98, n)
    x = np.zeros((n, len(EVIDENCE_FEATURES)))
    x[:, 0] = np.log(p / (1 - p))
    x[:, EVIDENCE_FEATURES.index("drawdown")] = rng.uniform(0, 1, n)
    z = 0.5 + 0.6 * x[:, 0] - 2.0 * x[:, EVIDENCE_FEATURES.index("drawdown")]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-z))).astype(float)
    m = fit_map(x, y, ("model", "drawdown"))
    w = dict(m.weights)
    assert m.intercept == pytest.approx(0.5, abs=0.1) and w["model"] == pytest.approx(0.6, abs=0.08)
    assert w["drawdown"] == pytest.approx(-2.0, abs=0.2)
    assert brier(apply_map(p, x, m), y) < brier(p, y)
    assert ece(apply_map(p, x, m), y) < 0.02 < ece(p, y)
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
