"""Settings files: discovery upward, reading, validation that names the file and key, and the
command line winning over the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_data import N_BOOT, write_runs

from saturate.analysis.settings import settings_used
from saturate.cli import app
from saturate.diagnostics import DiagnosticSettings
from saturate.errors import SettingsError
from saturate.settings import Settings
from saturate.settings.file import find_config, load_config, read_config

runner = CliRunner()


def test_find_config_walks_upward_and_prefers_saturate_toml(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.saturate]\nmin_gain = "2%"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no section: skipped
    assert find_config(deep) == tmp_path / "pyproject.toml"
    assert load_config(True, start=deep).values == {"min_gain": "2%"}
    (tmp_path / "a" / "saturate.toml").write_text('min_gain = 0.5\ncompute = "gpu_hours"\n')
    assert find_config(deep) == tmp_path / "a" / "saturate.toml"
    found = load_config(True, start=deep)
    assert found.path == tmp_path / "a" / "saturate.toml"
    assert found.values == {"min_gain": 0.5, "compute": "gpu_hours"}
    assert load_config(None) is None and load_config(False) is None


def test_full_settings_file(tmp_path: Path) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text(
        'min_gain = "1%"\nconfidence = 0.8\nmetric = "eval/*"\nlower_is_better = ["*/kl"]\n'
        'forecast_at = ["2x", 1e6]\nfail_on = ["inconclusive"]\nn_boot = 50\n'
        '[thresholds]\n"eval/acc" = 0.005\n"train/*" = "2%"\n'
    )
    s = Settings.build(p)
    assert s.metric == ("eval/*",) and s.forecast_at == ("2x", 1e6)
    assert s.thresholds == {"eval/acc": 0.005, "train/*": "2%"}
    assert s.n_boot == 50 and s.fail_on == ("inconclusive",) and s.config == str(p)
    merged = Settings.build(p, min_gain=0.1, metric=None, lower_is_better=[])
    assert merged.min_gain == 0.1 and merged.metric == ("eval/*",)
    assert merged.lower_is_better == ("*/kl",)
    assert s.summary().startswith(f"settings from {p}: ")
    assert Settings().summary() == "settings: defaults"
    json.dumps(s.to_dict())


@pytest.mark.parametrize(("content", "needle"), [
    ("min_gian = 1\n", "unknown setting(s) min_gian"),
    ("min_gain = 'lots'\n", "min_gain"),
    ("confidence = 2\n", "confidence must be in [0.5, 1), got 2"),
    ("metric = 3\n", "metric must be a string or a list"),
    ("n_boot = -1\n", "n_boot must be an integer >= 0, got -1"),
    ("[thresholds]\n'x' = 'y'\n", "thresholds"),
    ("min_gain = = 1\n", "not valid TOML"),
    ("format = 'pdf'\n", "format must be one of table, json, markdown, html, got 'pdf'"),
    ("fail_on = ['divergance']\n", "fail_on must be among"),
    ("laws = ['cubic']\n", "laws must be among"),
])
def test_bad_settings_name_the_file_and_key(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "saturate.toml"
    p.write_text(content)
    with pytest.raises(SettingsError) as info:
        Settings.build(p)
    assert str(p) in str(info.value) and needle in str(info.value)


def test_missing_config_and_pyproject_without_section(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="--config .*nope.toml: no such file"):
        read_config(tmp_path / "nope.toml")
    with pytest.raises(SettingsError, match="^config .*nope.toml: no such file"):
        Settings.build(tmp_path / "nope.toml")
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
    s = Settings.build(p)
    assert s.pairs == (("train/reward", "eval/*"), ("train/reward", "bench/*"))
    assert s.targets == {"eval/math*": 0.6}
    assert (s.gpu_hour_cost, s.pretrain_compute, s.budget) == (2.5, 4e5, 5000.0)
    d = DiagnosticSettings.from_settings(s)
    assert d.pairs == s.pairs and d.budget == 5000.0 and d.gpu_hours == "compute/gpu_hours"
    report = settings_used(s, "step")
    assert report["pairs"] == [["train/reward", "eval/*"], ["train/reward", "bench/*"]]
    assert report["gpu_hours"] == "compute/gpu_hours" and report["config"] == str(p)
    listed = tmp_path / "list.toml"
    listed.write_text('pairs = [["train/reward", "eval/a"], {reward = "r", benchmark = "b"}]\n')
    assert Settings.build(listed).pairs == (("train/reward", "eval/a"), ("r", "b"))
    json.dumps(s.to_dict())


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
        Settings.build(p)
    assert str(p) in str(info.value) and needle in str(info.value)
