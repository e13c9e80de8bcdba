"""The verdict rule table: which rule decides for evidence built to reach it, and that the first
rule that applies is the verdict (the texts themselves are checked in test_analysis.py)."""

from __future__ import annotations

import math

import pytest

from saturate.analysis.verdict import VERDICT_RULES, Evidence, decide_verdict
from saturate.results import Collapse, Estimate, Trend

T = 0.03


def _trend(v: float, lo: float, hi: float) -> Trend:
    return Trend(Estimate(v, lo, hi), 0.01, "test", 50.0, 100.0, 50)


def _ev(gain=None, trend=None, *, collapse=None, p_above=None, scale=1.0, noise_range=0.05):
    return Evidence(
        threshold=T, threshold_text="0.03", gain=gain, trend=trend, collapse=collapse, roi=0.5,
        scale=scale, p_above=p_above, noise=0.01, level_above_start=0.5, noise_range=noise_range,
    )


_COLLAPSE = Collapse(500.0, 50, 0.8, 0.3, 0.5, 0.6)
CASES = {
    "unrecovered_collapse": (_ev(Estimate(0.0, -0.01, 0.01), None, collapse=_COLLAPSE),
                             "regressing"),
    "falling_trend": (_ev(None, _trend(-0.1, -0.15, -0.05)), "regressing"),
    "nothing_to_go_on": (_ev(None, None), "inconclusive"),
    "clears_threshold": (_ev(Estimate(0.2, 0.1, 0.3), _trend(0.2, 0.1, 0.3)), "slowing"),
    "below_threshold": (_ev(Estimate(0.01, 0.0, 0.02), _trend(0.0, -0.01, 0.01)), "saturated"),
    "coin_flip_wider_than_range": (_ev(Estimate(0.03, -1.0, 1.5), None, p_above=0.52),
                                   "inconclusive"),
    "within_noise": (_ev(Estimate(0.03, 0.0, 0.06), _trend(0.03, 0.0, 0.06), scale=0.01),
                     "inconclusive"),
    "one_estimate_leans": (_ev(Estimate(0.03, 0.0, 0.2), None, p_above=0.8), "slowing"),
    "fit_decides_alone": (_ev(Estimate(0.04, 0.02, 0.06), _trend(-0.2, -1.0, 0.6), p_above=0.8),
                          "slowing"),
    "trend_decides_alone": (_ev(Estimate(0.04, -1.0, 1.0), _trend(0.0, -0.01, 0.01),
                                p_above=0.5), "saturated"),
    "both_above": (_ev(Estimate(0.04, 0.0, 0.08), _trend(0.05, 0.01, 0.09), p_above=0.7),
                   "slowing"),
    "not_shown_to_pay": (_ev(Estimate(0.04, 0.0, 0.08), _trend(0.0, -0.04, 0.04), p_above=0.7),
                         "saturated"),
}


def test_every_rule_has_a_case_and_the_table_has_no_other_rule() -> None:
    assert [rule.__name__ for rule in VERDICT_RULES] == list(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_the_rule_built_for_decides_and_no_earlier_one_applies(name: str) -> None:
    ev, verdict = CASES[name]
    applies = [rule.__name__ for rule in VERDICT_RULES if rule(ev) is not None]
    assert applies[0] == name, applies
    assert decide_verdict(ev)[0] == verdict
    assert decide_verdict(ev) == dict((r.__name__, r) for r in VERDICT_RULES)[name](ev)


def test_every_verdict_names_its_reasons() -> None:
    for ev, _ in CASES.values():
        verdict, reasons = decide_verdict(ev)
        assert reasons and all(isinstance(r, str) and r for r in reasons), verdict


def test_a_fit_without_an_interval_and_no_trend_leans_on_its_value() -> None:
    ev = _ev(Estimate(0.05, identified=False), None)
    verdict, reasons = decide_verdict(ev)
    assert verdict in ("scaling", "slowing")
    assert reasons[0].startswith("fitted gain per doubling 0.05 is more likely above")
    assert not math.isfinite(ev.gain.lo)
