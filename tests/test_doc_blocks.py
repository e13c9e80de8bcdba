"""Every fenced code block of the README and the user guide (``docs/guide/**.md``) runs here, as a
user would paste it (tests/doc_blocks.py finds them). How each kind is run:

- ``saturate ...`` (``sh``/``bash``): through the CLI in this process (tests/cli_run.py), in a
  fresh folder, exit 0 (``gate``: 0 or 1), no traceback, and every file it names with ``--out``,
  ``--junit``, ``--plot`` or ``--html`` written. The pages' placeholder sources are read as
  samples of the same kind (:data:`PLACEHOLDERS`); ``sqlite:///mlflow.db`` and ``.`` are an
  ``mlflow.db`` of sample runs in that folder; ``http://...`` is the tests' real ``mlflow
  server`` holding the sample runs (any ``--experiment`` named is that experiment); ``wandb/`` is
  runs written by the wandb package; ``wandb://ENTITY/PROJECT`` is the local server that answers
  the wandb package's GraphQL as W&B does (tests/wandb_server.py: no W&B account can be used
  here), ``$SLACK_WEBHOOK`` a local webhook. ``watch`` makes one pass (``--once`` added: its loop
  is tests/test_watch_*.py's subject); ``history`` follows one pass of ``watch``. A command the
  pages give twice runs once.
- ``make TARGET``: the target is a rule of the Makefile (not run: it builds ``.venv`` and runs
  the whole suite). ``pip install .[EXTRA]``: the project and the extra exist in
  ``pyproject.toml`` (not run: it would install into this environment). ``. .venv/bin/activate``:
  the Makefile makes that virtualenv.
- ``python``: executed, with the names a user's own code defines given (:func:`user_names`); a
  block that logs to MLflow logs to the real server, and what it logged is read back.
- ``toml``: written as the settings file, found and read by the tool's loader
  (``find_config``, ``Settings.build``), and each of its keys found in the settings.
- ``yaml``: a GitHub Actions workflow: its ``run:`` lines run as above (the step's ``env``, a
  secret being the real server), its actions checked against :data:`ACTIONS`, the artifact it
  uploads one a step wrote.
- ``text``: output shown, not code: not run.

Anything else fails :func:`test_every_block_is_run_or_listed`, unless :data:`EXCEPTIONS` lists it
with the reason it cannot run here.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shlex
import shutil
import sqlite3
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from cli_run import run_cli
from doc_blocks import ROOT, Block, Command, all_blocks, blocks_of, command_kind, commands_of
from mlflow_server import new_store, unique_name

import saturate

SAMPLES = ROOT / "sample_runs"
STORE = SAMPLES / "04_collapse_mlflow"  # an MLflow file store; its run logs compute/gpu_hours
RECIPES = SAMPLES / "08_recipe_comparison.csv"  # two recipes x three seeds
SUITE = SAMPLES / "11_agent_suite.csv"  # 8 tasks x 3 seeds x 2 recipes
COLLAPSE_RUN = "qwen2.5-3b-grpo-lr3e-6-collapse"  # the run of STORE

#: The pages' placeholders, each read as a sample of the same kind: a folder of runs (an MLflow
#: store logging compute/gpu_hours; the runs of several recipes where recipes are compared), a
#: CSV of accuracies, a legacy file store, the run and metric a timeline follows. ``atari/`` and
#: ``baselines.csv`` are made from the agent suite (:func:`samples`).
PLACEHOLDERS = {"runs/": str(STORE), "runs.csv": str(SAMPLES / "03_saturated.csv"),
                "mlruns/": str(STORE / "mlruns"), "qwen-7b": COLLAPSE_RUN,
                "eval/math": "eval/math500/accuracy"}

#: The GitHub Actions a workflow of the pages may use: they run on GitHub only.
ACTIONS = ("actions/checkout", "actions/setup-python", "actions/upload-artifact")

#: Blocks or commands that cannot run here: their text (a command, or a block's first line) ->
#: why. Empty: every block of the pages runs, or is checked as its kind says above.
EXCEPTIONS: dict[str, str] = {}

#: Options whose value is a file or folder the command writes.
OUTPUT_OPTIONS = ("--out", "-o", "--junit", "--plot", "--html")
WANDB_KEY = "k3y-for-the-local-graphql-server-" + "x" * 16


# -- the plan: which test runs each block or command -----------------------------------------

@dataclass(frozen=True)
class Item:
    """A block or a command, and the test that runs it (``runner``)."""

    runner: str
    where: str
    text: str
    block: Block
    command: Command | None = None

    @property
    def id(self) -> str:
        return f"{self.where} {self.text.splitlines()[0][:70]}"


def _cli_runner(argv: tuple[str, ...]) -> str:
    if any(a.startswith("wandb://") for a in argv):
        return "cli-wandb-api"
    if any(a == "wandb/" or a.startswith("wandb/") for a in argv):
        return "cli-wandb-runs"
    if any(re.match(r"https?://", a) for a in argv):
        return "cli-mlflow-server"
    return "cli-samples"


def plan(blocks: list[Block]) -> list[Item]:
    """Each block (a shell block: each command) with its runner; ``unknown`` when nothing here
    can run or check it, ``listed`` when :data:`EXCEPTIONS` names it, ``again`` for a command
    given earlier."""
    items: list[Item] = []
    seen: set[str] = set()
    for block in blocks:
        if block.kind == "shell":
            for c in commands_of(block):
                kind = c.kind
                runner = _cli_runner(c.argv) if kind == "saturate" else kind
                if c.text in EXCEPTIONS:
                    runner = "listed"
                elif kind == "saturate" and c.text in seen:
                    runner = "again"
                seen.add(c.text)
                items.append(Item(runner, c.where, c.text, block, c))
            continue
        runner = {"python": "python", "toml": "toml", "yaml": "yaml", "output": "output"}.get(
            block.kind, "unknown")
        if runner == "python" and re.search(r"\bmlflow\.", block.text):
            runner = "python-mlflow"
        first = block.text.strip().splitlines()[0] if block.text.strip() else ""
        if first in EXCEPTIONS:
            runner = "listed"
        items.append(Item(runner, block.where, block.text or "(empty)", block))
    return items


PLAN = plan(all_blocks())


def _items(runner: str) -> list[pytest.param]:
    return [pytest.param(i, id=i.id) for i in PLAN if i.runner == runner]


#: Every runner a plan's item may have, and what runs it.
RUNNERS = {"cli-samples", "cli-mlflow-server", "cli-wandb-runs", "cli-wandb-api", "make", "pip",
           "venv", "python", "python-mlflow", "toml", "yaml", "output", "listed", "again"}


def test_every_block_is_run_or_listed() -> None:
    assert len(PLAN) > 40, "the pages hold fewer code blocks than they did: is the parser blind?"
    unknown = [f"{i.where}: {i.text.splitlines()[0] if i.text else ''!r} ({i.block.lang or 'no language'})"
               for i in PLAN if i.runner == "unknown"]
    assert not unknown, ("code the tests neither run nor check; make it runnable here, mark "
                         "output ```text, or list it in EXCEPTIONS with the reason:\n"
                         + "\n".join(unknown))
    assert {i.runner for i in PLAN} <= RUNNERS
    listed = {i.text.strip().splitlines()[0] for i in PLAN if i.runner == "listed"}
    assert listed == set(EXCEPTIONS), f"EXCEPTIONS names what the pages no longer hold: {set(EXCEPTIONS) - listed}"


def test_code_the_tests_cannot_run_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    page = ("```js\nlet x = 1\n```\n\n```\nno language\n```\n\n```sh\nrm -rf build/\n"
            "saturate ls runs/   # a comment\nsaturate ls runs/\n```\n\n  ```text\n  output\n  ```\n")
    items = plan(blocks_of(page, "page.md"))
    assert [(i.runner, i.where) for i in items] == [
        ("unknown", "page.md:1"), ("unknown", "page.md:5"), ("unknown", "page.md:10"),
        ("cli-samples", "page.md:11"), ("again", "page.md:12"), ("output", "page.md:15")]
    continued = blocks_of("```bash\nA=1 saturate analyze runs/ \\\n  --metric 'eval/*'  # x\n```\n", "p.md")
    (c,) = commands_of(continued[0])
    assert (c.argv, c.env, c.line) == (("saturate", "analyze", "runs/", "--metric", "eval/*"),
                                       (("A", "1"),), 2)
    assert command_kind(("pip", "install", "-U", "x")) == "unknown"
    monkeypatch.setitem(EXCEPTIONS, "rm -rf build/", "a listed command is not run, and says why")
    assert [i.runner for i in plan(blocks_of(page, "page.md"))][2] == "listed"


# -- running saturate commands -----------------------------------------------------------------

def _expand(word: str, env: dict[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` as a shell expands them; an unset one fails the test."""
    def value(m: re.Match) -> str:
        name = m[1] or m[2]
        assert name in env, f"{word}: ${name} is not set for this command"
        return env[name]
    return re.sub(r"\$(?:\{(\w+)\}|(\w+))", value, word)


