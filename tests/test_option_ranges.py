"""Every numeric option is finite and in range (issue 40, item 5): a wait that is not a number,
infinite or longer than the clocks of sockets, locks and sleeps hold (``--interval``,
``--notify-timeout``, ``--timeout``, ``$SATURATE_TIMEOUT``) and a count that would not fit in
memory (``timeline --points``) is one ``error:`` line and exit 2 before any work, never exit 3.
The settings' own numeric options are walked with the same values."""

from __future__ import annotations

import http.server
from pathlib import Path

import pytest
from cli_run import run_cli
from local_http import LocalService

from saturate.settings.fields import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_runs" / "03_saturated.csv"
RUN = "llama3.1-8b-ppo-gsm8k-seed0"
BAD_WAITS = ["nan", "inf", "-inf", "1e10", "-1"]
MAX_SECONDS = 7 * 24 * 3600  # a week: the longest wait an option may ask for


def _one_error(res, said: str) -> None:
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"error: {said}\n"


@pytest.mark.parametrize("value", BAD_WAITS)
def test_the_watch_interval_is_a_finite_wait(tmp_path: Path, value: str) -> None:
    """Not --once: the watcher sleeps between passes, where nan and inf were exit 3."""
    res = run_cli("watch", DATA, "--n-boot", "5", "--state", tmp_path / "h.db", "--interval",
                  value, "--max-passes", "2")
    shown = {"1e10": "10000000000.0", "-1": "-1.0"}.get(value, value)
    _one_error(res, f"--interval must be in [0, {MAX_SECONDS}], got {shown}")
    assert not (tmp_path / "h.db").exists()  # before any work


def test_an_interval_of_zero_polls_at_once(tmp_path: Path) -> None:
    res = run_cli("watch", DATA, "--n-boot", "5", "--state", tmp_path / "h.db", "--interval",
                  "0", "--max-passes", "2")
    assert res.returncode == 0, res.stderr
    assert "pass 2:" in res.stderr


@pytest.mark.parametrize("value", BAD_WAITS)
def test_the_notify_timeout_is_a_finite_wait(tmp_path: Path, value: str) -> None:
    res = run_cli("watch", DATA, "--once", "--n-boot", "5", "--state", tmp_path / "h.db",
                  "--notify", "http://127.0.0.1:9/hook", "--notify-timeout", value)
    _one_error(res, f"--notify-timeout must be in (0, {MAX_SECONDS}], got {value}")


class _Quiet(http.server.BaseHTTPRequestHandler):
    """A server that answers every request with 404 (something listens: the timeout is used)."""

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        self.send_error(404)

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("value", ["1e10", "inf", "nan"])
def test_the_tracking_server_timeout_is_a_finite_wait(value: str, monkeypatch) -> None:
    """--timeout 1e10 reached the socket and overflowed its clock: exit 3."""
    with LocalService(_Quiet) as server:
        res = run_cli("analyze", server.base_url, "--timeout", value)
        _one_error(res, f"--timeout must be in (0, {MAX_SECONDS}], got {value}")
        monkeypatch.setenv("SATURATE_TIMEOUT", value)
        res = run_cli("analyze", server.base_url)
        assert res.returncode == 2, res.stderr
        assert res.stderr.startswith("error: $SATURATE_TIMEOUT must be ")
        assert res.stderr.count("\n") == 1


def test_timeline_points_fit_in_memory() -> None:
    res = run_cli("timeline", DATA, "--run", RUN, "--metric", "train/reward", "--n-boot", "5",
                  "--points", "1000000000000")
    _one_error(res, "--points must be at most 10000, got 1000000000000")


NUMERIC = {  # option -> how a value is given (a template) and the command that takes it
    "gpus": ("{}", "analyze"), "timeout": ("{}", "analyze"), "min_gain": ("{}", "analyze"),
    "band": ("{},0.9", "analyze"), "forecast_at": ("{}", "analyze"),
    "confidence": ("{}", "analyze"), "n_boot": ("{}", "analyze"), "seed": ("{}", "analyze"),
    "suite_boot": ("{}", "analyze"), "min_coverage": ("{}", "analyze"),
    "targets": ("train/*={}", "analyze"), "compare_at": ("{}", "compare"),
    "workers": ("{}", "analyze"), "domains": ("*={},{}", "analyze"),
    "gpu_hour_cost": ("{}", "allocate"), "pretrain_compute": ("{}", "allocate"),
    "gpu_hours": ("{}", "allocate"), "budget": ("{}", "allocate"),
}


def test_every_numeric_setting_refuses_what_is_not_a_finite_number() -> None:
    """Each numeric option of the settings, given nan, inf and -inf: exit 2 (refused) or, where
    the value is not read for this data, 0/1; never exit 3 or a traceback."""
    declared = {o.name for o in OPTIONS if o.cli}
    assert set(NUMERIC) <= declared
    for name, (template, command) in NUMERIC.items():
        flag = next(o.flag_names[0] for o in OPTIONS if o.name == name)
        for value in ("nan", "inf", "-inf"):
            extra = ["--group-by", "seed"] if command == "compare" else []
            extra += [] if name == "n_boot" else ["--n-boot", "5"]
            res = run_cli(command, DATA, flag, template.format(value, value), *extra)
            assert res.returncode in (0, 1, 2), (name, value, res.stderr)
            assert "Traceback" not in res.stderr and "internal error" not in res.stderr
            if name not in ("domains", "gpus"):  # a domain may be infinite; --gpus:
                # the timestamps it needs are not in this data
                assert res.returncode == 2 and res.stderr.startswith("error: "), (name, value)
