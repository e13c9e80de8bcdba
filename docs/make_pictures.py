"""Draw the README's pictures from the sample runs with saturate's own renderers.

    .venv/bin/python docs/make_pictures.py      # docs/table.svg, overlay.png and report.png

``table.svg``: ``saturate analyze sample_runs/`` as a 110-column terminal shows it (rich's SVG
export). ``overlay.png``: ``saturate plot --overlay`` of the recipe comparison's held-out pass
rate (two recipes, three seeds each). ``report.png``: the top of the HTML report, as headless
Chromium renders it.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from rich.console import Console

import saturate
from saturate.report.html import render_html
from saturate.report.plots.overlay import overlay_figure, overlay_groups
from saturate.report.terminal import render_table

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "sample_runs"


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = saturate.analyze(SAMPLES, seed=0)
    console = Console(record=True, width=110, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor")
    render_table(analysis, console)
    console.save_svg(str(HERE / "table.svg"), title="saturate analyze sample_runs/")
    overlay()
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if browser is None:
        sys.exit("no headless Chromium found: docs/report.png not drawn")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(render_html(analysis), encoding="utf-8")
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1200,1100",
                        f"--screenshot={HERE / 'report.png'}", page.as_uri()],
                       check=True, capture_output=True, timeout=300)
    print(f"wrote {HERE / 'table.svg'} and {HERE / 'report.png'}")


def overlay() -> None:
    """docs/overlay.png: the runs of the recipe comparison on one chart."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = saturate.analyze(SAMPLES / "08_recipe_comparison.csv",
                                    metric="eval/heldout/pass_rate", seed=0)
    (curves,) = overlay_groups(analysis.curves).values()
    overlay_figure(curves).savefig(HERE / "overlay.png", dpi=110)


if __name__ == "__main__":
    main()