def _args(command: Command, places: dict[str, str], env: dict[str, str]) -> list[str]:
    """The command's arguments with the placeholders mapped (``places``: a word -> its stand-in;
    ``server``: any http(s) URL; ``experiment``: any value of ``--experiment``)."""
    args = [_expand(a, env) for a in command.argv[1:]]
    if args[0] == "watch" and "--once" not in args:
        args.append("--once")
    out = []
    for i, a in enumerate(args):
        if i and args[i - 1] in ("--experiment", "-e") and "experiment" in places:
            a = places["experiment"]
        elif re.match(r"https?://", a) and "server" in places:
            a = places["server"]
        else:
            a = places.get(a, a)
        out.append(str(ROOT / a) if a.startswith("sample_runs/") else a)
    return out


def _outputs(args: list[str]) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a in OUTPUT_OPTIONS]


def run_saturate(command: Command, places: dict[str, str], cwd: Path,
                 env: dict[str, str] | None = None) -> list[str]:
    """Run one command as the module docstring says, check it, and return the outputs it wrote."""
    env = {**os.environ, "COLUMNS": "120", **dict(command.env), **(env or {})}
    args = _args(command, places, env)
    if args[0] == "history":  # what it lists, a pass of watch records first
        first = run_cli("watch", str(STORE), "--once", cwd=cwd, env=env)
        assert first.returncode == 0, first.stderr[-600:]
    done = run_cli(*args, cwd=cwd, env=env)
    ok = (0, 1) if args[0] == "gate" else (0,)  # gate: 1 when a curve fails it
    assert done.returncode in ok, f"{command.text}\n-> saturate {shlex.join(args)}\n{done.stderr[-900:]}"
    assert "Traceback" not in done.stderr, done.stderr[-900:]
    written = _outputs(args)
    for out in written:
        path = cwd / out
        assert path.exists(), f"{command.text}: wrote no {out}"
        assert path.is_file() or any(path.iterdir()), f"{command.text}: {out} is empty"
    if not written and args[0] in ("analyze", "ls", "compare", "allocate", "history", "timeline"):
        assert done.stdout.strip(), f"{command.text}: printed nothing"
    return written


