"""The fitting engine: scaling and saturation laws fitted to one curve, weighed and bootstrapped.

* :mod:`.laws`: the laws (formulas, Jacobians, bounds, starting grids, asymptotes);
* :mod:`.prep`: cleaning, normalisation, binning, the residual noise model;
* :mod:`.solver`: the batched robust Levenberg-Marquardt solver;
* :mod:`.weights`: AICc, rolling-origin scores and pseudo-BMA+ weights;
* :mod:`.estimates`: parameter estimates and the averaged asymptote in the user's units;
* :mod:`.engine`: :func:`fit_curve`, which runs the steps;
* :mod:`.result`: :class:`CurveFit` and :class:`LawFit`, what a fit returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Loaded on first use (PEP 562): the laws and settings are light, the
# engine pulls in scipy.optimize and scipy.signal, which the command line's start need not pay.
if TYPE_CHECKING:  # the exports, each imported on first use (saturate.lazy_exports)
    from saturate.fit.engine import fit_curve
    from saturate.fit.laws import LAWS, Law
    from saturate.fit.result import CurveFit, LawFit, parse_at
    from saturate.fit.settings import FitSettings

__getattr__, __dir__ = lazy_exports(__name__, globals())


__all__ = ["FitSettings", "fit_curve", "CurveFit", "LawFit", "LAWS", "Law", "parse_at"]
