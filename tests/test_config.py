"""Settings files: discovery upward, parsing and validation, and the command line winning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report_data import N_BOOT, write_runs
from typer.testing import CliRunner

from saturate.cli import app
from saturate.config import (
    Config,
    find_config,
    load_config,
    parse_confidence,
    parse_forecast_at,
    parse_gain,
    read_config,
)
from saturate.errors import SettingsError

runner = CliRunner()


@pytest.mark.parametrize(("given", "expected"), [
    (0.01, 0.01), ("0.01", 0.01), ("2%", "2%"), (" 2.5 % ", "2.5%"), (0, 0.0), ("1e-3", 0.001),
])
def test_parse_gain(given, expected) -> None:
    assert parse_gain(given) == expected


@pytest.mark.parametrize("bad", ["lots", "-1", "-2%", "nan", True, "1%%", [1]])
def test_parse_gain_rejects(bad) -> None:
    with pytest.raises(SettingsError, match="--min-gain"):
        parse_gain(bad)


def test_parse_forecast_and_confidence() -> None:
    assert parse_forecast_at("2x") == "2x" and parse_forecast_at("1.5X") == "1.5x"
    assert parse_forecast_at("1e21") == 1e21 and parse_forecast_at(300) == 300.0
    for bad in ("0x", "-5", "soon", "inf"):
        with pytest.raises(SettingsError, match="--forecast-at"):
            parse_forecast_at(bad)
    assert parse_confidence("0.8") == 0.8 and parse_confidence("95%") == 0.95
    for bad in ("1", "0", "high", 1.5):
        with pytest.raises(SettingsError, match="--confidence"):
            parse_confidence(bad)


def test_find_config_walks_upward_and_prefers_saturate_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.saturate]\nmin_gain = "2%"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no section: skipped
    assert find_config(deep) == tmp_path / "pyproject.toml"
    assert load_config(start=deep).min_gain == "2%"
    (tmp_path / "a" / "saturate.toml").write_text('min_gain = 0.5\ncompute = "gpu_hours"\n')
    assert find_config(deep) == tmp_path / "a" / "saturate.toml"
    cfg = load_config(start=deep)
    assert cfg.min_gain == 0.5 and cfg.compute == "gpu_hours"


def test_full_settings_file(tmp_path: Path) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text(
        'min_gain = "1%"\nconfidence = 0.8\nmetric = "eval/*"\nlower_is_better = ["*/kl"]\n'
        'forecast_at = ["2x", 1e6]\nfail_on = ["inconclusive"]\nn_boot = 50\n'
        '[thresholds]\n"eval/acc" = 0.005\n"train/*" = "2%"\n'
    )
    cfg = load_config(p)
    assert cfg.metric == ("eval/*",) and cfg.forecast_at == ("2x", 1e6)
    assert cfg.thresholds == {"eval/acc": 0.005, "train/*": "2%"}
    assert read_config(p)["n_boot"] == 50
    merged = cfg.merged(min_gain=0.1, metric=None, lower_is_better=[])
    assert merged["min_gain"] == 0.1 and merged["metric"] == ["eval/*"]
    assert merged["lower_is_better"] == ["*/kl"]
    assert "settings from" in cfg.summary() and Config().summary() == "no settings file"


@pytest.mark.parametrize(("content", "needle"), [
    ("min_gian = 1\n", "unknown setting(s) min_gian"),
    ("min_gain = 'lots'\n", "min_gain"),
    ("confidence = 2\n", "confidence"),
    ("metric = 3\n", "metric must be a string or a list"),
    ("n_boot = -1\n", "n_boot must be an integer"),
    ("[thresholds]\n'x' = 'y'\n", "thresholds"),
    ("min_gain = = 1\n", "not valid TOML"),
])
def test_bad_settings_name_the_file_and_key(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text(content)
    with pytest.raises(SettingsError) as info:
        load_config(p)
    assert str(p) in str(info.value) and needle in str(info.value)


def test_missing_config_and_pyproject_without_section(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="no such file"):
        load_config(tmp_path / "nope.toml")
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    with pytest.raises(SettingsError, match=r"no \[tool.saturate\] table"):
        load_config(tmp_path / "pyproject.toml")


def test_cli_uses_settings_file_and_command_line_wins(tmp_path: Path, monkeypatch) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow", "short"))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.saturate]\nformat = "json"\nmin_gain = "7%"\nforecast_at = ["3x"]\n'
        f"n_boot = {N_BOOT}\n[tool.saturate.thresholds]\n'rew*' = 0.02\n"
    )
    work = tmp_path / "sub"
    work.mkdir()
    monkeypatch.chdir(work)
    res = runner.invoke(app, ["analyze", str(runs), "--run", "grow"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    s = doc["settings"]
    assert s["config"] == str(tmp_path / "pyproject.toml")
    assert s["min_gain"] == "7%" and s["thresholds"] == {"rew*": 0.02}
    assert s["forecast_at"] == ["3x"] and doc["curves"][0]["threshold"] == 0.02
    assert [f["at"] for f in doc["curves"][0]["forecast"]] == ["3x"]

    res = runner.invoke(app, ["analyze", str(runs), "--run", "grow", "--min-gain", "0.5",
                              "--forecast-at", "2x,1e4", "--format", "markdown"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("## saturate report") and "min\\_gain: 0\\.5" in res.stdout

    other = tmp_path / "other.toml"
    other.write_text("min_gain = 0.25\n")
    res = runner.invoke(app, ["analyze", str(runs), "--run", "grow", "--config", str(other),
                              "--format", "json", "--n-boot", str(N_BOOT)])
    doc = json.loads(res.stdout)
    assert doc["settings"]["min_gain"] == 0.25
    assert doc["settings"].get("thresholds") in (None, {})

    (tmp_path / "pyproject.toml").write_text("[tool.saturate]\nmin_gian = 1\n")
    res = runner.invoke(app, ["analyze", str(runs)])
    assert res.exit_code == 2 and "min_gian" in res.stderr and res.stdout == ""


def test_diagnostic_settings_in_the_file(tmp_path: Path) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text(
        'gpu_hour_cost = 2.5\npretrain_compute = "4e5"\ngpu_hours = "compute/gpu_hours"\n'
        'budget = 5000\n[pairs]\n"train/reward" = ["eval/*", "bench/*"]\n'
        '[targets]\n"eval/math*" = 0.6\n'
    )
    cfg = load_config(p)
    assert cfg.pairs == (("train/reward", "eval/*"), ("train/reward", "bench/*"))
    assert cfg.targets == {"eval/math*": 0.6}
    assert (cfg.gpu_hour_cost, cfg.pretrain_compute, cfg.budget) == (2.5, 4e5, 5000.0)
    opts = read_config(p)
    assert isinstance(opts, dict)
    assert opts["pairs"] == [["train/reward", "eval/*"], ["train/reward", "bench/*"]]
    assert opts["gpu_hours"] == "compute/gpu_hours"
    listed = tmp_path / "list.toml"
    listed.write_text('pairs = [["train/reward", "eval/a"], {reward = "r", benchmark = "b"}]\n')
    assert load_config(listed).pairs == (("train/reward", "eval/a"), ("r", "b"))
    json.dumps(cfg.to_dict())


@pytest.mark.parametrize(("content", "needle"), [
    ("gpu_hour_cost = -1\n", "gpu_hour_cost"),
    ("budget = 'lots'\n", "budget"),
    ("pretrain_compute = 0\n", "pretrain_compute"),
    ("pairs = 3\n", "pairs"),
    ("pairs = [['only-one']]\n", "pairs"),
    ("targets = 0.5\n", "targets"),
    ("[targets]\n'eval/*' = 'high'\n", "targets"),
    ("gpu_hours = 3\n", "gpu_hours"),
])
def test_bad_diagnostic_settings_name_the_file_and_key(
    tmp_path: Path, content: str, needle: str
) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text(content)
    with pytest.raises(SettingsError) as info:
        load_config(p)
    assert str(p) in str(info.value) and needle in str(info.value)


def test_parse_target_and_pair() -> None:
    from saturate.config import parse_pair, parse_positive, parse_target, parse_targets

    assert parse_target("eval/*=0.6") == ("eval/*", 0.6)
    assert parse_target(" loss = -1e-2 ") == ("loss", -0.01)
    assert parse_pair("train/reward=eval/*") == ("train/reward", "eval/*")
    assert parse_targets(["a=1", "b=2"]) == {"a": 1.0, "b": 2.0}
    assert parse_positive("3e2", "--budget") == 300.0
    for bad in ("eval/*", "=0.6", "x=", "x=nan", "x=soon"):
        with pytest.raises(SettingsError, match="--target"):
            parse_target(bad)
    with pytest.raises(SettingsError, match="--pair"):
        parse_pair("train/reward")
    for bad in (0, -1, "inf", True, "x"):
        with pytest.raises(SettingsError, match="--budget"):
            parse_positive(bad, "--budget")
