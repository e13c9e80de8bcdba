"""The usual slips are errors that say what was meant, never a plausible answer to another
question: a misspelt column, a ``--min-gain`` in metric units beyond the metric's whole range,
an ``--out`` suffix that contradicts ``--format``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_run import run_cli

from saturate.analysis.settings import AnalysisSettings
from saturate.errors import SettingsError
from saturate.measure.quantities import check_gain_units

ROOT = Path(__file__).resolve().parents[1]
SATURATED = ROOT / "sample_runs" / "03_saturated.csv"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def _table(path: Path, header: str) -> Path:
    rows = [header] + [f"a,eval/acc,{s},{s * 10},{0.1 + 0.01 * s}" for s in range(1, 13)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("header", "meant"), [
    ("run,metric,step,compute,vaule", "value"),
    ("run,metirc,step,compute,value", "metric"),
    ("run,metric,setp,value", "step"),
])
def test_a_column_one_slip_from_a_known_name_is_an_error(tmp_path: Path, header: str,
                                                         meant: str) -> None:
    done = _cli("analyze", str(_table(tmp_path / "runs.csv", header)))
    assert done.returncode == 2, done.stderr
    assert f"did you mean {meant!r}" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_plural_and_a_correct_header_are_read(tmp_path: Path) -> None:
    from saturate import load

    ok = load(_table(tmp_path / "ok.csv", "run,metric,step,compute,value"))
    assert set(ok.points["metric"]) == {"eval/acc"}
    wide = tmp_path / "wide.csv"
    wide.write_text("step,values\n1,0.1\n2,0.2\n", encoding="utf-8")
    assert set(load(wide).points["metric"]) == {"values"}


def test_min_gain_beyond_an_accuracy_domain_suggests_the_percentage() -> None:
    done = _cli("analyze", str(SATURATED), "--min-gain", "3")
    assert done.returncode == 2, done.stderr
    assert "did you mean 3%" in done.stderr and "[0, 1]" in done.stderr


def test_min_gain_check_reads_the_domain_or_the_values() -> None:
    acc = np.linspace(0.2, 0.3, 20)
    check_gain_units("eval/acc", acc, AnalysisSettings(min_gain=0.5))  # within [0, 1]: meant
    check_gain_units("eval/acc", acc, AnalysisSettings(min_gain="300%"))  # a share: never
    with pytest.raises(SettingsError, match=r"did you mean 2%"):
        check_gain_units("eval/acc", acc, AnalysisSettings(min_gain=2))
    reward = np.linspace(10.0, 40.0, 20)  # no domain: every value from zero, 0..40
    check_gain_units("train/reward", reward, AnalysisSettings(min_gain=35))
    with pytest.raises(SettingsError, match=r"threshold for 'train/\*' 50"):
        check_gain_units("train/reward", reward,
                         AnalysisSettings(thresholds={"train/*": 50}))


def test_out_suffix_chooses_the_format(tmp_path: Path) -> None:
    done = _cli("analyze", str(SATURATED), "--out", "report.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["curves"]


def test_out_suffix_against_the_format_given_is_an_error(tmp_path: Path) -> None:
    done = _cli("analyze", str(SATURATED), "--out", "report.html", "--format", "json",
                cwd=tmp_path)
    assert done.returncode == 2
    assert "--format html" in done.stderr and "report.html" in done.stderr
    assert not (tmp_path / "report.html").exists()


# --- a selection that matches nothing names what there is ---------------------------------------

SCALING = ROOT / "sample_runs" / "01_still_scaling.csv"  # 2 runs, 2 metrics, parameters recipe..
RUNS = "runs: qwen3-8b-grpo-longcot-seed0, qwen3-8b-grpo-longcot-seed1"
METRICS = "metrics: eval/math500/accuracy, train/reward"


def test_the_closest_name_is_a_case_a_last_part_a_glob_or_a_near_spelling() -> None:
    from saturate.errors import closest

    names = ["eval/math500/accuracy", "train/reward", "train/Entropy"]
    assert closest("eval/math500/acuracy", names) == "eval/math500/accuracy"
    assert closest("train/entropy", names) == "train/Entropy"
    assert closest("accuracy", names) == "eval/math500/accuracy"  # its last part
    assert closest("EVAL/*", names) == "eval/math500/accuracy"  # the glob, ignoring case
    assert closest("grad_norm", names) is None
    assert closest("train/reward", names) is None  # there: nothing to suggest
    # a run as the table shows it, its common prefix left out; the glob when several hold it
    runs = ["qwen-grpo-seed0", "qwen-grpo-seed1", "llama-ppo-seed0"]
    assert closest("grpo-seed1", runs) == "qwen-grpo-seed1"
    assert closest("seed0", runs, globs=True) == "*seed0"
    assert closest("grpo", runs, globs=True) == "*grpo*"
    assert closest("seed0", runs) is None  # an option that takes no globs: none to offer


def test_a_miss_line_lists_a_few_names_and_fits_one_error_line() -> None:
    from saturate.errors import MESSAGE_LIMIT, no_match

    names = [f"eval/benchmark_{i:03d}/" + "x" * 60 for i in range(500)]
    wanted = "eval/benchmark_007/" + "x" * 59
    text = str(no_match("--metric", wanted, names, "metric", where="runs/"))
    assert len(text) <= MESSAGE_LIMIT and text.startswith(f"runs/: --metric {wanted!r} matches "
                                                          "no metric (did you mean ")
    assert "'?); metrics: eval/benchmark_000/" in text and text.endswith(" more")  # not cut at 290
    assert str(no_match("--run", ["a*", "b*"], [], "run")) == "--run 'a*', 'b*' match no run; runs: none"


@pytest.mark.parametrize(("args", "said"), [
    (["--metric", "eval/math500/acuracy"],
     f"--metric 'eval/math500/acuracy' matches no metric (did you mean 'eval/math500/accuracy'?); "
     f"{METRICS}"),
    (["--metric", "eval/*/f1*"], f"--metric 'eval/*/f1*' matches no metric; {METRICS}"),
    (["--run", "qwen3-8b-grpo-longcot-seed7"],
     "--run 'qwen3-8b-grpo-longcot-seed7' matches no run (did you mean "
     "'qwen3-8b-grpo-longcot-seed1'?); " + RUNS),
    (["--experiment", "qwen3-8b-grpo-longcott"],
     "--experiment 'qwen3-8b-grpo-longcott' matches no experiment (did you mean "
     "'qwen3-8b-grpo-longcot'?); experiments: qwen3-8b-grpo-longcot"),
    (["--metric", "train/reward", "--run", "*seed9", "--run", "x*"],
     "--run '*seed9', 'x*' match no run; " + RUNS),
])
@pytest.mark.parametrize("command", ["analyze", "ls", "gate", "plot", "compare", "allocate",
                                     "watch"])
def test_every_command_that_selects_names_what_exists_on_a_miss(
        tmp_path: Path, command: str, args: list[str], said: str) -> None:
    extra = {"plot": ["--out", str(tmp_path / "figs")], "allocate": ["--budget", "10"],
             "compare": ["--group-by", "recipe"],
             "watch": ["--once", "--state", str(tmp_path / "h.db")]}
    done = _cli(command, str(SCALING), *args, *extra.get(command, []))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    if command == "watch":  # its status line first
        lines = [ln for ln in lines if not ln.startswith("watch: ")]
    assert lines == [f"error: {SCALING}: {said}"]
    assert not (tmp_path / "figs").exists()


@pytest.mark.parametrize(("args", "said"), [
    (["--compute", "gpu_hour"], "--compute 'gpu_hour' is neither a column nor a metric of the "
                                f"data; {METRICS}"),
    (["--group-by", "recipes"], "--group-by 'recipes' matches no column or parameter (did you "
                                "mean 'recipe'?); parameters in the data: base_model, recipe, seed"),
    (["--suite", "recip"], "--suite 'recip' matches no column, parameter or tag (did you mean "
                           "'recipe'?); parameters and tags in the data: base_model, recipe, seed"),
    (["--gpu-hours", "train/rewards", "--gpu-hour-cost", "2"],
     "--gpu-hours 'train/rewards' is neither a metric nor a column of the data (did you mean "
     f"'train/reward'?); {METRICS}"),
])
def test_the_other_selectors_name_what_exists_too(args: list[str], said: str) -> None:
    done = _cli("analyze", str(SCALING), *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"error: {said}\n"


def test_a_run_named_as_the_table_shows_it_gets_its_full_name() -> None:
    done = _cli("analyze", str(SCALING), "--run", "seed0")  # the table leaves the prefix out
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: {SCALING}: --run 'seed0' matches no run (did you mean "
                           f"'qwen3-8b-grpo-longcot-seed0'?); {RUNS}\n")
    done = _cli("analyze", str(SCALING), str(SATURATED), "--run", "seed1")
    assert "(did you mean '*seed1'?)" in done.stderr and done.returncode == 2


def test_selectors_that_each_match_but_not_together_say_so() -> None:
    done = _cli("analyze", str(SATURATED), str(SCALING), "--metric", "eval/math500/accuracy",
                "--run", "llama3.1-8b-ppo-gsm8k-seed0")  # the metric of one file, a run of the other
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: {SATURATED}, {SCALING}: no curve matches --metric "
                           "'eval/math500/accuracy' and --run 'llama3.1-8b-ppo-gsm8k-seed0' "
                           "together (each matches curves of its own; `saturate ls` lists the "
                           "runs and metrics)\n")


def test_a_pattern_that_matches_nothing_beside_one_that_does_is_a_warning() -> None:
    done = _cli("analyze", str(SCALING), "--metric", "train/reward", "--metric", "eval/acuracy",
                "--objective", "train/rewrd")
    assert done.returncode == 0, done.stderr
    assert ("warning: --metric 'eval/acuracy' matches no metric (did you mean "
            f"'eval/math500/accuracy'?); {METRICS}") in done.stderr.splitlines()
    assert ("warning: --objective 'train/rewrd' matches no metric (did you mean "
            "'train/reward'?); metrics: train/reward") in done.stderr.splitlines()


def test_a_read_of_diagnostics_only_says_what_it_read(tmp_path: Path) -> None:
    p = tmp_path / "health.csv"
    p.write_text("run,metric,step,value\n" + "".join(
        f"a,actor/entropy,{s},{1 / (s + 1)}\na,lr,{s},0.001\n" for s in range(30)))
    done = _cli("gate", str(p))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "error: no curve to judge: the metrics read get no verdict (diagnostics or axes: "
        "actor/entropy, lr); --objective GLOB judges one")


def test_timeline_and_history_name_the_runs_and_metrics_there_are(tmp_path: Path) -> None:
    state = tmp_path / "history.db"
    done = _cli("timeline", str(SCALING), "--run", "qwen3-8b-grpo-longcot-seed5", "--metric",
                "train/reward", "--from", "refit", "--state", str(state))
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("error: --run 'qwen3-8b-grpo-longcot-seed5' matches no run that logs "
                           "'train/reward' (did you mean 'qwen3-8b-grpo-longcot-seed1'?); runs "
                           "that log 'train/reward': qwen3-8b-grpo-longcot-seed0, "
                           "qwen3-8b-grpo-longcot-seed1\n")
    done = _cli("timeline", str(SCALING), "--run", "qwen3-8b-grpo-longcot-seed0", "--metric",
                "train/rewards", "--from", "refit", "--state", str(state))
    assert done.returncode == 2, done.stderr
    assert "--metric 'train/rewards' matches no metric (did you mean 'train/reward'?)" in done.stderr
    assert _cli("watch", str(SCALING), "--once", "--state", str(state)).returncode == 0
    for args, said in (
            (["--run", "qwen3-8b-grpo-longcot-seed2"],
             "--run 'qwen3-8b-grpo-longcot-seed2' matches no run (did you mean "
             "'qwen3-8b-grpo-longcot-seed1'?); " + RUNS),
            (["--metric", "eval/acc"], "--metric 'eval/acc' matches no metric; " + METRICS)):
        for command in (["history"], ["timeline", str(SCALING), "--from", "history",
                                      *(["--metric", "train/reward"] if "--run" in args else
                                        ["--run", "qwen3-8b-grpo-longcot-seed0"])]):
            done = _cli(*command, *args, "--state", str(state))
            assert done.returncode == 2, (command, done.stderr)
            assert done.stderr == f"error: the watch history {state}: {said}\n", command
