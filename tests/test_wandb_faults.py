"""W&B runs as they are found in the wild: a run folder whose log is not there yet (rsync copies it
last; a cleanup removed it), a log that is empty or whose header is damaged, records no parser
expects (a ``_step`` that is NaN, infinite or 400 digits long, a value nested 3,000 deep), and
``wandb://`` reads: many runs at once, a progress line in a job's log, and no secret left in any
file by the wandb package. The runs are written by the wandb package offline (tests/wandb_runs.py);
odd records are appended to its log with its own protobuf classes, framed as it frames them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from cli_run import run_cli

import saturate
from saturate.settings import Settings
from saturate.tracker import HistoryStore, Watcher, make_poller

wandb = pytest.importorskip("wandb")

from wandb_runs import append_records, history_record, write_runs  # noqa: E402
from wandb_server import WandbServer, remote_run  # noqa: E402

from saturate.ingest.wandb_api import iter_wandb_api  # noqa: E402

STEPS = range(1, 30)
KEY = "k3y-that-must-never-show-" + "x" * 24
PASSWORD = "pa55-that-must-never-show"
SETTINGS = Settings.build(n_boot=40)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder holding ``wandb/`` with two runs, ``ppo-a`` and ``ppo-b``."""
    root = tmp_path_factory.mktemp("wandb-faults")
    write_runs(root, [
        {"name": f"ppo-{n}", "id": f"run{n}", "rows": [
            [s, {"train/reward": s / 10 + k, "loss": 1 / s}] for s in STEPS]}
        for k, n in enumerate("ab")])
    return root


def _copy(written: Path, dest: Path) -> Path:
    shutil.copytree(written, dest, symlinks=True)
    return dest / "wandb"


def _log(folder: Path, run: str) -> Path:
    return next(folder.glob(f"*-run{run}/run-run{run}.wandb"))


