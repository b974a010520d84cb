"""Graded average precision: GAP, xGAP and eGAP, vectorized over all rankings at once.

Notation ([FFM]: Ferrante, Ferro & Maistro, "Rethinking how to extend average precision to graded
relevance", CLEF 2014, LNCS, pp. 19–30; Robertson, Kanoulas & Yilmaz, SIGIR 2010 for GAP). Grades run
over ``0..c`` with ``c = len(g)``; ``g = (g_1, …, g_c)`` is the probability that a user's relevance
threshold is grade k.

* ``G(j) = Σ_{h≤j} g_h`` (``G(0) = 0``): the probability that a document of grade j is relevant to the user;
* ``R(j)``: judged documents of the topic with grade j; ``RB(k) = Σ_{i≥k} R(i)``;
* ``r_n``: the grade of the document at rank n (unjudged documents count as grade 0);
* ``Δ_{m,n} = G(min(r_m, r_n))``.

The three measures::

    GAP  = [Σ_n (1/n) Σ_{m≤n} Δ_{m,n}] / Σ_{j=1}^{c} R(j)·G(j)                            (4)
    xGAP = Σ_n (1/n) · (A(r_n)/G(r_n)) · Σ_{m≤n} Δ_{m,n},   A(j) = Σ_{k=1}^{j} g_k/RB(k)    (5)
    eGAP = Σ_n (1/n) Σ_{k=1}^{τ} (g_k/RB(k)) · #{m ≤ n : r_m ≥ k, r_n ≥ k} = Σ_k g_k · AP_k   (6)

No O(n²) sum is formed. Writing ``G(min(h, j)) = Σ_{k=1}^{min(h,j)} g_k = Σ_{k=1}^{j} g_k·[h ≥ k]`` gives::

    Σ_{m≤n} Δ_{m,n} = Σ_{k=1}^{r_n} g_k · CB_k(n),   CB_k(n) = #{m ≤ n : r_m ≥ k}

so every measure is a sum over threshold levels k of per-document terms ``w · CB_k(n) / n`` over the
documents with ``r_n ≥ k``, with weight ``w = g_k`` (GAP, divided by its normaliser at the end),
``g_k · A(r_n)/G(r_n)`` (xGAP) or ``g_k / RB(k)`` (eGAP). ``CB_k(n)`` is the ordinal of document n among
the row's documents of grade ≥ k, read off the row-major order of ``np.nonzero``: one pass over the code
matrix, then work proportional to the number of retrieved relevant documents times c.

Inputs: ``codes`` is the ``[rows × depth]`` code matrix of :mod:`ir_incomplete.data` (already condensed
and/or cut by the caller; codes < 0 count as grade 0), ``grade_counts`` holds R(0..c) per row
(``[rows × (c+1)]``; columns beyond c must be zero) and ``g`` the distribution (length c). Values are 0
when nothing relevant is retrieved and when ν = min{k : g_k > 0} exceeds τ = max{j : R(j) > 0}.
"""

from __future__ import annotations

import numpy as np

from ir_incomplete.kernels.cells import condense, position_in_row

__all__ = ["condense", "graded_ap", "extended_graded_ap", "expected_graded_ap"]


def _check(codes: np.ndarray, grade_counts: np.ndarray, g) -> tuple:
    g = np.asarray(g, dtype=np.float64).reshape(-1)
    c = len(g)
    if c == 0:
        raise ValueError("g must have at least one entry (the probability of relevance threshold 1)")
    grade_counts = np.asarray(grade_counts)
    if grade_counts.ndim != 2 or grade_counts.shape[0] != codes.shape[0]:
        raise ValueError(
            f"grade_counts must be [rows × grades] with {codes.shape[0]} rows, got shape {grade_counts.shape}"
        )
    if grade_counts.shape[1] > c + 1 and grade_counts[:, c + 1 :].any():
        top = int(np.flatnonzero(grade_counts[:, c + 1 :].any(axis=0))[-1]) + c + 1
        raise ValueError(f"grade {top} exceeds len(g) = {c}: g needs one probability per grade 1..{top}")
    counts = np.zeros((grade_counts.shape[0], c + 1), dtype=np.float64)
    width = min(grade_counts.shape[1], c + 1)
    counts[:, :width] = grade_counts[:, :width]
    return g, c, counts


def _relevant_cells(codes: np.ndarray, c: int):
    """Row, 1-based rank and grade of every retrieved document of grade ≥ 1, in row-major order."""
    row, col = np.nonzero(codes > 0)
    grade = codes[row, col]
    if len(grade) and int(grade.max()) > c:
        raise ValueError(f"a ranking holds grade {int(grade.max())}, above len(g) = {c}")
    return row, col.astype(np.float64) + 1.0, grade


