"""How result objects show themselves in Jupyter (``_repr_html_``).

The result classes (:mod:`saturate.results`, :mod:`saturate.fit.result`) sit below the reports in
the flow, so they cannot import the renderer: :mod:`saturate.report.notebook` registers it here
when it is imported (``import saturate`` does, through :mod:`saturate.api`). Until then an object
shows its plain ``summary()``. A result's ``plot()`` asks for its figure here the same way.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

__all__ = ["register_html", "html_of", "register_figure", "figure_of"]

_RENDERERS: dict[str, Callable[[Any], str]] = {}
_FIGURES: dict[str, Callable[[Any], Any]] = {}


def register_html(kind: str, render: Callable[[Any], str]) -> None:
    """Make ``render(obj)`` the HTML of the objects of ``kind`` (``"curve"``, ``"fit"``)."""
    _RENDERERS[kind] = render


def html_of(obj: Any, kind: str) -> str:
    """The HTML of ``obj`` by the renderer registered for ``kind``, else its summary as text."""
    render = _RENDERERS.get(kind)
    if render is None:
        return f"<pre>{html.escape(obj.summary())}</pre>"
    return render(obj)


def register_figure(kind: str, draw: Callable[[Any], Any]) -> None:
    """Make ``draw(obj)`` the matplotlib Figure of the objects of ``kind`` (``"suite"``)."""
    _FIGURES[kind] = draw


def figure_of(obj: Any, kind: str) -> Any:
    """The Figure of ``obj`` by the drawer registered for ``kind``."""
    draw = _FIGURES.get(kind)
    if draw is None:
        raise RuntimeError(f"no figure registered for {kind!r}: import saturate.report.notebook")
    return draw(obj)
