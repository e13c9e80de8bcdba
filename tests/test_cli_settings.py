"""The command line goes through the same settings path: a bad value (given or from the settings
file) is one ``error:`` line naming the flag or the file's key, exit 2, never a traceback; the
shared options are declared once; help text shows plain flags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_data import N_BOOT, write_runs

from saturate.cli import app
from saturate.settings import OPTIONS

runner = CliRunner()

# (flag, bad value, words the message must hold)
BAD_FLAGS = [
    ("--confidence", "1.5", "must be in [0.5, 1), got 1.5"),
    ("--confidence", "0", "must be in [0.5, 1), got 0"),
    ("--confidence", "abc", "got 'abc'"),
    ("--min-gain", "-1", "must be >= 0"),
    ("--min-gain", "3%%", "got '3%%'"),
    ("--forecast-at", "-5", "got -5"),
    ("--forecast-at", "0x", "got '0x'"),
    ("--forecast-at", "nan", "got nan"),
    ("--n-boot", "-1", "must be an integer >= 0, got -1"),
    ("--seed", "x", "got 'x'"),
    ("--budget", "lots", "got 'lots'"),
    ("--target", "eval/*", "GLOB=VALUE"),
    ("--pair", "train/reward", "REWARD=BENCHMARK"),
    ("--law", "cubic", "got 'cubic'"),
    ("--gpus", "-2", "must be a number of GPUs > 0 or the run parameter that holds it, got -2"),
]
# Each command and the arguments it needs besides the bad option.
COMMANDS = {
    "analyze": [], "gate": [], "plot": [], "compare": [], "allocate": [], "watch": ["--once"],
    "timeline": ["--run", "grow", "--metric", "reward"],
}
_ALL = ("selection", "analysis", "diagnostics")
TAKES = {  # the option groups each command takes, less the flags it leaves out
    "analyze": _ALL, "gate": _ALL, "plot": _ALL, "allocate": _ALL,
    "compare": _ALL[:2], "watch": _ALL[:2], "timeline": _ALL[:2],
}
ROLES = {"--objective", "--diagnostic"}  # timeline analyses one chosen curve
LEFT_OUT = {"watch": {"--group-by"},
            "timeline": {"--group-by", "--metric", "--run", *ROLES}}


def _flags(command: str) -> set[str]:
    shared = {o.flag_names[0] for o in OPTIONS if o.group in TAKES[command] and o.cli}
    return shared - LEFT_OUT.get(command, set()) | {"--config"}


CASES = [(command, *bad) for command in sorted(COMMANDS) for bad in BAD_FLAGS
         if bad[0] in _flags(command)]


def _one_error_line(res, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert all(n in lines[0] for n in needles), lines[0]
    assert "Traceback" not in res.stderr and res.stdout == ""
    return lines[0]


@pytest.mark.parametrize(("command", "flag", "value", "words"), CASES)
def test_bad_values_are_one_line_naming_the_flag(
    tmp_path: Path, monkeypatch, command: str, flag: str, value: str, words: str
) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [command, str(runs), *COMMANDS[command], flag, value])
    _one_error_line(res, f"error: {flag} ", words)
    assert not (tmp_path / ".saturate").exists()  # refused before any state was written


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_bad_settings_file_is_one_line_naming_the_file_and_key(
    tmp_path: Path, monkeypatch, command: str
) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    (tmp_path / "saturate.toml").write_text("confidence = 1.5\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [command, str(runs), *COMMANDS[command]])
    _one_error_line(res, f"{tmp_path / 'saturate.toml'}: confidence must be in [0.5, 1), got 1.5")


@pytest.mark.subprocess
def test_a_bad_value_in_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    res = subprocess.run([sys.executable, "-m", "saturate", "analyze", str(runs),
                          "--forecast-at", "2x,-5"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == ("error: --forecast-at must be 'Nx' (a multiple > 0 of the last "
                                  "compute, e.g. 2x) or a compute value > 0, got -5")


def test_command_line_beats_file_beats_defaults(tmp_path: Path, monkeypatch) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    (tmp_path / "saturate.toml").write_text(
        f'format = "json"\nmin_gain = "7%"\nn_boot = {N_BOOT}\nforecast_at = ["3x"]\n')
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["analyze", str(runs), "--min-gain", "0.5", "--law", "power"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)["settings"]
    assert s["min_gain"] == 0.5 and s["laws"] == ["power"]  # the command line
    assert s["n_boot"] == N_BOOT and s["forecast_at"] == ["3x"]  # the file
    assert s["confidence"] == 0.9 and s["config"] == str(tmp_path / "saturate.toml")


def test_gate_compare_and_allocate_require_their_option(tmp_path: Path, monkeypatch) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    monkeypatch.chdir(tmp_path)
    _one_error_line(runner.invoke(app, ["compare", str(runs)]), "--group-by is required")
    _one_error_line(runner.invoke(app, ["allocate", str(runs)]), "--budget is required")
    (tmp_path / "saturate.toml").write_text("budget = 10\nfail_on = ['nope']\n")
    _one_error_line(runner.invoke(app, ["gate", str(runs), "--min-gain", "1%"]),
                    "fail_on must be among")


def test_timeline_write_errors_are_one_line(tmp_path: Path, monkeypatch) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    base = ["timeline", str(runs), "--run", "grow", "--metric", "reward", "--points", "2",
            "--n-boot", "10"]
    res = runner.invoke(app, [*base, "--out", str(blocker / "out.txt")])
    assert res.exit_code == 2 and "error: --out" in res.stderr and "cannot write" in res.stderr
    res = runner.invoke(app, [*base, "--plot", str(blocker / "p.png")])
    assert res.exit_code == 2 and "error: --plot" in res.stderr and "Traceback" not in res.stderr
    res = runner.invoke(app, [*base, "--points", "1"])
    _one_error_line(res, "--points must be an integer >= 2, got 1")


@pytest.mark.parametrize("command", [None, *sorted(COMMANDS), "history"])
def test_help_shows_plain_flags(command: str | None) -> None:
    res = runner.invoke(app, [command, "--help"] if command else ["--help"])
    assert res.exit_code == 0, res.output
    for bad in ("<bool>", "``", "\\[", ":func:", ":class:"):
        assert bad not in res.stdout, (bad, res.stdout)
    if command in TAKES:
        for flag in _flags(command):
            assert flag in res.stdout, flag
        for flag in LEFT_OUT.get(command, ()):
            assert flag not in res.stdout or flag in ("--metric", "--run"), flag


def test_an_os_error_the_library_lets_through_is_still_one_line(tmp_path: Path) -> None:
    runs = write_runs(tmp_path / "runs.csv", names=("grow",))
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = runner.invoke(app, ["watch", str(runs), "--once", "--n-boot", "5",
                              "--state", str(blocker / "sub" / "history.db")])
    _one_error_line(res, str(blocker))
