"""Everyday use against a reference commit, timed in turns in the same run: ``saturate --help``,
``python -c "import saturate"``, ``saturate analyze sample_runs/`` (the table) and the same with
``--format html``; wall and CPU time (the command's and its workers'), and whether every verdict
is the same.

The reference's ``saturate`` package is extracted with ``git archive`` into a temporary folder and
run with this environment's Python (its dependencies), the folder first on ``PYTHONPATH``; this
checkout runs the same way. Each side runs once untimed first (numba compiles a new package's
kernels once), then the rounds alternate the sides (ref, this, this, ref, ...), and each ratio is
that of summed times, so a noisy shared machine weighs on both alike.

    python benchmarks/bench_cli.py                       # against 50c4a7c (issue 31's start)
    python benchmarks/bench_cli.py --ref HEAD~3 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
DEFAULT_REF = "50c4a7c"


def extract(rev: str, into: Path) -> Path:
    """The ``saturate`` package at ``rev`` written under ``into`` (``git archive``)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "saturate"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def timed(code: Path, args: Sequence[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the process and the children it waited for) of
    ``python ARGS`` with ``code`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(code), "COLUMNS": "120"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} with {code} failed ({done.returncode}): "
                         f"{done.stderr.decode(errors='replace')[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def verdicts(code: Path, cwd: Path) -> dict[tuple[str, str], str]:
    """Every curve's verdict on sample_runs/ (the JSON report)."""
    out = cwd / "verdicts.json"
    timed(code, ["-m", "saturate", "analyze", str(SAMPLES), "--format", "json", "--out",
                 str(out)], cwd)
    doc = json.loads(out.read_text(encoding="utf-8"))
    return {(c["run"], c["metric"]): c["verdict"] for c in doc["curves"]}


CASES = {
    "help": ["-m", "saturate", "--help"],
    "import": ["-c", "import saturate"],
    "table": ["-m", "saturate", "analyze", str(SAMPLES)],
    "html": ["-m", "saturate", "analyze", str(SAMPLES), "--format", "html", "--out", "r.html"],
}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default=DEFAULT_REF, help=f"reference commit (default {DEFAULT_REF})")
    ap.add_argument("--rounds", type=int, default=3, help="timed runs of each side (default 3)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_cli_") as tmp:
        base = Path(tmp)
        sides = {"ref": extract(args.ref, base / "ref"), "this": ROOT}
        for side in ("ref", "this"):
            (base / f"run-{side}").mkdir()
        print(f"reference {args.ref} against this checkout; {args.rounds} rounds in turns; "
              f"load {os.getloadavg()[0]:.1f} at the start", flush=True)
        same = {s: verdicts(code, base / f"run-{s}") for s, code in sides.items()}  # warms up
        totals = {(s, c): [0.0, 0.0] for s in sides for c in CASES}
        for r in range(args.rounds):
            order = ("ref", "this") if r % 2 == 0 else ("this", "ref")
            for case, cmd in CASES.items():
                for side in order:
                    wall, cpu = timed(sides[side], cmd, base / f"run-{side}")
                    totals[side, case][0] += wall
                    totals[side, case][1] += cpu
        n = args.rounds
        for case in CASES:
            (rw, rc), (tw, tc) = totals["ref", case], totals["this", case]
            print(f"{case:<7} wall {rw / n:6.2f} s -> {tw / n:6.2f} s ({rw / tw:5.1f}x faster)   "
                  f"cpu {rc / n:6.2f} s -> {tc / n:6.2f} s ({tc / rc:4.2f} of it)")
        ratio = totals["this", "html"][0] / totals["this", "table"][0]
        print(f"this checkout: --format html takes {ratio:.2f}x the table's wall time")
        print(f"verdicts on sample_runs/: {len(same['this'])} curves, "
              f"{'identical' if same['ref'] == same['this'] else 'DIFFERENT'} to the reference's; "
              f"load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
