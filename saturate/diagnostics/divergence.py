"""Reward vs benchmark divergence: the training reward keeps scaling while a held-out benchmark
flattens or falls (reward over-optimisation, Gao et al. 2022).

Per (reward, benchmark) pair whose benchmark trend points below its threshold, stretches
``[c, end]`` are tested from the earliest ``c``: the first where the reward's slope per doubling
is surely above its threshold and the benchmark's surely below is the finding (``error`` when it
falls); a later start at the benchmark's plateau or peak that passes too is preferred.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from saturate.diagnostics.base import (
    CurveRef,
    Diagnostic,
    DiagnosticSettings,
    by_run,
    recent_trend,
    threshold,
    window_trend,
)
from saturate.diagnostics.registry import BOOL, EST, NUM, STR, array, fields, kind, register
from saturate.measure.quantities import smoothing_window
from saturate.measure.trend import MIN_TREND_POINTS, noise_sd
from saturate.results import Trend, format_estimate
from saturate.vocabulary.roles import is_benchmark, is_instability, is_reward, reward_rank


def plateau_start(compute: np.ndarray, values: np.ndarray, tol: float) -> float:
    """First compute where the smoothed curve (larger-is-better) comes within ``tol`` of its best:
    a plateau reached, or a peak. ``tol`` is at least twice the noise left after smoothing, so
    one lucky evaluation does not set the best level."""
    y = np.asarray(values, dtype=float)
    w = smoothing_window(y.size)
    sm = pd.Series(y).rolling(w, center=True, min_periods=1).mean().to_numpy(float)
    sd = noise_sd(y)
    tol = max(tol, 2.0 * sd / math.sqrt(w)) if math.isfinite(sd) else tol
    return float(np.asarray(compute, dtype=float)[int(np.argmax(sm >= np.max(sm) - tol))])


def _window_starts(compute: np.ndarray, recent_from: float, max_windows: int = 40) -> list[float]:
    """Candidate starts of the stretch since which the benchmark stopped following: a log-spaced
    subset of its points that leave enough after them (15%, at least six), plus ``recent_from``."""
    c = np.asarray(compute, dtype=float)
    c = c[c > 0]
    need = max(MIN_TREND_POINTS, int(0.15 * c.size))
    if c.size < need:
        return []
    starts = c[: c.size - need + 1]
    if starts.size > max_windows:
        starts = starts[np.unique(np.geomspace(1, starts.size, max_windows).astype(int) - 1)]
    return sorted({*map(float, starts), float(recent_from)})


def find_pairs(
    metrics: Sequence[str], pairs: Sequence[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """(reward, benchmark) metric pairs of one run: the configured globs, else the conventions
    (the most reward-like training metric with every held-out task score)."""
    if pairs:
        out = []
        for rglob, bglob in pairs:
            for r in metrics:
                if not fnmatch.fnmatchcase(r, rglob):
                    continue
                out += [(r, b) for b in metrics if b != r and fnmatch.fnmatchcase(b, bglob)]
        return list(dict.fromkeys(out))
    rewards = sorted((m for m in metrics if is_reward(m)), key=reward_rank)
    if not rewards:
        return []
    benches = [m for m in metrics if is_benchmark(m) and not is_instability(m)]
    return [(rewards[0], b) for b in benches]


def check_pair(
    reward: CurveRef, bench: CurveRef, settings: DiagnosticSettings | None = None
) -> Diagnostic | None:
    """The divergence diagnostic of one (reward, benchmark) pair of a run, or ``None``."""
    settings = settings or DiagnosticSettings()
    conf = settings.confidence
    b_trend = recent_trend(bench, conf)
    if b_trend is None:
        return None
    r_trend = window_trend(reward, b_trend.compute_from, b_trend.compute_to, conf)
    if r_trend is None:
        return None
    t_r, t_b = threshold(reward, settings), threshold(bench, settings)
    if not b_trend.slope_per_doubling.value < t_b:
        return None
    def diverged(lo: float) -> tuple[Trend, Trend] | None:
        b, r = window_trend(bench, lo, math.inf, conf), window_trend(reward, lo, math.inf, conf)
        if b is not None and r is not None and r.slope_per_doubling.lo > t_r \
                and b.slope_per_doubling.hi < t_b:
            return b, r
        return None

    hit = next(filter(None, map(diverged, _window_starts(bench.compute, b_trend.compute_from))),
               None)
    if hit is None:
        return None
    # The earliest stretch may start on the rise; the plateau (or peak) is where it stopped.
    peak = plateau_start(bench.compute, bench.signed, t_b)
    if peak > hit[0].compute_from:
        hit = diverged(peak) or hit
    b_trend, r_trend = hit
    rs, bs = r_trend.slope_per_doubling, b_trend.slope_per_doubling
    falls = bs.hi < 0
    since = b_trend.compute_from
    pct = f"{round(conf * 100)}%"
    verb = "falls" if falls else "has flattened"
    rs_txt, bs_txt = (format_estimate(e, missing=None, unidentified="") for e in (rs, bs))
    message = (
        f"{bench.metric} stopped following {reward.metric} from compute {since:.4g}: over "
        f"compute {b_trend.compute_from:.4g}..{b_trend.compute_to:.4g} the reward gains "
        f"{rs_txt} per doubling (threshold {t_r:.3g}) while {bench.metric} {verb} at "
        f"{bs_txt} per doubling (threshold {t_b:.3g}), both at {pct} confidence"
    )
    return Diagnostic(
        kind="divergence", severity="error" if falls else "warning", run=reward.run,
        run_id=reward.run_id, source=reward.source, metrics=(reward.metric, bench.metric),
        message=message, compute=since,
        details={"reward": reward.metric, "benchmark": bench.metric, "since_compute": since,
                 "window": [b_trend.compute_from, b_trend.compute_to],
                 "reward_gain_per_doubling": rs.to_dict(),
                 "benchmark_gain_per_doubling": bs.to_dict(), "reward_threshold": t_r,
                 "benchmark_threshold": t_b, "benchmark_falls": falls},
    )


def divergence_diagnostics(
    refs: Sequence[CurveRef], settings: DiagnosticSettings | None = None
) -> list[Diagnostic]:
    """Divergence diagnostics for every run and pair."""
    settings = settings or DiagnosticSettings()
    out = []
    for curves in by_run(refs).values():
        for r, b in find_pairs(list(curves), settings.pairs):
            d = check_pair(curves[r], curves[b], settings)
            if d is not None:
                out.append(d)
    return out


register(
    lambda given: divergence_diagnostics(given.refs, given.settings),
    kind("divergence", ("warning", "error"),
         "a benchmark stopped following the training reward (error: it falls)",
         fields(reward=STR, benchmark=STR, since_compute=NUM,
                window=array(NUM, minItems=2, maxItems=2),
                reward_gain_per_doubling=EST, benchmark_gain_per_doubling=EST,
                reward_threshold=NUM, benchmark_threshold=NUM, benchmark_falls=BOOL)),
    order=10,
)
