"""``--log-back``: write the verdicts to the MLflow runs they are about, only when asked.

Per run: the tags ``saturate.<metric>.verdict``, ``.p_pays``, ``.gain_per_doubling``,
``.asymptote`` and ``.knee``, and the artifacts ``saturate/report.html`` and
``saturate/figures/<metric>.png``, always at the same keys and paths so a re-run overwrites.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saturate.api import Analysis
from saturate.errors import InputError, SettingsError, SourceError
from saturate.ingest.mlflow_common import is_mlflow_source, resolve_source, source_uri
from saturate.ingest.redaction import redact
from saturate.results import CurveAnalysis
from saturate.results.codec import Coded
from saturate.tracker.events import _fmt as _num  # "none", or 6 significant digits

TAG_PREFIX = "saturate."
ARTIFACT_DIR = "saturate"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class WritebackResult(Coded):
    """What was written: run ids, number of tags, artifact paths; curves skipped and why."""

    runs: tuple[str, ...]
    tags: int
    artifacts: tuple[str, ...]
    skipped: tuple[str, ...] = ()

    def summary(self) -> str:
        text = (f"wrote {self.tags} tag(s) and {len(self.artifacts)} artifact(s) to "
                f"{len(self.runs)} MLflow run(s)")
        return text + (f"; skipped {len(self.skipped)} curve(s)" if self.skipped else "")



def tags_for(curve: CurveAnalysis) -> dict[str, str]:
    """The tags for one curve (pure); missing numbers are ``none``. A metric name MLflow refuses
    in a tag key gets a shortened key and a ``.metric`` tag with the full name."""
    name = tag_name(curve.metric)
    p = f"{TAG_PREFIX}{name}."
    asym = curve.asymptote.value if curve.asymptote.identified else None
    tags = {
        p + "verdict": curve.verdict,
        p + "p_pays": _num(curve.p_pays),
        p + "gain_per_doubling": _num(curve.gain_per_doubling.value),
        p + "asymptote": _num(asym),
        p + "knee": _num(curve.knee),
    }
    if name != curve.metric:
        tags[p + "metric"] = curve.metric[:_TAG_VALUE_LIMIT]
    return tags


_TAG_KEY_LIMIT = 250  # MLflow's longest tag key
_TAG_VALUE_LIMIT = 8000
_NAME_LIMIT = _TAG_KEY_LIMIT - len(TAG_PREFIX) - len(".gain_per_doubling")
_TAG_CHARS = re.compile(r"[\w./\- ]+")  # what MLflow accepts in a tag key


def tag_name(metric: str) -> str:
    """``metric`` as it can stand in a tag key: itself when MLflow takes it, else its start made
    safe and a stable hash of the whole (``<start>-h<12 hex>``): unique, and the same on a re-run."""
    key = TAG_PREFIX + metric
    if (len(metric) <= _NAME_LIMIT and _TAG_CHARS.fullmatch(metric)
            and posixpath.normpath(key) == key):
        return metric
    digest = hashlib.sha256(metric.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    start = re.sub(r"[^\w\-]+", "_", metric).strip("_")[: _NAME_LIMIT - 16]
    return f"{start}-h{digest}" if start else f"h{digest}"


def figure_name(metric: str) -> str:
    """The artifact file name of a curve's figure: the metric made path-safe."""
    name = _UNSAFE.sub("_", metric).strip("._") or "metric"
    return (name if len(name) <= _NAME_LIMIT else tag_name(metric)) + ".png"


def _tracking_uri(source: str) -> str | None:
    """The URI to write to for a curve's ``source`` label (labels hide credentials: the URI the
    label was made from, when this process classified it)."""
    source = source_uri(source)
    try:
        if not is_mlflow_source(source):
            return None
        return resolve_source(source).target
    except InputError:
        return None