def _load(source: Path | str, **kw: object) -> tuple[saturate.Table, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = saturate.load(source, **kw)
    return df, [str(w.message) for w in caught]


# ---- a run folder without its log; an empty or damaged log ---------------------------------------


def test_a_run_folder_without_its_log_is_skipped_and_named(written, tmp_path):
    folder = _copy(written, tmp_path / "p")
    log = _log(folder, "b")
    run_dir = log.parent
    log.unlink()
    df, said = _load(folder)
    assert set(df.points["run"]) == {"ppo-a"}
    lines = [w for w in said if "skipped" in w]
    assert len(lines) == 1, said
    assert run_dir.name in lines[0] and "no .wandb log yet" in lines[0]
    assert "requirements.txt" not in lines[0] and "debug" not in lines[0]  # W&B's own files
    listed = run_cli("ls", str(folder), "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert f'"path": "{run_dir}"' in listed.stdout and "requirements" not in listed.stdout
    done = run_cli("analyze", str(folder), "--metric", "train/reward", "--n-boot", "40")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert run_dir.name in done.stderr and "no .wandb log yet" in done.stderr


def test_watch_waits_for_a_run_folders_log(written, tmp_path):
    folder = _copy(written, tmp_path / "p")
    log = _log(folder, "b")
    kept = tmp_path / log.name
    log.rename(kept)  # rsync has not copied it yet
    with HistoryStore(tmp_path / "h.db") as store:
        watcher = Watcher(make_poller(str(folder), metric="train/reward"), store, SETTINGS)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = watcher.poll_once()
        said = [str(w.message) for w in caught]
        assert any(log.parent.name in w and "no .wandb log yet" in w for w in said), said
        assert first.new_points == len(STEPS)  # ppo-a
        shutil.copy(kept, log)  # the copy arrives
        second = watcher.poll_once()
        assert second.new_points == len(STEPS)  # ppo-b, read once it is there
        assert set(store.points()["run"]) == {"ppo-a", "ppo-b"}


@pytest.mark.parametrize(("damage", "said"), [
    (lambda data: b"", "empty W&B log"),
    (lambda data: b"XXXX" + data[4:], "W&B log, damaged header"),
    (lambda data: data[:6] + b"\x07" + data[7:], "W&B log version 7, unknown"),
], ids=["empty", "no-magic", "unknown-version"])
def test_an_empty_or_damaged_log_is_named(written, tmp_path, damage, said):
    folder = _copy(written, tmp_path / "p")
    log = _log(folder, "b")
    log.write_bytes(damage(log.read_bytes()))
    df, warned = _load(folder)
    assert set(df.points["run"]) == {"ppo-a"}
    lines = [w for w in warned if "skipped" in w]
    assert len(lines) == 1 and f"{log.name} ({said})" in lines[0], warned
    assert "requirements.txt" not in lines[0]


# ---- odd records ------------------------------------------------------------------------------


ODD = {
    "step-nan": ({"_step": "NaN", "train/reward": "1.5"}, "a _step that is NaN"),
    "step-inf": ({"_step": "Infinity", "train/reward": "1.5"}, "an infinite _step"),
    "step-minus-inf": ({"_step": "-Infinity", "train/reward": "1.5"}, "an infinite _step"),
    "step-400-digits": ({"_step": "7" * 400, "train/reward": "1.5"}, "a _step of 400 digits"),
    "value-400-digits": ({"_step": "100", "train/reward": "9" * 400}, "400 digits, too large"),
    "list-3000-deep": ({"_step": "100", "train/reward": "[" * 3000 + "]" * 3000},
                       "nested too deep"),
    "dict-3000-deep": ({"_step": "100", "eval": '{"a": ' * 3000 + "1" + "}" * 3000},
                       "nested too deep"),
    "dict-500-deep": ({"_step": "100", "eval": '{"a": ' * 500 + "1" + "}" * 500},
                      "nested more than 100 deep"),
}


def _with_odd_record(written: Path, dest: Path, items: dict[str, str]) -> Path:
    """The project with an odd record, then a good one at step 200, appended to ppo-a's log."""
    folder = _copy(written, dest)
    append_records(_log(folder, "a"), [history_record(items),
                                       history_record({"_step": "200", "train/reward": "7.5"})])
    return folder


@pytest.mark.parametrize("case", sorted(ODD))
def test_an_odd_record_is_skipped_with_a_warning_and_the_good_rows_kept(written, tmp_path, case):
    items, why = ODD[case]
    folder = _with_odd_record(written, tmp_path / "p", items)
    df, said = _load(folder, metric="train/reward")
    a = df.points[df.points["run"] == "ppo-a"]
    assert a["step"].tolist() == [*STEPS, 200]  # before and after the odd record
    assert a["value"].iloc[-1] == 7.5
    assert (df.points["run"] == "ppo-b").sum() == len(STEPS)
    odd = [w for w in said if "history record(s)" in w]
    assert len(odd) == 1 and "skipped 1 history record(s)" in odd[0] and why in odd[0], said
    assert "run-runa.wandb" in odd[0]
    done = run_cli("analyze", str(folder), "--metric", "train/reward", "--n-boot", "40")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert why in done.stderr


def test_watch_skips_an_odd_record(written, tmp_path):
    folder = _with_odd_record(written, tmp_path / "p", ODD["step-nan"][0])
    with HistoryStore(tmp_path / "h.db") as store:
        watcher = Watcher(make_poller(str(folder), metric="train/reward"), store, SETTINGS)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = watcher.poll_once()
        assert first.new_points == 2 * len(STEPS) + 1
        assert any("a _step that is NaN" in str(w.message) for w in caught)


# ---- wandb:// ---------------------------------------------------------------------------------


def _remote(n: int, extra: dict | None = None) -> list[dict]:
    return [remote_run(f"id{i}", f"ppo-{i}", [
        {"_step": s, "_timestamp": 1.8e9 + s, "reward": s / 10 + i, **(extra or {})}
        for s in STEPS]) for i in range(n)]


@pytest.fixture
def api_env(monkeypatch):
    def use(server: WandbServer) -> None:
        monkeypatch.setenv("WANDB_BASE_URL", server.url)
        monkeypatch.setenv("WANDB_API_KEY", KEY)
    yield use
    wandb.teardown()


@pytest.mark.server
def test_histories_are_fetched_several_at_once_in_order(api_env):
    with WandbServer(_remote(24), delay=0.3) as server:
        api_env(server)
        parts = list(iter_wandb_api("wandb://team/rl", timeout=60, workers=6))
    assert [p.points["run"].iloc[0] for p in parts] == [f"ppo-{i}" for i in range(24)]
    assert 1 < server.most_at_once <= 6


@pytest.mark.server
def test_a_long_read_says_how_far_it_is_when_stderr_is_not_a_terminal(api_env, capsys):
    with WandbServer(_remote(3)) as server:
        api_env(server)
        list(iter_wandb_api("wandb://team/rl", timeout=30, progress_every=0))
        quiet = capsys.readouterr().err
        list(iter_wandb_api("wandb://team/rl", timeout=30))  # shorter than a progress period
    lines = quiet.splitlines()
    assert lines[:3] == [f"wandb://team/rl: {n} run(s) read ({n * len(STEPS)} history rows) in "
                         f"{lines[n - 1].rsplit(' in ', 1)[1]}" for n in (1, 2, 3)]
    assert lines[-1].endswith(", done") and len(lines) == 4
    assert capsys.readouterr().err == ""


@pytest.mark.server
@pytest.mark.subprocess  # the wandb package's service starts in the process that reads
@pytest.mark.parametrize("key", [KEY, "bad"])
def test_a_wandb_read_leaves_no_secret_in_any_file(tmp_path, key):
    home, tmp, work = (tmp_path / d for d in ("home", "tmp", "work"))
    for d in (home, tmp, work):
        d.mkdir()
    with WandbServer(_remote(2), fault=None if key == KEY else "bad_key") as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
        env.update(HOME=str(home), TMPDIR=str(tmp), SATURATE_TIMEOUT="30", WANDB_API_KEY=KEY,
                   WANDB_BASE_URL=server.url.replace("://", f"://tester:{PASSWORD}@"),
                   PYTHONPATH=os.pathsep.join([str(Path(saturate.__file__).parents[1]),
                                               env.get("PYTHONPATH", "")]))
        done = subprocess.run([sys.executable, "-m", "saturate", "ls", "wandb://team/rl"],
                              env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == (0 if key == KEY else 2), done.stderr
    assert PASSWORD not in done.stdout + done.stderr and KEY not in done.stdout + done.stderr
    for d in (home, tmp, work):
        for f in d.rglob("*"):
            if f.is_file():
                data = f.read_bytes()
                assert PASSWORD.encode() not in data and KEY.encode() not in data, f
    assert not list(tmp.iterdir())  # the private folder is gone
    assert not (home / ".cache" / "wandb" / "logs").exists()
