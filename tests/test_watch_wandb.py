"""``watch`` on W&B run folders: a run still being written (its log ending inside a record) is
followed pass by pass, as the wandb package's file grows."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from saturate.cli import app
from saturate.settings import Settings
from saturate.tracker import HistoryStore, Watcher, make_poller, parse_event_line

pytest.importorskip("wandb")

from wandb_runs import write_runs  # noqa: E402

STEPS = np.arange(1, 121) * 10
REWARD = 0.8 * (1 - np.exp(-STEPS / 300)) + np.random.default_rng(3).normal(0, 0.004, STEPS.size)
SETTINGS = Settings.build(n_boot=40)


@pytest.fixture(scope="module")
def finished_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [[int(s), {"train/reward": float(r), "loss": float(1 / s)}]
            for s, r in zip(STEPS, REWARD, strict=True)]
    folder = write_runs(tmp_path_factory.mktemp("live"), [{"name": "ppo-live", "rows": rows}])
    return next(folder.glob("*/run-*.wandb"))


def _grow(log: Path, dest: Path, fraction: float) -> None:
    data = log.read_bytes()
    dest.write_bytes(data[: int(len(data) * fraction)])


def test_a_run_still_being_written_is_followed(finished_log, tmp_path):
    run_dir = tmp_path / "wandb" / finished_log.parent.name
    run_dir.mkdir(parents=True)
    live = run_dir / finished_log.name
    counts = []
    with HistoryStore(tmp_path / "h.db") as store:
        watcher = Watcher(make_poller(str(tmp_path / "wandb"), metric="train/reward"), store,
                          SETTINGS)
        for fraction in (0.35, 0.7, 1.0):
            _grow(finished_log, live, fraction)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = watcher.poll_once()
            assert not [w for w in caught if "ends inside" in str(w.message)]  # a live run
            counts.append((result.new_points, result.baseline))
            quiet = watcher.poll_once()  # nothing changed: nothing read, nothing new
            assert (quiet.fetched, quiet.new_points, quiet.events) == (0, 0, ())
        kinds = [e.kind for e in result.events]
        assert "run_finished" in kinds
        stored = store.points()
    assert [b for _, b in counts] == [True, False, False]
    assert all(n > 0 for n, _ in counts)
    assert sum(n for n, _ in counts) == len(STEPS) == len(stored)
    np.testing.assert_allclose(stored["value"].to_numpy(), REWARD)


def test_watch_command_on_a_wandb_folder(finished_log, tmp_path):
    folder = tmp_path / "wandb"
    shutil.copytree(finished_log.parent, folder / finished_log.parent.name)
    runner = CliRunner()
    args = ["watch", str(folder), "--once", "--state", str(tmp_path / "h.db"), "--n-boot", "40"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "baseline of" in first.output
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert not [parse_event_line(x) for x in second.output.splitlines() if parse_event_line(x)]


def test_watch_says_a_wandb_project_is_not_followed(tmp_path):
    result = CliRunner().invoke(app, ["watch", "wandb://team/rl", "--once", "--state",
                                      str(tmp_path / "h.db")])
    assert result.exit_code == 2 and result.output.startswith("error: watch follows W&B run folders")
