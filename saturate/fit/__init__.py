"""The fitting engine: scaling and saturation laws fitted to one curve, weighed and bootstrapped.

The laws are in :mod:`.laws`, curve preparation in :mod:`.prep`, the solver in :mod:`.solver`,
weights in :mod:`.weights`, estimates in :mod:`.estimates`, the steps in :mod:`.engine`
(:func:`fit_curve`) and what a fit returns in :mod:`.result`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Each export is imported on first use (PEP 562): the engine pulls in scipy.optimize, which the
# command line's start need not pay.
if TYPE_CHECKING:
    from saturate.fit.engine import fit_curve
    from saturate.fit.laws import LAWS, Law
    from saturate.fit.result import CurveFit, LawFit, parse_at
    from saturate.fit.settings import FitSettings

__getattr__, __dir__ = lazy_exports(__name__, globals())


__all__ = ["FitSettings", "fit_curve", "CurveFit", "LawFit", "LAWS", "Law", "parse_at"]
