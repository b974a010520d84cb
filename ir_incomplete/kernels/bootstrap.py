"""Bootstrap family beyond nDCG: measures on completed grade matrices, and the sampler that completes them.

Pure numpy. A *replicate* completes the judgments: every unjudged document the bootstrap covers gets a
grade drawn from a prior, and the plain measure is computed on the run against the human qrels plus
those grades. The measures below therefore take

* ``grades``: ``[n × k × w]`` integer grade of each ranked position (judged grade, drawn grade, or 0 for
  a nonrelevant or missing document) of n rankings in w replicates;
* ``counts``: ``[n × w × L]`` number of documents of each grade ``1 .. L−1`` that the completed
  judgments hold for the ranking's topic (human judgments plus drawn grades), from which R and the
  ideal rankings come (column 0, never read, holds only the judged grade-0 documents);

and return ``[n × w]`` values (:func:`plain` applies one to a single completion per ranking).

With nothing drawn (``counts`` = the qrels' grade counts, ``grades`` = the judged grades) each
definition is the plain measure of :mod:`ir_incomplete.kernels.reference` (trec_eval conventions:
unjudged and negative grades count as nonrelevant with gain 0; R = documents with grade ≥ rel).
Sums run along the rank axis in rank order (never a matrix product, whose rounding depends on how many
rows are in the batch), so a replicate's value does not depend on the batch it is computed in;
values agree with the reference kernels to rounding (1e-12), not bit for bit.

The sampler (:func:`bootstrap_replicates`) keeps the random-number layout of ``BootNDCG``: the uniforms
of topic t form a ``[rank × replicate]`` array (``draws``), the unjudged document at rank i uses row i,
and rankings of one topic share them. Predicted documents use a second per-topic stream
(``predicted_draws``), ``[predicted unjudged document × replicate]``, shared by every ranking of the
topic, so one replicate is one completion of the qrels for every run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ir_incomplete.kernels.cells import safe_divide
from ir_incomplete.kernels.ndcg import inverse_cdf, replicate_chunk

__all__ = [
    "relevant_count",
    "average_precision",
    "precision",
    "rbp",
    "ideal_cumulative_gain",
    "q_measure",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "dense_grades",
    "plain",
    "bootstrap_replicates",
    "BATCH_CELLS",
]

#: grade cells (rankings × replicates × positions) held at once by the sampler
BATCH_CELLS = 1 << 20


def _ranks(k: int) -> np.ndarray:
    return np.arange(1, int(k) + 1, dtype=np.float64)


def relevant_count(counts: np.ndarray, rel: int = 1) -> np.ndarray:
    """R per (row, replicate): documents with grade ≥ ``rel`` in ``counts`` (``[n × w × L]``)."""
    return counts[..., int(rel) :].sum(axis=-1)


def dense_grades(codes: np.ndarray, dtype=None) -> np.ndarray:
    """Grades of a code matrix: judged grades as they are, every negative code (unjudged, padding) 0."""
    grades = np.maximum(codes, 0)
    return grades if dtype is None else grades.astype(dtype)


def _along(vector: np.ndarray) -> np.ndarray:
    """A per-rank vector shaped to broadcast along the rank axis of ``[n × k × w]``."""
    return vector[None, :, None]


def _sum_ranks(values: np.ndarray) -> np.ndarray:
    """``Σ_i values[:, i, :]`` added one rank at a time, in rank order: the same arithmetic whatever the
    number of rows and replicates in the batch (numpy's own reduction switches to pairwise summation
    when the rank axis is the contiguous one)."""
    out = np.zeros((values.shape[0], values.shape[2]), dtype=np.float64)
    for i in range(values.shape[1]):
        out += values[:, i, :]
    return out


def _cumsum_ranks(values: np.ndarray) -> np.ndarray:
    """Running sums along the rank axis of ``[n × k × w]`` (float64), one rank at a time (numpy's cumsum
    along a non-contiguous axis is several times slower)."""
    out = np.empty(values.shape, dtype=np.float64)
    if values.shape[1]:
        out[:, 0, :] = values[:, 0, :]
    for i in range(1, values.shape[1]):
        np.add(out[:, i - 1, :], values[:, i, :], out=out[:, i, :])
    return out


def plain(definition, grades: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``definition`` on one completion per row: ``grades [n × k]``, ``counts [n × L]`` → ``[n]``."""
    return definition(grades[:, :, None], counts[:, None, :])[:, 0]


