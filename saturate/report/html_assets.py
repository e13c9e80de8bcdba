"""What the HTML pages share: the Jinja environment their templates render in (autoescape on:
every value from the data is escaped by the template, none by hand), the stylesheet and the page
script (``assets/page.css``, ``assets/page.js``), the Content-Security-Policy that lets only that
script run (by its hash) and fetches nothing, and the badges' colours (white text at a WCAG AA
contrast of 4.5 or more in either theme).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from saturate.report.text import for_terminal

BADGE_COLORS: dict[str, str] = {
    "scaling": "#1a7f37", "slowing": "#9a6700", "saturated": "#cf222e", "regressing": "#8250df",
    "inconclusive": "#656d76"}
SEVERITY_COLORS: dict[str, str] = {"error": "#cf222e", "warning": "#9a6700", "info": "#0969da"}


def _asset(name: str) -> str:
    return (resources.files("saturate.report") / "assets" / name).read_text(encoding="utf-8")


PAGE_CSS = _asset("page.css")
"""The pages' stylesheet (light and dark themes)."""
PAGE_SCRIPT = _asset("page.js")
"""The pages' one script: sorts the table, filters the runs, opens the curve a link points at,
shows the overview's values on hover and draws the runs explorer (zoom, values on hover,
log/linear, step/compute, display smoothing) from the page's data."""

NOTEBOOK_CSS = """
.saturate-nb { font-size: 13px; }
.saturate-nb table { border-collapse: collapse; margin: 6px 0; }
.saturate-nb th, .saturate-nb td { padding: 3px 8px; text-align: left; vertical-align: middle;
  border-bottom: 1px solid rgba(128, 128, 128, 0.3); color: inherit; background: transparent; }
.saturate-nb th { font-weight: 600; }
.saturate-nb td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.saturate-nb .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
  font-weight: 600; font-size: 12px; white-space: nowrap; }
.saturate-nb .muted { opacity: 0.75; font-size: 12px; }
.saturate-nb svg { display: block; max-width: 100%; height: auto; }
.saturate-nb svg.thumb { max-width: none; }
.saturate-nb ul { margin: 4px 0; padding-left: 20px; }
"""
"""Scoped to ``.saturate-nb``; no colours of its own but the badges', so the notebook's theme
(light or dark) sets the text and the background."""


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = ("default-src 'none'; "
       f"script-src 'sha256-{_sha256(PAGE_SCRIPT)}'; "
       "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
"""Only :data:`PAGE_SCRIPT` may run (allowed by its hash); nothing is fetched."""


# ---- templates ----------------------------------------------------------------------------------

def _shown(value: Any) -> Any:
    """Every ``{{ value }}`` of a template before autoescape: text from the data with its control,
    separator and bidi characters shown escaped (:func:`~saturate.report.text.for_terminal`);
    markup the code built (an SVG chart, the script) as it is."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return for_terminal(value)


def _breakable(text: Any) -> Markup:
    """A name from the data that may wrap after its separators (``/``, ``-``, ``_``) rather than
    in the middle of a word: its parts joined by ``<wbr>`` (``Markup.join`` escapes each part)."""
    return Markup("<wbr>").join(re.split(r"(?<=[/_-])", for_terminal(text)))


@functools.cache
def environment() -> Environment:
    """The templates' environment (``saturate/report/templates``): autoescape on, undefined names
    an error, and :func:`_shown` applied to every value."""
    env = Environment(loader=PackageLoader("saturate.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, finalize=_shown, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["breakable"] = _breakable
    env.globals.update(BADGE_COLORS=BADGE_COLORS, SEVERITY_COLORS=SEVERITY_COLORS,
                       page_css=Markup(PAGE_CSS), page_script=Markup(PAGE_SCRIPT), csp=Markup(CSP))
    return env


def render_template(name: str, /, **context: Any) -> str:
    """The template ``name`` rendered with ``context``."""
    return environment().get_template(name).render(**context)


def run_url(curve: Any) -> str | None:
    """The link to the curve's run on its tracker (MLflow, W&B) when the source gave one: an
    ``http(s)`` URL with a host and nothing a browser would read otherwise; else ``None``."""
    url = getattr(curve, "run_url", None)
    if not isinstance(url, str) or not url or any(ch.isspace() or ord(ch) < 32 for ch in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme.lower() in ("http", "https") and parts.hostname else None


# ---- the badges' contrast ------------------------------------------------------------------

def _luminance(color: str) -> float:
    rgb = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
