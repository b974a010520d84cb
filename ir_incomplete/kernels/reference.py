"""Kernels of trec_eval's reference measures (AP, nDCG, P, recall, RR, R-prec, judged rate, counts),
vectorized over all rankings at once.

Each kernel receives the ranked-code matrix of :mod:`ir_incomplete.data` (``[rows × depth]``), already
condensed (:func:`condense`, trec_eval ``-J``) and cut at the cut-off when the measure asks for it, and
returns one ``float64`` per row. Only the cells of the documents that matter are visited
(``np.nonzero``, row-major): "relevant up to rank k" is a cell's position among the relevant cells of
its row, and sums per row are ``np.bincount`` over those cells, in rank order (the order in which
trec_eval adds them). Definitions and conventions are documented on the measure
classes in :mod:`ir_incomplete.measures.reference`.
"""

from __future__ import annotations

import numpy as np

from ir_incomplete.data import PAD, POOLED_UNJUDGED
from ir_incomplete.kernels.cells import condense, position_in_row, safe_divide

__all__ = [
    "condense",
    "average_precision",
    "ndcg",
    "ideal_dcg",
    "grade_gains",
    "drop_negative_gains",
    "precision",
    "recall",
    "reciprocal_rank",
    "r_precision",
    "judged_rate",
    "retrieved",
]


