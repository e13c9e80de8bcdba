"""Check the invariants of issue 13 on sample_runs and on the shared real curves.

Every curve analysed must keep its story coherent (``tests/coherence.py``): each estimate inside
its own interval; forecasts, bands and the asymptote inside the metric's domain; the verdict
following from the gain, its interval and the threshold by the README's rule; a stop point in
the past only with a verdict that no longer pays (or a reason); no knee before the initial stage
ends; no stage named like a verdict; the gain equal to forecast(2C) - forecast(C). And no
diagnostic metric (KL, entropy, lengths, losses, timing, ...) carries a verdict.

Sources, each analysed as a user would (the file or folder given to ``saturate.analyze``, the
roles, directions and domains found from the metric names), and the sampled real curves of
``benchmarks/realcurves.py`` as one tidy table per source (their groups as runs' seeds, the LLM
accuracies with their [0, 1] domain). Prints, per source, the curves analysed and the breaks per
invariant, then every break. Exit 1 when any invariant breaks. Run::

    .venv/bin/python benchmarks/check_coherence.py            # the benchmark's full sample
    .venv/bin/python benchmarks/check_coherence.py --quick    # a quarter
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from realcurves import DATA_DIR, FULL_CAPS, QUICK_CAPS, available, load_all

import saturate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from coherence import CHECKS, broken  # noqa: E402

DIAGNOSTIC = re.compile(
    r"(^|[/_.])(kl|entropy|(response_|ep_|episode_)?len(gth)?|grad_?norm|lr|learning_rate|clip|"
    r"pg_loss|vf_loss|value_loss|policy_loss|critic_loss|timing|throughput|memory)([/_.]|$)",
    re.IGNORECASE)
"""Names the issue lists as diagnostics (checked apart from ``saturate.vocabulary.roles``)."""

FILES = {
    "sample_runs": ROOT / "sample_runs",
    "verl (file)": DATA_DIR / "verl_llm_ppo" / "verl_gsm8k_ppo_metrics_long.csv",
    "sb3 (file)": DATA_DIR / "rl_trained_agents" / "eval_curves_long.csv",
    "qwen3 grpo (file)": DATA_DIR / "josancamon19_rl_scaling_laws" / "export.csv",
}


def _tidy(curves) -> pd.DataFrame:
    """The sampled real curves of one source as a tidy table (run = the curve, metric = its)."""
    return pd.concat([pd.DataFrame({"run": c.name, "metric": c.metric, "step": np.arange(len(c.value)),
                                    "compute": c.compute, "value": c.value}) for c in curves],
                     ignore_index=True)


def _domains(curves) -> dict[str, tuple[float, float]]:
    return {c.metric: c.domain for c in curves if c.domain is not None}


def check(name: str, analysis: saturate.Analysis) -> tuple[int, dict[str, list[str]]]:
    """The curves analysed and, per invariant, the breaks; diagnostics with a verdict too."""
    curves = {f"{name} | {c.run} | {c.metric}": c for c in analysis.curves}
    out = {label: broken(curves, fn) for label, fn in CHECKS.items()}
    out["no verdict on a diagnostic"] = [k for k, c in curves.items() if DIAGNOSTIC.search(c.metric)]
    return len(curves), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if not available():
        print(f"skipped: the shared real curves are not at {DATA_DIR}")
        return 0
    warnings.simplefilter("ignore")
    jobs: list[tuple[str, object, dict]] = [(k, p, {}) for k, p in FILES.items() if p.exists()]
    by_source: dict[str, list] = {}
    for c in load_all(caps=QUICK_CAPS if args.quick else FULL_CAPS):
        by_source.setdefault(c.source, []).append(c)
    for source, curves in sorted(by_source.items()):
        jobs.append((f"{source} (sampled)", _tidy(curves), {"domains": _domains(curves)}))
    total, failures = 0, []
    for name, what, kw in jobs:
        t0 = time.perf_counter()
        a = saturate.analyze(what, workers=args.workers, **kw)
        n, out = check(name, a)
        total += n
        bad = {k: v for k, v in out.items() if v}
        failures += [f"[{k}] {line}" for k, v in bad.items() for line in v]
        summary = ", ".join(f"{k}: {len(v)}" for k, v in bad.items()) or "all invariants hold"
        print(f"{name:24s} {n:5d} curves  {time.perf_counter() - t0:6.0f} s  {summary}",
              flush=True)
    print(f"\n{total} curves, {len(failures)} breaks")
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