def _log_table(client, experiment: str, source: Path, artifacts: Path | None = None) -> str:  # noqa: ANN001
    """Log a sample's runs (their parameters, points and compute as ``compute/gpu_hours``) into
    an MLflow store through ``client``; the experiment's name."""
    from mlflow.entities import Metric, Param

    table = saturate.load(source)
    exp = client.create_experiment(experiment, artifact_location=artifacts and artifacts.as_uri())
    params = table.runs.set_index("run_id").filter(like="params.")
    for run_id, g in table.points.groupby("run_id", sort=True):
        run = client.create_run(exp, run_name=str(g["run"].iloc[0])).info.run_id
        facts = [Param(k.removeprefix("params."), str(v)) for k, v in params.loc[run_id].items()]
        ms = [Metric(m, float(v), 1_760_000_000_000 + int(s) * 1000, int(s))
              for m, v, s in zip(g["metric"], g["value"], g["step"], strict=True)]
        steps = g.drop_duplicates("step")
        ms += [Metric("compute/gpu_hours", float(c), 1_760_000_000_000 + int(s) * 1000, int(s))
               for c, s in zip(steps["compute"], steps["step"], strict=True)]
        client.log_batch(run, params=facts)
        for i in range(0, len(ms), 1000):
            client.log_batch(run, metrics=ms[i:i + 1000])
        client.set_terminated(run)
    return experiment


