"""Size and drawing time of the HTML report of the sample runs (53 curves, 10 diagnostics),
against the report as it was drawn before: one matplotlib PNG per curve and per diagnostic figure
(96 dpi, base64 in the page), measured in the same run on the same analysis.

    .venv/bin/python benchmarks/bench_report.py                  # the whole baseline (minutes)
    .venv/bin/python benchmarks/bench_report.py --baseline 10    # baseline on 10 curves, scaled

The analysis itself (reading and fitting) is done once, before any timing; only drawing is timed.
The machine may be shared: the load average is printed before and after, and the ratio to the
baseline measured in the same run is what counts.
"""

from __future__ import annotations

import argparse
import base64
import os
import time
from pathlib import Path

import saturate
from saturate.report.html import render_html
from saturate.report.plots import curve_figure, diagnostic_figure, figure_bytes

SAMPLES = Path(__file__).resolve().parents[1] / "sample_runs"
LIMIT_BYTES = 1_500_000
LIMIT_SECONDS = 20.0


def _png_baseline(analysis, n: int) -> tuple[float, int]:
    """Seconds and bytes of the PNG figures of the first ``n`` curves and every diagnostic."""
    start = time.perf_counter()
    size = 0
    for curve in analysis.curves[:n]:
        size += len(base64.b64encode(figure_bytes(curve_figure(curve), "png", dpi=96)))
    for d in analysis.diagnostics:
        fig = diagnostic_figure(d, analysis)
        if fig is not None:
            size += len(base64.b64encode(figure_bytes(fig, "png", dpi=96)))
    return time.perf_counter() - start, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=int, default=0,
                        help="curves the PNG baseline draws (default: all), scaled to all")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    start = time.perf_counter()
    analysis = saturate.analyze(SAMPLES)
    n = len(analysis.curves)
    print(f"analysed {n} curves, {len(analysis.diagnostics)} diagnostics in "
          f"{time.perf_counter() - start:.1f} s (not part of the timings below)")

    timings = {}
    for workers in (1, 2):
        start = time.perf_counter()
        page = render_html(analysis, workers=workers)
        timings[workers] = time.perf_counter() - start
    size = len(page.encode("utf-8"))

    k = min(args.baseline or n, n)
    base_s, base_bytes = _png_baseline(analysis, k)
    scale = n / k
    print(f"baseline (matplotlib PNG, 96 dpi, {k} of {n} curves drawn"
          f"{', scaled' if k < n else ''}): {base_s * scale:.1f} s, "
          f"{base_bytes * scale / 1e6:.2f} MB of images")
    for workers, seconds in timings.items():
        print(f"SVG report, {workers} process{'es' if workers > 1 else ''}: {seconds:.1f} s "
              f"({base_s * scale / seconds:.1f}x faster than the baseline)")
    print(f"SVG report size: {size / 1e6:.2f} MB ({base_bytes * scale / size:.1f}x smaller than "
          "the baseline's images alone)")
    best = min(timings.values())
    print(f"targets: size < {LIMIT_BYTES / 1e6:.1f} MB: {'met' if size < LIMIT_BYTES else 'MISSED'}"
          f"; drawing < {LIMIT_SECONDS:.0f} s: {'met' if best < LIMIT_SECONDS else 'MISSED'}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
