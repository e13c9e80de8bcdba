"""The fit benchmark's same-run reference (benchmarks/fit_runner.py): it times the package of
the tree it is given, and says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.subprocess  # the benchmark runner is a program of its own
def test_the_runner_fits_with_the_tree_it_is_given(tmp_path):
    c = np.arange(1.0, 41.0)
    curves = tmp_path / "curves.npz"
    np.savez(curves, compute=np.stack([c, c]), value=np.stack([np.log(c), np.sqrt(c)]))
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fit_runner.py"), str(ROOT), str(curves),
         "--workers", "1", "--boot", "5"], capture_output=True, text=True, timeout=300,
        cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["saturate"] == str(ROOT / "saturate" / "__init__.py")
    assert len(got["cpu"]) == 2 and all(t > 0 for t in got["cpu"]) and got["wall"] > 0
