"""Reports over an analysis: terminal table, JSON, Markdown, HTML, and plots; :func:`render` picks
a format by name and returns the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate.errors import SettingsError
from saturate.settings.fields import REPORT_FORMATS as FORMATS

if TYPE_CHECKING:
    from saturate.report.rows import Analysed

__all__ = ["FORMATS", "render"]


def render(analysis: Analysed, fmt: str = "table", *, width: int = 120) -> str:
    """The report in format ``fmt`` (one of :data:`FORMATS`) as text; ``table`` without colours
    at ``width`` columns (the CLI prints it live instead)."""
    if fmt == "json":
        from saturate.report.schema import render_json

        return render_json(analysis)
    if fmt == "markdown":
        from saturate.report.markdown import render_markdown

        return render_markdown(analysis)
    if fmt == "html":
        from saturate.report.html import render_html

        return render_html(analysis)
    if fmt == "table":
        import io

        from rich.console import Console

        from saturate.report.terminal import render_table

        text = io.StringIO()
        console = Console(file=text, width=width, color_system=None, soft_wrap=False)
        render_table(analysis, console, reasons=True)
        return text.getvalue()
    raise SettingsError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
