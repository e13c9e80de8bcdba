"""What the HTML report and the Jupyter fragments share: the stylesheets (light and dark themes),
the badges (white text at a WCAG AA contrast of 4.5 or more in either theme), the script that
sorts tables and filters the runs of the overlay charts, and the Content-Security-Policy that
lets only that script run (by its hash) and fetches nothing.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from saturate.report.text import for_html

BADGE_COLORS: dict[str, str] = {
    "scaling": "#1a7f37", "slowing": "#9a6700", "saturated": "#cf222e", "regressing": "#8250df",
    "inconclusive": "#656d76"}
SEVERITY_COLORS: dict[str, str] = {"error": "#cf222e", "warning": "#9a6700", "info": "#0969da"}

_THEME = """
  --fg: #1f2328; --muted: #59636e; --line: #d0d7de; --head: #f6f8fa; --bg: #ffffff;
  --link: #0969da;
"""
_DARK = """
  --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --head: #151b23; --bg: #0d1117;
  --link: #4493f8;
"""

PAGE_CSS = f"""
:root {{ color-scheme: light dark; {_THEME} }}
@media (prefers-color-scheme: dark) {{ :root {{ {_DARK} }} }}
body {{ font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0 auto; padding: 24px 32px 48px;
       max-width: 1180px; }}
a {{ color: var(--link); }}
h1 {{ font-size: 24px; margin: 0 0 4px; }}
h2 {{ font-size: 17px; margin: 0 0 8px; overflow-wrap: anywhere; }}
.headline {{ font-size: 17px; font-weight: 600; margin: 6px 0 4px; }}
.lead, .muted {{ color: var(--muted); }}
.muted {{ font-size: 12px; }}
table {{ border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }}
th, td {{ padding: 4px 8px; border-bottom: 1px solid var(--line); text-align: left;
         vertical-align: middle; }}
th {{ background: var(--head); position: sticky; top: 0; z-index: 1; }}
td.n, th.n {{ text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }}
td.name {{ max-width: 280px; overflow-wrap: break-word; }}
td.why {{ min-width: 180px; }}
table.sortable th {{ cursor: pointer; user-select: none; white-space: nowrap; }}
table.sortable th::after {{ content: " ↕"; color: var(--muted); font-size: 11px; }}
table.sortable th.nosort {{ cursor: default; }} table.sortable th.nosort::after {{ content: ""; }}
table.sortable th[aria-sort=ascending]::after {{ content: " ↑"; }}
table.sortable th[aria-sort=descending]::after {{ content: " ↓"; }}
tbody tr:hover td {{ background: var(--head); }}
.badge {{ display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
         font-weight: 600; font-size: 12px; white-space: nowrap; }}
.curve, .diag {{ border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px;
                margin: 18px 0; }}
svg.chart {{ display: block; max-width: 100%; height: auto; margin: 4px 0; }}
svg.overlay {{ display: block; max-width: 100%; height: auto; margin: 4px 0; }}
.ov-legend label {{ display: inline-block; margin: 0 12px 2px 0; font-size: 12px; }}
.ov-swatch {{ display: inline-block; width: 18px; height: 3px; vertical-align: middle; }}
svg.spark {{ display: block; }}
.facts {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr));
         gap: 4px 18px; margin: 6px 0 8px; font-size: 13px; }}
.facts b {{ color: var(--muted); font-weight: 600; }}
ul.reasons {{ margin: 4px 0 8px; padding-left: 20px; }}
details {{ margin: 8px 0; }} summary {{ cursor: pointer; color: var(--link); }}
code {{ background: var(--head); padding: 0 4px; border-radius: 4px; }}
td.msg {{ max-width: 560px; }}
"""

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

SORT_SCRIPT = """
(function () {
  function key(cell, numeric) {
    var v = cell.getAttribute('data-v');
    if (numeric) { var x = parseFloat(v); return isNaN(x) ? -Infinity : x; }
    return (v === null ? cell.textContent : v).toLowerCase();
  }
  function sort(table, th, i) {
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    var numeric = th.classList.contains('n');
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[i], numeric), y = key(b.cells[i], numeric);
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (th.classList.contains('nosort')) { return; }
      th.tabIndex = 0;
      th.addEventListener('click', function () { sort(table, th, i); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(table, th, i); }
      });
    });
  });
  document.documentElement.setAttribute('data-sortable', 'on');
})();
(function () {
  var verdict = document.getElementById('ov-verdict'), run = document.getElementById('ov-run');
  if (!verdict || !run) { return; }
  function shown(name, v) {
    var want = verdict.value, text = run.value.toLowerCase();
    return (!want || v === want) && (!text || name.toLowerCase().indexOf(text) >= 0);
  }
  function apply() {
    Array.prototype.forEach.call(document.querySelectorAll('.ov-group'), function (group) {
      Array.prototype.forEach.call(group.querySelectorAll('.ov-legend label'), function (l) {
        var ok = shown(l.getAttribute('data-run'), l.getAttribute('data-verdict'));
        var g = group.querySelector('g.ov-run[data-i="' + l.getAttribute('data-i') + '"]');
        l.style.display = ok ? '' : 'none';
        if (g) { g.style.display = ok && l.querySelector('input').checked ? '' : 'none'; }
      });
    });
    var table = document.getElementById('curves');
    if (!table) { return; }
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      r.style.display = shown(r.cells[0].textContent, r.cells[2].textContent.trim()) ? '' : 'none';
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll('.ov-legend input'), function (box) {
    box.addEventListener('change', apply);
  });
  verdict.addEventListener('change', apply);
  run.addEventListener('input', apply);
  document.documentElement.setAttribute('data-overlay', 'on');
})();
"""
"""Sorts a ``table.sortable`` by the clicked column (again: the other way; a cell's ``data-v`` is
its key, numeric under a header of class ``n``); in the charts of runs together, a legend
checkbox shows or hides a run, and ``#ov-verdict`` and ``#ov-run`` filter runs and table rows."""


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


CSP = ("default-src 'none'; "
       f"script-src 'sha256-{_sha256(SORT_SCRIPT)}'; "
       "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")
"""Only :data:`SORT_SCRIPT` may run (allowed by its hash); nothing is fetched."""


def esc(x: Any) -> str:
    """Text from the data, safe in HTML text and in attribute values."""
    return for_html(x)  # control and bidi characters escaped, then HTML's


def breakable(text: Any) -> str:
    """A name from the data, escaped, that may wrap after its separators (``/``, ``-``, ``_``)
    rather than in the middle of a word."""
    out = esc(text)
    for sep in ("/", "-", "_"):
        out = out.replace(sep, f"{sep}<wbr>")
    return out


def badge(verdict: str, colors: dict[str, str] = BADGE_COLORS) -> str:
    color = colors.get(verdict, "#656d76")
    return f'<span class="badge" style="background:{color}">{esc(verdict)}</span>'


def severity_badge(severity: str) -> str:
    return badge(severity, SEVERITY_COLORS)


def _luminance(color: str) -> float:
    rgb = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
