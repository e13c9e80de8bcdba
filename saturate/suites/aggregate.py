"""Aggregate scores across tasks and seeds, and their stratified bootstrap, as rliable defines
them (Agarwal et al. 2021): ``iqm`` (``trim_mean(x, 0.25)`` of all present (task, seed) scores)
and ``mean`` (of each task's mean over seeds). Unlike rliable's ``StratifiedBootstrap``, a
replicate draws its seeds once for every grid point (the gain over a doubling needs the link
between points) and a task with fewer seeds resamples the ones it has; draws come from one seeded
``numpy.random.Generator``.
"""

from __future__ import annotations

import warnings

import numpy as np

from saturate.settings.fields import SUITE_N_BOOT, SUITE_STATISTICS

STATISTICS: tuple[str, ...] = SUITE_STATISTICS
DEFAULT_N_BOOT = SUITE_N_BOOT


def iqm(x: np.ndarray) -> np.ndarray:
    """Interquartile mean over the last axis of the finite entries (NaN where there are none):
    ``scipy.stats.trim_mean(v, 0.25)`` of each row's finite entries ``v``."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1, x.shape[-1])
    out = np.full(flat.shape[0], np.nan)
    counts = np.isfinite(flat).sum(axis=1)
    for k in np.unique(counts):
        if k == 0:
            continue
        rows = counts == k
        cut = int(0.25 * k)
        # Missing entries sort last, so the k present ones fill positions 0..k-1.
        sub = np.where(np.isfinite(flat[rows]), flat[rows], np.inf)
        part = np.partition(sub, [cut, k - cut - 1], axis=1)
        out[rows] = part[:, cut : k - cut].mean(axis=1)
    return out.reshape(x.shape[:-1])


def task_mean(x: np.ndarray) -> np.ndarray:
    """Mean over tasks of each task's mean over seeds; ``x`` is ``(..., tasks, seeds)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN, as wanted
        return np.nanmean(np.nanmean(x, axis=-1), axis=-1)


def aggregate(scores: np.ndarray) -> dict[str, np.ndarray]:
    """Every statistic at every grid point of a ``(tasks, seeds, points)`` tensor."""
    moved = np.moveaxis(np.asarray(scores, dtype=float), -1, 0)  # (G, T, S)
    return {"iqm": iqm(moved.reshape(moved.shape[0], -1)), "mean": task_mean(moved)}


def _draw_counts(
    n_seeds: np.ndarray, s_max: int, n_boot: int, rng: np.random.Generator, task_bootstrap: bool
) -> tuple[np.ndarray, np.ndarray]:
    """How often each (task, seed) entry and each task is drawn: ``(B, T*S)`` and ``(B, T)``."""
    n_tasks = n_seeds.size
    if task_bootstrap:
        task = rng.integers(0, n_tasks, size=(n_boot, n_tasks))
    else:
        task = np.broadcast_to(np.arange(n_tasks), (n_boot, n_tasks))
    n = n_seeds[task]  # (B, T): seeds of the task in each slot
    seed = np.floor(rng.random((n_boot, n_tasks, s_max)) * n[..., None]).astype(int)
    valid = np.arange(s_max)[None, None, :] < n[..., None]
    flat = (task[..., None] * s_max + seed) + (np.arange(n_boot) * n_tasks * s_max)[:, None, None]
    entries = np.bincount(flat[valid], minlength=n_boot * n_tasks * s_max)
    offsets = (np.arange(n_boot) * n_tasks)[:, None]
    tasks = np.bincount((task + offsets).ravel(), minlength=n_boot * n_tasks)
    return entries.reshape(n_boot, n_tasks * s_max), tasks.reshape(n_boot, n_tasks)


def _weighted_iqm(values: np.ndarray, weights_t: np.ndarray) -> np.ndarray:
    """IQM of the multiset holding ``values[i]`` ``weights_t[i, b]`` times, for each replicate ``b``
    (NaN values never count). With ``C_i`` the cumulative weight clipped to the kept positions
    ``[int(N/4), N - int(N/4)]``, the kept sum ``sum_i (C_i - C_{i-1}) v_i`` is one matrix product.
    """
    order = np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")
    m = int(np.isfinite(values).sum())
    if m == 0:
        return np.full(weights_t.shape[1], np.nan)
    v = values[order[:m]]
    cum = np.cumsum(weights_t[order[:m]], axis=0, dtype=float)  # (m, B)
    total = cum[-1]
    lo = np.floor(0.25 * total)
    hi = total - lo
    c = np.clip(cum, lo, hi)
    # sum_i (C_i - C_{i-1}) v_i with C_{-1} = lo, summed by parts.
    kept = c[-1] * v[-1] - lo * v[0] - np.diff(v) @ c[:-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, kept / (hi - lo), np.nan)


def stratified_bootstrap(
    scores: np.ndarray,
    n_seeds: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    task_bootstrap: bool = False,
) -> dict[str, np.ndarray]:
    """``{statistic: (n_boot, points)}`` replicates of each aggregate curve.

    ``scores`` is ``(T, S, G)``, NaN for missing seeds (slots ``s >= n_seeds[t]`` are never
    drawn). A replicate, a multiset of (task, seed) entries, is held as counts reused at every
    grid point.
    """
    scores = np.asarray(scores, dtype=float)
    n_tasks, s_max, n_points = scores.shape
    n_seeds = np.asarray(n_seeds, dtype=int)
    entries, tasks = _draw_counts(n_seeds, s_max, int(n_boot), rng, task_bootstrap)
    flat = scores.reshape(n_tasks * s_max, n_points)
    entries_t = np.ascontiguousarray(entries.T)  # (T*S, B): rows gathered per grid point
    iqm_reps = np.empty((int(n_boot), n_points))
    for g in range(n_points):
        iqm_reps[:, g] = _weighted_iqm(flat[:, g], entries_t)
    # Mean of task means: each drawn entry weighs 1 / (its task's seeds x tasks present).
    per_seed = np.repeat(1.0 / n_seeds, s_max).astype(float)
    covered = np.isfinite(scores[:, 0, :]).astype(float)  # (T, G)
    sums = (entries * per_seed) @ np.where(np.isfinite(flat), flat, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_reps = sums / (tasks @ covered)
    return {"iqm": iqm_reps, "mean": mean_reps}