def _discount(width: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks ``1 .. width`` (trec_eval: ``log2(i + 2)`` for 0-based ``i``)."""
    return 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))


def _level(rel_level: int) -> int:
    """``rel_level`` checked: grades ≥ 0 only (negative codes mark unjudged documents and padding)."""
    if isinstance(rel_level, bool) or int(rel_level) != rel_level or rel_level < 0:
        raise ValueError(f"rel_level={rel_level!r} must be an integer >= 0 (negative codes mark unjudged documents)")
    return int(rel_level)


def _relevant_cells(codes: np.ndarray, rel_level: int):
    """Rows and 0-based columns of the relevant documents (grade ≥ ``rel_level``), row-major."""
    return np.nonzero(codes >= _level(rel_level))


def average_precision(codes: np.ndarray, n_relevant: np.ndarray, rel_level: int = 1) -> np.ndarray:
    """AP per row: ``Σ_{relevant at rank k} (relevant up to k) / k``, divided by R (R = 0 → 0)."""
    rows = codes.shape[0]
    row, col = _relevant_cells(codes, rel_level)
    sums = np.bincount(row, weights=position_in_row(row, rows) / (col + 1.0), minlength=rows)
    return safe_divide(sums, n_relevant)


def grade_gains(levels: int, gains: dict[int, int] | None = None) -> np.ndarray:
    """The gain of each grade ``0 .. levels-1``: the grade itself, or ``gains[grade]`` when given there."""
    table = np.arange(levels, dtype=np.float64)
    for grade, gain in (gains or {}).items():
        if 0 <= grade < levels:
            table[grade] = gain
    return table


def drop_negative_gains(codes: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """``codes`` with the grades whose gain is negative turned into ``POOLED_UNJUDGED`` (what a negative
    value in the qrels means to trec_eval); ``codes`` itself when no gain is negative."""
    negative = np.flatnonzero(gains < 0)
    if len(negative) == 0:
        return codes
    return np.where(np.isin(codes, negative), np.int32(POOLED_UNJUDGED), codes).astype(codes.dtype, copy=False)


def ideal_dcg(grade_counts: np.ndarray, cutoff: int | None = None, gains: np.ndarray | None = None) -> np.ndarray:
    """Ideal DCG per topic from its judgments: every judged document with a positive gain, highest gain
    first, discounted by ``log2(rank + 1)``, the first ``cutoff`` ranks (all when ``None``).

    ``grade_counts`` is ``[topics × (max_grade + 1)]`` (count of each grade ≥ 0, as in
    :class:`ir_incomplete.data.Qrels`); ``gains`` the gain of each grade (default: the grade)."""
    topics, levels = grade_counts.shape
    gains = np.arange(levels, dtype=np.float64) if gains is None else np.asarray(gains, dtype=np.float64)
    levels_used = np.flatnonzero(gains > 0)
    levels_used = levels_used[np.argsort(-gains[levels_used], kind="stable")]  # highest gain first
    counts = grade_counts[:, levels_used].astype(np.int64)
    if cutoff is not None:  # no ideal list is longer than the cut-off
        counts = np.minimum(counts, cutoff)
    per_cell = counts.ravel()
    ideal_gains = np.repeat(np.tile(gains[levels_used], topics), per_cell)
    topic = np.repeat(np.repeat(np.arange(topics), len(levels_used)), per_cell)
    rank = position_in_row(topic, topics)  # 1-based rank in the ideal list
    if cutoff is not None:
        inside = rank <= cutoff
        topic, ideal_gains, rank = topic[inside], ideal_gains[inside], rank[inside]
    width = int(rank.max()) if len(rank) else 0
    return np.bincount(topic, weights=ideal_gains * _discount(width)[rank - 1], minlength=topics)


def ndcg(codes: np.ndarray, ideal: np.ndarray, gains: np.ndarray | None = None) -> np.ndarray:
    """nDCG per row: ``Σ_k gain(k) / log2(k + 1)`` with gain = ``gains[grade]`` (default: the grade;
    negative codes, i.e. unjudged documents and padding: 0), divided by the row's ideal DCG (``ideal``,
    one per row; 0 → 0)."""
    rows = codes.shape[0]
    row, col = np.nonzero(codes > 0) if gains is None else np.nonzero(codes >= 0)
    grade = codes[row, col]
    gain = grade if gains is None else np.asarray(gains, dtype=np.float64)[grade]
    weights = gain * _discount(codes.shape[1])[col]
    return safe_divide(np.bincount(row, weights=weights, minlength=rows), ideal)


def precision(codes: np.ndarray, cutoff: int, rel_level: int = 1) -> np.ndarray:
    """P@k per row: relevant documents in the first ``cutoff`` ranks / ``cutoff`` (also when fewer are
    retrieved). ``codes`` is already cut."""
    return (codes >= _level(rel_level)).sum(axis=1) / float(cutoff)


def recall(codes: np.ndarray, n_relevant: np.ndarray, rel_level: int = 1) -> np.ndarray:
    """R@k per row: relevant documents in ``codes`` (already cut) / R (R = 0 → 0)."""
    return safe_divide((codes >= _level(rel_level)).sum(axis=1), n_relevant)


def reciprocal_rank(codes: np.ndarray, rel_level: int = 1) -> np.ndarray:
    """RR per row: 1 / rank of the first relevant document (0 when none is retrieved)."""
    relevant = codes >= _level(rel_level)
    first = np.argmax(relevant, axis=1) if codes.shape[1] else np.zeros(codes.shape[0], dtype=np.int64)
    found = relevant.any(axis=1)
    out = np.zeros(codes.shape[0], dtype=np.float64)
    out[found] = 1.0 / (first[found] + 1.0)
    return out


def r_precision(codes: np.ndarray, n_relevant: np.ndarray, rel_level: int = 1) -> np.ndarray:
    """R-precision per row: relevant documents in the first R ranks / R (R = 0 → 0; R is the row's own,
    given in ``n_relevant``, also when fewer than R documents are retrieved)."""
    rows = codes.shape[0]
    n_relevant = np.asarray(n_relevant)
    row, col = _relevant_cells(codes, rel_level)
    inside = col < n_relevant[row]
    return safe_divide(np.bincount(row[inside], minlength=rows), n_relevant)


def judged_rate(codes: np.ndarray) -> np.ndarray:
    """Judged per row: documents present in the qrels (any grade, also negative) among the retrieved
    documents of ``codes`` (already cut), divided by their number (``min(k, retrieved)``; none → 0)."""
    in_qrels = ((codes >= 0) | (codes == POOLED_UNJUDGED)).sum(axis=1)
    return safe_divide(in_qrels, (codes != PAD).sum(axis=1))


def retrieved(codes: np.ndarray, rel_level: int | None = None) -> np.ndarray:
    """Retrieved documents per row (``rel_level=None``), or retrieved relevant ones (grade ≥ ``rel_level``)."""
    if rel_level is None:
        return (codes != PAD).sum(axis=1).astype(np.float64)
    return (codes >= _level(rel_level)).sum(axis=1).astype(np.float64)
