"""``saturate ls`` and ``analyze --dry-run``: what would be analysed, before any fit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_run import run_cli

from saturate.analysis.inventory import inventory
from saturate.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli(*args)


def test_ls_gives_roles_directions_domains_axis_and_points() -> None:
    done = _cli("ls", str(SAMPLES / "09_entropy_collapse.jsonl"), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    by_name = {m["metric"]: m for m in doc["metrics"]}
    assert by_name["actor/entropy"]["role"] == "diagnostic"
    assert "entropy" in by_name["actor/entropy"]["rule"]
    objectives = [m for m in doc["metrics"] if m["role"] == "objective"]
    assert objectives and all(m["direction"] in ("higher", "lower") for m in objectives)
    assert all(m["points_per_curve"]["min"] > 0 for m in doc["metrics"])
    assert {"column": "actor/entropy"}.items() <= doc["left_out"][0].items()
    assert doc["runs"] == ["qwen2.5-7b-grpo-symclip-entropy-collapse"]


def test_ls_finds_the_mlflow_gpu_hours_axis_and_rates_domain() -> None:
    found = inventory(SAMPLES / "04_collapse_mlflow", Settings())
    assert found.axis.startswith("GPU-hours")
    acc = next(m for m in found.metrics if m.metric == "eval/math500/accuracy")
    assert acc.domain == "[0, 1]" and acc.role == "objective" and acc.direction == "higher"


def test_ls_names_run_parameters_and_columns_left_out(tmp_path: Path) -> None:
    rows = ["run,recipe,step,compute,lr_now,metric,value"]
    rows += [f"r{r},grpo,{s},{s * 5},{0.1 / s},train/loss,{1 / s}" for r in (1, 2)
             for s in range(1, 11)]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    found = inventory(path, Settings())
    assert "params.recipe" in found.parameters
    assert dict(found.left_out)["lr_now"].startswith("a per-point column")
    loss = found.metrics[0]
    assert (loss.metric, loss.direction, loss.curves, loss.points) == ("train/loss", "lower", 2,
                                                                       (10, 10, 10))
    assert "2 run(s), 1 metric(s), 2 curve(s)" in found.text()


def test_ls_lists_the_files_a_folder_holds_that_hold_no_curves(tmp_path: Path,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs.csv").write_text("run,metric,step,value\n" + "".join(
        f"a,reward,{s},{s / 10}\n" for s in range(12)))
    (tmp_path / "config.json").write_text('{"lr": 1e-6}')
    (tmp_path / "notes.md").write_text("# notes\n")
    for i in range(25):
        (tmp_path / f"ckpt_{i:02d}.pt").write_bytes(b"\x00")
    found = inventory(".", Settings())
    assert found.skipped[:2] == (
        ("config.json", "a JSON object that is neither a point record (no value key) nor series "
                        "(xs/ys lists); keys: lr"),
        ("ckpt_00.pt", "not a kind of file saturate reads"))
    assert len(found.skipped) == 27 and found.to_dict()["skipped_files"][-1] == {
        "path": "notes.md", "reason": "not a kind of file saturate reads"}
    text = found.text()
    assert "\nfiles skipped, holding no curves (27):\n  config.json: a JSON object" in text
    assert text.endswith("  ... and 7 more (--format json lists them all)\n")


def test_dry_run_prints_the_inventory_and_fits_nothing() -> None:
    source = str(SAMPLES / "03_saturated.csv")
    dry = _cli("analyze", source, "--dry-run")
    listed = _cli("ls", source)
    assert dry.returncode == listed.returncode == 0, dry.stderr + listed.stderr
    assert dry.stdout == listed.stdout
    assert "eval/gsm8k/accuracy" in dry.stdout and "verdict" in dry.stdout.splitlines()[0]
    assert "saturated" not in dry.stdout  # no verdicts: nothing was fitted
