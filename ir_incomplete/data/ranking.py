"""trec_eval's ranking order: score descending (as float32 by default), ties by document id descending.

Runs already in that order (as TREC runs usually are) are recognised in one vectorized pass and not
sorted; only tied neighbours are compared by document id.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    pass

from ir_incomplete.data.codes import SCORE_PRECISIONS

_FIXED_WIDTH_CHARS = 64  # tie-breaking sorts ids as fixed-width strings when none is longer
_HEAD_ITEMS = 1 << 16  # items looked at first when checking whether rankings are sorted


def _check_score_precision(score_precision) -> None:
    if score_precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision={score_precision!r} is not valid; choices: {', '.join(SCORE_PRECISIONS)}")


def _descending_score_keys(scores: np.ndarray) -> np.ndarray:
    """uint32-ranged int64 keys whose ascending order is the descending order of float32 scores."""
    with np.errstate(over="ignore"):  # beyond float32's range: ±inf
        s32 = scores.astype(np.float32)
    s32 += np.float32(0.0)  # −0.0 → +0.0: equal scores tie, as in C
    bits = s32.view(np.int32)
    bits ^= (bits >> 31) & np.int32(0x7FFFFFFF)  # monotone in the float value (negatives: bits reversed)
    out = bits.astype(np.int64)
    np.subtract(np.int64(0x7FFFFFFF), out, out=out)  # 0 .. 2^32-1, smaller = higher score
    return out


def trec_order(
    ranking: np.ndarray, scores: np.ndarray, doc_ids: np.ndarray, score_precision: str = "float32"
) -> np.ndarray:
    """The permutation that puts items in trec_eval's order: grouped by ``ranking`` (an int64 id per
    item, ascending), then score descending (compared as ``float32`` by default, as trec_eval 9 does),
    ties broken by document id descending, byte-wise (code-point order of the ``str`` ids).

    Items already in this order are recognised in one vectorized pass and not sorted; otherwise one
    stable sort. Only tied items are compared by document id.
    """
    order = _trec_order(ranking, scores, doc_ids, score_precision)
    return np.arange(len(scores), dtype=np.int64) if order is None else order


def _trec_order(ranking, scores, doc_ids, score_precision) -> np.ndarray | None:
    """:func:`trec_order`, or ``None`` when the items already are in that order."""
    _check_score_precision(score_precision)
    ranking = np.asarray(ranking, dtype=np.int64)
    n = len(ranking)
    order = None
    if score_precision == "float32":
        key = (ranking << 32) | _descending_score_keys(scores)  # one int64: ranking, then score descending
        if n > 1 and not bool(np.all(key[1:] >= key[:-1])):
            order, key = _stable_key_order(ranking, key)
        tied = np.flatnonzero(key[1:] == key[:-1])
        del key
    else:
        if n > 1:
            step = ranking[1:] - ranking[:-1]
            if not bool(np.all((step > 0) | ((step == 0) & (scores[1:] <= scores[:-1])))):
                order = np.lexsort((-scores, ranking))
        ranked = ranking if order is None else ranking[order]
        sorted_scores = scores if order is None else scores[order]
        tied = np.flatnonzero((ranked[1:] == ranked[:-1]) & (sorted_scores[1:] == sorted_scores[:-1]))
    moves = _tie_moves(tied, doc_ids, order)
    if moves is None:
        return order
    if order is None:
        order = np.arange(n, dtype=np.int64)
    to, source = moves
    order[to] = order[source]
    return order


def _stable_key_order(ranking: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, key[order])`` with ``order = np.argsort(key, kind="stable")``, for ``key = ranking << 32 |
    32-bit score key`` (``ranking`` ≥ 0). When the ranking, the score key and each item's position among
    the items of its ranking fit in 63 bits together, these are packed into one integer and sorted by
    value (numpy's value sort of integers is much faster than its stable argsort); equal keys then keep
    their given order, exactly as the stable argsort keeps them."""
    n = len(key)
    counts = np.bincount(ranking)
    ranking_bits = max(len(counts) - 1, 1).bit_length()
    local_bits = max(int(counts.max()) - 1, 1).bit_length()
    item_bits = max(n - 1, 1).bit_length()
    if ranking_bits + 32 + local_bits > 63 or ranking_bits + item_bits > 63:
        order = np.argsort(key, kind="stable")
        return order, key[order]
    starts = np.cumsum(counts) - counts
    grouped = None  # items grouped by ranking (stable), when they are not already
    if bool(np.all(ranking[1:] >= ranking[:-1])):
        local = np.arange(n, dtype=np.int64) - starts[ranking]
    else:
        grouped = np.sort((ranking << item_bits) | np.arange(n, dtype=np.int64))
        grouped &= (1 << item_bits) - 1
        local = np.empty(n, dtype=np.int64)
        local[grouped] = np.arange(n, dtype=np.int64) - starts[ranking[grouped]]
    packed = key << local_bits
    packed |= local
    del local
    packed.sort()
    order = packed >> (32 + local_bits)  # the ranking of each sorted item ...
    order = starts[order]
    order += packed & ((1 << local_bits) - 1)  # ... plus its position among that ranking's items
    if grouped is not None:
        order = grouped[order]
    packed >>= local_bits
    return order, packed


