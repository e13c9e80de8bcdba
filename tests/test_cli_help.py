"""Every command's ``--help`` reads as plain text: flags without Python types (``--debug``, not
``--debug <bool>``; ``SOURCE...``, not ``SOURCE <list[str]>``), no reStructuredText roles or
double backticks; and the examples the help gives work as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_data import N_BOOT

from saturate.cli import app

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
COMMANDS = sorted(app.commands)
RST = re.compile(r"``|:(?:func|class|meth|mod|attr|data):|\.\. \w+::")
PYTHON_TYPE = re.compile(r"<(?:bool|int|float|str|text|path|list\[[^\]]*\]|[a-z_]+\[[^\]]*\])>")


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_is_plain(command: str) -> None:
    res = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert not RST.search(text), RST.search(text)
    assert not PYTHON_TYPE.search(text), PYTHON_TYPE.search(text)
    assert "\x1b[" not in text  # no colour codes in help


def test_the_commands_are_all_there() -> None:
    assert {"analyze", "gate", "plot", "compare", "allocate", "watch", "history",
            "timeline"} <= set(COMMANDS)


def test_the_help_examples_work_as_written(tmp_path: Path) -> None:
    help_text = runner.invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"}).stdout
    examples = {"--metric": "eval/*", "--target": "eval/math*=0.6",
                "--pair": "train/reward=eval/*"}
    for flag, value in examples.items():
        assert f"e.g. '{value}'" in help_text, flag  # the example the help gives
    args = [a for flag, value in examples.items() for a in (flag, value)]
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["analyze", str(SAMPLES / "02_scaleup_20x.csv"), *args,
                              "--n-boot", str(N_BOOT), "--format", "json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("{")
    assert "--wide" in help_text


@pytest.mark.parametrize("command", ["analyze", "gate", "plot", "compare"])
def test_help_shows_the_common_options_first(command: str) -> None:
    res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    options = res.stdout.split("Options:", 1)[1]
    flags = [m.group(1) for m in re.finditer(r"^\s+(?:-\w, )?(--[\w-]+)", options, re.M)]
    common = ["--format", "--out", "--metric", "--run", "--min-gain", "--compute", "--group-by"]
    shown = [f for f in common if f in flags]
    assert len(shown) >= 4 and flags[: len(shown)] == shown, flags[:10]


@pytest.mark.subprocess  # the subject: what a fresh interpreter imports
@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["analyze", "--help"],
                                  ["watch", "--help"], ["history", "--help"]])
def test_help_and_version_import_no_heavy_library(argv: list[str]) -> None:
    import subprocess
    import sys

    heavy = ("pandas", "numba", "matplotlib", "mlflow", "sqlalchemy", "pyarrow")  # issue 31
    code = ("import sys\nfrom saturate.cli import app\n"
            f"try:\n    app({argv!r}, standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stdout[-300:]
