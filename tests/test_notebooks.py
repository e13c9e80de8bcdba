"""The notebooks run top to bottom, are committed without outputs and never write into the repo.

Each notebook runs in a fresh kernel of this interpreter (a private kernelspec, so no global
Jupyter configuration matters) from a temporary copy of ``notebooks/``; the sample runs are read
in place from the repo, which must come out untouched.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WATCHED = (ROOT / "notebooks", ROOT / "sample_runs")


def _snapshot() -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file below the folders the notebooks read."""
    out = {}
    for folder in WATCHED:
        for p in folder.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts:
                st = p.stat()
                out[str(p.relative_to(ROOT))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory) -> dict[str, str]:
    """A ``python3`` kernelspec that starts this interpreter, found through JUPYTER_PATH."""
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (saturate tests)",
        "language": "python",
    }))
    return {"JUPYTER_PATH": str(base), "JUPYTER_DATA_DIR": str(base),
            "JUPYTER_CONFIG_DIR": str(base / "config"), "IPYTHONDIR": str(base / "ipython")}


def test_there_are_the_three_notebooks():
    names = {p.stem for p in NOTEBOOKS}
    assert {"01_quickstart", "02_mlflow", "03_recipe_comparison"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: clear outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path, tmp_path, monkeypatch, kernel_env):
    for key, value in kernel_env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SATURATE_SAMPLE_RUNS", str(ROOT / "sample_runs"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's own: inline, as in Jupyter
    workdir = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", workdir)
    before = _snapshot()

    nb = nbformat.read(workdir / path.name, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=120,
                            resources={"metadata": {"path": str(workdir)}})
    client.execute()  # raises CellExecutionError, with the failing cell, on any error

    assert _snapshot() == before, "a notebook wrote into the repo"
    # nor into the folder it ran in (MLflow's default artifact root, mlruns/, an mlflow.db...)
    left = sorted(p.name for p in workdir.iterdir() if p.name != ".ipynb_checkpoints")
    assert left == sorted(p.name for p in (ROOT / "notebooks").iterdir()
                          if p.name != ".ipynb_checkpoints"), f"{path.name} left files behind"
    html = [
        out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
        if "text/html" in out.get("data", {})
    ]
    assert html, f"{path.name} displays no rich (HTML) output"
    _check_figures(nb, path.name)


def _check_figures(nb: nbformat.NotebookNode, name: str) -> None:
    """Every cell that plots shows its figures, each once, as a picture: ``image/png`` outputs,
    no two alike (``Analysis.plot`` gives one figure per metric), and no ``<Figure size ...>``
    text standing in for one. Every view of a curve holds a chart."""
    plotting = [c for c in nb.cells if c.cell_type == "code"
                and (".plot(" in c.source or "plt.show()" in c.source)]
    assert plotting, f"{name} has no plot cell"
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
        as_text = [o for o in cell.outputs if "image/png" not in o.get("data", {})
                   and "<Figure size" in o.get("data", {}).get("text/plain", "")]
        assert not as_text, f"{name}: a figure shown as text: {cell.source!r}"
        if cell in plotting:
            pictures = [o["data"]["image/png"] for o in images]
            assert pictures, f"{name}: no image from {cell.source!r}"
            assert len(set(pictures)) == len(pictures), f"{name}: a figure twice: {cell.source!r}"
        for out in cell.outputs:
            frag = out.get("data", {}).get("text/html", "")
            if "saturate-nb" in frag:
                assert "<svg" in frag and "<style>" in frag, f"{name}: a view without a chart"