def log_back(
    analysis: Any,
    *,
    tracking_uri: str | None = None,
    report: bool = True,
    figures: bool = True,
    settings: dict[str, Any] | None = None,
) -> WritebackResult:
    """Write tags (and the report and figures) to each analysed MLflow run of ``analysis`` (an
    Analysis or CurveAnalysis objects), at ``tracking_uri`` (default: each curve's own source).
    Curves not from MLflow, or pooling several runs, are skipped with a warning."""
    curves: Iterable[CurveAnalysis] = getattr(analysis, "curves", analysis)
    settings = settings if settings is not None else getattr(analysis, "settings", {}) or {}
    by_run: dict[tuple[str, str], list[CurveAnalysis]] = {}
    skipped: list[str] = []
    uris: dict[str, str | None] = {}
    for c in curves:
        if c.group:
            skipped.append(f"{c.run} / {c.metric}: pools several runs")
            continue
        if c.source not in uris:
            uris[c.source] = tracking_uri or _tracking_uri(c.source)
        uri = uris[c.source]
        if uri is None:
            skipped.append(f"{c.run} / {c.metric}: {c.source} is not an MLflow source")
            continue
        by_run.setdefault((uri, c.run_id), []).append(c)
    if not by_run:
        if skipped:
            raise SettingsError(f"--log-back writes to MLflow runs; none of the analysed curves "
                                f"comes from one ({skipped[0]})")
        return WritebackResult((), 0, ())
    if skipped:
        warnings.warn(f"--log-back skipped {len(skipped)} curve(s): {skipped[0]}", stacklevel=2)
    from mlflow import MlflowClient

    clients: dict[str, Any] = {}
    n_tags = 0
    artifacts: list[str] = []
    for (uri, run_id), run_curves in by_run.items():
        client = clients.setdefault(uri, MlflowClient(tracking_uri=uri))
        try:
            for c in run_curves:
                for key, value in tags_for(c).items():
                    client.set_tag(run_id, key, value)
                    n_tags += 1
            if report or figures:
                artifacts += _log_artifacts(client, run_id, run_curves, settings, report, figures)
        except Exception as exc:  # noqa: BLE001 - client/transport failures become SourceError
            from mlflow.exceptions import MlflowException

            if isinstance(exc, MlflowException) and exc.error_code == "RESOURCE_DOES_NOT_EXIST":
                skipped.append(f"run {run_id}: not in {redact(uri)}")
                continue
            why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise SourceError(f"--log-back: cannot write to run {run_id} at {redact(uri)} "
                              f"({redact(why)[:300]})") from None
    runs = tuple(dict.fromkeys(r for _, r in by_run))
    return WritebackResult(runs, n_tags, tuple(artifacts), tuple(skipped))


def _log_artifacts(client: Any, run_id: str, curves: list[CurveAnalysis], settings: dict[str, Any],
                   report: bool, figures: bool) -> list[str]:  # fmt: skip
    """Render the run's report and figures into a temporary folder and upload it as ``saturate/``."""
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="saturate-logback-") as tmp:
        root = Path(tmp)
        # The report modules load matplotlib (about half a second): only when something is drawn.
        if report:
            from saturate.report.html import render_html

            sub = Analysis(curves=tuple(curves), settings=settings)
            title = f"saturate report: {curves[0].run}"
            (root / "report.html").write_text(render_html(sub, title=title), encoding="utf-8")
            written.append(f"{ARTIFACT_DIR}/report.html")
        if figures:
            from saturate.report.plots import curve_figure, figure_bytes

            level = settings.get("confidence", 0.9) if isinstance(settings, dict) else 0.9
            (root / "figures").mkdir()
            for c in curves:
                name = figure_name(c.metric)
                fig = curve_figure(c, confidence=float(level or 0.9))
                (root / "figures" / name).write_bytes(figure_bytes(fig, "png"))
                written.append(f"{ARTIFACT_DIR}/figures/{name}")
        client.log_artifacts(run_id, str(root), artifact_path=ARTIFACT_DIR)
    return written
