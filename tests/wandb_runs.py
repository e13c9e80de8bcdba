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
import struct
import subprocess
import sys
import zlib
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


# The framing of a W&B transaction log (LevelDB's log format: 32 KiB blocks of chunks, each with
# a CRC-32 seeded by its type), for records appended to a log the wandb package wrote.
_BLOCK, _HEADER = 32 * 1024, 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def history_record(items: dict[str, str], step: int | None = None) -> bytes:
    """A history record as the wandb package writes one: ``{key: value_json}`` (the JSON text as
    given, so it may be ``NaN`` or nested past any parser), the step when given."""
    from wandb.proto import wandb_internal_pb2 as pb

    history = pb.HistoryRecord(item=[pb.HistoryItem(key=k, value_json=v) for k, v in items.items()])
    if step is not None:
        history.step.num = step
    return pb.Record(history=history).SerializeToString()


def append_records(log: Path, records: list[bytes]) -> None:
    """Append ``records`` to the W&B log ``log``, framed as the wandb package frames them."""
    from saturate.ingest.wandb_files import scan

    data = bytearray(log.read_bytes())
    del data[scan(bytes(data)).end:]
    for payload in records:
        first = True
        while True:
            left = _BLOCK - len(data) % _BLOCK
            if left < _HEADER:
                data += b"\0" * left
                continue
            part, payload = payload[: left - _HEADER], payload[left - _HEADER:]
            kind = (_FULL if not payload else _FIRST) if first else (_LAST if not payload
                                                                    else _MIDDLE)
            crc = zlib.crc32(part, zlib.crc32(bytes([kind])))
            data += struct.pack("<IHB", crc, len(part), kind) + part
            first = False
            if not payload:
                break
    log.write_bytes(bytes(data))
