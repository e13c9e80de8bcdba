"""The crashes the fuzzing of issue 14 found, one test each: analysed when usable, otherwise one
clear line and exit code 2. Also the helpers that fixed them (:func:`saturate.fit.prep.pow2_scale`,
:func:`saturate.errors.shorten`)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import saturate
from saturate.cli import app
from saturate.errors import InputError, names_text, shorten
from saturate.fit.prep import pow2_scale
from saturate.measure.collapse import detect_collapse
from saturate.measure.quantities import honest_forecast, smoothed_range
from saturate.measure.trend import noise_sd, trend_test
from saturate.results import ForecastPoint
from saturate.table.curves import DataWarning

runner = CliRunner()
STEPS = np.arange(1, 41) * 100
VALUES = 1 - np.exp(-STEPS / 1500) + np.random.default_rng(0).normal(0, 0.02, 40)


def _refused(path: Path) -> str:
    """The one error line of ``saturate analyze path`` (which must exit 2)."""
    result = runner.invoke(app, ["analyze", str(path)])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and len(lines[0]) <= 300, result.stderr
    return lines[0]


def _analysed(source: object, **kw: object) -> saturate.Analysis:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return saturate.analyze(source, n_boot=50, diagnostics=False, **kw)


# ---- numbers in any units -----------------------------------------------------------------------

def test_a_single_1e308_in_a_40_point_curve_is_analysed() -> None:
    v = VALUES.copy()
    v[20] = 1e308
    df = pd.DataFrame({"step": STEPS, "metric": "reward", "value": v})
    res = _analysed(df)
    assert res.curves[0].n_points == 40 and res.curves[0].verdict


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e299, 1e-301])
def test_curves_near_1e300_get_the_verdict_of_the_curve_in_ordinary_units(scale: float) -> None:
    df = pd.DataFrame({"step": STEPS, "metric": "reward", "value": VALUES})
    want = _analysed(df).curves[0]
    got = _analysed(df.assign(value=VALUES * scale)).curves[0]
    assert (got.verdict, got.roi_stage, got.flags) == (want.verdict, want.roi_stage, want.flags)
    assert got.gain_per_doubling.value / scale == pytest.approx(want.gain_per_doubling.value, rel=1e-6)
    assert got.threshold / scale == pytest.approx(want.threshold, rel=1e-9)


def test_evidence_is_equivariant_in_the_units() -> None:
    noise = np.random.default_rng(1).normal(0, 0.02, 40)
    c, y = STEPS.astype(float), np.where(STEPS < 2500, 0.8, 0.2) + noise
    base = detect_collapse(c, y)
    assert base is not None
    for s in (2.0**-1000, 1e-300, 1e300, 2.0**1000):
        got = detect_collapse(c, y * s)
        assert got is not None and got.step == base.step
        assert got.drop / s == pytest.approx(base.drop, rel=1e-12)
        assert noise_sd(y * s) / s == pytest.approx(noise_sd(y), rel=1e-12)
        assert smoothed_range(y * s) / s == pytest.approx(smoothed_range(y), rel=1e-12)
        t, t0 = trend_test(c, y * s), trend_test(c, y)
        assert t.p_value == pytest.approx(t0.p_value, rel=1e-9)
        assert t.slope_per_doubling.hi / s == pytest.approx(t0.slope_per_doubling.hi, rel=1e-9)


def test_forecast_shrinkage_neither_overflows_nor_divides_by_zero() -> None:
    for s in (1e-300, 1e-160, 1.0, 1e160, 1e300):
        fp = ForecastPoint("2x", 2.0, 1.2 * s, 1.1 * s, 1.3 * s, True)
        (got,) = honest_forecast((fp,), 1.0, 1.0 * s, 0.05 * s)
        (ref,) = honest_forecast((ForecastPoint("2x", 2.0, 1.2, 1.1, 1.3, True),), 1.0, 1.0, 0.05)
        assert got.value / s == pytest.approx(ref.value, rel=1e-12)
        assert got.lo / s == pytest.approx(ref.lo, rel=1e-12)


def test_pow2_scale_is_one_for_ordinary_magnitudes_and_exact_otherwise() -> None:
    assert pow2_scale(np.array([0.5, -3.0, 1e6])) == 1.0
    assert pow2_scale(0.0, math.nan, math.inf) == 1.0
    for m in (1e308, 1.7976931348623157e308, 1e-300, 5e-324, 1e30):
        s = pow2_scale(m)
        assert math.frexp(s)[0] == 0.5  # a power of two
        assert 1.0 <= m / s < 2.0


# ---- column names -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("header", "named"),
    [
        ("step,metric,value,Value", ("'value'", "'Value'")),
        ("step,STEP,metric,value", ("'step'", "'STEP'")),
        ("step, step ,reward", ("'step'", "' step '")),
    ],
)
def test_columns_that_collide_after_case_folding_or_trimming_are_refused_by_name(
    tmp_path: Path, header: str, named: tuple[str, str]
) -> None:
    ncol = header.count(",") + 1
    rows = [",".join([str(s)] * (ncol - 2) + ["reward" if "metric" in header else "1", str(v)])
            for s, v in zip(STEPS, VALUES, strict=True)]
    path = tmp_path / "runs.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    line = _refused(path)
    assert all(n in line for n in named) and "rename or drop" in line, line


def test_a_column_name_with_spaces_around_is_read(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(" step ,reward\n" + "".join(f"{s},{v}\n" for s, v in zip(STEPS, VALUES, strict=True)))
    assert saturate.load(path).points["step"].tolist() == STEPS.tolist()


def test_an_error_echoing_a_5000_character_name_is_one_short_line(tmp_path: Path) -> None:
    big = "x" * 4990 + "THE_END"
    pd.DataFrame({big: ["a"] * 3, big + "2": ["b"] * 3}).to_csv(tmp_path / "h.csv", index=False)
    line = _refused(tmp_path / "h.csv")
    assert "..." in line and "THE_END" in line and len(line) <= 300


def test_shorten_and_names_text() -> None:
    assert shorten("abc") == "abc"
    cut = shorten("a" * 50 + "b" * 50, 21)
    assert len(cut) == 21 and cut.startswith("a" * 9) and cut.endswith("b" * 9)
    assert shorten("x\n::error::FORGED\x1b[2J") == "x\\n::error::FORGED\\x1b[2J"
    assert names_text(["a", "b", "c"], most=2) == "a, b and 1 more"
    assert len(str(InputError("y" * 5000))) <= 300


# ---- cell types ---------------------------------------------------------------------------------

@pytest.mark.parametrize("extra", [[1, 2], {"lr": 0.1}])
def test_list_or_dict_valued_json_fields_are_read_as_text(tmp_path: Path, extra: object) -> None:
    recs = [{"step": int(s), "metric": "r", "value": float(v), "extra": extra}
            for s, v in zip(STEPS, VALUES, strict=True)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "b.json").write_text(json.dumps(recs))
    for name in ("a.jsonl", "b.json"):
        df = saturate.load(tmp_path / name).to_frame()
        assert len(df) == 40 and set(df["params.extra"]) == {json.dumps(extra)}


def test_parquet_list_and_binary_columns_are_read_as_text(tmp_path: Path) -> None:
    table = pa.table({"step": STEPS, "metric": ["r"] * 40, "value": VALUES,
                      "tags": [[1, 2]] * 40, "blob": [b"\xff\xfeok"] * 40})
    pq.write_table(table, tmp_path / "runs.parquet")
    df = saturate.load(tmp_path / "runs.parquet").to_frame()
    assert len(df) == 40
    assert set(df["params.tags"]) == {"[1, 2]"} and set(df["params.blob"]) == {"\\xff\\xfeok"}


def test_a_list_where_a_number_belongs_is_refused(tmp_path: Path) -> None:
    recs = [{"step": int(s), "metric": "r", "value": [float(v)]} for s, v in zip(STEPS, VALUES, strict=True)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert "column 'value' is not numeric" in _refused(tmp_path / "a.jsonl")


@pytest.mark.parametrize("cell", ["-", "nan", "12345678901234567890123456"])
def test_odd_run_cells_in_a_tsv_are_run_names(tmp_path: Path, cell: str) -> None:
    runs = [cell if i < 20 else "1" for i in range(40)]
    body = "".join(f"{r}\t{s}\tr\t{v}\n" for r, s, v in zip(runs, STEPS, VALUES, strict=True))
    (tmp_path / "runs.tsv").write_text("run\tstep\tmetric\tvalue\n" + body)
    df = saturate.load(tmp_path / "runs.tsv").points
    assert len(df) == 40 and df["run"].nunique() == 2


@pytest.mark.parametrize("cell", ["inf", "-inf", "12345678901234567890123456"])
def test_a_step_out_of_int64_is_dropped_with_a_warning(tmp_path: Path, cell: str) -> None:
    body = "".join(f"{cell if i == 5 else s}\t{s}\tr\t{v}\n"
                   for i, (s, v) in enumerate(zip(STEPS, VALUES, strict=True)))
    (tmp_path / "runs.tsv").write_text("step\tcompute\tmetric\tvalue\n" + body)
    with pytest.warns(DataWarning, match=r"dropped 1 point\(s\) whose step is infinite or beyond"):
        df = saturate.load(tmp_path / "runs.tsv").points
    assert len(df) == 39


# ---- byte-order marks ---------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "json"])
def test_a_byte_order_mark_is_accepted_in_every_text_format(
    tmp_path: Path, kind: str, encoding: str
) -> None:
    df = pd.DataFrame({"step": STEPS, "metric": "r", "value": VALUES})
    text = {
        "csv": df.to_csv(index=False),
        "tsv": df.to_csv(index=False, sep="\t"),
        "jsonl": df.to_json(orient="records", lines=True),
        "json": df.to_json(orient="records"),
    }[kind]
    path = tmp_path / f"runs.{kind}"
    path.write_bytes(text.encode(encoding))
    got = saturate.load(path).points
    assert got["value"].tolist() == pytest.approx(VALUES.tolist())