# ---------------------------------------------------------------------------------------------------
# measures on completed grade matrices: grades [n × k × w] (w replicates), counts [n × w × L] -> [n × w]
# ---------------------------------------------------------------------------------------------------
def average_precision(grades: np.ndarray, counts: np.ndarray, rel: int = 1) -> np.ndarray:
    """AP@k (trec_eval ``map``/``map_cut``): ``(1/R) Σ_{i ≤ k, g_i ≥ rel} C(i)/i`` with C(i) the relevant
    documents at ranks ≤ i and R = ``relevant_count(counts, rel)`` (R = 0 → 0)."""
    relevant = grades >= rel
    terms = _cumsum_ranks(relevant)
    terms *= _along(1.0 / _ranks(grades.shape[1]))
    terms *= relevant
    return safe_divide(_sum_ranks(terms), relevant_count(counts, rel))


def precision(grades: np.ndarray, k: int, rel: int = 1) -> np.ndarray:
    """P@k (trec_eval ``P.k``): relevant documents among the first k ranks divided by k (also when the
    ranking is shorter)."""
    return (grades[:, : int(k)] >= rel).sum(axis=1) / float(k)


def rbp(grades: np.ndarray, p: float, rel: int = 1, max_grade: int | None = None) -> np.ndarray:
    """RBP (Moffat & Zobel 2008): ``(1 − p) Σ_i p^{i−1} gain_i`` over the given ranks, with
    ``gain_i = [g_i ≥ rel]`` (``max_grade=None``, binary) or ``g_i / max_grade`` for ``g_i ≥ rel`` and 0
    below (graded, as :func:`ir_incomplete.kernels.sampled.rbp_residual`; 0 everywhere when
    ``max_grade ≤ 0``)."""
    weights = (1.0 - p) * p ** np.arange(grades.shape[1], dtype=np.float64)
    if max_grade is None:
        return _sum_ranks(np.where(grades >= rel, _along(weights), 0.0))
    if max_grade <= 0:
        return np.zeros((grades.shape[0], grades.shape[2]), dtype=np.float64)
    gains = np.where(grades >= rel, grades / float(max_grade), 0.0)
    gains *= _along(weights)
    return _sum_ranks(gains)


def ideal_cumulative_gain(counts: np.ndarray, depth: int) -> np.ndarray:
    """``cg*(r)`` for ranks ``r = 1 .. depth`` (``[n × depth × w]``): cumulative gain (gain = grade) of the
    ideal ranking, every document of grade ≥ 1 sorted by grade descending. The ideal document at rank r
    has grade ``Σ_{g ≥ 1} [r ≤ A_g]`` (A_g = documents of grade ≥ g), so ``cg*(r) = Σ_{g ≥ 1} min(r, A_g)``."""
    levels = counts.shape[-1]
    at_least = np.cumsum(counts[..., ::-1], axis=-1)[..., ::-1]  # [n × w × L]: documents of grade >= g
    ranks = _along(_ranks(depth))
    out = np.zeros((counts.shape[0], int(depth), counts.shape[1]), dtype=np.float64)
    part = np.empty_like(out)
    for g in range(1, levels):
        if at_least[..., g].any():
            np.minimum(ranks, at_least[:, None, :, g], out=part)
            out += part
    return out


def q_measure(grades: np.ndarray, counts: np.ndarray, beta: float = 1.0, limit: int | None = None) -> np.ndarray:
    """Sakai's Q-measure over the given ranks::

        Q = (1/N) Σ_{r ≤ k} isrel(r) · (C(r) + β·cg(r)) / (r + β·cg*(r))

    isrel(r) = grade ≥ 1, C(r) = relevant documents at ranks ≤ r, cg(r) = Σ_{i ≤ r} grade(i), cg*(r)
    the same for the ideal ranking of ``counts``; N = R, or ``min(limit, R)`` when ``limit`` is given
    (NTCIREVAL's Q@l divides by min(l, R)); N = 0 → 0.
    """
    k = grades.shape[1]
    relevant = grades >= 1
    ratio = _cumsum_ranks(grades)
    if beta != 1.0:
        ratio *= beta
    ratio += _cumsum_ranks(relevant)
    ideal = ideal_cumulative_gain(counts, k)
    if beta != 1.0:
        ideal *= beta
    ideal += _along(_ranks(k))
    ratio /= ideal
    ratio *= relevant
    total = relevant_count(counts, 1)
    if limit is not None:
        total = np.minimum(total, int(limit))
    return safe_divide(_sum_ranks(ratio), total)


