"""``analyze_suite``: is each agent, as a whole, still scaling over a suite of tasks?

Per group, the normalised (task, seed) scores on one grid are aggregated (IQM and mean) with a
stratified bootstrap, and the aggregate curve gets the full per-curve analysis; the bootstrap
spread of its last-doubling gain enters as ``doubling_se`` (as pooled seeds' spread does), so the
gain's interval carries the task and seed spread. Each task's pooled seeds get their own verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from saturate.analysis import AnalysisSettings
from saturate.errors import SaturateError, SettingsError
from saturate.suites.aggregate import DEFAULT_N_BOOT, STATISTICS
from saturate.suites.compare import compare_groups
from saturate.suites.frame import SuiteRows, resolve_key, suite_rows
from saturate.suites.grid import common_grid, run_points, score_tensor, task_span
from saturate.suites.group import analyze_group
from saturate.suites.normalize import (
    Normalization,
    NormalizeSpec,
    apply_bounds,
    read_baselines,
    task_bounds,
)
from saturate.suites.result import SuiteAnalysis, SuiteGroup
from saturate.table.run_table import run_facts
from saturate.table.table import Table
from saturate.vocabulary.names import metric_direction

if TYPE_CHECKING:
    from saturate.settings import Settings


def suite_from_settings(
    judged: Table, settings: Settings, progress: Callable[[int, int], None] | None
) -> SuiteAnalysis:
    """The suite analysis of the judged curves as ``settings`` ask for it
    (:meth:`Settings.suite_options`), the keys and the baselines file checked first, with
    errors named as the caller spells the options (``--suite`` on the command line)."""
    options = settings.suite_options() or {}
    keys = pd.DataFrame(columns=[*judged.points.columns,
                                 *run_facts(judged.points, judged.runs).columns])
    resolve_key(keys, options["suite"], settings.option("suite"))
    if options["group_by"] is not None:
        resolve_key(keys, options["group_by"], settings.option("group_by"))
    spec = options["normalize"]
    if isinstance(spec, str) and spec not in ("min-max", "none") and not spec.startswith("random="):
        try:
            read_baselines(spec)
        except SaturateError as exc:
            raise type(exc)(f"{settings.option('normalize')}: {exc}") from None
    return analyze_suite(judged, settings=AnalysisSettings.from_settings(settings),
                         seed=settings.seed, progress=progress, **options)


def _check_options(statistic: str, n_boot: int, min_coverage: float, settings: object) -> None:
    if statistic not in STATISTICS:
        raise SettingsError(
            f"statistic: expected one of {', '.join(STATISTICS)}, got {statistic!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 100:
        raise SettingsError(f"n_boot: expected an integer >= 100 (bootstrap replicates), "
                            f"got {n_boot!r}")
    if not (isinstance(min_coverage, (int, float)) and 0 < min_coverage <= 1):
        raise SettingsError(f"min_coverage: expected a share of tasks in (0, 1], "
                            f"got {min_coverage!r}")
    if not isinstance(settings, AnalysisSettings):
        raise SettingsError(f"settings: expected AnalysisSettings, got {type(settings).__name__}")


def analyze_suite(
    table: Table | pd.DataFrame,
    *,
    suite: str,
    group_by: str | None = None,
    metric: str | None = None,
    normalize: NormalizeSpec = None,
    settings: AnalysisSettings | None = None,
    statistic: str = "iqm",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = None,
    task_bootstrap: bool = False,
    min_coverage: float = 1.0,
    per_task: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> SuiteAnalysis:
    """Analyse a suite: one aggregate verdict per group, per-task verdicts, group comparisons.

    ``table``: what ``saturate.load`` gives (or a tidy DataFrame, on its step). ``suite`` and
    ``group_by``: the column, parameter or tag naming the task (``"metric"``: tasks are metrics of
    the same runs) and the agent (None: one group). ``normalize``: see :func:`parse_normalize`.
    ``settings``' per-metric thresholds do not apply to normalised scores (``min_gain`` does).
    ``statistic``: the aggregate analysed (``"iqm"`` or ``"mean"``; both are reported).
    ``task_bootstrap`` resamples tasks as well as seeds; ``min_coverage`` is the share of a
    group's tasks a grid point needs to be analysed (1.0: the mix of tasks never changes);
    ``per_task`` also fits each task's pooled seeds; ``progress(done, total)`` after each curve.
    """
    settings = AnalysisSettings() if settings is None else settings
    _check_options(statistic, n_boot, min_coverage, settings)
    seed = settings.seed if seed is None else int(seed)
    sr = suite_rows(table, suite, group_by, metric)
    rows, norm = _normalised(sr, normalize, settings)
    points = run_points(rows)
    grid, same = common_grid(points, task_span(rows, points))
    notes = list(sr.notes)
    n_nonpos = int((rows["compute"] <= 0).sum())
    if n_nonpos:
        notes.append(f"{n_nonpos} point(s) at compute <= 0 left out of the aggregate (its grid "
                     "is on log compute)")
    if not same:
        notes.append(f"runs logged at different computes: interpolated on log compute onto a "
                     f"shared grid of {grid.size} points")
    rng = np.random.default_rng(seed)
    groups_data = {g: d for g, d in rows.groupby("_group", sort=True)}
    total = len(groups_data) + (sum(d["_task"].nunique() for d in groups_data.values())
                                if per_task else 0)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    compute_name = table.axis.name if isinstance(table, Table) else "step"
    groups = []
    for name, g_rows in groups_data.items():
        tensor = score_tensor(g_rows, points, grid, str(name))
        groups.append(analyze_group(
            str(name), g_rows, tensor, grid, sr, settings, statistic=statistic, n_boot=n_boot,
            rng=rng, task_bootstrap=task_bootstrap, min_coverage=min_coverage,
            per_task=per_task, compute_name=compute_name, tick=tick))
    notes += _coverage_notes(groups)
    return SuiteAnalysis(
        suite=suite, suite_column=sr.task_col, metric=sr.metric, group_by=group_by,
        statistic=statistic, normalization=norm, confidence=settings.confidence,
        n_boot=int(n_boot), seed=seed, task_bootstrap=bool(task_bootstrap),
        min_coverage=float(min_coverage), compute_name=compute_name, groups=tuple(groups),
        comparisons=compare_groups(groups, settings.confidence), notes=tuple(notes),
    )


def _normalised(
    sr: SuiteRows, normalize: NormalizeSpec, settings: AnalysisSettings
) -> tuple[pd.DataFrame, Normalization]:
    """The rows with ``_score`` (normalised, larger is better) and the normalisation used."""
    rows = sr.rows
    per_task = rows.drop_duplicates("_task").set_index("_task")["metric"].astype(str)
    directions = {t: metric_direction(m, settings.lower_is_better, settings.higher_is_better)
                  for t, m in per_task.items()}
    norm = task_bounds(rows[["_task", "value"]], "_task", normalize, directions)
    return rows.assign(_score=apply_bounds(rows["value"], rows["_task"], norm)), norm


def _coverage_notes(groups: list[SuiteGroup]) -> list[str]:
    every = set().union(*(set(g.tasks) for g in groups)) if groups else set()
    out = []
    for g in groups:
        missing = sorted(every - set(g.tasks))
        if missing:
            out.append(f"{g.group} has no runs on {', '.join(missing)}: its aggregate is over "
                       f"{len(g.tasks)} of {len(every)} tasks")
    return out
