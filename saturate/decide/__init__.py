"""The call on a curve, in one place: from its evidence to P(the next doubling pays), the call,
the verdict and the reasons (:mod:`.decision`), with the prior its sibling runs give it
(:mod:`.siblings`) and the settings that turn a probability into a call (:mod:`.settings`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from saturate import lazy_exports

# Imported on first use (PEP 562), so the light settings do not pull in scipy.
if TYPE_CHECKING:
    from saturate.decide.decision import Decision, decide
    from saturate.decide.settings import DecisionSettings, GroupPrior

__getattr__, __dir__ = lazy_exports(__name__, globals())

__all__ = ["Decision", "DecisionSettings", "GroupPrior", "decide"]