@pytest.fixture(scope="module")
def samples(mlflow_template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The stand-ins of the samples' environment: an ``mlflow.db`` of the recipe comparison
    (copied into each command's folder), and ``atari/`` with its ``baselines.csv``: the agent
    suite with its tasks as games and its recipes as agents."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("doc-samples")
    db = new_store(root / "store", mlflow_template)
    _log_table(MlflowClient(tracking_uri=f"sqlite:///{db}"), "grpo-sweep", RECIPES,
               artifacts=root / "artifacts")
    suite = pd.read_csv(SUITE).rename(columns={"task": "game", "recipe": "agent"})
    (root / "atari").mkdir()
    suite.to_csv(root / "atari" / "suite.csv", index=False)
    ranges = suite.groupby("game")["value"].agg(["min", "max"]).reset_index()
    ranges.columns = ["task", "random", "human"]
    ranges.to_csv(root / "baselines.csv", index=False)
    return {**PLACEHOLDERS, "db": str(db), "atari/": str(root / "atari"),
            "baselines.csv": str(root / "baselines.csv")}


def _sample_places(command: Command, samples: dict[str, str]) -> dict[str, str]:
    args = command.argv[1:]
    if args[0] == "compare" or "--group-by" in args or "--overlay" in args:
        return {**samples, "runs/": str(RECIPES)}  # runs of several recipes
    return samples


@pytest.mark.slow
@pytest.mark.parametrize("item", _items("cli-samples"))
def test_command_runs_on_the_samples(item: Item, samples: dict[str, str], tmp_path: Path) -> None:
    shutil.copyfile(samples["db"], tmp_path / "mlflow.db")  # sqlite:///mlflow.db, and `.`
    run_saturate(item.command, _sample_places(item.command, samples), tmp_path)
    if "--log-back" in item.command.argv:  # the verdicts are tags of the runs now
        with contextlib.closing(sqlite3.connect(tmp_path / "mlflow.db")) as db:
            tags = db.execute("SELECT count(*) FROM tags WHERE key LIKE 'saturate.%'").fetchone()
        assert tags[0] > 0


@pytest.fixture(scope="module")
def server_experiment(mlflow_server) -> str:  # noqa: ANN001
    """The recipe comparison logged to the real ``mlflow server``, under a name of its own."""
    return _log_table(mlflow_server.client(), unique_name("docs"), RECIPES)


@pytest.mark.slow
@pytest.mark.parametrize("item", _items("cli-mlflow-server"))
def test_command_runs_against_an_mlflow_server(item: Item, mlflow_server, server_experiment: str,  # noqa: ANN001
                                               tmp_path: Path) -> None:
    run_saturate(item.command, {"server": mlflow_server.url, "experiment": server_experiment},
                 tmp_path)


@pytest.fixture(scope="module")
def _wandb_teardown() -> Iterator[None]:
    """The wandb package starts a service process (its API, its writer): ended after these tests."""
    yield
    if "wandb" in sys.modules:
        sys.modules["wandb"].teardown()


@pytest.fixture(scope="module")
def wandb_runs(tmp_path_factory: pytest.TempPathFactory, _wandb_teardown: None) -> str:
    """A ``wandb/`` folder: the runs of the still-scaling sample, written by the wandb package."""
    pytest.importorskip("wandb")
    from wandb_runs import runs_from_table, write_runs

    points = saturate.load(SAMPLES / "01_still_scaling.csv").points
    return str(write_runs(tmp_path_factory.mktemp("doc-wandb"), runs_from_table(points)))


@pytest.mark.subprocess  # wandb writes the runs in a process of its own (tests/wandb_runs.py)
@pytest.mark.server  # ... and a webhook listens here
@pytest.mark.parametrize("item", _items("cli-wandb-runs"))
def test_command_runs_on_wandb_run_folders(item: Item, wandb_runs: str, tmp_path: Path) -> None:
    from webhook_server import WebhookServer

    with WebhookServer() as hook:
        run_saturate(item.command, {"wandb/": wandb_runs}, tmp_path, env={"SLACK_WEBHOOK": hook.url})


def _remote_runs() -> list[dict]:
    """The recipe comparison as a W&B project holds it: runs ``grpo-<run>``, grouped by recipe."""
    from wandb_server import remote_run

    table = saturate.load(RECIPES)
    recipe = table.runs.set_index("run_id")["params.recipe"]
    runs = []
    for i, (run_id, g) in enumerate(table.points.groupby("run_id", sort=True)):
        rows: dict[int, dict] = {}
        for s, m, v, c in zip(g["step"], g["metric"], g["value"], g["compute"], strict=True):
            rows.setdefault(int(s), {"_step": int(s), "_timestamp": 1.8e9 + int(s),
                                     "compute/gpu_hours": float(c)})[str(m)] = float(v)
        runs.append(remote_run(f"id{i}", f"grpo-{g['run'].iloc[0]}", sorted(
            rows.values(), key=lambda r: r["_step"]), config={"lr": 1e-6}, group=recipe[run_id]))
    return runs


@pytest.mark.server  # a local server answering the wandb package's GraphQL
@pytest.mark.parametrize("item", _items("cli-wandb-api"))
def test_command_reads_a_wandb_project(item: Item, tmp_path: Path, _wandb_teardown: None) -> None:
    pytest.importorskip("wandb")
    from wandb_server import WandbServer

    uri = next(a for a in item.command.argv if a.startswith("wandb://"))
    entity, project = uri.removeprefix("wandb://").split("/")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    with WandbServer(_remote_runs(), entity=entity, project=project) as server:
        env.update({"WANDB_BASE_URL": server.url, "WANDB_API_KEY": WANDB_KEY,
                    "SATURATE_TIMEOUT": "60"})
        run_saturate(item.command, {}, tmp_path, env=env)
    assert server.keys == {WANDB_KEY}
    if "--filter" in item.command.argv:  # W&B's own filter, sent to the server as given
        given = item.command.argv[item.command.argv.index("--filter") + 1]
        assert server.filters and all(f == json.loads(given) for f in server.filters)


# -- what is checked, not run ------------------------------------------------------------------

MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("item", _items("make"))
def test_make_target_exists(item: Item) -> None:
    targets = [a for a in item.command.argv[1:] if "=" not in a]  # VAR=value sets a variable
    assert targets
    for target in targets:
        assert re.search(rf"^{re.escape(target)}:", MAKEFILE, re.M), f"no rule '{target}:' in the Makefile"


def check_pip(argv: tuple[str, ...]) -> None:
    """``pip install .`` or ``pip install ".[extra,...]"``: this project, with extras it has."""
    m = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", argv[2])
    assert m, f"{shlex.join(argv)}: not an install of this clone"
    assert PYPROJECT["project"]["name"] == "saturate"
    extras = set(PYPROJECT["project"].get("optional-dependencies", {}))
    named = set(m[1].split(",")) if m[1] else set()
    assert named <= extras, f"{shlex.join(argv)}: no extra {named - extras} in pyproject.toml"


@pytest.mark.parametrize("item", _items("pip"))
def test_pip_install_names_this_project_and_its_extras(item: Item) -> None:
    check_pip(item.command.argv)


@pytest.mark.parametrize("item", _items("venv"))
def test_the_virtualenv_activated_is_the_one_make_builds(item: Item) -> None:
    venv = re.search(r"^VENV\s*\?=\s*(\S+)", MAKEFILE, re.M)
    assert venv and "-m venv $(VENV)" in MAKEFILE
    assert item.command.argv[1] in (f"{venv[1]}/bin/activate", f"./{venv[1]}/bin/activate")


# -- python, toml, yaml ------------------------------------------------------------------------

def user_names() -> dict[str, object]:
    """What a user's own code defines for the pages' examples: a training step returning a reward
    and its seconds, an evaluation, the number of steps and of GPUs."""
    rng = random.Random(0)
    state = {"step": 0}

    def train_step() -> tuple[float, float]:
        state["step"] += 1
        return 1 - 1 / (1 + 0.05 * state["step"]) + rng.gauss(0, 0.01), 30.0

    return {"num_steps": 120, "num_gpus": 8, "train_step": train_step,
            "evaluate": lambda: min(1.0, 0.2 + 0.004 * state["step"])}


def _exec(block: Block) -> dict[str, object]:
    names = {"__name__": "__doc_block__", **user_names()}
    exec(compile(block.text, block.where, "exec"), names)  # noqa: S102 - the pages' own code
    return names


@pytest.mark.slow
@pytest.mark.parametrize("item", _items("python"))
def test_python_block_runs(item: Item, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(ROOT)  # the pages' paths are the repository's (sample_runs/)
    try:
        _exec(item.block)
    finally:
        plt.close("all")


@pytest.mark.parametrize("item", _items("python-mlflow"))
def test_python_block_logs_to_mlflow(item: Item, mlflow_server, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import mlflow

    experiment = unique_name("doc-block")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server.url)
    mlflow.set_tracking_uri(mlflow_server.url)
    mlflow.set_experiment(experiment)
    try:
        _exec(item.block)
    finally:
        mlflow.set_tracking_uri(None)
    logged = set(re.findall(r"log_metric\(\s*[\"']([^\"']+)", item.block.text))
    params = set(re.findall(r"[\"'](\w+)[\"']\s*:", "".join(re.findall(r"log_params\(\{([^}]*)\}", item.block.text))))
    table = saturate.load(mlflow_server.url, experiment=experiment)
    axis = {m for m in logged if m.startswith("compute/")}
    assert table.axis.name in axis or not axis  # the compute logged is the x axis
    assert set(table.points["metric"]) == logged - axis
    assert {f"params.{p}" for p in params} <= set(table.runs.columns)


@pytest.mark.parametrize("item", _items("toml"))
def test_toml_block_is_a_settings_file_the_tool_reads(item: Item, tmp_path: Path) -> None:
    from saturate.settings import Settings
    from saturate.settings.file import find_config

    data = tomllib.loads(item.block.text)
    table = data["tool"]["saturate"] if "tool" in data else data
    path = tmp_path / ("pyproject.toml" if "tool" in data else "saturate.toml")
    path.write_text(item.block.text, encoding="utf-8")
    assert find_config(tmp_path) == path
    settings = Settings.build(path)
    for key, value in table.items():
        got = getattr(settings, key)
        if isinstance(value, dict):  # per-metric tables: thresholds, domains, pairs
            assert set(dict(got)) == set(value), (key, got)
        elif isinstance(value, list):
            assert tuple(got) == tuple(value), (key, got)
        else:
            assert got == value, (key, got)


def _secret(text: str, secrets: dict[str, str]) -> str:
    def value(m: re.Match) -> str:
        assert m[1] in secrets, f"the workflow uses secrets.{m[1]}, which no test provides"
        return secrets[m[1]]
    return re.sub(r"\$\{\{\s*secrets\.(\w+)\s*\}\}", value, text)


@pytest.mark.slow
@pytest.mark.parametrize("item", _items("yaml"))
def test_workflow_block_runs(item: Item, mlflow_server, server_experiment: str, tmp_path: Path) -> None:  # noqa: ANN001
    import yaml

    workflow = yaml.safe_load(item.block.text)
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    secrets = {"MLFLOW_TRACKING_URI": mlflow_server.url}
    places = {"server": mlflow_server.url, "experiment": server_experiment}
    written: set[str] = set()
    ran = 0
    for step in steps:
        if "uses" in step:
            action = step["uses"].split("@")[0]
            assert action in ACTIONS, f"{action}: a GitHub Action this test does not know"
            given = step.get("with", {})
            if action == "actions/setup-python":
                least = PYPROJECT["project"]["requires-python"].removeprefix(">=")
                assert tuple(map(int, str(given["python-version"]).split("."))) >= \
                    tuple(map(int, least.split(".")))
            if action == "actions/upload-artifact":
                assert given["path"] in written, f"uploads {given['path']}, which no step wrote"
            continue
        env = {k: _secret(str(v), secrets) for k, v in step.get("env", {}).items()}
        for line in step["run"].splitlines():
            words = tuple(shlex.split(line, comments=True))
            if not words:
                continue
            command = Command(item.block, item.block.line, line, words)
            if command.kind == "pip":
                check_pip(words)
            else:
                assert command.kind == "saturate", f"{line}: a step this test cannot run"
                written |= set(run_saturate(command, places, tmp_path, env=env))
                ran += 1
    assert ran, "the workflow runs no saturate command"
