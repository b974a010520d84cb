"""nDCG family: DCG machinery, naive bounds and the bootstrap sampler, vectorized over all rankings.

Pure numpy (no pandas, no ir_measures). Rankings arrive as the code matrix of
:mod:`ir_incomplete.data` cut at the measure's cut-off (``[rows × k]``); judgments as per-row or
per-topic counts of each grade. [FGPH] is Fröbe, Gienapp, Potthast & Hagen, "Bootstrapped nDCG
estimation in the presence of unjudged documents", ECIR 2023 (code: github.com/webis-de/ECIR-23).
Conventions shared by every function here (trec_eval's ``ndcg``):

* ``DCG@k = Σ_{i=1..k} gain(g_i) / log2(i + 1)``; the discount of rank 1 is 1.
* gain ``"linear"``: gain(g) = g (trec_eval, TrecTools, the ECIR-23 code); ``"exp"``: 2^g − 1
  ([FGPH] §2, ``nDCG(dcg='exp-log2')`` in ir_measures).
* Unjudged documents (codes < 0) and grade 0 have gain 0. IDCG@k is the DCG of the grades > 0 of *all*
  judged documents of the topic, sorted descending and cut at k; IDCG = 0 gives nDCG = 0. nDCG values
  are clipped at 1 (only rounding can push a DCG summed in another order above the ideal DCG).
* DCGs are summed in rank order, one column at a time, as trec_eval does; every row's arithmetic is
  independent of the other rows, so a row's value never depends on what else is in the batch.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ir_incomplete.data import POOLED_UNJUDGED, UNPOOLED

__all__ = [
    "GAINS",
    "PRIOR_FLOOR",
    "MODE_BORDERS",
    "gain_table",
    "topic_gain_table",
    "RowGains",
    "EXP_GAIN_SCALE_GRADE",
    "discounts",
    "ideal_dcg",
    "dcg",
    "ndcg",
    "unjudged_mask",
    "greedy_fill",
    "count_prior",
    "inverse_cdf",
    "bootstrap_replicates",
    "replicate_chunk",
    "most_likely",
    "percentile",
    "median",
]

GAINS = ("linear", "exp")

#: smoothing floor of every prior component (the ECIR-23 code's ``probability_estimation.py``)
PRIOR_FLOOR = 1e-6

#: the 20 bin borders of the "most likely" point estimate (ECIR ``BootstrappingBySelectingMostLikelyDataPoint``)
MODE_BORDERS = np.array(
    [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]
)
_MODE_SINGLE_BIN = 1e-4

#: rows × positions × replicates handled at once by the sampler (bounds the memory of one batch)
_BATCH_CELLS = 1 << 22


def replicate_chunk(cells_per_replicate: int, b: int, budget: int | None = None) -> int:
    """How many replicates to handle at once when one replicate needs ``cells_per_replicate`` cells:
    ``b`` when all fit in ``budget`` (default: the sampler's batch size), else as many as fit (≥ 1)."""
    budget = _BATCH_CELLS if budget is None else int(budget)
    return int(min(int(b), max(1, budget // max(int(cells_per_replicate), 1))))


# ---------------------------------------------------------------------------------------------------
# DCG machinery
# ---------------------------------------------------------------------------------------------------
def gain_table(n_levels: int, gain: str = "linear") -> np.ndarray:
    """``gain(g)`` for the grades ``0 .. n_levels-1`` (``float64``)."""
    if gain not in GAINS:
        raise ValueError(f"gain={gain!r} is not valid; choices: {', '.join(GAINS)}")
    levels = np.arange(max(int(n_levels), 1), dtype=np.float64)
    return levels if gain == "linear" else np.exp2(levels) - 1.0


#: exponential gains of a topic whose highest grade exceeds this are scaled (2^1024 overflows float64;
#: the margin keeps sums of up to 2^60 such gains finite)
EXP_GAIN_SCALE_GRADE = 960


def topic_gain_table(grade_counts: np.ndarray, n_levels: int, gain: str = "linear") -> np.ndarray:
    """The gain table of each topic: ``gain_table(n_levels, gain)`` (1-D, shared) for linear gain and
    for ``exp`` with grades ≤ 960 (:data:`EXP_GAIN_SCALE_GRADE`).

    2^g − 1 overflows float64 from g = 1024 on (and a DCG summing such gains earlier). With
    ``gain="exp"`` and a level above 960 the table is 2-D (``[topics × n_levels]``): a topic whose
    highest judged grade s is above 960 gets
    ``(2^g − 1) · 2^−s = 2^(g−s) − 2^−s``, every other topic the unscaled gains. nDCG is a ratio of two
    sums of the same topic's gains, so the common power-of-two factor cancels (scaling by 2^−s is exact
    in binary floating point): values are those of exact arithmetic to the usual rounding, and topics
    with moderate grades keep their values bit for bit. Kernels accept either form (2-D: one row per
    topic, or per ranking through :class:`RowGains`).
    """
    if gain != "exp" or int(n_levels) <= EXP_GAIN_SCALE_GRADE + 1:
        return gain_table(n_levels, gain)
    counts = np.asarray(grade_counts)
    has = counts[:, 1:] > 0
    top = np.where(has.any(axis=1), counts.shape[1] - 1 - np.argmax(has[:, ::-1], axis=1), 0)
    shift = np.where(top > EXP_GAIN_SCALE_GRADE, top, 0).astype(np.float64)
    levels = np.arange(max(int(n_levels), 1), dtype=np.float64)
    with np.errstate(over="ignore"):  # levels above a topic's own grades are never looked up
        return np.exp2(levels[None, :] - shift[:, None]) - np.exp2(-shift)[:, None]


class RowGains:
    """The per-topic gain table of :func:`topic_gain_table` seen per ranking: row ``i`` uses
    ``table[topic[i]]`` (no copy per ranking). ``gains[rows]`` selects rankings."""

    ndim = 2

    def __init__(self, table: np.ndarray, topic: np.ndarray):
        self.table = table
        self.topic = np.asarray(topic)

    def __getitem__(self, rows) -> RowGains:
        return RowGains(self.table, self.topic[rows])


def _gains_of(gains, grades: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``gains[grades]``; for a 2-D table (one row per topic or ranking, or :class:`RowGains`), row
    ``rows[i]`` (default ``i``) of it for ``grades[i]``."""
    if gains.ndim == 1:
        return gains[grades]
    if rows is None:
        rows = np.arange(grades.shape[0])
    if isinstance(gains, RowGains):
        gains, rows = gains.table, gains.topic[rows]
    return gains[rows[:, None], grades] if grades.ndim == 2 else gains[rows, grades]


def discounts(k: int) -> np.ndarray:
    """``1 / log2(i + 1)`` for the ranks ``i = 1 .. k``."""
    return 1.0 / np.log2(np.arange(2, int(k) + 2, dtype=np.float64))


def _sum_columns(values: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """``Σ_j values[:, j] · disc[j]`` accumulated in rank order (trec_eval's order of summation)."""
    out = np.zeros(values.shape[0], dtype=np.float64)
    for j in range(values.shape[1]):
        out += values[:, j] * disc[j]
    return out


def ideal_dcg(grade_counts: np.ndarray, cutoff: int | None, gains: np.ndarray) -> np.ndarray:
    """IDCG@cutoff per row of ``grade_counts`` (``[n × levels]``: judged documents of each grade).

    ``cutoff=None`` uses every relevant document (trec_eval ``ndcg``). ``gains`` must cover every level.
    """
    counts = np.asarray(grade_counts, dtype=np.int64)
    n, levels = counts.shape
    if levels <= 1:
        return np.zeros(n, dtype=np.float64)
    at_least = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # at_least[:, g] = #docs with grade >= g
    depth = int(at_least[:, 1].max()) if n else 0
    if cutoff is not None:
        depth = min(depth, int(cutoff))
    if depth == 0:
        return np.zeros(n, dtype=np.float64)
    ranks = np.arange(depth)
    # grade of the ideal document at rank i: how many levels g >= 1 still have more than i documents
    grade = (at_least[:, 1:, None] > ranks[None, None, :]).sum(axis=1)
    return _sum_columns(_gains_of(gains, grade), discounts(depth))


def dcg(codes: np.ndarray, gains: np.ndarray | RowGains, extra: np.ndarray | None = None) -> np.ndarray:
    """DCG per row of a code matrix: judged grades (codes ≥ 0) earn ``gains[grade]``, every other code 0.

    ``extra`` (``[rows × k]`` grades, optional) adds ``gains[extra]`` at each cell — the grades that a
    bound assigns to unjudged documents.
    """
    grades = np.where(codes > 0, codes, 0)
    disc = discounts(codes.shape[1])
    out = _sum_columns(_gains_of(gains, grades), disc)
    if extra is not None:
        # added after the judged part, in rank order: the same arithmetic as a bootstrap replicate,
        # so a replicate that samples the bound's grades equals the bound bit for bit
        for j in range(codes.shape[1]):
            out += _gains_of(gains, extra[:, j]) * disc[j]
    return out


def ndcg(
    codes: np.ndarray, idcg: np.ndarray, gains: np.ndarray | RowGains, extra: np.ndarray | None = None
) -> np.ndarray:
    """``DCG / IDCG`` per row (0 where IDCG = 0); see :func:`dcg` for ``extra``."""
    return _divide(dcg(codes, gains, extra), idcg)


def _divide(values: np.ndarray, idcg: np.ndarray) -> np.ndarray:
    """``values / idcg`` per row, 0 where IDCG = 0, and never above 1: a DCG that equals the ideal DCG
    but was summed in another order can exceed it by an ulp, which is clipped."""
    out = np.zeros(values.shape, dtype=np.float64)
    has = idcg > 0
    if values.ndim == 1:
        out[has] = values[has] / idcg[has]
    else:
        out[has] = values[has] / idcg[has, None]
    return np.minimum(out, 1.0, out=out)


def unjudged_mask(codes: np.ndarray, negative_is_judged: bool = False) -> np.ndarray:
    """Cells holding an unjudged document: unpooled, or pooled but unjudged (qrels grade < 0) unless
    ``negative_is_judged`` (then such a document is a judged grade 0, the ECIR-23 convention)."""
    mask = codes == UNPOOLED
    if not negative_is_judged:
        mask |= codes == POOLED_UNJUDGED
    return mask


def greedy_fill(unjudged: np.ndarray, reservoir: np.ndarray) -> np.ndarray:
    """Grades of the comparable naive upper bound ([FGPH] §3.3).

    Going through the unjudged cells of each row in rank order, each takes the largest grade left in
    ``reservoir`` (``[rows × levels]``: judged documents of each grade outside the top k; level 0 is
    ignored) and removes it; once the reservoir is empty the remaining cells get 0.
    Returns a ``[rows × k]`` grade matrix (0 at judged cells).
    """
    res = np.asarray(reservoir, dtype=np.int64)
    if res.shape[1] <= 1 or not unjudged.any():
        return np.zeros(unjudged.shape, dtype=np.int64)
    at_least = np.cumsum(res[:, :0:-1], axis=1)[:, ::-1]  # [:, g-1] = #reservoir docs with grade >= g
    nth = np.cumsum(unjudged, axis=1) - 1  # 0-based index of each unjudged cell
    grade = (at_least[:, None, :] > nth[:, :, None]).sum(axis=2)
    return np.where(unjudged, grade, 0)


# ---------------------------------------------------------------------------------------------------
# bootstrap: priors, draws, replicates
# ---------------------------------------------------------------------------------------------------
def count_prior(
    counts: np.ndarray, totals: np.ndarray, modelled: np.ndarray | None = None, floor: float = PRIOR_FLOOR
) -> np.ndarray:
    """A prior over grade levels from counts (the ECIR-23 code's ``probability_estimation.py``).

    ``π(ℓ) = max(counts[ℓ] / total, floor)`` for the modelled levels (0 for the others), then
    renormalised to sum to 1. ``totals`` may exceed ``counts.sum(1)`` (judged documents of grades that
    are not modelled still count in the denominator, as in the reference code). A row with total 0 gets
    the uniform distribution over its modelled levels.
    """
    counts = np.asarray(counts, dtype=np.float64)
    totals = np.asarray(totals, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(totals[:, None] > 0, counts / np.where(totals > 0, totals, 1.0)[:, None], 0.0)
    p = np.maximum(p, floor)
    if modelled is not None:
        p = np.where(modelled, p, 0.0)
    return p / p.sum(axis=1, keepdims=True)


def inverse_cdf(uniforms: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """``ℓ* = min{ℓ : u < Σ_{j≤ℓ} π(j)}`` for uniforms ``[n × b]`` and per-row CDFs ``[n × levels]``.

    The last level takes every ``u`` at or above the second-to-last CDF value, so rounding of the CDF's
    total never yields a level outside the prior.
    """
    out = np.zeros(uniforms.shape, dtype=np.int8 if cdf.shape[1] <= 127 else np.int32)
    for level in range(cdf.shape[1] - 1):
        out += uniforms >= cdf[:, level, None]
    return out


def bootstrap_replicates(
    unjudged: np.ndarray,
    sequence: np.ndarray | None,
    base_dcg: np.ndarray,
    idcg: np.ndarray,
    prior: np.ndarray,
    reservoir: np.ndarray,
    gains: np.ndarray | RowGains,
    group: np.ndarray,
    draws: Callable[[int, int], np.ndarray],
    b: int,
) -> np.ndarray:
    """``[rows × b]`` bootstrapped nDCG@k replicates ([FGPH] Alg. 1).

    For every replicate, the unjudged cells of a row are processed in ``sequence`` order (ascending key;
    ``None`` = rank order). Each draws ℓ* from the row's ``prior`` by inverse CDF, takes the highest
    level ≤ ℓ* that is still in the row's ``reservoir`` (``[rows × levels]``) and removes it; when no such
    level is left it gets grade 0 (Alg. 1 line 14). The replicate is
    ``(base_dcg + Σ gains[grade] / log2(rank + 1)) / idcg`` (0 where IDCG = 0).

    Uniforms come from ``draws(g, n_positions)``, called once per distinct value ``g`` of ``group``
    (rows that share a group — the rankings of one topic — share their uniforms): it must return
    ``[n_positions × b]`` floats in [0, 1), row ``i`` being the stream of rank ``i + 1``. When one
    group's ``rows × k × b`` cells exceed the batch size, replicates are drawn in column chunks through
    ``draws(g, n_positions, first, stop)``, which must return columns ``first .. stop-1`` of that same
    array. Everything else about a row is computed from that row alone, so a row's replicates never
    depend on which other rows are in the call, nor on the chunking.

    Vectorized over replicates and cells: rows whose reservoir can never run out (every modelled level
    ≥ 1 holds at least as many documents as the row has unjudged cells) take ℓ* directly; the others
    step through their unjudged cells one position at a time, all replicates and rows at once.
    Memory: the ``[rows × b]`` result plus about ``rows_per_batch × k × chunk`` cells of work space
    (at most :data:`_BATCH_CELLS` unless one row alone needs more per replicate).
    """
    rows, k = unjudged.shape
    out = np.empty((rows, b), dtype=np.float64)
    out[:] = base_dcg[:, None]
    levels = prior.shape[1]
    n_unjudged = unjudged.sum(axis=1)
    todo = np.flatnonzero(n_unjudged > 0)
    if len(todo) and levels > 1:
        cdf = np.cumsum(prior, axis=1)
        disc = discounts(k)
        # a row is "scarce" when some level it can draw (π > 0) could run out of documents
        scarce = ((prior[:, 1:] > 0) & (reservoir[:, 1:] < n_unjudged[:, None])).any(axis=1)
        if sequence is None:
            sequence = np.broadcast_to(np.arange(k), (rows, k))
        order = todo[np.argsort(group[todo], kind="stable")]
        groups = group[order]
        starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
        ends = np.append(starts[1:], len(order))
        # replicates are handled in column chunks small enough for the largest group: memory is bounded
        # whatever b is, and the uniforms of a chunk are the same numbers as in one piece
        width = replicate_chunk(int(k) * int((ends - starts).max()), b)
        per_row = max(int(k) * width, 1)
        i = 0
        while i < len(starts):
            j = i + 1  # take whole groups until the batch is full
            while j < len(starts) and (ends[j] - starts[i]) * per_row <= _BATCH_CELLS:
                j += 1
            for lo in range(0, b, width):
                _bootstrap_batch(
                    order[starts[i] : ends[j - 1]],
                    groups[starts[i] : ends[j - 1]],
                    unjudged,
                    sequence,
                    cdf,
                    reservoir,
                    scarce,
                    gains,
                    disc,
                    draws,
                    b,
                    (lo, min(lo + width, b)),
                    out,
                )
            i = j
    # (with a single level only grade 0 can be drawn: every replicate is the naive lower bound)
    return _divide(out, idcg)


def _bootstrap_batch(rows, row_groups, unjudged, sequence, cdf, reservoir, scarce, gains, disc, draws, b, span, out):
    """Replicates ``span = (first, stop)`` of ``rows`` (sorted by group), added into ``out`` in place."""
    first_rep, stop_rep = span
    cell_row, cell_col = np.nonzero(unjudged[rows])  # row-major: cells grouped by row, in rank order
    n_cells = len(cell_row)
    cell_cdf = cdf[rows[cell_row]]
    grades = np.empty((n_cells, stop_rep - first_rep), dtype=np.int8 if cdf.shape[1] <= 127 else np.int32)
    # cells are sorted by row and rows by group: each group owns one contiguous run of cells
    cell_group = row_groups[cell_row]
    bounds = np.flatnonzero(np.concatenate(([True], cell_group[1:] != cell_group[:-1], [True])))
    whole = first_rep == 0 and stop_rep == b
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        cols = cell_col[lo:hi]
        n_positions = int(cols.max()) + 1
        if whole:
            stream = draws(cell_group[lo], n_positions)
        else:
            stream = draws(cell_group[lo], n_positions, first_rep, stop_rep)
        grades[lo:hi] = inverse_cdf(stream[cols], cell_cdf[lo:hi])

    scarce_cells = np.flatnonzero(scarce[rows[cell_row]])
    if len(scarce_cells):
        _fallback(scarce_cells, cell_row, cell_col, rows, sequence, reservoir, grades)

    # base + Σ gain·discount, added one rank at a time (the same order for every row and batch)
    first = np.flatnonzero(np.concatenate(([True], cell_row[1:] != cell_row[:-1])))
    width = np.diff(np.append(first, n_cells))
    target = rows[cell_row[first]]
    for step in range(int(width.max())):
        has = np.flatnonzero(width > step)
        cells = first[has] + step
        out[target[has], first_rep:stop_rep] += (
            _gains_of(gains, grades[cells], target[has]) * disc[cell_col[cells]][:, None]
        )


def _fallback(cells, cell_row, cell_col, rows, sequence, reservoir, grades):
    """Reservoir fallback for the cells of scarce rows, one processing step at a time.

    ``stock[ℓ]`` (``[scarce rows × b]``) counts the documents of grade ℓ left in each replicate's
    reservoir. A draw ℓ* falls through the empty levels downwards to the highest non-empty level ≤ ℓ*
    (grade 0 when there is none; grade 0 is never "taken" in a way that matters).
    """
    local_row = cell_row[cells]
    key = sequence[rows[local_row], cell_col[cells]]
    order = np.lexsort((key, local_row))
    cells, local_row = cells[order], local_row[order]
    first = np.flatnonzero(np.concatenate(([True], local_row[1:] != local_row[:-1])))
    sizes = np.diff(np.append(first, len(cells)))
    step = np.arange(len(cells)) - np.repeat(first, sizes)
    slot = np.repeat(np.arange(len(first)), sizes)
    start = reservoir[rows[local_row[first]]]  # [scarce rows × L]
    b = grades.shape[1]
    n_levels = start.shape[1]
    # only levels that can run out for some row need tracking
    tracked = [lv for lv in range(1, n_levels) if (start[:, lv] < sizes).any()]
    stock = {lv: np.repeat(start[:, lv, None].astype(np.int32), b, axis=1) for lv in tracked}
    for s in range(int(step.max()) + 1):
        at = np.flatnonzero(step == s)
        sl = slot[at]
        got = grades[cells[at]]
        left = {lv: stock[lv][sl] for lv in tracked}
        for lv in reversed(tracked):  # fall through empty levels, highest first
            got[(got == lv) & (left[lv] <= 0)] = lv - 1
        for lv in tracked:
            taken = got == lv
            stock[lv][sl] = left[lv] - taken
        grades[cells[at]] = got


# ---------------------------------------------------------------------------------------------------
# summaries of the replicates
# ---------------------------------------------------------------------------------------------------
def _densest_runs(values, counts, row_of, row_starts, keep, n_rows):
    """One pass of the histogram selection over (value, count) runs: keep the runs in the fullest of
    the 20 bins of their row (every tied bin)."""
    lo = np.minimum.reduceat(np.where(keep, values, np.inf), row_starts)
    hi = np.maximum.reduceat(np.where(keep, values, -np.inf), row_starts)
    single = (hi - lo) <= _MODE_SINGLE_BIN
    span = np.where(single, 1.0, hi - lo)
    z = (values - lo[row_of]) / span[row_of]
    n_bins = len(MODE_BORDERS)
    # first border >= z: an arithmetic guess, then one exact correction step each way
    bins = np.clip(np.ceil(np.where(keep, z, 0.0) * n_bins).astype(np.intp) - 1, 0, n_bins - 1)
    bins += z > MODE_BORDERS[bins]
    bins = np.minimum(bins, n_bins - 1)
    bins -= (bins > 0) & (z <= MODE_BORDERS[np.maximum(bins - 1, 0)])
    bins[single[row_of]] = 0
    slot = row_of * n_bins + bins
    full = np.bincount(slot, weights=np.where(keep, counts, 0), minlength=n_rows * n_bins)
    best = full.reshape(n_rows, n_bins).max(axis=1)
    return keep & (full[slot] == best[row_of])


def _runs(sorted_values: np.ndarray):
    """Distinct values of each row of a row-sorted matrix: ``(values, counts, row_of, row_starts)``."""
    n_rows, b = sorted_values.shape
    flat = sorted_values.ravel()
    new = np.ones(flat.shape, dtype=bool)
    new[1:] = flat[1:] != flat[:-1]
    new[::b] = True
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, flat.size)).astype(np.float64)
    row_of = starts // b
    row_starts = np.flatnonzero(np.concatenate(([True], row_of[1:] != row_of[:-1])))
    return flat[starts], counts, row_of, row_starts


def most_likely(values: np.ndarray, presorted: bool = False) -> np.ndarray:
    """The "most likely" point estimate of bootstrap replicates ([FGPH]; ECIR
    ``BootstrappingBySelectingMostLikelyDataPoint``), per row of ``values``.

    1. If max − min ≤ 1e−4, one bin holds everything; otherwise min-max normalise to z ∈ [0, 1] and put
       each value in the first border β ∈ {0.05, 0.10, …, 1.00} with z ≤ β (20 bins).
    2. Keep every bin with the maximal count; repeat step 1 once on the kept values (normalised by their
       own min and max) and return the largest value left (ties go to the larger value).

    Computed on the distinct values of each row with their multiplicities (replicates of a discrete
    distribution repeat a few values). ``presorted``: rows are already sorted ascending. A 1-D input
    gives a scalar.
    """
    arr = np.asarray(values, dtype=np.float64)
    flat = arr.ndim == 1
    if flat:
        arr = arr[None, :]
    if arr.shape[1] == 0:
        raise ValueError("most_likely needs at least one value per row")
    if not presorted:
        arr = np.sort(arr, axis=1)
    vals, counts, row_of, row_starts = _runs(arr)
    keep = np.ones(vals.shape, dtype=bool)
    keep = _densest_runs(vals, counts, row_of, row_starts, keep, arr.shape[0])
    keep = _densest_runs(vals, counts, row_of, row_starts, keep, arr.shape[0])
    result = np.maximum.reduceat(np.where(keep, vals, -np.inf), row_starts)
    return result[0] if flat else result


def percentile(values: np.ndarray, q: float, presorted: bool = False) -> np.ndarray:
    """The ``q``-th percentile (0–100) per row with linear interpolation, equal bit for bit to
    ``numpy.percentile`` (pandas ``Series.quantile``): ``h = (b − 1)·q/100`` and
    ``x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋)`` (numpy evaluates it from the upper neighbour when
    ``h − ⌊h⌋ ≥ 0.5``). ``presorted``: rows already sorted ascending. A 1-D input gives a scalar."""
    arr = np.asarray(values, dtype=np.float64)
    flat = arr.ndim == 1
    if flat:
        arr = arr[None, :]
    if not presorted:
        arr = np.sort(arr, axis=1)
    n = arr.shape[1]
    if n == 0:
        raise ValueError("percentile needs at least one value per row")
    h = (n - 1) * (float(q) / 100.0)
    below = min(max(int(np.floor(h)), 0), n - 1)
    above = min(below + 1, n - 1)
    if h >= n - 1:
        below = above = n - 1
    gamma = h - below
    a, b = arr[:, below], arr[:, above]
    diff = b - a
    result = b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma
    return result[0] if flat else result


def median(values: np.ndarray, presorted: bool = False) -> np.ndarray:
    """The median per row, as ``numpy.median`` (the mean of the two middle values for even b)."""
    arr = np.asarray(values, dtype=np.float64)
    if not presorted:
        arr = np.sort(arr, axis=-1)
    n = arr.shape[-1]
    if n % 2:
        return arr[..., n // 2]
    return (arr[..., n // 2 - 1] + arr[..., n // 2]) / 2.0