def _levels(row: np.ndarray, grade: np.ndarray, g: np.ndarray, rows: int):
    """For each level k with g_k > 0: (k, mask of the cells with grade ≥ k, CB_k at those cells)."""
    for k in range(1, len(g) + 1):
        if g[k - 1] == 0.0:
            continue
        mask = grade >= k
        sub_row = row[mask]
        if len(sub_row) == 0:
            break  # no retrieved document reaches level k, nor any higher level
        ordinal = position_in_row(sub_row, rows).astype(np.float64)
        yield k, mask, ordinal


def _cumulative_g(g: np.ndarray) -> np.ndarray:
    """G(0..c) with G(0) = 0."""
    return np.concatenate(([0.0], np.cumsum(g)))


def _relevant_at_or_above(counts: np.ndarray) -> np.ndarray:
    """RB(0..c) per row: judged documents with grade ≥ k."""
    return np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]


def graded_ap(codes: np.ndarray, grade_counts: np.ndarray, g) -> np.ndarray:
    """GAP per row ([FFM] eq. 4; Robertson, Kanoulas & Yilmaz 2010)::

        GAP = [Σ_n (1/n) Σ_{m≤n} G(min(r_m, r_n))] / Σ_{j=1}^{c} R(j)·G(j)

    A zero normaliser (ν > τ) gives 0.
    """
    g, c, counts = _check(codes, grade_counts, g)
    rows = codes.shape[0]
    row, rank, grade = _relevant_cells(codes, c)
    sums = np.zeros(rows, dtype=np.float64)
    for k, mask, ordinal in _levels(row, grade, g, rows):
        sums += g[k - 1] * np.bincount(row[mask], weights=ordinal / rank[mask], minlength=rows)
    norm = counts[:, 1:] @ _cumulative_g(g)[1:]
    out = np.zeros(rows, dtype=np.float64)
    has = norm > 0
    out[has] = sums[has] / norm[has]
    return out


def extended_graded_ap(codes: np.ndarray, grade_counts: np.ndarray, g) -> np.ndarray:
    """xGAP per row ([FFM] eq. 5)::

        xGAP = Σ_n (1/n) · (A(r_n)/G(r_n)) · Σ_{m≤n} G(min(r_m, r_n)),   A(j) = Σ_{k=1}^{j} g_k/RB(k)

    A document with G(r_n) = 0 contributes 0; terms with RB(k) = 0 are 0.
    """
    g, c, counts = _check(codes, grade_counts, g)
    rows = codes.shape[0]
    row, rank, grade = _relevant_cells(codes, c)
    out = np.zeros(rows, dtype=np.float64)
    if len(row) == 0:
        return out
    rb = _relevant_at_or_above(counts)[:, 1:]  # RB(1..c)
    per_level = np.divide(g, rb, out=np.zeros_like(rb), where=rb > 0)
    big_a = np.cumsum(per_level, axis=1)  # A(1..c) per row
    big_g = _cumulative_g(g)[1:]
    factor = np.divide(big_a, big_g, out=np.zeros_like(big_a), where=big_g > 0)  # A(j)/G(j), [rows × c]
    cell_factor = factor[row, grade - 1] / rank
    for k, mask, ordinal in _levels(row, grade, g, rows):
        out += g[k - 1] * np.bincount(row[mask], weights=cell_factor[mask] * ordinal, minlength=rows)
    return out


def expected_graded_ap(codes: np.ndarray, grade_counts: np.ndarray, g) -> np.ndarray:
    """eGAP per row ([FFM] eq. 6)::

        eGAP = Σ_{k=1}^{τ} g_k · AP_k,   AP_k = (1/RB(k)) Σ_{n: r_n ≥ k} #{m ≤ n : r_m ≥ k} / n

    AP_k is binary AP at relevance level k (trec_eval ``map`` with ``-l k``); RB(k) = 0 gives 0.
    """
    g, c, counts = _check(codes, grade_counts, g)
    rows = codes.shape[0]
    row, rank, grade = _relevant_cells(codes, c)
    rb = _relevant_at_or_above(counts)
    out = np.zeros(rows, dtype=np.float64)
    for k, mask, ordinal in _levels(row, grade, g, rows):
        ap_sum = np.bincount(row[mask], weights=ordinal / rank[mask], minlength=rows)
        has = rb[:, k] > 0
        out[has] += g[k - 1] * ap_sum[has] / rb[has, k]
    return out