def dcg(grades: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """``Σ_i gains[g_i] / log2(i + 1)`` (``gains`` one per grade, ``gains[0] = 0``)."""
    disc = 1.0 / np.log2(_ranks(grades.shape[1]) + 1.0)
    values = gains[grades]
    values *= _along(disc)
    return _sum_ranks(values)


def ideal_dcg(counts: np.ndarray, cutoff: int | None, gains: np.ndarray) -> np.ndarray:
    """IDCG from grade counts (``[... × L]``): every document of grade ≥ 1, highest gain first, the first
    ``cutoff`` ranks (all when ``None``), each at ``1/log2(rank + 1)``."""
    counts = np.asarray(counts, dtype=np.int64)
    levels = counts.shape[-1]
    order = sorted((g for g in range(1, levels) if gains[g] > 0), key=lambda lv: -gains[lv])
    depth = int(counts[..., order].sum(axis=-1).max()) if order and counts.size else 0
    if cutoff is not None:
        depth = min(depth, int(cutoff))
    prefix = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(_ranks(depth) + 1.0))))
    out = np.zeros(counts.shape[:-1], dtype=np.float64)
    above = np.zeros(counts.shape[:-1], dtype=np.int64)
    for g in order:
        stop = np.minimum(above + counts[..., g], depth)
        out += gains[g] * (prefix[stop] - prefix[np.minimum(above, depth)])
        above = above + counts[..., g]
    return out


def ndcg(grades: np.ndarray, counts: np.ndarray, gains: np.ndarray, cutoff: int | None) -> np.ndarray:
    """``DCG / IDCG`` (IDCG from ``counts`` cut at ``cutoff``; 0 when IDCG = 0; clipped at 1)."""
    return np.minimum(safe_divide(dcg(grades, gains), ideal_dcg(counts, cutoff, gains)), 1.0)


# ---------------------------------------------------------------------------------------------------
# the sampler
# ---------------------------------------------------------------------------------------------------
#: ``f(grades [n × k × w], counts [n × w × L]) -> [n × w]``; a definition with ``uses_counts = False``
#: (P, RBP) receives ``counts=None``
Definition = Callable[[np.ndarray, Any], np.ndarray]


