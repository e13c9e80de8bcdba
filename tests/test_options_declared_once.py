"""Each option is declared once (a field of ``saturate.settings.fields.SettingsFields``): every
declaration is a command-line option of every command of its group (in the help, parsed and
checked), a keyword of ``saturate.analyze`` and a key of the settings file; an unknown keyword or
key is one clear error naming the nearest option; the command line keeps every flag it had."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import saturate
from saturate.api import settings_from
from saturate.cli import app
from saturate.cli.options import SettingsCommand
from saturate.decide import DecisionSettings
from saturate.errors import SettingsError
from saturate.settings import OPTIONS, Settings
from saturate.settings.checks import check_positive
from saturate.settings.fields import ANALYSIS_GROUPS, GROUPS, SettingsFields

runner = CliRunner()
COMMAND_GROUPS = {name: {o.group for o in cmd.options}
                  for name, cmd in app.commands.items() if isinstance(cmd, SettingsCommand)}


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"run_id": "r1", "metric": "reward", "compute": [1.0, 2.0, 4.0],
                         "value": [0.1, 0.2, 0.3]})


def test_every_declaration_is_a_flag_of_every_command_of_its_group() -> None:
    assert set(COMMAND_GROUPS) == {"analyze", "gate", "plot", "compare", "allocate", "watch",
                                   "timeline", "ls"}
    for command, groups in COMMAND_GROUPS.items():
        shown = runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"}).stdout
        for o in OPTIONS:
            if o.cli and o.group in groups and o in app.commands[command].options:
                assert o.flag_names[0] in shown and (o.metavar or "") in shown, (command, o.name)
                if isinstance(o.help, str):
                    assert "".join(o.help.split()) in "".join(shown.split()), (command, o.name)
    assert {g for groups in COMMAND_GROUPS.values() for g in groups} == set(GROUPS)
    bad = runner.invoke(app, ["analyze", "--gpu-hour-cost", "-3", "x.csv"])
    assert bad.exit_code == 2 and bad.stderr.strip() == "error: --gpu-hour-cost must be > 0, got -3"


def test_a_commands_options_are_parsed_into_the_settings_it_gets(tmp_path: Path) -> None:
    got: list[Settings] = []

    def show(settings: Settings) -> None:
        got.append(settings)

    probe = SettingsCommand(show, ("analysis", "diagnostics"))
    (tmp_path / "saturate.toml").write_text("n_boot = 7\n")
    res = runner.invoke(probe, ["--gpu-hour-cost", "2.5", "--domain", "eval/*=0,1",
                                "--config", str(tmp_path / "saturate.toml")])
    assert res.exit_code == 0, res.output
    assert got[0].gpu_hour_cost == 2.5 and got[0].n_boot == 7
    assert got[0].domains == {"eval/*": (0.0, 1.0)}
    assert {"gpu_hour_cost", "domains", "n_boot"} <= got[0].explicit


@pytest.mark.parametrize(("name", "value", "said"), [
    ("format", "json", "saturate.report.render"), ("fail_on", ["saturated"], "saturate gate"),
    ("compare_at", ["2x"], "saturate compare")])
def test_analyze_refuses_an_option_that_would_not_change_the_analysis(name: str, value: object,
                                                                      said: str) -> None:
    """Taken silently, ``format="json"`` or ``fail_on=...`` would read as done: an error that says
    where the option belongs, before anything is read."""
    with pytest.raises(SettingsError, match=rf"analyze\(\) takes analysis options only; {name} is .*{said}"):
        saturate.analyze("no such source", **{name: value})


def test_every_analysis_declaration_is_a_keyword_and_every_one_a_settings_file_key(
        tmp_path: Path) -> None:
    for o in OPTIONS:
        listed = f"    {o.name}: " in (saturate.analyze.__doc__ or "")
        assert listed == (o.group in ANALYSIS_GROUPS), o.name
    assert settings_from(None, None, {"gpu_hour_cost": "1e3"}).gpu_hour_cost == 1000.0
    with pytest.raises(SettingsError, match=r"^gpu_hour_cost must be > 0, got -3$"):
        saturate.analyze(_frame(), gpu_hour_cost=-3)
    p = tmp_path / "saturate.toml"
    p.write_text("gpu_hour_cost = 500\n")
    assert Settings.build(p).gpu_hour_cost == 500.0
    p.write_text("gpu_hour_cost = 0\n")
    with pytest.raises(SettingsError, match="gpu_hour_cost must be > 0, got 0"):
        Settings.build(p)


def test_an_unknown_keyword_or_file_key_is_one_error_naming_the_nearest(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as info:
        saturate.analyze(_frame(), min_gian="2%")
    assert str(info.value).startswith("unknown setting(s) min_gian (did you mean min_gain?)")
    assert "\n" not in str(info.value)
    p = tmp_path / "saturate.toml"
    p.write_text("forcast_at = ['2x']\n")
    with pytest.raises(SettingsError) as info:
        Settings.build(p)
    assert str(info.value).startswith(
        f"{p}: unknown setting(s) forcast_at (did you mean forecast_at?)")


def test_every_declaration_is_a_typed_field_in_order() -> None:
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    assert [f.name for f in dataclasses.fields(SettingsFields)] == names
    fields = [f for f in Settings.__dataclass_fields__ if f not in ("config", "explicit", "cli")]
    assert fields == names
    assert all(o.type == str(Settings.__dataclass_fields__[o.name].type) for o in OPTIONS)


def test_the_bands_help_says_the_default_band() -> None:
    d = DecisionSettings()
    band = next(o for o in OPTIONS if o.name == "band")
    assert f"({d.stop_below:.2f},{d.go_above:.2f})" in str(band.help)


def test_a_default_is_not_checked_again_and_a_given_value_once() -> None:
    calls: list[str] = []
    gpu = next(o for o in OPTIONS if o.name == "gpu_hour_cost")

    def counting(value, name):
        calls.append(name)
        return check_positive(value, name)

    object.__setattr__(gpu, "check", counting)  # a declaration is frozen: set it back below
    try:
        Settings.build(gpu_hour_cost=2.5).updated(n_boot=10)
    finally:
        object.__setattr__(gpu, "check", check_positive)
    assert calls == ["gpu_hour_cost"]
