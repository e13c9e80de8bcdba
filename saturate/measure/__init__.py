"""Evidence measured on one curve, before any call is made: the recent trend and its
autocorrelation-robust error, the point-to-point noise, collapses (:mod:`.trend`,
:mod:`.collapse`), and the quantities read off a fitted curve: threshold, gain per doubling,
knee, stop point, forecasts, headroom (:mod:`.quantities`). Pure functions of arrays."""
