"""Counting over cells listed row-major, as ``np.nonzero`` gives them: the one place the kernels of every
family turn such a list into positions within rows and counts of earlier cells of the same row; and the
condensed lists built with them; and the division by per-row totals that may be 0."""

from __future__ import annotations

import numpy as np

from ir_incomplete.data import PAD

__all__ = ["row_first_cell", "position_in_row", "count_before", "condense", "safe_divide"]


def row_first_cell(row: np.ndarray, rows: int) -> np.ndarray:
    """For each cell (its row number in ``row``; ``rows`` rows in all), the index in the list of the first
    cell of its row."""
    counts = np.bincount(row, minlength=rows)
    return (np.cumsum(counts) - counts)[row]


def position_in_row(row: np.ndarray, rows: int) -> np.ndarray:
    """1-based position of each cell among the listed cells of its row: at relevant cells, the number of
    relevant documents up to and including it."""
    return np.arange(1, len(row) + 1, dtype=np.int64) - row_first_cell(row, rows)


def count_before(flags: np.ndarray, first: np.ndarray) -> np.ndarray:
    """How many earlier cells of the same row have ``flags`` set (``first``: :func:`row_first_cell`): an
    exclusive cumulative count over the listed cells only."""
    before = np.cumsum(flags, dtype=np.int64)
    before -= flags
    return before - before[first]


def condense(codes: np.ndarray) -> np.ndarray:
    """The condensed lists (Sakai; trec_eval ``-J``): each row keeps its judged documents (grade ≥ 0), in
    rank order, moved to the front; pooled-but-unjudged and unpooled documents are removed; ``PAD`` after.
    Measures that cut the ranking cut after condensing."""
    kept = codes >= 0
    counts = kept.sum(axis=1)
    width = int(counts.max()) if len(counts) else 0
    out = np.full((codes.shape[0], width), PAD, dtype=codes.dtype)
    row, col = np.nonzero(kept)
    out[row, position_in_row(row, codes.shape[0]) - 1] = codes[row, col]
    return out


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` element-wise (broadcast), 0 where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out
