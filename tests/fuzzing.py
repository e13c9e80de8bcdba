"""What the fuzz tests share: hypothesis settings, the per-case guard, and the ``make fuzz`` report.

In the suite (the default) each fuzz test runs a few derandomized examples, so CI is quick and
deterministic. ``make fuzz`` sets ``SATURATE_FUZZ=long``: the tests then share
:data:`FUZZ_TOTAL` examples by weight, each case is logged (``SATURATE_FUZZ_LOG``) and the log is
summarised by ``python tests/fuzzing.py LOG``: cases, outcomes, tracebacks and hangs.

Every case runs under :func:`case`, which stops it after :data:`CASE_SECONDS` (a hang) and sorts
its outcome: ``ok`` (a result), ``refused`` (a :class:`~saturate.errors.SaturateError`), ``bad``
(a result that breaks its contract), ``traceback`` (any other exception) or ``hang``.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, settings

from saturate.errors import SaturateError
from saturate.table.curves import REQUIRED_COLUMNS

FUZZ_TOTAL = 10_000
LONG = os.environ.get("SATURATE_FUZZ") == "long"
LOG = os.environ.get("SATURATE_FUZZ_LOG")
#: A case still running after this long is a hang.
CASE_SECONDS = int(os.environ.get("SATURATE_FUZZ_CASE_SECONDS", "120"))
FAILURES = ("bad", "traceback", "hang")


def fuzz_settings(ci: int, share: float) -> settings:
    """``ci`` examples in the suite; ``share`` of :data:`FUZZ_TOTAL` under ``make fuzz``."""
    common = {
        "deadline": None,  # hangs are caught by case(); slow machines must not fail the suite
        "database": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                  HealthCheck.filter_too_much, HealthCheck.large_base_example],
    }
    if LONG:
        return settings(max_examples=max(1, round(FUZZ_TOTAL * share)), **common)
    return settings(max_examples=ci, derandomize=True, print_blob=True, **common)


class CaseHang(Exception):
    """Raised inside a case that ran longer than :data:`CASE_SECONDS`."""


def _log(kind: str, outcome: str, detail: str = "") -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"kind": kind, "outcome": outcome, "detail": detail[:300]}) + "\n")


def record(kind: str, outcome: str, detail: str = "") -> None:
    """Log the outcome of a case that ran outside :func:`case` (a CLI subprocess)."""
    _log(kind, outcome, detail)


@contextmanager
def case(kind: str) -> Iterator[None]:
    """Run one fuzz case: a SaturateError is an accepted outcome (swallowed); anything else that
    escapes fails the test after the outcome is logged."""

    def on_alarm(signum: int, frame: object) -> None:
        raise CaseHang(f"case ran over {CASE_SECONDS} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(CASE_SECONDS)
    outcome, detail = "traceback", ""
    try:
        yield
        outcome = "ok"
    except SaturateError as exc:
        outcome = "bad"
        assert "Traceback" not in str(exc) and "\n" not in str(exc) and len(str(exc)) <= 300, exc
        outcome = "refused"
    except CaseHang:
        outcome = "hang"
        raise
    except AssertionError as exc:
        outcome, detail = "bad", str(exc)
        raise
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        _log(kind, outcome, detail)


def check_tidy(df: pd.DataFrame) -> None:
    """The contract of the tidy table (see :mod:`saturate.table.curves`)."""
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns[: len(REQUIRED_COLUMNS)]) == list(REQUIRED_COLUMNS)
    assert not df.columns.duplicated().any()
    assert df["step"].dtype == np.int64
    assert df["compute"].dtype == np.float64 and df["value"].dtype == np.float64
    assert np.isfinite(df["value"]).all() and np.isfinite(df["compute"]).all()
    assert not df.duplicated(["source", "run_id", "metric", "step"]).any()
    for col in ("source", "run_id", "run", "metric", "experiment"):
        assert all(isinstance(v, str) for v in df[col]), col


def summarise(log: Path) -> int:
    """Print the figures of a ``make fuzz`` run; non-zero when any case failed."""
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    by_outcome = collections.Counter(r["outcome"] for r in rows)
    by_kind = collections.Counter(r["kind"] for r in rows)
    print(f"fuzz cases: {len(rows)}")
    for kind, n in sorted(by_kind.items()):
        outcomes = collections.Counter(r["outcome"] for r in rows if r["kind"] == kind)
        print(f"  {kind:<20} {n:>6}  " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    print(f"results: {by_outcome['ok']}, refused with one line: {by_outcome['refused']}")
    print(f"tracebacks: {by_outcome['traceback'] + by_outcome['bad']}, hangs: {by_outcome['hang']}")
    for r in [r for r in rows if r["outcome"] in FAILURES][:10]:
        print(f"  {r['kind']}: {r['outcome']} {r['detail']}")
    return 1 if any(by_outcome[k] for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(summarise(Path(sys.argv[1])))
