"""AP-family estimators for incomplete judgments, vectorized over all rankings at once.

Every "above rank k" count these estimators need is an exclusive cumulative sum along the depth axis of
the code matrix (see :mod:`ir_incomplete.data` for the codes). Values are computed only at the cells of
judged relevant documents and summed per row with ``np.bincount``.

Kernels: :func:`inferred_ap` (infAP), :func:`induced_ap` (indAP), :func:`subcollection_ap` (subAP),
:func:`bpref` (bpref and bpref-10) and :func:`rank_effectiveness` (RankEff). Measure definitions,
papers and conventions are documented on the measure classes in :mod:`ir_incomplete.measures.ap_family`.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ir_incomplete.data import POOLED_UNJUDGED, UNPOOLED
from ir_incomplete.kernels.cells import count_before, position_in_row, row_first_cell

__all__ = [
    "inferred_ap",
    "induced_ap",
    "subcollection_ap",
    "bpref",
    "rank_effectiveness",
    "binomial_inverse_expectation",
    "INDUCED_VARIANTS",
    "BPREF_VARIANTS",
]

INDUCED_VARIANTS = ("pool", "original")
BPREF_VARIANTS = ("trec_eval", "paper")


def _divide_by_relevant(sums: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    """``sums / R`` with the trec_eval convention R = 0 → 0."""
    out = np.zeros(len(sums), dtype=np.float64)
    has = n_relevant > 0
    out[has] = sums[has] / n_relevant[has]
    return out


def inferred_ap(
    codes: np.ndarray,
    n_relevant: np.ndarray,
    rel_level: int = 1,
    c: float = 2.0,
    eps: float = 1e-5,
    uniform: bool = False,
) -> np.ndarray:
    """infAP per row (Yilmaz & Aslam 2006; journal version §4.5).

    For the judged relevant document at rank k (1-based), with r / n the judged relevant / nonrelevant
    documents above k and d the pooled documents above k (judged or pooled-but-unjudged; ``uniform``
    sets d = k − 1)::

        E[P@k] = 1/k + (d/k) · (r + eps) / (r + n + c·eps),   E[P@1] = 1
        infAP  = Σ E[P@k] / R                                  (R = 0 → 0)

    ``codes`` is ``[rows × depth]``; ``n_relevant`` holds R per row.

    The ratio is computed as written whenever c·eps is a normal double (so trec_eval's values are
    reproduced bit for bit). When c·eps underflows (below 2.2e-308, e.g. c = eps = 1e-200) the ratio is
    1/c where nothing is judged above k (its exact value eps / (c·eps); as written it would be eps / 0)
    and as written elsewhere (r + n ≥ 1 dwarfs c·eps); when c·eps overflows it is computed as
    (r/eps + 1) / ((r + n)/eps + c). Every value is then at most max(1, 1/c), finite for finite c > 0.
    """
    _check_rel_level(rel_level)
    rows = codes.shape[0]
    # the cells of documents in the qrels (judged or pooled but unjudged), row-major: all the counts
    # above are counts of earlier cells of the same row among these
    row, col = np.nonzero((codes >= 0) | (codes == POOLED_UNJUDGED))
    code = codes[row, col]
    relevant = code >= rel_level
    if not relevant.any():
        return np.zeros(rows, dtype=np.float64)
    first = row_first_cell(row, rows)
    at = np.flatnonzero(relevant)
    rel_above = count_before(relevant, first)[at].astype(np.float64)
    judged_above = count_before(code >= 0, first)[at].astype(np.float64)
    nonrel_above = judged_above - rel_above
    row, col = row[at], col[at]
    k = col.astype(np.float64) + 1.0
    pooled_above = k - 1.0 if uniform else (at - first[at]).astype(np.float64)
    precision = 1.0 / k + (pooled_above / k) * _smoothed_precision_above(rel_above, nonrel_above, c, eps)
    precision[col == 0] = 1.0
    sums = np.bincount(row, weights=precision, minlength=rows)
    return _divide_by_relevant(sums, n_relevant)


def _smoothed_precision_above(rel_above: np.ndarray, nonrel_above: np.ndarray, c: float, eps: float) -> np.ndarray:
    """(r + eps) / (r + n + c·eps) without underflow or overflow of c·eps (see :func:`inferred_ap`)."""
    c_eps = c * eps
    if math.isfinite(c_eps) and c_eps >= sys.float_info.min:  # every usual c and eps: the formula as written
        return (rel_above + eps) / (rel_above + nonrel_above + c_eps)
    if not math.isfinite(c_eps):  # c·eps overflows: divide numerator and denominator by eps
        return (rel_above / eps + 1.0) / ((rel_above + nonrel_above) / eps + c)
    judged_above = rel_above + nonrel_above  # c·eps underflows
    some = judged_above > 0
    ratio = np.full(len(judged_above), 1.0 / c)  # nothing judged above: eps / (c·eps), exactly
    ratio[some] = (rel_above[some] + eps) / (judged_above[some] + c_eps)
    return ratio


# ---------------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------------
def _check_rel_level(rel_level: int) -> None:
    if rel_level < 0:
        raise ValueError(f"rel_level={rel_level!r} must be >= 0 (negative codes mark unjudged documents)")


def _counts_at(mask: np.ndarray, row: np.ndarray, col: np.ndarray) -> np.ndarray:
    """Inclusive cumulative count of ``mask`` along each row, read at the cells ``(row, col)``.

    For a cell that is not itself in ``mask`` this is also the exclusive count ("above rank k")."""
    return np.cumsum(mask, axis=1, dtype=np.int32)[row, col].astype(np.int64)


def _per_row(values, rows: int, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim == 0:
        return np.full(rows, arr.item())
    if arr.shape != (rows,):
        raise ValueError(f"{name} must be a scalar or hold one value per row ({rows}), got shape {arr.shape}")
    return arr


def _check_cutoff(cutoff) -> None:
    if cutoff is not None and (isinstance(cutoff, bool) or int(cutoff) != cutoff or cutoff < 1):
        raise ValueError(f"cutoff={cutoff!r} must be a positive integer or None")


# ---------------------------------------------------------------------------------------------------
# induced AP
# ---------------------------------------------------------------------------------------------------
def induced_ap(
    codes: np.ndarray, n_relevant: np.ndarray, rel_level: int = 1, variant: str = "pool", cutoff=None
) -> np.ndarray:
    """Induced AP per row (Yilmaz & Aslam, KAIS 2008, §4.3): AP on the ranking with documents dropped.

    ``variant="pool"`` drops pooled-but-unjudged documents (qrels grade < 0) and keeps unpooled ones as
    nonrelevant; ``"original"`` drops every unjudged document (trec_eval ``-J map``). With rank(·) the
    rank in the reduced list and r the relevant documents up to and including it::

        indAP = (1/R) · Σ_{retrieved judged relevant d, rank(d) ≤ cutoff} r / rank(d)   (R = 0 → 0)

    The cut-off applies to the reduced list (condense, then cut). ``codes`` is the full, uncut matrix.
    """
    _check_rel_level(rel_level)
    _check_cutoff(cutoff)
    if variant not in INDUCED_VARIANTS:
        raise ValueError(f"variant={variant!r} is not valid; choices: {', '.join(INDUCED_VARIANTS)}")
    rows = codes.shape[0]
    if codes.size == 0:
        return np.zeros(rows, dtype=np.float64)
    row, col = np.nonzero(codes >= rel_level)
    if len(row) == 0:
        return np.zeros(rows, dtype=np.float64)
    if variant == "pool":
        kept = (codes >= 0) | (codes == UNPOOLED)
    else:
        kept = codes >= 0
    rank = _counts_at(kept, row, col)
    rel_upto = position_in_row(row, rows)
    if cutoff is not None:
        inside = rank <= cutoff
        row, rank, rel_upto = row[inside], rank[inside], rel_upto[inside]
    sums = np.bincount(row, weights=rel_upto / rank, minlength=rows)
    return _divide_by_relevant(sums, n_relevant)


# ---------------------------------------------------------------------------------------------------
# subcollection AP
# ---------------------------------------------------------------------------------------------------
#: relative cost of one term of the direct sum against one update of the recurrence (measured on
#: TREC-COVID: about 23 ns against 2.3 ns)
_DIRECT_TERM_COST = 10.0
#: terms of the direct sum evaluated at once (bounds the memory: ~8 arrays of this many float64)
_DIRECT_CHUNK = 1 << 20


def binomial_inverse_expectation(m, nd, p, limit=None) -> np.ndarray:
    """``E[ 1{m + X ≤ limit} / (m + X) ]`` with ``X ~ Binomial(nd, p)``, element-wise.

    ``m ≥ 1`` and ``nd ≥ 0`` are integer arrays, ``p`` a float array in [0, 1] (same length);
    ``limit=None`` drops the indicator. The value is
    ``Σ_i C(nd,i) p^i (1−p)^(nd−i) · 1{m+i ≤ limit}/(m+i)``, with 0⁰ = 1: ``p = 0`` gives exactly
    ``1/m`` and ``p = 1`` exactly ``1/(m+nd)`` (or 0 past ``limit``).

    Equal ``(m, nd, p)`` cells are computed once. Each distinct ``p`` is then evaluated by whichever of
    two stable methods is cheaper for its cells:

    * the recurrence over the number of Bernoulli trials (no binomial coefficients at all)::

          g_0(x) = 1{x ≤ limit} / x,     g_{s+1}(x) = (1−p)·g_s(x) + p·g_s(x+1),     value = g_nd(m)

      Every step is a convex combination of numbers in [0, 1], so rounding errors are not amplified.
      It runs for all such ``p`` and all x at once, for ``max(nd)`` steps, about
      ``max(nd) · max(m + nd) / 2`` updates per ``p`` however many cells there are;
    * the direct sum with the binomial probabilities computed in log space
      (``lgamma(nd+1) − lgamma(i+1) − lgamma(nd−i+1) + i·log p + (nd−i)·log(1−p)``, then ``exp``): no
      coefficient overflows, terms below the double range underflow to 0; ``nd + 1`` terms per cell.
      Relative error about ``1e-16 · lgamma(nd + 1)`` (≈ 6e-13 at nd = 1000), against ≈ 1e-15 for the
      recurrence.
    """
    m = np.asarray(m, dtype=np.int64)
    nd = np.asarray(nd, dtype=np.int64)
    p = np.asarray(p, dtype=np.float64)
    if not (m.shape == nd.shape == p.shape) or m.ndim != 1:
        raise ValueError("m, nd and p must be 1-d arrays of the same length")
    out = np.zeros(len(m), dtype=np.float64)
    if len(m) == 0:
        return out
    if (m < 1).any() or (nd < 0).any():
        raise ValueError("m must be >= 1 and nd >= 0")
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("p must lie in [0, 1]")
    _check_cutoff(limit)
    top = np.iinfo(np.int64).max if limit is None else int(limit)
    zero = (p == 0.0) & (m <= top)
    out[zero] = 1.0 / m[zero]
    one = (p == 1.0) & (m + nd <= top)
    out[one] = 1.0 / (m[one] + nd[one])
    cells = np.flatnonzero((p > 0.0) & (p < 1.0) & (m <= top))
    if len(cells) == 0:
        return out

    values, group = np.unique(p[cells], return_inverse=True)
    group = group.reshape(-1)
    # distinct (p, m, nd) cells, via one integer key
    mc, ndc = m[cells], nd[cells]
    m_span, nd_span = int(mc.max()) + 1, int(ndc.max()) + 1
    key = (group.astype(np.int64) * m_span + mc) * nd_span + ndc
    distinct, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    u_nd = distinct % nd_span
    u_m = (distinct // nd_span) % m_span
    u_group = distinct // (nd_span * m_span)
    n_groups = len(values)
    nd_max = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(nd_max, u_group, u_nd)
    reach = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(reach, u_group, u_m + u_nd)
    if limit is not None:
        reach = np.minimum(reach, top)
    recurrence_cost = nd_max * reach / 2.0
    direct_cost = _DIRECT_TERM_COST * np.bincount(u_group, weights=u_nd + 1.0, minlength=n_groups)
    by_recurrence = (recurrence_cost <= direct_cost)[u_group]
    result = np.empty(len(u_m), dtype=np.float64)
    if by_recurrence.any():
        sel = np.flatnonzero(by_recurrence)
        result[sel] = _binomial_recurrence(u_m[sel], u_nd[sel], values, u_group[sel], limit)
    if not by_recurrence.all():
        sel = np.flatnonzero(~by_recurrence)
        result[sel] = _binomial_direct(u_m[sel], u_nd[sel], values[u_group[sel]], limit)
    out[cells] = result[inverse]
    return out


def _binomial_recurrence(m, nd, values, group, limit) -> np.ndarray:
    """The recurrence of :func:`binomial_inverse_expectation` for cells ``(m, nd)`` with
    ``p = values[group]`` (0 < p < 1, m ≤ limit)."""
    used, group = np.unique(group, return_inverse=True)
    group = group.reshape(-1)
    values = values[used]
    nd_max = int(nd.max())
    reach = int((m + nd).max())  # the largest x any cell's expectation involves
    width = reach if limit is None else min(reach, int(limit))
    # state[x - 1, j] = g_s(x) for the j-th p. Row ``width`` stays 0: it is g_s(limit + 1) when the
    # cut-off bounds the width, and is never read otherwise. One contiguous block per step.
    state = np.zeros((width + 1, len(values)), dtype=np.float64)
    state[:width] = (1.0 / np.arange(1, width + 1, dtype=np.float64))[:, None]
    scratch = np.empty_like(state)
    by_nd = np.argsort(nd, kind="stable")
    bounds = np.searchsorted(nd[by_nd], np.arange(nd_max + 2))
    result = np.empty(len(m), dtype=np.float64)
    for s in range(nd_max + 1):
        lo, hi = bounds[s], bounds[s + 1]
        if hi > lo:
            idx = by_nd[lo:hi]
            result[idx] = state[m[idx] - 1, group[idx]]
        if s == nd_max:
            break
        # after this step only x <= reach - (s + 1) is needed, and never x > limit
        w = min(width, reach - (s + 1))
        if w <= 0:
            continue
        # g_{s+1}(x) = g_s(x) + p·(g_s(x+1) − g_s(x)) = (1−p)·g_s(x) + p·g_s(x+1)
        step = np.subtract(state[1 : w + 1], state[:w], out=scratch[:w])
        np.multiply(step, values, out=step)
        np.add(state[:w], step, out=state[:w])
    return result


def _binomial_direct(m, nd, p, limit) -> np.ndarray:
    """The direct log-space sum of :func:`binomial_inverse_expectation` (0 < p < 1, m ≤ limit)."""
    log_factorial = np.array([math.lgamma(k + 1.0) for k in range(int(nd.max()) + 1)])
    log_p, log_q = np.log(p), np.log1p(-p)
    sizes = nd + 1
    ends = np.cumsum(sizes)
    result = np.empty(len(m), dtype=np.float64)
    first = 0
    while first < len(m):
        # cells first..last-1 hold at most _DIRECT_CHUNK terms (at least one cell)
        base = ends[first - 1] if first else 0
        last = max(int(np.searchsorted(ends, base + _DIRECT_CHUNK, side="right")), first + 1)
        cell = np.repeat(np.arange(last - first), sizes[first:last])
        starts = ends[first:last] - sizes[first:last] - base
        i = np.arange(len(cell), dtype=np.int64) - starts[cell]
        n = nd[first:last][cell]
        log_pmf = (
            log_factorial[n]
            - log_factorial[i]
            - log_factorial[n - i]
            + i * log_p[first:last][cell]
            + (n - i) * log_q[first:last][cell]
        )
        x = m[first:last][cell] + i
        terms = np.exp(log_pmf) / x
        if limit is not None:
            terms[x > limit] = 0.0
        result[first:last] = np.bincount(cell, weights=terms, minlength=last - first)
        first = last
    return result


def subcollection_ap(codes: np.ndarray, n_relevant: np.ndarray, p, rel_level: int = 1, cutoff=None) -> np.ndarray:
    """Subcollection AP per row (Yilmaz & Aslam, KAIS 2008, §4.4).

    Pooled-but-unjudged documents are dropped; each unpooled document stays in the ranking (as
    nonrelevant) with probability ``p`` (a scalar or one value per row). For the judged relevant document
    d, with r / n the judged relevant / nonrelevant documents up to and including d and nd the unpooled
    ones::

        E[P(d)] = Σ_{i=0}^{nd} C(nd,i) p^i (1−p)^(nd−i) · 1{r+n+i ≤ cutoff} · r/(r+n+i)
        subAP   = (1/R) · Σ_{retrieved judged relevant d} E[P(d)]                      (R = 0 → 0)

    The indicator is the cut-off applied to each reduced ranking (condense, then cut). ``p = 1`` and
    ``p = 0`` are computed exactly as :func:`induced_ap` ``"pool"`` and ``"original"`` (0⁰ = 1).
    ``codes`` is the full, uncut matrix.
    """
    _check_rel_level(rel_level)
    _check_cutoff(cutoff)
    rows = codes.shape[0]
    p_rows = _per_row(np.asarray(p, dtype=np.float64), rows, "p")
    if not np.all((p_rows >= 0.0) & (p_rows <= 1.0)):
        raise ValueError("p must lie in [0, 1] (fraction of the complete judgment set that is judged)")
    if codes.size == 0:
        return np.zeros(rows, dtype=np.float64)
    row, col = np.nonzero(codes >= rel_level)
    if len(row) == 0:
        return np.zeros(rows, dtype=np.float64)
    judged_upto = _counts_at(codes >= 0, row, col)
    unpooled_upto = _counts_at(codes == UNPOOLED, row, col)
    rel_upto = position_in_row(row, rows)
    pc = p_rows[row]
    one, zero = pc == 1.0, pc == 0.0
    # the reduced rank: every unpooled doc kept (p = 1), none (p = 0), at least the judged ones (else)
    low_rank = np.where(one, judged_upto + unpooled_upto, judged_upto)
    use = np.ones(len(row), dtype=bool) if cutoff is None else low_rank <= cutoff
    row, pc, one, zero = row[use], pc[use], one[use], zero[use]
    judged_upto, unpooled_upto, rel_upto, low_rank = (
        judged_upto[use],
        unpooled_upto[use],
        rel_upto[use],
        low_rank[use],
    )
    weights = np.empty(len(row), dtype=np.float64)
    exact = one | zero
    weights[exact] = rel_upto[exact] / low_rank[exact]
    mid = ~exact
    if mid.any():
        weights[mid] = rel_upto[mid] * binomial_inverse_expectation(
            judged_upto[mid], unpooled_upto[mid], pc[mid], cutoff
        )
    sums = np.bincount(row, weights=weights, minlength=rows)
    return _divide_by_relevant(sums, n_relevant)


# ---------------------------------------------------------------------------------------------------
# bpref, bpref-10, RankEff
# ---------------------------------------------------------------------------------------------------
def _nonrelevant_above(codes: np.ndarray, rel_level: int):
    """Rows of the judged relevant cells and the judged nonrelevant documents above each."""
    row, col = np.nonzero(codes >= 0)  # the judged cells, row-major
    relevant = codes[row, col] >= rel_level
    nonrel_before = count_before(~relevant, row_first_cell(row, codes.shape[0]))
    return row[relevant], nonrel_before[relevant]


def bpref(
    codes: np.ndarray,
    n_relevant: np.ndarray,
    n_nonrelevant: np.ndarray,
    rel_level: int = 1,
    variant: str = "trec_eval",
    extra: int = 0,
) -> np.ndarray:
    """bpref (``extra=0``) or bpref-10 (``extra=10``) per row; ``codes`` already cut at the cut-off.

    With n_r the judged nonrelevant documents above the judged relevant document r, C = R + extra and
    N the judged nonrelevant documents of the topic (negative qrels excluded)::

        trec_eval: term(r) = 1 − min(n_r, C) / min(C, N)    (term = 1 when n_r = 0)
        paper:     term(r) = 1 − min(n_r, C) / C
        value = (1/R) · Σ_{retrieved judged relevant r} term(r)             (R = 0 → 0)
    """
    _check_rel_level(rel_level)
    if variant not in BPREF_VARIANTS:
        raise ValueError(f"variant={variant!r} is not valid; choices: {', '.join(BPREF_VARIANTS)}")
    if extra < 0:
        raise ValueError(f"extra={extra!r} must be >= 0")
    rows = codes.shape[0]
    if codes.size == 0:
        return np.zeros(rows, dtype=np.float64)
    row, above = _nonrelevant_above(codes, rel_level)
    if len(row) == 0:
        return np.zeros(rows, dtype=np.float64)
    cap = np.asarray(n_relevant, dtype=np.int64)[row] + int(extra)
    counted = np.minimum(above, cap).astype(np.float64)
    terms = np.ones(len(row), dtype=np.float64)
    if variant == "trec_eval":
        some = above > 0  # then N >= n_r > 0
        denominator = np.minimum(cap, np.asarray(n_nonrelevant, dtype=np.int64)[row])
        terms[some] = 1.0 - counted[some] / denominator[some]
    else:
        terms = 1.0 - counted / cap
    sums = np.bincount(row, weights=terms, minlength=rows)
    return _divide_by_relevant(sums, n_relevant)


def rank_effectiveness(
    codes: np.ndarray, n_relevant: np.ndarray, n_nonrelevant: np.ndarray, rel_level: int = 1
) -> np.ndarray:
    """RankEff per row (Ahlgren & Grönqvist, IP&M 2008, with their practical adjustments); ``codes``
    already cut at the cut-off.

    Judged nonrelevant documents that are not retrieved (or lie past the cut-off) count as ranked below
    every retrieved document, so the judged nonrelevant documents below r number N − n_r::

        RankEff = (1/R) · Σ_{retrieved judged relevant r} (N − n_r) / N    (N = 0: each term 1; R = 0 → 0)
    """
    _check_rel_level(rel_level)
    rows = codes.shape[0]
    if codes.size == 0:
        return np.zeros(rows, dtype=np.float64)
    row, above = _nonrelevant_above(codes, rel_level)
    if len(row) == 0:
        return np.zeros(rows, dtype=np.float64)
    n_nonrel = np.asarray(n_nonrelevant, dtype=np.int64)[row]
    terms = np.ones(len(row), dtype=np.float64)
    some = n_nonrel > 0
    terms[some] = (n_nonrel[some] - above[some]) / n_nonrel[some]
    sums = np.bincount(row, weights=terms, minlength=rows)
    return _divide_by_relevant(sums, n_relevant)
