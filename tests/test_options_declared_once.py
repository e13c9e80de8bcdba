"""Each option is declared once (``saturate.settings.fields.OPTIONS``): a setting added by one
declaration is a command-line option (in the help, parsed and checked), a keyword of
``saturate.analyze`` and a key of the settings file; an unknown keyword or key is one clear
error naming the nearest option; the command line keeps every flag it had."""

from __future__ import annotations

import inspect
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

import saturate
from saturate.api import settings_from
from saturate.cli import app
from saturate.cli.options import settings_options
from saturate.decide import DecisionSettings
from saturate.errors import SettingsError
from saturate.settings import OPTIONS, Settings
from saturate.settings.checks import check_positive
from saturate.settings.fields import Option, declare

runner = CliRunner()
HELP = "Compute to leave out at the start of every curve, in the unit of the x axis."


@pytest.fixture
def warmup():
    """One declaration, as an edit of ``fields.py`` would add it; withdrawn afterwards."""
    declare(Option("warmup", "float | None", None, check_positive, HELP, "analysis", "COMPUTE"))
    yield "warmup"
    declare(withdraw="warmup")


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"run_id": "r1", "metric": "reward", "compute": [1.0, 2.0, 4.0],
                         "value": [0.1, 0.2, 0.3]})


def test_one_declaration_is_a_flag_of_every_command_of_its_group(warmup: str) -> None:
    for command in ("analyze", "gate", "plot", "compare", "allocate", "watch", "timeline", "ls"):
        res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0 and "--warmup" in res.stdout and "COMPUTE" in res.stdout
    assert HELP in " ".join(runner.invoke(app, ["analyze", "--help"],
                                          env={"COLUMNS": "200"}).stdout.split())
    bad = runner.invoke(app, ["analyze", "--warmup", "-3", "x.csv"])
    assert bad.exit_code == 2 and bad.stderr.strip() == "error: --warmup must be > 0, got -3"


def test_one_declaration_is_parsed_into_the_settings_a_command_gets(warmup: str,
                                                                   tmp_path: Path) -> None:
    got: list[Settings] = []
    probe = typer.Typer()

    @probe.command()
    @settings_options("analysis")
    def show(settings: Settings) -> None:
        got.append(settings)

    (tmp_path / "saturate.toml").write_text("")
    res = runner.invoke(probe, ["--warmup", "250", "--config", str(tmp_path / "saturate.toml")])
    assert res.exit_code == 0, res.output
    assert got[0].warmup == 250.0 and "warmup" in got[0].explicit


def test_one_declaration_is_a_keyword_and_a_settings_file_key(warmup: str,
                                                              tmp_path: Path) -> None:
    assert "warmup" in inspect.signature(saturate.analyze).parameters
    assert "warmup" in (saturate.analyze.__doc__ or "")
    assert settings_from(None, None, {"warmup": "1e3"}).warmup == 1000.0
    with pytest.raises(SettingsError, match=r"^warmup must be > 0, got -3$"):
        saturate.analyze(_frame(), warmup=-3)
    p = tmp_path / "saturate.toml"
    p.write_text("warmup = 500\n")
    assert Settings.build(p).warmup == 500.0
    p.write_text("warmup = 0\n")
    with pytest.raises(SettingsError, match="warmup must be > 0, got 0"):
        Settings.build(p)


def test_a_withdrawn_declaration_is_gone_everywhere(warmup: str) -> None:
    declare(withdraw="warmup")
    try:
        assert "warmup" not in inspect.signature(saturate.analyze).parameters
        assert "--warmup" not in runner.invoke(app, ["analyze", "--help"]).stdout
        with pytest.raises(SettingsError, match="unknown setting"):
            Settings.build(warmup=1)
    finally:
        declare(Option("warmup", "float | None", None, check_positive, HELP, "analysis"))


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


def test_every_declaration_is_a_field_and_a_keyword_in_order() -> None:
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    fields = [f for f in Settings.__dataclass_fields__ if f not in ("config", "explicit", "cli")]
    assert fields == names
    keywords = list(inspect.signature(saturate.analyze).parameters)
    assert keywords[-len(names):] == names


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
