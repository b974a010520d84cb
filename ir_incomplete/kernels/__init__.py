"""Layer 2: pure numpy kernels.

A kernel takes the ranked-code matrix of :mod:`ir_incomplete.data` (``[rankings × depth]``, already cut
at the measure's cut-off) plus per-row judgment counts, and returns one ``float64`` value per row.
No pandas and no ir_measures here. One module per measure family:

* :mod:`ir_incomplete.kernels.ap_family` — AP estimators for incomplete judgments (infAP, …)
"""