def bootstrap_replicates(
    setup: dict[str, Any],
    rows: np.ndarray,
    definition: Definition,
    draws: Callable[..., np.ndarray],
    predicted_draws: Callable[..., np.ndarray] | None,
    b: int,
    budget: int | None = None,
) -> np.ndarray:
    """``[len(rows) × b]`` replicates of ``definition`` for the rankings ``rows``.

    ``setup`` (per ranking unless said otherwise):

    * ``grades`` ``[rankings × k]``: judged grades, 0 elsewhere;
    * ``draw`` ``[rankings × k]`` bool: unjudged covered positions that draw from the ranking's ``cdf``;
    * ``cdf`` ``[rankings × L]``: cumulative prior of those positions;
    * ``predicted`` ``[rankings × k]`` int: index (into the predicted arrays) of the predicted unjudged
      document at a position, −1 elsewhere;
    * ``topic`` ``[rankings]``; ``topic_counts`` ``[topics × L]``: the human grade counts;
    * ``pred_start`` ``[topics + 1]`` and ``pred_cdf`` ``[predicted docs × L]``: the predicted unjudged
      documents of topic t are ``pred_start[t] .. pred_start[t+1]-1`` (every one is drawn, retrieved or not).

    For replicate j, position i of a ranking of topic t takes ``inverse_cdf(u)`` with
    ``u = draws(t, n)[i, j]`` (a ``draw`` position) or the grade drawn for its predicted document from
    ``predicted_draws(t, n)[index − pred_start[t], j]``; ``counts`` = human counts + every grade drawn
    for the topic's predicted documents + the grades drawn at the ranking's ``draw`` positions.
    Replicates are computed in column chunks of at most ``budget`` (default :data:`BATCH_CELLS`) grade
    cells per ranking batch; the uniforms of a chunk are the same numbers as in one piece, so values do
    not depend on the chunking, nor on which other rankings are in the call.
    """
    rows = np.asarray(rows, dtype=np.intp)
    budget = BATCH_CELLS if budget is None else int(budget)
    grades_all = setup["grades"]
    k = grades_all.shape[1]
    levels = setup["cdf"].shape[1]
    out = np.zeros((len(rows), int(b)), dtype=np.float64)
    if not len(rows):
        return out
    topic_of = setup["topic"][rows]
    order = np.argsort(topic_of, kind="stable")
    pred_start = setup.get("pred_start")
    dtype = np.int8 if levels <= 127 else np.int16
    cuts = np.flatnonzero(np.concatenate(([True], topic_of[order][1:] != topic_of[order][:-1], [True])))
    for lo_t, hi_t in zip(cuts[:-1], cuts[1:], strict=True):
        mine = order[lo_t:hi_t]  # positions in ``rows`` of this topic's rankings
        topic = int(topic_of[mine[0]])
        members = rows[mine]
        n_pred = 0 if pred_start is None else int(pred_start[topic + 1] - pred_start[topic])
        width = replicate_chunk(k * len(members) + n_pred, b, budget)
        per_rep = max(k, 1) * max(width, 1)
        step = max(1, budget // per_rep)  # rankings per sub-batch
        draw_any = setup["draw"][members].any(axis=0)
        n_positions = int(np.flatnonzero(draw_any).max()) + 1 if draw_any.any() else 0
        for first in range(0, int(b), width):
            stop = min(first + width, int(b))
            whole = first == 0 and stop == int(b)
            span = () if whole else (first, stop)
            stream = draws(topic, n_positions, *span) if n_positions else None
            pred_grades = pred_counts = None
            if n_pred and predicted_draws is not None and pred_start is not None:
                base = int(pred_start[topic])
                uniforms = predicted_draws(topic, n_pred, *span)
                pred_grades = inverse_cdf(uniforms, setup["pred_cdf"][base : base + n_pred])
                # level 0 is never read (R and the ideal rankings count grades >= 1): left at 0
                pred_counts = np.zeros((pred_grades.shape[1], levels), dtype=np.int64)
                if getattr(definition, "uses_counts", True):
                    for lv in range(1, levels):
                        pred_counts[:, lv] = (pred_grades == lv).sum(axis=0)
            for sub in range(0, len(members), step):
                part = members[sub : sub + step]
                values = _replicate_batch(setup, part, stream, pred_grades, pred_counts, topic, definition, dtype)
                out[mine[sub : sub + step], first:stop] = values
    return out


def _replicate_batch(setup, part, stream, pred_grades, pred_counts, topic, definition, dtype) -> np.ndarray:
    """Replicates (columns of ``stream``/``pred_grades``) of the rankings ``part`` of one topic: grades are
    laid out ``[ranking × rank × replicate]`` so that each drawn position is one contiguous write."""
    judged = setup["grades"][part]
    n, k = judged.shape
    width = stream.shape[1] if stream is not None else pred_grades.shape[1] if pred_grades is not None else 1
    levels = setup["cdf"].shape[1]
    grades = np.empty((n, k, width), dtype=dtype)
    grades[:] = judged[:, :, None]
    counts = None
    if getattr(definition, "uses_counts", True):  # P and RBP never look at R or the ideal ranking
        counts = np.empty((n, width, levels), dtype=np.int64)
        counts[:] = setup["topic_counts"][topic][None, None, :]
        if pred_counts is not None:
            counts += pred_counts[None, :, :]
    cell_row, cell_col = np.nonzero(setup["draw"][part])
    if len(cell_row) and stream is not None:
        drawn = inverse_cdf(stream[cell_col], setup["cdf"][part[cell_row]])
        grades[cell_row, cell_col] = drawn
        if counts is not None:
            starts = np.flatnonzero(np.concatenate(([True], cell_row[1:] != cell_row[:-1])))
            owners = cell_row[starts]
            for lv in range(1, levels):
                counts[owners, :, lv] += np.add.reduceat(drawn == lv, starts, axis=0, dtype=np.int64)
    if pred_grades is not None:
        index = setup["predicted"][part]
        p_row, p_col = np.nonzero(index >= 0)
        if len(p_row):
            grades[p_row, p_col] = pred_grades[index[p_row, p_col] - setup["pred_start"][topic]]
    return definition(grades, counts)
