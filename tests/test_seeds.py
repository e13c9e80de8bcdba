"""--group-by pooling: alignment on compute, mean curve and the seed spread columns."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from saturate.analysis.seed_mean import pool_seeds
from saturate.errors import SettingsError
from saturate.table.curves import DataWarning, tidy


def _runs(
    offsets: dict[str, float], lr: dict[str, str], steps: dict[str, np.ndarray]
) -> pd.DataFrame:
    rows = []
    for run, off in offsets.items():
        s = steps[run]
        rows.append(
            pd.DataFrame(
                {
                    "run_id": run,
                    "run": f"name-{run}",
                    "metric": "reward",
                    "step": s,
                    "value": np.log2(s) + off,
                    "params.lr": lr[run],
                    "params.seed": run[-1],
                }
            )
        )
    return tidy(pd.concat(rows, ignore_index=True), origin="test")


def test_pools_runs_sharing_a_value_into_a_mean_curve() -> None:
    steps = {r: np.arange(1, 101) for r in ("a1", "a2", "a3", "b1")}
    steps["a2"] = np.arange(1, 101) * 1.0 + 0.5  # logged at other steps: interpolated
    df = _runs(
        {"a1": 0.0, "a2": 1.0, "a3": 2.0, "b1": 5.0},
        {"a1": "1e-3", "a2": "1e-3", "a3": "1e-3", "b1": "3e-4"},
        steps,
    )
    out = pool_seeds(df, "lr")
    assert set(out["run_id"]) == {"lr=1e-3", "b1"}
    a = out[out["run_id"] == "lr=1e-3"]
    # Common range only: a2 starts at 1.5, so the grid starts at 2.
    assert a["compute"].min() >= 1.5 and a["compute"].max() <= 100.0
    np.testing.assert_allclose(a["value"], np.log2(a["compute"]) + 1.0, atol=0.02)
    assert (a["n_seeds"] == 3).all()
    # Offsets 0, 1, 2: sd 1, standard error 1/sqrt(3).
    np.testing.assert_allclose(a["value_se"], 1 / np.sqrt(3), atol=0.02)
    # Every seed gains exactly 1 per doubling: no spread in the doubling gain.
    d = a["doubling_se"].dropna()
    assert len(d) > 40 and np.allclose(d, 0.0, atol=0.02)
    assert a["group_runs"].iloc[0] == "name-a1; name-a2; name-a3"
    assert (a["params.lr"] == "1e-3").all()
    assert "params.seed" in a.columns and a["params.seed"].isna().all()
    b = out[out["run_id"] == "b1"]
    assert (b["n_seeds"] == 1).all() and b["value_se"].isna().all()
    assert len(b) == 100


def test_doubling_spread_reflects_seeds_that_gain_differently() -> None:
    rows = []
    for i, slope in enumerate((0.5, 1.0, 1.5)):
        s = np.arange(1, 65)
        rows.append(
            pd.DataFrame(
                {
                    "run_id": f"r{i}",
                    "metric": "score",
                    "step": s,
                    "value": slope * np.log2(s),
                    "params.algo": "ppo",
                }
            )
        )
    out = pool_seeds(tidy(pd.concat(rows), origin="t"), "params.algo")
    last = out.iloc[-1]
    assert last["doubling_se"] == pytest.approx(0.5 / np.sqrt(3), rel=1e-6)


def test_runs_that_do_not_overlap_are_kept_apart_with_a_warning() -> None:
    steps = {"a1": np.arange(1, 11), "a2": np.arange(20, 31)}
    df = _runs({"a1": 0.0, "a2": 0.0}, {"a1": "x", "a2": "x"}, steps)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = pool_seeds(df, "lr")
    assert any(
        issubclass(x.category, DataWarning) and "share no compute" in str(x.message) for x in w
    )
    assert set(out["run_id"]) == {"a1", "a2"}


def test_unknown_group_column_is_a_settings_error_naming_the_parameters() -> None:
    df = _runs({"a1": 0.0}, {"a1": "x"}, {"a1": np.arange(1, 11)})
    with pytest.raises(SettingsError, match=r"--group-by 'batch'.*lr, seed"):
        pool_seeds(df, "batch")


def test_runs_without_the_parameter_pass_through() -> None:
    df = _runs(
        {"a1": 0.0, "a2": 1.0},
        {"a1": "x", "a2": "x"},
        {"a1": np.arange(1, 11), "a2": np.arange(1, 11)},
    )
    extra = tidy(
        pd.DataFrame(
            {
                "run_id": "lonely",
                "metric": "reward",
                "step": np.arange(1, 11),
                "value": np.arange(10.0),
            }
        ),
        origin="t",
    )
    out = pool_seeds(pd.concat([df, extra], ignore_index=True), "lr")
    assert set(out["run_id"]) == {"lr=x", "lonely"}
    assert (out.loc[out["run_id"] == "lonely", "n_seeds"] == 1).all()
