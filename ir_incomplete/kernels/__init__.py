"""Layer 2: pure numpy kernels.

A kernel takes the ranked-code matrix of :mod:`ir_incomplete.data` (``[rankings × depth]``) plus per-row
judgment counts, and returns one ``float64`` value per row. Kernels of measures that cut the ranking
receive it already cut; kernels that condense the ranking first (induced/subcollection AP, condensed
graded AP) receive the whole ranking and the cut-off, because they cut after condensing.
No pandas and no ir_measures here. One module per measure family:

* :mod:`ir_incomplete.kernels.ap_family` — AP estimators for incomplete judgments (infAP, …)
* :mod:`ir_incomplete.kernels.graded_ap` — graded AP family (GAP, xGAP, eGAP)
* :mod:`ir_incomplete.kernels.ndcg` — DCG machinery, naive nDCG bounds, bootstrapped nDCG sampler
* :mod:`ir_incomplete.kernels.reference` — trec_eval's AP, nDCG, P, recall, RR, R-prec, counts;
  condensed lists (``-J``)

Shared by them: :mod:`ir_incomplete.kernels.cells` (positions and counts over cells listed row-major,
condensed lists).
"""
