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

from saturate.fit.engine import fit_curve
from saturate.fit.laws import LAWS, Law
from saturate.fit.result import CurveFit, LawFit, parse_at
from saturate.fit.settings import FitSettings

__all__ = ["FitSettings", "fit_curve", "CurveFit", "LawFit", "LAWS", "Law", "parse_at"]
