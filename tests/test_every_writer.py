"""Every option that writes a file goes through one output path (issue 40, item 1).

``--out`` (analyze, its --dry-run, ls, compare, allocate, timeline), ``gate --junit``,
``timeline --plot`` and ``watch --html`` are walked with, as their target, each file the user
named as an input (the runs, the settings file), the watch history and its lock, and symbolic
links to them: each is refused before any work (exit 2, one ``error:`` line naming the option)
and no file in the folder, nor the target of any link, changes by a byte. A link to a file of
no command's is followed (its target gets the report, the link stays), a FIFO and a device node
are written into and stay what they were.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
RUN = "llama3.1-8b-ppo-gsm8k-seed0"
SAT = [sys.executable, "-m", "saturate"]


def _writers(folder: Path) -> dict[str, Callable[[str], list[str]]]:
    """Each writing option: the command line that writes to a target."""
    runs, cfg, state = (str(folder / n) for n in ("runs.csv", "saturate.toml", "history.db"))
    return {
        "analyze --out": lambda t: ["analyze", runs, "--config", cfg, "--out", t],
        "analyze --dry-run --out": lambda t: ["analyze", runs, "--config", cfg, "--dry-run",
                                              "--out", t],
        "ls --out": lambda t: ["ls", runs, "--config", cfg, "--out", t],
        "compare --out": lambda t: ["compare", runs, "--config", cfg, "--group-by", "seed",
                                    "--out", t],
        "allocate --out": lambda t: ["allocate", runs, "--config", cfg, "--budget", "100",
                                     "--gpu-hours", "compute", "--out", t],
        "gate --junit": lambda t: ["gate", runs, "--config", cfg, "--junit", t],
        "timeline --out": lambda t: ["timeline", runs, "--config", cfg, "--run", RUN, "--metric",
                                     "train/reward", "--points", "3", "--state", state,
                                     "--out", t],
        "timeline --plot": lambda t: ["timeline", runs, "--config", cfg, "--run", RUN,
                                      "--metric", "train/reward", "--points", "3", "--state",
                                      state, "--plot", t],
        "watch --html": lambda t: ["watch", runs, "--config", cfg, "--once", "--state", state,
                                   "--html", t],
    }


@pytest.fixture()
def project(tmp_path_factory) -> Path:
    """runs.csv, its settings file, a watch history written by a real watch (with its lock) and
    links to each of them (new for each test: a writer that fails one leaves the others whole)."""
    folder = tmp_path_factory.mktemp("project")
    shutil.copy(DATA, folder / "runs.csv")
    (folder / "saturate.toml").write_text("n_boot = 5\n")
    res = run_cli("watch", folder / "runs.csv", "--config", folder / "saturate.toml", "--once",
                  "--state", folder / "history.db")
    assert res.returncode == 0, res.stderr
    assert (folder / "history.db.lock").is_file()
    for name in ("runs.csv", "saturate.toml", "history.db", "history.db.lock"):
        (folder / f"link-to-{name}").symlink_to(folder / name)
    return folder


def _snapshot(folder: Path) -> dict[str, tuple[str, str]]:
    """What each entry is and holds: a link's target, a file's digest, a FIFO as a FIFO."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            out[p.name] = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            out[p.name] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
        else:
            out[p.name] = ("other", oct(stat.S_IFMT(st.st_mode)))
    return out


PROTECTED = ("runs.csv", "saturate.toml", "history.db", "history.db.lock", "link-to-runs.csv",
             "link-to-saturate.toml", "link-to-history.db", "link-to-history.db.lock")


@pytest.mark.parametrize("writer", list(_writers(Path("."))))
def test_no_writer_replaces_an_input_the_history_or_its_lock(project: Path, writer: str) -> None:
    make = _writers(project)[writer]
    for name in PROTECTED:
        if "lock" in name and "--state" not in make("x"):
            continue  # the lock is the history's: only commands given --state know of it
        before = _snapshot(project)
        res = run_cli(*make(str(project / name)))
        assert res.returncode == 2, (writer, name, res.stdout[-300:], res.stderr)
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (writer, name, res.stderr)
        option = writer.split()[-1]
        assert f"{option} {project / name}: is " in lines[0], lines[0]
        assert "replace it" in lines[0]
        assert _snapshot(project) == before, (writer, name)


