"""The usual slips are errors that say what was meant, never a plausible answer to another
question: a misspelt column, a ``--min-gain`` in metric units beyond the metric's whole range,
an ``--out`` suffix that contradicts ``--format``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_run import run_cli

from saturate.analysis.settings import AnalysisSettings
from saturate.errors import SettingsError
from saturate.measure.quantities import check_gain_units

ROOT = Path(__file__).resolve().parents[1]
SATURATED = ROOT / "sample_runs" / "03_saturated.csv"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def _table(path: Path, header: str) -> Path:
    rows = [header] + [f"a,eval/acc,{s},{s * 10},{0.1 + 0.01 * s}" for s in range(1, 13)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("header", "meant"), [
    ("run,metric,step,compute,vaule", "value"),
    ("run,metirc,step,compute,value", "metric"),
    ("run,metric,setp,value", "step"),
])
def test_a_column_one_slip_from_a_known_name_is_an_error(tmp_path: Path, header: str,
                                                         meant: str) -> None:
    done = _cli("analyze", str(_table(tmp_path / "runs.csv", header)))
    assert done.returncode == 2, done.stderr
    assert f"did you mean {meant!r}" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_plural_and_a_correct_header_are_read(tmp_path: Path) -> None:
    from saturate import load

    ok = load(_table(tmp_path / "ok.csv", "run,metric,step,compute,value"))
    assert set(ok.points["metric"]) == {"eval/acc"}
    wide = tmp_path / "wide.csv"
    wide.write_text("step,values\n1,0.1\n2,0.2\n", encoding="utf-8")
    assert set(load(wide).points["metric"]) == {"values"}


def test_min_gain_beyond_an_accuracy_domain_suggests_the_percentage() -> None:
    done = _cli("analyze", str(SATURATED), "--min-gain", "3")
    assert done.returncode == 2, done.stderr
    assert "did you mean 3%" in done.stderr and "[0, 1]" in done.stderr


def test_min_gain_check_reads_the_domain_or_the_values() -> None:
    acc = np.linspace(0.2, 0.3, 20)
    check_gain_units("eval/acc", acc, AnalysisSettings(min_gain=0.5))  # within [0, 1]: meant
    check_gain_units("eval/acc", acc, AnalysisSettings(min_gain="300%"))  # a share: never
    with pytest.raises(SettingsError, match=r"did you mean 2%"):
        check_gain_units("eval/acc", acc, AnalysisSettings(min_gain=2))
    reward = np.linspace(10.0, 40.0, 20)  # no domain: every value from zero, 0..40
    check_gain_units("train/reward", reward, AnalysisSettings(min_gain=35))
    with pytest.raises(SettingsError, match=r"threshold for 'train/\*' 50"):
        check_gain_units("train/reward", reward,
                         AnalysisSettings(thresholds={"train/*": 50}))


def test_out_suffix_chooses_the_format(tmp_path: Path) -> None:
    done = _cli("analyze", str(SATURATED), "--out", "report.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["curves"]


def test_out_suffix_against_the_format_given_is_an_error(tmp_path: Path) -> None:
    done = _cli("analyze", str(SATURATED), "--out", "report.html", "--format", "json",
                cwd=tmp_path)
    assert done.returncode == 2
    assert "--format html" in done.stderr and "report.html" in done.stderr
    assert not (tmp_path / "report.html").exists()
