"""The README's code runs as a user would paste it: the MLflow logging example against a real
``mlflow server``, the everyday commands against the repository's ``sample_runs/`` (the
placeholder ``runs/`` read as a sample of the same kind), and what it says of the notebooks and
``make setup`` holds."""

from __future__ import annotations

import os
import random
import re
import shlex
from pathlib import Path

import pytest
from cli_run import run_cli
from mlflow_server import unique_name

import saturate

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SAMPLES = ROOT / "sample_runs"

# The placeholder sources of the everyday commands, each read as a sample of the same kind: an
# MLflow store that logs compute/gpu_hours, a CSV of accuracies, runs of several recipes.
STORE = str(SAMPLES / "04_collapse_mlflow")
PLACEHOLDERS = {"runs/": STORE, "runs.csv": str(SAMPLES / "03_saturated.csv")}
RECIPES = str(SAMPLES / "08_recipe_comparison.csv")
# Sources the repository has no sample of (a live server, a project folder, Atari), and the
# commands that follow or replay a live tracker (tests/test_tracker_*.py run those).
NO_SAMPLE = ("http://", "sqlite:///", "analyze .", "mlruns/", "atari/", "saturate watch",
             "saturate history", "saturate timeline", "wandb")  # W&B: tests/test_ingest_wandb.py


def _block_after(marker: str, lang: str) -> str:
    return README.split(marker, 1)[1].split(f"```{lang}\n", 1)[1].split("```", 1)[0]


def _commands() -> list[str]:
    """The everyday commands, one a line (comments and continuation comments dropped)."""
    block = _block_after("## Everyday commands", "sh")
    lines = [ln.split("  #", 1)[0].strip() for ln in block.splitlines()]
    return [ln for ln in lines if ln.startswith("saturate ")]


def test_mlflow_logging_example_runs_and_its_axis_is_found(mlflow_server, monkeypatch) -> None:
    import mlflow

    code = _block_after("**Log the compute.**", "python")
    experiment = unique_name("readme")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server.url)
    mlflow.set_tracking_uri(mlflow_server.url)
    mlflow.set_experiment(experiment)
    rng = random.Random(0)
    state = {"step": 0}

    def train_step() -> tuple[float, float]:  # what the user's own training step returns
        state["step"] += 1
        return 1 - 1 / (1 + 0.05 * state["step"]) + rng.gauss(0, 0.01), 30.0

    user = {"num_steps": 120, "num_gpus": 8, "train_step": train_step,
            "evaluate": lambda: min(1.0, 0.2 + 0.004 * state["step"])}
    try:
        exec(compile(code, "README.md", "exec"), user)  # noqa: S102 - the README's own code
    finally:
        mlflow.set_tracking_uri(None)
    df = saturate.load(mlflow_server.url, experiment=experiment)
    assert df.axis.name == "compute/gpu_hours"
    assert set(df.points["metric"]) == {"train/reward", "eval/math500/accuracy"}
    assert set(df.runs["params.recipe"]) == {"grpo"}


@pytest.mark.slow
@pytest.mark.parametrize("command", _commands())
def test_everyday_command_runs_on_the_samples(command: str, tmp_path: Path) -> None:
    if any(s in command for s in NO_SAMPLE):
        pytest.skip("a source the repository holds no sample of, or a live tracker")
    args = shlex.split(command)[1:]
    args = [PLACEHOLDERS.get(a, a) for a in args]
    if args[0] == "compare" or "--group-by" in args or "--overlay" in args:
        args = [RECIPES if a == STORE else a for a in args]
    args = [str(ROOT / a) if a.startswith("sample_runs/") else a for a in args]
    done = run_cli(*args, cwd=tmp_path, env={**os.environ, "COLUMNS": "120"})
    ok = (0, 1) if args[0] == "gate" else (0,)  # gate: 1 when a curve fails it
    assert done.returncode in ok, f"{command}: {done.stderr[-600:]}"
    assert "Traceback" not in done.stderr


def test_every_command_the_readme_names_exists() -> None:
    done = run_cli("--help")
    named = {shlex.split(c)[1] for c in _commands()}
    assert named <= set(re.findall(r"^\s{2}(\w+)\s", done.stdout, re.M)), done.stdout


def test_the_readme_counts_the_notebooks() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    words = {3: "three", 4: "four", 5: "five"}
    assert f"runs\nall {words[len(notebooks)]}" in README or \
        f"runs all {words[len(notebooks)]}" in README


def test_make_setup_installs_what_runs_the_notebooks() -> None:
    import importlib.util

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'"nbconvert>=', pyproject)  # in the extras `make setup` installs
    assert importlib.util.find_spec("nbconvert") is not None  # ... and in this environment
    assert "jupyter nbconvert" in README