def test_a_history_is_refused_by_any_writer_even_without_state(project: Path) -> None:
    """A command without --state does not know the history, but never writes a report over an
    SQLite database."""
    before = _snapshot(project)
    res = run_cli("analyze", project / "runs.csv", "--config", project / "saturate.toml",
                  "--out", project / "history.db")
    assert res.returncode == 2
    assert res.stderr == (f"error: --out {project / 'history.db'}: is an SQLite database (a watch "
                          "history or a tracking store?); writing there would replace it "
                          "(choose another path)\n")
    assert _snapshot(project) == before


def test_a_file_read_from_a_folder_given_is_not_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(DATA, folder / "a.csv")
    kept = (folder / "a.csv").read_bytes()
    res = run_cli("analyze", folder, "--n-boot", "5", "--out", folder / "a.csv")
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith(f"error: --out {folder / 'a.csv'}: is the input ")
    assert (folder / "a.csv").read_bytes() == kept
    res = run_cli("watch", folder, "--once", "--n-boot", "5", "--state", tmp_path / "h.db",
                  "--html", folder / "a.csv")
    assert res.returncode == 2, res.stderr
    assert res.stderr.splitlines()[-1].startswith(f"error: --html {folder / 'a.csv'}: is the "
                                                  "input ")
    assert (folder / "a.csv").read_bytes() == kept


@pytest.mark.parametrize("writer", list(_writers(Path("."))))
def test_a_link_is_followed_and_stays_a_link(project: Path, tmp_path: Path, writer: str) -> None:
    victim = tmp_path / "elsewhere" / "report.out"
    victim.parent.mkdir()
    victim.write_text("old report\n")
    link = tmp_path / ("page.html" if "html" in writer else
                       "plot.png" if "plot" in writer else "report.out")
    link.symlink_to(victim)
    before = _snapshot(project)
    res = run_cli(*_writers(project)[writer](str(link)))
    assert res.returncode in (0, 1), (writer, res.stderr)
    assert link.is_symlink() and os.readlink(link) == str(victim), writer
    assert victim.read_bytes() != b"old report\n" and victim.stat().st_size > 0, writer
    assert sorted(p.name for p in victim.parent.iterdir()) == ["report.out"], writer
    changed = {k for k in _snapshot(project) if _snapshot(project)[k] != before.get(k)}
    assert changed <= {"history.db", "history.db-wal", "history.db-shm", "history.db.lock"}


def _device(folder: Path) -> Path:
    """A character device like /dev/null in ``folder`` (made by mknod), else a link to
    /dev/null: a device node no test may replace."""
    node = folder / "null-device"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        node.symlink_to(os.devnull)
    return node


@pytest.mark.parametrize("writer", list(_writers(Path("."))))
def test_a_device_node_is_written_into_never_replaced(project: Path, tmp_path: Path,
                                                      writer: str) -> None:
    node = _device(tmp_path)
    kind = stat.S_IFMT(node.lstat().st_mode)
    res = run_cli(*_writers(project)[writer](str(node)))
    assert res.returncode in (0, 1), (writer, res.stderr)
    assert stat.S_IFMT(node.lstat().st_mode) == kind, writer
    assert node.is_char_device(), writer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null-device"], writer


@pytest.mark.subprocess  # a FIFO opened by mistake for reading, or never, blocks: the timeout fails
@pytest.mark.parametrize("writer", list(_writers(Path("."))))
def test_a_fifo_is_written_into_never_replaced(project: Path, tmp_path: Path,
                                               writer: str) -> None:
    fifo = tmp_path / ("plot.png" if "plot" in writer else "out.fifo")  # its format: by suffix
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:  # waits for the writer, then reads to its end
            got.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        res = subprocess.run([*SAT, *_writers(project)[writer](str(fifo))], capture_output=True,
                             text=True, timeout=240)
    finally:
        if reader.is_alive():  # the command never opened it: let the reader go
            with open(fifo, "wb"):
                pass
        reader.join(timeout=30)
    assert res.returncode in (0, 1), (writer, res.stderr)
    assert fifo.is_fifo(), writer
    assert got and got[0], writer
    assert sorted(p.name for p in tmp_path.iterdir()) == [fifo.name], writer