def _grouped_order(
    starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray, doc_ids, score_precision: str
) -> np.ndarray:
    """:func:`_trec_order` of items already grouped into rankings (ranking ``i``: the ``lengths[i]`` items
    from ``starts[i]``, rankings in ascending order) but not sorted within them. The same order, in
    fewer passes over the items: each item's ranking, score key and position in its ranking are packed
    into one integer from the start, and sorting keeps every ranking where it is, so an item's place in
    the result is its ranking's start plus its sorted position in it."""
    n = len(scores)
    ranking_bits = max(len(lengths) - 1, 1).bit_length()
    local_bits = max(int(lengths.max()) - 1, 1).bit_length() if n else 1
    if score_precision != "float32" or n < 2 or ranking_bits + 32 + local_bits > 63:
        ranking = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        order = _trec_order(ranking, scores, doc_ids, score_precision)
        return np.arange(n, dtype=np.int64) if order is None else order
    packed = _descending_score_keys(scores)
    packed <<= local_bits
    packed |= np.repeat(np.arange(len(lengths), dtype=np.int64) << (32 + local_bits), lengths)
    base = np.repeat(np.asarray(starts, dtype=np.int64), lengths)  # where each item's ranking starts
    local = np.arange(n, dtype=np.int64)
    local -= base
    packed |= local
    del local
    packed.sort()
    order = packed & ((1 << local_bits) - 1)
    order += base
    del base
    packed >>= local_bits  # ranking and score key: equal neighbours tie
    moves = _tie_moves(np.flatnonzero(packed[1:] == packed[:-1]), doc_ids, order)
    del packed
    if moves is not None:
        to, source = moves
        order[to] = order[source]
    return order


def _grouped_tie_moves(starts: np.ndarray, scores: np.ndarray, doc_ids, score_precision: str):
    """For items already grouped into rankings (``starts``: where each begins, rankings in ascending
    order), the :func:`_tie_moves` that complete trec_eval's order; ``()`` when none is needed, ``None``
    when some ranking is not sorted by score descending (a sort is needed). Scores are compared as
    :func:`trec_order` compares them; only the tied neighbours are looked at again."""
    if len(scores) < 2:
        return ()
    head = _HEAD_ITEMS  # the first items first: unsorted input is usually unsorted there already
    if len(scores) > 2 * head and _rises(starts[starts < head], _compared(scores[:head], score_precision)):
        return None
    scores = _compared(scores, score_precision)
    if _rises(starts, scores):
        return None
    across = starts[1:] - 1
    equal = scores[1:] == scores[:-1]  # −0.0 equals +0.0, as in trec_eval
    equal[across] = False
    moves = _tie_moves(np.flatnonzero(equal), doc_ids, None)
    return () if moves is None else moves


def _compared(scores: np.ndarray, score_precision: str) -> np.ndarray:
    """Scores as :func:`trec_order` compares them."""
    if score_precision != "float32":
        return scores
    with np.errstate(over="ignore"):  # beyond float32's range: ±inf, as the sort keys have it
        return scores.astype(np.float32)


def _rises(starts: np.ndarray, scores: np.ndarray) -> bool:
    """Whether some item scores higher than the one before it in the same ranking (``starts``: where
    each ranking begins)."""
    rising = scores[1:] > scores[:-1]
    rising[starts[1:] - 1] = False  # neighbour pairs (p, p + 1) that straddle two rankings
    return bool(rising.any())


def _tie_moves(tied: np.ndarray, doc_ids: np.ndarray, order: np.ndarray | None):
    """Ties broken by document id descending (byte-wise): ``(to, source)`` such that
    ``order[to] = order[source]`` (``order``: the items sorted by ranking and score, ``None`` = as
    given; ``tied``: positions ``p`` whose item ties with ``p + 1`` there), or ``None`` when the tied
    items are already in that order. Only tied items are compared."""
    if len(tied) == 0:
        return None
    first = tied if order is None else order[tied]
    second = tied + 1 if order is None else order[tied + 1]
    if bool(np.all(np.greater(doc_ids[first], doc_ids[second]))):  # ties already by doc id descending
        return None
    lo = int(tied[0])
    in_tie = np.zeros(int(tied[-1]) + 2 - lo, dtype=bool)  # the tied positions (p and p + 1), ascending
    in_tie[tied - lo] = True
    in_tie[tied + 1 - lo] = True
    pos = np.flatnonzero(in_tie) + lo
    del in_tie
    sub_ids = doc_ids[pos if order is None else order[pos]]
    if max(map(len, sub_ids)) <= _FIXED_WIDTH_CHARS:
        sub_ids = sub_ids.astype(str)  # fixed-width: same code-point order, sorted in C
    _, doc_rank = np.unique(sub_ids, return_inverse=True)
    # tie groups: consecutive tied positions (each adjacent tied pair shares ranking and score)
    pair = np.zeros(int(pos[-1]) + 1, dtype=bool)
    pair[tied] = True  # position p ties with p + 1
    group = np.cumsum(np.concatenate(([True], ~(pair[pos[:-1]] & (pos[1:] == pos[:-1] + 1)))))
    within = np.lexsort((-doc_rank.reshape(-1), group))
    moved = np.flatnonzero(within != np.arange(len(pos)))
    return pos[moved], pos[within[moved]]
