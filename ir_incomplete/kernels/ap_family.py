"""AP-family estimators for incomplete judgments, vectorized over all rankings at once.

Every "above rank k" count these estimators need is an exclusive cumulative sum along the depth axis of
the code matrix (see :mod:`ir_incomplete.data` for the codes). Values are computed only at the cells of
judged relevant documents and summed per row with ``np.bincount``.
"""
from __future__ import annotations

import numpy as np

from ir_incomplete.data import POOLED_UNJUDGED

__all__ = ["inferred_ap"]


def _divide_by_relevant(sums: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """``sums / R`` with the trec_eval convention R = 0 → 0."""
    out = np.zeros(len(sums), dtype=np.float64)
    has = n_relevant > 0
    out[has] = sums[has] / n_relevant[has]
    return out


def inferred_ap(codes: np.ndarray, n_relevant: np.ndarray, rel_level: int = 1, c: float = 2.0,
                eps: float = 1e-5, uniform: bool = False) -> np.ndarray:
    """infAP per row (Yilmaz & Aslam 2006; journal version §4.5).

    For the judged relevant document at rank k (1-based), with r / n the judged relevant / nonrelevant
    documents above k and d the pooled documents above k (judged or pooled-but-unjudged; ``uniform``
    sets d = k − 1)::

        E[P@k] = 1/k + (d/k) · (r + eps) / (r + n + c·eps),   E[P@1] = 1
        infAP  = Σ E[P@k] / R                                  (R = 0 → 0)

    ``codes`` is ``[rows × depth]``; ``n_relevant`` holds R per row.
    """
    rows = codes.shape[0]
    if codes.size == 0:
        return np.zeros(rows, dtype=np.float64)
    relevant = codes >= rel_level
    row, col = np.nonzero(relevant)
    if len(row) == 0:
        return np.zeros(rows, dtype=np.float64)
    judged_above = (np.cumsum(codes >= 0, axis=1, dtype=np.int32)[row, col] - 1).astype(np.float64)
    rel_above = (np.cumsum(relevant, axis=1, dtype=np.int32)[row, col] - 1).astype(np.float64)
    nonrel_above = judged_above - rel_above
    k = col.astype(np.float64) + 1.0
    if uniform:
        pooled_above = k - 1.0
    else:
        unjudged_above = np.cumsum(codes == POOLED_UNJUDGED, axis=1, dtype=np.int32)[row, col]
        pooled_above = judged_above + unjudged_above
    precision = 1.0 / k + (pooled_above / k) * ((rel_above + eps) / (rel_above + nonrel_above + c * eps))
    precision[col == 0] = 1.0
    sums = np.bincount(row, weights=precision, minlength=rows)
    return _divide_by_relevant(sums, n_relevant)
