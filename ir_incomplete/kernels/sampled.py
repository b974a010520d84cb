"""Kernels of the estimators for stratified samples of judgments (xinfAP, infNDCG, inferred P@k and
interpolated precision; Yilmaz, Kanoulas & Aslam, SIGIR 2008, as computed by NIST's ``sample_eval``),
and of the bounds for unjudged documents (RBP residual, naive upper P@k, upper AP@k).

Pure numpy: every function takes the ranked code matrix (``[rows × depth]``, codes of
:mod:`ir_incomplete.data`), the stratum matrix of the same shape (a stratum code ≥ 0 for a document of
the sampled universe, −1 for an unpooled document or padding) and per-row arrays, and returns per-row
values for all runs × topics at once. Strata are few per topic (two in TREC PM); counts per stratum are
``[rows × depth × strata]`` cumulative sums.
"""

from __future__ import annotations

import numpy as np

from ir_incomplete.data import PAD, POOLED_UNJUDGED, UNPOOLED

__all__ = [
    "EPS_RELEVANT",
    "EPS_SAMPLED",
    "RECALL_LEVELS",
    "stratum_counts",
    "estimated_relevant",
    "xinf_ap",
    "inferred_precision",
    "expected_relevant_matrix",
    "inf_dcg",
    "ideal_dcg",
    "interpolated_precision",
    "rbp_residual",
    "precision_upper",
    "ap_upper",
]

#: smoothing of the estimated precision in a stratum, (ρ + ε₁)/(s + ε₃), as in ``sample_eval``
EPS_RELEVANT = 1e-5
EPS_SAMPLED = 3e-5
#: the 11 recall levels of interpolated precision (0, 0.1, …, 1)
RECALL_LEVELS = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])


def _cumulative(mask: np.ndarray, strata: np.ndarray, n_strata: int) -> np.ndarray:
    """``[rows × depth × strata]`` counts of ``mask`` documents per stratum at ranks ≤ each rank."""
    onehot = np.zeros(mask.shape + (n_strata,), dtype=np.int32)
    rows, cols = np.nonzero(mask)
    onehot[rows, cols, strata[rows, cols]] = 1
    return np.cumsum(onehot, axis=1, dtype=np.int32)


def _masks(codes: np.ndarray, strata: np.ndarray, rel_level: int):
    pooled = strata >= 0
    sampled = pooled & (codes >= 0)
    relevant = sampled & (codes >= rel_level)
    return pooled, sampled, relevant


def stratum_counts(codes, strata, n_strata: int, rel_level: int = 1):
    """Inclusive cumulative ``(d, s, ρ)``: documents of the universe, sampled (judged) documents and
    judged relevant documents (grade ≥ ``rel_level``) per stratum at ranks ≤ each rank."""
    pooled, sampled, relevant = _masks(codes, strata, rel_level)
    return (
        _cumulative(pooled, strata, n_strata),
        _cumulative(sampled, strata, n_strata),
        _cumulative(relevant, strata, n_strata),
    )


