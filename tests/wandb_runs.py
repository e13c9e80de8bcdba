"""Real W&B runs for the tests, written by the wandb package itself in offline mode (no server,
no network): a child process runs ``wandb.init`` / ``run.log`` / ``run.finish`` for each run of
a spec, so the W&B service it starts ends with it.

:func:`write_runs` takes runs as ``{"name", "group", "config", "tags", "exit_code", "entity",
"rows": [[step, {key: value}], ...]}`` and returns the ``wandb/`` folder they were written to.
:func:`runs_from_table` makes such runs from a tidy table (one history row per step).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

_SCRIPT = r"""
import json, sys
import wandb

spec = json.loads(open(sys.argv[1]).read())
for r in spec["runs"]:
    run = wandb.init(project=spec["project"], name=r["name"], group=r.get("group"),
                     tags=r.get("tags"), config=r.get("config"), dir=spec["dir"],
                     id=r.get("id"), entity=r.get("entity"))
    for step, values in r["rows"]:
        run.log(values, step=step)
    run.finish(exit_code=r.get("exit_code", 0))
"""


def write_runs(folder: Path, runs: list[dict], project: str = "saturate-tests") -> Path:
    """Write ``runs`` with the wandb package (offline) under ``folder``; its ``wandb/`` folder."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.json"
    spec.write_text(json.dumps({"project": project, "dir": str(folder), "runs": runs}))
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true",
           "WANDB_DISABLE_CODE": "true", "WANDB_CONSOLE": "off", "WANDB_DISABLE_GIT": "true"}
    env.pop("WANDB_API_KEY", None)
    subprocess.run([sys.executable, "-c", _SCRIPT, str(spec)], check=True, env=env,
                   timeout=300, cwd=folder)
    spec.unlink()
    return folder / "wandb"


def runs_from_table(df: pd.DataFrame, **extra: dict) -> list[dict]:
    """One W&B run per run of a tidy table: its points logged step by step (``compute`` as the
    ``compute/gpu_hours`` metric when it differs from the step); ``extra[run]`` adds keys."""
    out = []
    for run, g in df.groupby("run", sort=True):
        rows: dict[int, dict] = {}
        for step, metric, value, compute in zip(g["step"], g["metric"], g["value"], g["compute"],
                                                strict=True):
            row = rows.setdefault(int(step), {})
            row[str(metric)] = float(value)
            if compute != step:
                row["compute/gpu_hours"] = float(compute)
        out.append({"name": str(run), "rows": sorted(rows.items()), **extra.get(str(run), {})})
    return out


def points_table(runs: list[dict]) -> pd.DataFrame:
    """The points ``runs`` log, as a long table (``run, metric, step, value``) for a CSV."""
    rows = [(r["name"], k, step, v) for r in runs for step, values in r["rows"]
            for k, v in values.items()]
    return pd.DataFrame(rows, columns=["run", "metric", "step", "value"])