def estimated_relevant(pool_size, sampled_size, relevant_size) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum ``r_c · N_c / n_c`` (0 where ``n_c = 0``) and their sum R̂ (``[rows × strata]``, ``[rows]``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per_stratum = np.where(sampled_size > 0, relevant_size * pool_size / sampled_size, 0.0)
    return per_stratum, per_stratum.sum(axis=1)


def _expected(d, s, rho) -> np.ndarray:
    """Σ_c d_c (ρ_c + ε₁)/(s_c + ε₃) over the last axis."""
    return (d * (rho + EPS_RELEVANT) / (s + EPS_SAMPLED)).sum(axis=-1)


def xinf_ap(codes, strata, n_strata, pool_size, sampled_size, relevant_size, rel_level: int = 1) -> np.ndarray:
    """xinfAP per row: ``Σ_c (R̂_c / R̂) · SAP_c / r_c`` over strata with ``n_c > 0``, ``r_c > 0``, R̂ > 0.

    At a judged relevant document at rank k in stratum c, with the counts of the documents above k,
    ``prec_k = 1/k + (D/k) · Σ_{c': d_c' > 0} (d_c'/D) · (ρ_c' + ε₁)/(s_c' + ε₃)`` is added to ``SAP_c``.
    """
    n_rows = codes.shape[0]
    d, s, rho = stratum_counts(codes, strata, n_strata, rel_level)
    _, _, relevant = _masks(codes, strata, rel_level)
    rows, cols = np.nonzero(relevant)
    own = np.zeros((len(rows), n_strata), dtype=np.int32)
    own[np.arange(len(rows)), strata[rows, cols]] = 1
    d_above = (d[rows, cols] - own).astype(np.float64)
    s_above = s[rows, cols] - own
    rho_above = rho[rows, cols] - own
    depth = d_above.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = np.where(depth[:, None] > 0, d_above / depth[:, None], 0.0)
    above = np.where(prob != 0, prob * (rho_above + EPS_RELEVANT) / (s_above + EPS_SAMPLED), 0.0).sum(axis=1)
    rank = cols + 1.0
    prec = 1.0 / rank + (depth / rank) * above
    sap = np.bincount(rows * n_strata + strata[rows, cols], weights=prec, minlength=n_rows * n_strata)
    sap = sap.reshape(n_rows, n_strata)
    per_stratum, r_hat = estimated_relevant(pool_size, sampled_size, relevant_size)
    use = (sampled_size > 0) & (r_hat[:, None] > 0) & (relevant_size > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(use, (per_stratum / r_hat[:, None]) * (sap / relevant_size), 0.0)
    return terms.sum(axis=1)


def _last_rank(codes: np.ndarray, cutoff: int | None) -> np.ndarray:
    """Number of documents per row (within the cut)."""
    length = (codes != PAD).sum(axis=1)
    return length if cutoff is None else np.minimum(length, cutoff)


def expected_relevant_matrix(codes, strata, n_strata, rel_level: int = 1) -> np.ndarray:
    """``[rows × depth]`` estimated number of relevant documents at ranks ≤ k,
    ``E_k = Σ_c d_c (ρ_c + ε₁)/(s_c + ε₃)`` (meaningless past the end of a row)."""
    d, s, rho = stratum_counts(codes, strata, n_strata, rel_level)
    return _expected(d, s, rho)


def inferred_precision(codes, strata, n_strata, k: int, rel_level: int = 1) -> np.ndarray:
    """iP@k per row: ``E_{min(k, L)} / k`` (L = documents in the row; 0 for an empty row)."""
    codes, strata = codes[:, :k], strata[:, :k]
    pooled, sampled, relevant = _masks(codes, strata, rel_level)
    n_rows = codes.shape[0]
    rows = np.repeat(np.arange(n_rows), codes.shape[1]).reshape(codes.shape)

    def totals(mask):
        flat = rows[mask] * n_strata + strata[mask]
        return np.bincount(flat, minlength=n_rows * n_strata).reshape(n_rows, n_strata)

    return _expected(totals(pooled), totals(sampled), totals(relevant)) / k


def inf_dcg(codes, strata, n_strata, rel_level: int = 1) -> np.ndarray:
    """Estimated DCG per row, ``D · Σ_{c: s_c > 0} (d_c/D) · G_c / s_c`` with the counts of the whole
    (cut) row and ``G_c`` the sum of ``g / log2(k+1)`` over judged relevant documents of stratum c."""
    pooled, sampled, relevant = _masks(codes, strata, rel_level)
    n_rows = codes.shape[0]
    rows = np.repeat(np.arange(n_rows), codes.shape[1]).reshape(codes.shape)
    size = n_rows * n_strata

    def totals(mask, weights=None):
        flat = rows[mask] * n_strata + strata[mask]
        return np.bincount(flat, weights=weights, minlength=size).reshape(n_rows, n_strata)

    r, k = np.nonzero(relevant)
    discount = np.log(k + 2.0) / np.log(2.0)
    gains = totals(relevant, codes[r, k] / discount)
    d = totals(pooled).astype(np.float64)
    s = totals(sampled)
    depth = d.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = np.where(depth[:, None] > 0, d / depth[:, None], 0.0)
        dcg = np.where((depth[:, None] > 0) & (s > 0), prob * gains / s, 0.0).sum(axis=1)
    return depth * dcg


def ideal_dcg(estimated_per_grade, grade_values, cutoff: int | None, quirk: bool = True) -> np.ndarray:
    """Ideal DCG per topic from the estimated number of documents per grade.

    ``estimated_per_grade`` is ``[topics × grades]`` (column j for grade ``grade_values[j]``, the columns
    in the order the ideal ranking is filled); each count is rounded half up. The grades fill ranks one
    after another from rank 1 with gain g and discount log2(rank+1).

    ``quirk=True`` is ``sample_eval``: within one grade the filling stops at the rank = ``cutoff``, but
    the next grade starts after all of the previous grade's rounded count, so every further grade adds
    one term past the cut-off. ``quirk=False`` is the ideal ranking cut at ``cutoff``.
    """
    counts = np.floor(np.asarray(estimated_per_grade, dtype=np.float64) + 0.5).astype(np.int64)
    if counts.size == 0:
        return np.zeros(counts.shape[0])
    start = np.cumsum(counts, axis=1) - counts
    if cutoff is None:
        terms = counts
    elif quirk:
        terms = np.where(counts > 0, np.minimum(counts, np.maximum(1, cutoff - start)), 0)
    else:
        terms = np.clip(np.minimum(counts, cutoff - start), 0, None)
    end = start + terms
    top = int(end.max()) if end.size else 0
    ranks = np.arange(1, top + 1, dtype=np.float64)
    discounted = np.concatenate(([0.0], np.cumsum(1.0 / (np.log(ranks + 1.0) / np.log(2.0)))))
    gains = np.asarray(grade_values, dtype=np.float64)[None, :]
    return (gains * (discounted[end] - discounted[start])).sum(axis=1)


def interpolated_precision(expected, lengths, r_hat) -> np.ndarray:
    """``[rows × 11]`` interpolated precision of the estimated curve at recall 0, 0.1, …, 1, as
    ``sample_eval`` computes it.

    With ``E_k`` the estimated relevant documents at ranks ≤ k and L the row length, the recall levels
    are the counts ``level · R̂``. Levels above ``E_L`` get 0. The others are assigned walking the ranks
    from L down to 1 while keeping ``int_prec = max_{k' ≥ k} E_k'/k'``: at rank k the highest level not
    yet assigned gets ``int_prec`` when its count exceeds ``E_k`` (at most one level per rank); levels
    left at the end get the final ``int_prec``.
    """
    n_rows = expected.shape[0]
    cuts = RECALL_LEVELS[None, :] * r_hat[:, None]
    out = np.zeros((n_rows, len(RECALL_LEVELS)))
    safe_last = np.maximum(lengths - 1, 0)
    e_last = np.where(lengths > 0, expected[np.arange(n_rows), safe_last], 0.0) if expected.size else np.zeros(n_rows)
    pointer = (cuts <= e_last[:, None]).sum(axis=1) - 1
    pointer = np.where(lengths > 0, pointer, -1)
    best = np.zeros(n_rows)
    rows = np.arange(n_rows)
    for col in range(expected.shape[1] - 1, -1, -1):  # a loop over ranks, vectorized over all rows
        live = lengths > col
        prec = np.where(live, expected[:, col] / (col + 1.0), 0.0)
        best = np.maximum(best, prec)
        hit = live & (pointer >= 0)
        hit[hit] = cuts[rows[hit], pointer[hit]] > expected[hit, col]
        out[rows[hit], pointer[hit]] = best[hit]
        pointer = pointer - hit
    rest = np.arange(len(RECALL_LEVELS))[None, :] <= pointer[:, None]
    return np.where(rest, best[:, None], out)


def _unjudged(codes: np.ndarray) -> np.ndarray:
    return (codes == UNPOOLED) | (codes == POOLED_UNJUDGED)


def rbp_residual(codes, p: float, rel_level: int = 1, max_grade: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """RBP and its residual per row (Moffat & Zobel 2008), over the (cut) code matrix.

    ``value = (1−p) Σ_i p^{i−1} gain_i`` (unjudged = nonrelevant), with ``gain_i = [g_i ≥ rel]``
    (``max_grade=None``, binary) or ``gain_i = g_i / max_grade`` for ``g_i ≥ rel`` and 0 below (graded;
    0 everywhere when ``max_grade ≤ 0``);
    ``residual = (1−p) Σ_{i unjudged} p^{i−1} + p^L``: the weight of the unjudged ranks (gain at most 1)
    and of every rank after the L documents of the row (unretrieved, or cut off).
    """
    depth = codes.shape[1]
    weights = (1.0 - p) * p ** np.arange(depth, dtype=np.float64)
    if max_grade is None:
        gains = np.where(codes >= rel_level, 1.0, 0.0)
    elif max_grade > 0:
        gains = np.where(codes >= rel_level, codes / float(max_grade), 0.0)
    else:
        gains = np.zeros(codes.shape)
    value = (gains * weights).sum(axis=1)
    unjudged = (np.where(_unjudged(codes), 1.0, 0.0) * weights).sum(axis=1)
    lengths = (codes != PAD).sum(axis=1)
    return value, unjudged + p ** lengths.astype(np.float64)


def precision_upper(codes, k: int, rel_level: int = 1) -> np.ndarray:
    """Naive upper bound of P@k: judged relevant or unjudged documents in the top k, divided by k."""
    top = codes[:, :k]
    return ((top >= rel_level) | _unjudged(top)).sum(axis=1) / k


def ap_upper(codes, n_relevant, rel_level: int = 1) -> np.ndarray:
    """The largest AP@k (the row is already cut at k) over all relevance values of the unjudged documents.

    Unjudged documents outside the row count as nonrelevant (a larger R only lowers AP). Marking the
    first t unjudged documents of the row relevant gives
    ``AP_t = [Σ_{i ∈ J ∪ U_t} (c_J(i) + min(t, c_U(i)))/i] / (R + t)`` (J = judged relevant ranks, U_t =
    the ranks of the first t unjudged documents, c_J/c_U the counts of each at ranks ≤ i, R the judged
    relevant documents of the topic); moving relevance to a higher unjudged rank never lowers AP, so the
    maximum over all subsets is ``max_t AP_t``, evaluated for every t at once with prefix sums.
    """
    rank = np.arange(1, codes.shape[1] + 1, dtype=np.float64)[None, :]
    judged_rel = codes >= rel_level
    unjudged = _unjudged(codes)
    c_j = np.cumsum(judged_rel, axis=1)
    c_u = np.cumsum(unjudged, axis=1)
    base = np.where(judged_rel, c_j / rank, 0.0).sum(axis=1)
    part_a = np.cumsum(np.where(judged_rel, c_u / rank, 0.0), axis=1)
    inv_j = np.cumsum(np.where(judged_rel, 1.0 / rank, 0.0), axis=1)
    part_b = inv_j[:, -1:] - inv_j if codes.shape[1] else inv_j
    part_c = np.cumsum(np.where(unjudged, (c_j + c_u) / rank, 0.0), axis=1)
    n_relevant = np.asarray(n_relevant, dtype=np.float64)
    numerator = base[:, None] + part_a + c_u * part_b + part_c
    with np.errstate(divide="ignore", invalid="ignore"):
        at_unjudged = np.where(unjudged, numerator / (n_relevant[:, None] + c_u), 0.0)
        none = np.where(n_relevant > 0, base / n_relevant, 0.0)
    best = at_unjudged.max(axis=1) if codes.shape[1] else np.zeros(codes.shape[0])
    return np.maximum(none, best)
