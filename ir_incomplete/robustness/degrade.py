"""Degrade complete judgments the way the seed papers do, to test how measures cope.

Every function returns a *new* qrels DataFrame (``query_id/doc_id/relevance``, one row per kept
judgment, rows sorted by query id then document id) and never modifies its input. Any qrels form that
:meth:`ir_incomplete.data.Qrels.from_any` reads is accepted (DataFrame, dict of dicts, ``Qrel`` tuples,
TREC file). Random methods take a ``seed`` (anything ``numpy.random.default_rng`` accepts) and give the
same result for the same judgments and seed, whatever the row order of the input.

Judged documents are the qrels entries with grade ≥ 0. Entries with a negative grade are already
"pooled but unjudged" (trec_eval's convention): they are never sampled.

Option ``unjudged`` (every function):

* ``"mark"`` (default): a judged document that is removed but stays in the pool is kept with grade −1
  (pooled but unjudged), so that pool-aware estimators (infAP, induced AP ``variant=pool``) can use it;
  negative entries of the input that stay in the pool are kept as −1;
* ``"drop"``: removed documents (and negative entries of the input) disappear from the qrels.

Which removed documents "stay in the pool": in :func:`sample_judgments`, :func:`stratified_sample`,
:func:`depth_pool` and :func:`mixed_pool` the full pool is the complete judgment set (Yilmaz & Aslam,
KAIS 2008, §4.5.5, treat the full pool as known and only the shallow pool as judged), so every removed
judged document does. In :func:`leave_one_group_out` the pool itself shrinks (the left-out group never
contributed): removed documents leave it and are dropped under both options.

Pools are formed from the runs' top-``depth`` documents in trec_eval's ranking order (score descending,
compared in single precision by default, ties broken by document id descending), see :class:`RunPool`.
Everything is vectorized over topics and documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
import pandas as pd

from ir_incomplete.data import Qrels, _check_score_precision, run_columns, trec_order

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import ArrayLike

    #: what :func:`numpy.random.default_rng` accepts as a seed
    Seed: TypeAlias = (
        int | np.integer | Sequence[int] | np.random.SeedSequence | np.random.BitGenerator | np.random.Generator | None
    )

__all__ = [
    "UNJUDGED_POLICIES",
    "RunPool",
    "sample_judgments",
    "stratified_sample",
    "depth_pool",
    "mixed_pool",
    "leave_one_group_out",
    "round_half_up",
]

UNJUDGED_POLICIES = ("mark", "drop")

_REJECTION_ROUNDS = 100  # rounds of redrawing a topic's sample before drawing it directly
_HALF_UP_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------------
def _check_fraction(fraction, name: str = "fraction") -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={fraction!r} is not a number; expected a fraction 0 < {name} <= 1")
    fraction = float(fraction)
    if not (0.0 < fraction <= 1.0):
        raise ValueError(f"{name}={fraction!r} is out of range; expected a fraction 0 < {name} <= 1")
    return fraction


@overload
def _check_int(value: object, name: str, minimum: int, allow_none: Literal[False] = False) -> int: ...
@overload
def _check_int(value: object, name: str, minimum: int, allow_none: bool) -> int | None: ...
def _check_int(value: object, name: str, minimum: int, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name}={value!r} is not an integer; expected an integer >= {minimum}{extra}")
    if value < minimum:
        raise ValueError(f"{name}={value!r} is out of range; expected an integer >= {minimum}")
    return int(value)


def _check_unjudged(unjudged: str) -> str:
    if unjudged not in UNJUDGED_POLICIES:
        raise ValueError(f"unjudged={unjudged!r} is not valid; choices: {', '.join(UNJUDGED_POLICIES)}")
    return unjudged


def round_half_up(x: ArrayLike) -> np.ndarray:
    """Round half up (``floor(x + 0.5)``) as int64, tolerant to binary representation: 0.7 × 5 = 3.5."""
    return np.floor(np.asarray(x, dtype=np.float64) + 0.5 + _HALF_UP_TOLERANCE).astype(np.int64)


def _rank_within(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """0-based rank of each element by ascending ``key`` inside its ``group`` (vectorized)."""
    n = len(group)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((key, group))
    g = group[order]
    start = np.concatenate(([True], g[1:] != g[:-1]))
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - first
    return rank


# ---------------------------------------------------------------------------------------------------
# judgments in canonical order
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Judgments:
    """Qrels sorted by (query id, doc id); grades as int64, every negative grade as −1."""

    qids: np.ndarray
    dids: np.ndarray
    grades: np.ndarray
    topic: np.ndarray
    topic_ids: np.ndarray

    @property
    def n_topics(self) -> int:
        return len(self.topic_ids)

    def frame(self, rows: np.ndarray, relevance: np.ndarray) -> pd.DataFrame:
        """A new qrels DataFrame of the selected ``rows`` (boolean mask) with grades ``relevance``."""
        return pd.DataFrame(
            {
                "query_id": pd.Series(self.qids[rows], dtype=object),
                "doc_id": pd.Series(self.dids[rows], dtype=object),
                "relevance": pd.Series(relevance[rows], dtype=np.int64),
            }
        )

    def result(self, kept: np.ndarray, marked: np.ndarray, unjudged: str) -> pd.DataFrame:
        """``kept`` rows keep their grade; ``marked`` rows stay as −1 under ``"mark"``."""
        kept = kept & (self.grades >= 0)
        rows = (kept | marked) if unjudged == "mark" else kept
        relevance = np.where(kept, self.grades, -1)
        return self.frame(rows, relevance)


def _judgments(qrels) -> _Judgments:
    if isinstance(qrels, _Judgments):
        return qrels
    if isinstance(qrels, Qrels):
        parsed = qrels
    else:
        parsed = Qrels.from_any(qrels)
    n_docs = max(len(parsed.doc_ids), 1)
    qids = parsed.topic_ids[parsed.keys // n_docs]
    dids = parsed.doc_ids[parsed.keys % n_docs]
    grades = np.where(parsed.grades < 0, -1, parsed.grades).astype(np.int64)
    topic_ids, topic = (
        np.unique(qids.astype(object), return_inverse=True)
        if len(qids)
        else (np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64))
    )
    if len(dids):
        _, doc_rank = np.unique(dids.astype(object), return_inverse=True)
        order = np.lexsort((doc_rank.reshape(-1), topic.reshape(-1)))
    else:
        order = np.zeros(0, dtype=np.int64)
    topic = np.asarray(topic).reshape(-1)[order].astype(np.int64)
    return _Judgments(
        qids=np.asarray(qids, dtype=object)[order],
        dids=np.asarray(dids, dtype=object)[order],
        grades=grades[order],
        topic=topic,
        topic_ids=np.asarray(topic_ids, dtype=object),
    )


def _rng(seed: Seed) -> np.random.Generator:
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"seed={seed!r} is not a valid seed (an int, a numpy SeedSequence or Generator): {exc}"
        ) from None


# ---------------------------------------------------------------------------------------------------
# random samples of the judgments
# ---------------------------------------------------------------------------------------------------
def sample_judgments(
    qrels: Any, fraction: float, seed: Seed, min_relevant: int = 1, *, rel: int = 1, unjudged: str = "mark"
) -> pd.DataFrame:
    """A uniform random sample of each topic's judgments (Yilmaz & Aslam, KAIS 2008, §3.1).

    For a topic with n judged documents, k = round_half_up(fraction · n) of them are drawn uniformly
    without replacement, raised to ``min_relevant`` when smaller (never above n). The sample of a topic
    with r ≥ ``min_relevant`` relevant documents (grade ≥ ``rel``) is a uniformly random k-subset
    *conditioned on* holding at least m = ``min_relevant`` of them; topics with fewer relevant documents
    than m are drawn once, unconditioned.

    How the conditioned sample is drawn (same distribution either way, seeded, reproducible):

    1. rejection: the k-subset of every topic is drawn (k smallest of one uniform key per document), and
       the topics short of m relevant documents are drawn again, all together, up to 100 times;
    2. a topic still short after that (its acceptance probability is small: e.g. 5 relevant among 3,000
       documents at 1 %) is drawn directly: the number X of relevant documents from the hypergeometric
       distribution of k draws among n documents of which r are relevant, truncated to X ≥ m
       (P(X = x) ∝ C(r, x) · C(n − r, k − x), by inversion of one uniform number), then X of the r
       relevant and k − X of the n − r other documents uniformly without replacement.

    Topics settled in step 1 get exactly the sample earlier versions (which only used step 1) drew for
    the same seed; only topics that needed more than 100 rounds get a different draw.

    ``unjudged="mark"`` keeps the documents left out as −1 (pooled but unjudged), ``"drop"`` removes them.
    """
    fraction = _check_fraction(fraction)
    min_relevant = _check_int(min_relevant, "min_relevant", 0)
    rel = _check_int(rel, "rel", 0)
    unjudged = _check_unjudged(unjudged)
    judg = _judgments(qrels)
    rng = _rng(seed)

    idx = np.flatnonzero(judg.grades >= 0)
    t = judg.topic[idx]
    relevant = judg.grades[idx] >= rel
    n_t = np.bincount(t, minlength=judg.n_topics)
    r_t = np.bincount(t[relevant], minlength=judg.n_topics)
    k_t = np.minimum(n_t, np.maximum(round_half_up(fraction * n_t), min_relevant))
    feasible = (r_t >= min_relevant) & (k_t >= min_relevant)

    keys = rng.random(len(idx))
    chosen = _rank_within(t, keys) < k_t[t]
    for _ in range(_REJECTION_ROUNDS + 1):
        got = np.bincount(t[chosen & relevant], minlength=judg.n_topics)
        bad = feasible & (got < min_relevant)
        if not bad.any() or _ == _REJECTION_ROUNDS:
            break
        redo = np.flatnonzero(bad[t])
        keys[redo] = rng.random(len(redo))
        chosen[redo] = _rank_within(t[redo], keys[redo]) < k_t[t[redo]]
    if bad.any():
        direct = np.flatnonzero(bad)
        n_rel = _truncated_hypergeometric(n_t[direct], r_t[direct], k_t[direct], min_relevant, rng)
        want_rel = np.zeros(judg.n_topics, dtype=np.int64)
        want_rel[direct] = n_rel
        redo = np.flatnonzero(bad[t])
        stratum = 2 * t[redo] + relevant[redo]  # (topic, relevant?) strata of the topics drawn directly
        want = np.where(relevant[redo], want_rel[t[redo]], k_t[t[redo]] - want_rel[t[redo]])
        chosen[redo] = _rank_within(stratum, rng.random(len(redo))) < want
    kept = np.zeros(len(judg.grades), dtype=bool)
    kept[idx[chosen]] = True
    return judg.result(kept, np.ones(len(judg.grades), dtype=bool), unjudged)


def _truncated_hypergeometric(
    n: np.ndarray, r: np.ndarray, k: np.ndarray, minimum: int, rng: np.random.Generator
) -> np.ndarray:
    """One draw per topic of X ~ Hypergeometric(k draws, n documents, r relevant) given X ≥ ``minimum``:
    P(X = x) ∝ C(r, x) · C(n − r, k − x) on max(minimum, k − (n − r)) ≤ x ≤ min(r, k), by inversion of
    one uniform number per topic (the caller ensures the support is not empty)."""
    from scipy.special import gammaln

    low = np.maximum(minimum, k - (n - r))
    high = np.minimum(r, k)
    size = high - low + 1
    segment = np.repeat(np.arange(len(n)), size)
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    x = low[segment] + np.arange(int(size.sum())) - start[segment]

    def log_choose(a, b):
        return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)

    log_p = log_choose(r[segment], x) + log_choose((n - r)[segment], k[segment] - x)
    weight = np.exp(log_p - np.maximum.reduceat(log_p, start)[segment])
    cumulative = np.cumsum(weight)
    before = np.concatenate(([0.0], cumulative))[start]  # mass of the earlier topics
    within = cumulative - before[segment]
    total = within[start + size - 1]
    target = rng.random(len(n)) * total
    below = np.bincount(segment, weights=within < target[segment], minlength=len(n)).astype(np.int64)
    return low + np.minimum(below, size - 1)


def stratified_sample(
    qrels: Any,
    fraction: float,
    seed: Seed,
    *,
    min_relevant: int = 1,
    min_nonrelevant: int = 10,
    rel: int = 1,
    unjudged: str = "mark",
) -> pd.DataFrame:
    """The same fraction of each topic's judgments of every grade (Ahlgren & Grönqvist, IP&M 2008, §6.3).

    For each topic and grade g with c_g judged documents, round_half_up(fraction · c_g) of them are drawn
    uniformly without replacement (round half up: 2.5 → 3). Then, where available, each topic keeps at
    least ``min_relevant`` relevant (grade ≥ ``rel``) and ``min_nonrelevant`` nonrelevant
    (0 ≤ grade < ``rel``) documents: missing ones are added uniformly at random from the documents of
    that class not yet drawn. A topic with fewer documents of a class keeps all of them.

    ``unjudged="mark"`` keeps the documents left out as −1 (pooled but unjudged), ``"drop"`` removes them.
    """
    fraction = _check_fraction(fraction)
    min_relevant = _check_int(min_relevant, "min_relevant", 0)
    min_nonrelevant = _check_int(min_nonrelevant, "min_nonrelevant", 0)
    rel = _check_int(rel, "rel", 0)
    unjudged = _check_unjudged(unjudged)
    judg = _judgments(qrels)
    rng = _rng(seed)

    idx = np.flatnonzero(judg.grades >= 0)
    t = judg.topic[idx]
    g = judg.grades[idx]
    levels, level = np.unique(g, return_inverse=True)  # distinct grades: memory independent of their values
    n_grades = max(len(levels), 1)
    stratum = t * n_grades + level.reshape(-1)
    c_s = np.bincount(stratum, minlength=judg.n_topics * n_grades)
    n_s = round_half_up(fraction * c_s)
    keys = rng.random(len(idx))
    chosen = _rank_within(stratum, keys) < n_s[stratum]

    relevant = g >= rel
    for in_class, minimum in ((relevant, min_relevant), (~relevant, min_nonrelevant)):
        available = np.bincount(t[in_class], minlength=judg.n_topics)
        have = np.bincount(t[in_class & chosen], minlength=judg.n_topics)
        need = np.minimum(minimum, available) - have
        cand = np.flatnonzero(in_class & ~chosen & (need[t] > 0))
        if len(cand):
            extra = _rank_within(t[cand], keys[cand]) < need[t[cand]]
            chosen[cand[extra]] = True
    kept = np.zeros(len(judg.grades), dtype=bool)
    kept[idx[chosen]] = True
    return judg.result(kept, np.ones(len(judg.grades), dtype=bool), unjudged)


# ---------------------------------------------------------------------------------------------------
# pools
# ---------------------------------------------------------------------------------------------------
def _as_run_mapping(runs: Any) -> dict[str, Any]:
    from ir_incomplete.api import as_run_mapping

    return as_run_mapping(runs)


class RunPool:
    """Documents of many runs in trec_eval's ranking order, ready to form depth-k pools.

    Built once from runs (anything :func:`ir_incomplete.evaluate` accepts as ``runs``); each run is
    ordered per topic by score descending (compared as ``float32`` by default, like trec_eval 9 and
    pytrec_eval; ``score_precision="float64"`` for trec_eval 10), ties by document id descending
    (code-point order, i.e. byte-wise on UTF-8 like C ``strcmp``): :func:`ir_incomplete.data.trec_order`
    over all runs at once.

    ``pool(depth, runs=None)`` is the union of the top-``depth`` documents of the chosen runs (all by
    default) per topic; ``depth=None`` takes whole rankings.
    """

    _source: dict[str, Any]  # the runs as given, by name (rebuilding at another score precision)

    def __init__(self, runs: Any, score_precision: str = "float32") -> None:
        if isinstance(runs, RunPool):
            runs = runs._source
        _check_score_precision(score_precision)
        run_map = _as_run_mapping(runs)
        self._source = run_map
        self.run_names: list[str] = list(run_map)
        self.score_precision = score_precision
        q_parts, d_parts, s_parts, r_parts = [], [], [], []
        for no, name in enumerate(self.run_names):
            q, d, s = run_columns(run_map[name])
            q_parts.append(q)
            d_parts.append(d)
            s_parts.append(s)
            r_parts.append(np.full(len(q), no, dtype=np.int64))
        if q_parts:
            qids = np.concatenate(q_parts)
            dids = np.concatenate(d_parts)
            scores = np.concatenate(s_parts)
            run_no = np.concatenate(r_parts)
        else:
            qids = dids = np.zeros(0, dtype=object)
            scores = np.zeros(0)
            run_no = np.zeros(0, dtype=np.int64)
        topic, topic_ids = pd.factorize(qids)
        doc, doc_ids = pd.factorize(dids)
        self.topic_ids = np.asarray(topic_ids, dtype=object)
        self.doc_ids = np.asarray(doc_ids, dtype=object)
        n_topics = max(len(self.topic_ids), 1)
        ranking = run_no * n_topics + topic.astype(np.int64)
        order = trec_order(ranking, scores, dids, score_precision)
        r_sorted = ranking[order]
        n = len(order)
        start = np.concatenate(([True], r_sorted[1:] != r_sorted[:-1])) if n else np.zeros(0, bool)
        first = np.maximum.accumulate(np.where(start, np.arange(n), 0)) if n else np.zeros(0, np.int64)
        self.rank = (np.arange(n) - first).astype(np.int64)  # 0-based rank within (run, topic)
        self.run = run_no[order]
        self.topic = topic.astype(np.int64)[order]
        self.doc = doc.astype(np.int64)[order]
        self._topic_index = pd.Index(self.topic_ids)
        self._doc_index = pd.Index(self.doc_ids)

    def __len__(self) -> int:
        return len(self.rank)

    def _run_mask(self, runs: Iterable[str] | None) -> np.ndarray:
        if runs is None:
            return np.ones(len(self.rank), dtype=bool)
        runs = list(runs)
        known = set(self.run_names)
        missing = [r for r in runs if r not in known]
        if missing:
            raise ValueError(f"runs {missing} are not among the pooled runs; choices: {', '.join(self.run_names)}")
        wanted = np.zeros(len(self.run_names), dtype=bool)
        wanted[[self.run_names.index(r) for r in runs]] = True
        return wanted[self.run]

    def pool_keys(self, depth: int | None, runs: Iterable[str] | None = None) -> np.ndarray:
        """Sorted unique ``topic * n_docs + doc`` keys of the pool (codes of this object)."""
        depth = _check_int(depth, "depth", 1, allow_none=True)
        sel = self._run_mask(runs)
        if depth is not None:
            sel &= self.rank < depth
        return np.unique(self.topic[sel] * max(len(self.doc_ids), 1) + self.doc[sel])

    def keys_of(self, qids: np.ndarray, dids: np.ndarray) -> np.ndarray:
        """Keys of (query id, doc id) pairs in this pool's codes; −1 where a run never retrieved them."""
        t = self._topic_index.get_indexer(qids) if len(qids) else np.zeros(0, np.int64)
        d = self._doc_index.get_indexer(dids) if len(dids) else np.zeros(0, np.int64)
        keys = t.astype(np.int64) * max(len(self.doc_ids), 1) + d
        keys[(t < 0) | (d < 0)] = -1
        return keys

    def contains(
        self, qids: np.ndarray, dids: np.ndarray, depth: int | None, runs: Iterable[str] | None = None
    ) -> np.ndarray:
        """Boolean mask: is each (query id, doc id) in the depth-``depth`` pool of ``runs``?"""
        keys = self.keys_of(qids, dids)
        return np.isin(keys, self.pool_keys(depth, runs)) & (keys >= 0)

    def pool(self, depth: int | None, runs: Iterable[str] | None = None) -> pd.DataFrame:
        """The pool as a ``query_id/doc_id`` DataFrame (topic-major, in first-seen order of the runs)."""
        keys = self.pool_keys(depth, runs)
        n_docs = max(len(self.doc_ids), 1)
        return pd.DataFrame(
            {
                "query_id": pd.Series(self.topic_ids[keys // n_docs], dtype=object),
                "doc_id": pd.Series(self.doc_ids[keys % n_docs], dtype=object),
            }
        )


def _pool_of(runs: Any, score_precision: str) -> RunPool:
    if isinstance(runs, RunPool):
        if runs.score_precision != score_precision:
            return RunPool(runs, score_precision)
        return runs
    return RunPool(runs, score_precision)


def depth_pool(
    qrels: Any, runs: Any, depth: int, *, unjudged: str = "mark", score_precision: str = "float32"
) -> pd.DataFrame:
    """The judgments of a depth-``depth`` pool of ``runs``: only qrels documents that some run ranks in
    its top ``depth`` for that topic keep their grade (a shallower TREC pool; Yilmaz & Aslam, KAIS 2008,
    §4.5.5).

    The full pool is known: under ``unjudged="mark"`` (default) every other qrels document (judged
    outside the depth-``depth`` pool, or a negative entry of the input) stays with grade −1, pooled but
    unjudged, so that infAP, indAP ``variant=pool`` and subAP see the full pool, as in the paper.
    ``"drop"`` keeps only the judged documents inside the depth-``depth`` pool. Pool documents absent
    from the qrels stay absent (no judgment can be invented).
    """
    depth = _check_int(depth, "depth", 1)
    unjudged = _check_unjudged(unjudged)
    judg = _judgments(qrels)
    pool = _pool_of(runs, score_precision)
    inside = pool.contains(judg.qids, judg.dids, depth)
    return judg.result(inside, np.ones(len(judg.grades), dtype=bool), unjudged)


def mixed_pool(
    qrels: Any,
    runs: Any,
    depth: int,
    extra: float,
    seed: Seed,
    *,
    unjudged: str = "mark",
    score_precision: str = "float32",
) -> pd.DataFrame:
    """A depth-``depth`` pool plus random documents from the rest of the full pool (Yilmaz & Aslam,
    KAIS 2008, §4.5.5: a depth-10 pool plus as many documents again sampled from the depth-100 pool).

    For each topic, let m be the number of judged documents in the depth-``depth`` pool of ``runs``.
    round_half_up(``extra`` · m) further judged documents are drawn uniformly without replacement from
    the topic's other judged documents (the rest of the full pool, i.e. of the complete qrels), or all
    of them when fewer are left. ``extra=1`` is the paper's "as many". The full pool is the qrels, so
    under ``unjudged="mark"`` every judged document not kept stays as −1 (pooled but unjudged).
    """
    depth = _check_int(depth, "depth", 1)
    if (
        isinstance(extra, bool)
        or not isinstance(extra, (int, float, np.integer, np.floating))
        or not np.isfinite(extra)
        or extra < 0
    ):
        raise ValueError(
            f"extra={extra!r} is not valid; expected a number >= 0 (extra documents per "
            f"topic as a multiple of the depth pool's judged documents; 1 = as many)"
        )
    unjudged = _check_unjudged(unjudged)
    judg = _judgments(qrels)
    rng = _rng(seed)
    pool = _pool_of(runs, score_precision)
    judged = judg.grades >= 0
    inside = pool.contains(judg.qids, judg.dids, depth) & judged
    m_t = np.bincount(judg.topic[inside], minlength=judg.n_topics)
    want = round_half_up(float(extra) * m_t)
    rest = np.flatnonzero(judged & ~inside)
    keys = rng.random(len(rest))
    t = judg.topic[rest]
    chosen = rest[_rank_within(t, keys) < want[t]]
    kept = inside.copy()
    kept[chosen] = True
    return judg.result(kept, np.ones(len(judg.grades), dtype=bool), unjudged)


def _missing(value: Any) -> bool:
    """Is ``value`` a missing cell (None, NaN, NA, an empty or blank string)?"""
    if isinstance(value, str):
        return not value.strip()
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # array-like values: not a scalar cell
        return False


def _group_map(groups: Any, run_names: Sequence[str]) -> dict[str, str]:
    if isinstance(groups, pd.Series):
        pairs = list(groups.items())
    elif isinstance(groups, pd.DataFrame):
        if not {"run", "group"} <= set(map(str, groups.columns)):
            raise ValueError(f"groups DataFrame needs columns 'run' and 'group' (found {list(groups.columns)})")
        pairs = list(zip(groups["run"], groups["group"], strict=True))
    elif isinstance(groups, Mapping):
        pairs = list(groups.items())
    else:
        raise ValueError(
            "groups must map run names to group names (a dict, a Series, or a DataFrame with "
            f"columns 'run' and 'group'); got {type(groups).__name__}"
        )
    nameless = [i for i, (run, _) in enumerate(pairs) if _missing(run)]
    if nameless:
        raise ValueError(
            f"groups has {len(nameless)} entr{'y' if len(nameless) == 1 else 'ies'} without a run name "
            f"(entry {nameless[0]}, counting from 0, has group {pairs[nameless[0]][1]!r})"
        )
    unnamed = [str(run) for run, group in pairs if _missing(group)]
    if unnamed:
        raise ValueError(
            f"groups gives no group name (a missing or empty value) for runs {unnamed[:10]}"
            f"{' …' if len(unnamed) > 10 else ''}; every run needs its group (team)"
        )
    mapping: dict[str, str] = {}
    for run, group in pairs:
        name = str(run)
        if name in mapping and mapping[name] != str(group):
            raise ValueError(f"groups gives run {name!r} two groups: {mapping[name]!r} and {str(group)!r}")
        mapping[name] = str(group)
    missing = [r for r in run_names if r not in mapping]
    if missing:
        raise ValueError(
            f"groups gives no group for runs {missing[:10]}{' …' if len(missing) > 10 else ''} "
            f"({len(missing)} of {len(run_names)} runs)"
        )
    return mapping


def leave_one_group_out(
    qrels: Any,
    runs: Any,
    groups: Mapping[str, str] | pd.Series | pd.DataFrame,
    group: str,
    depth: int | None,
    *,
    unjudged: str = "mark",
    score_precision: str = "float32",
) -> pd.DataFrame:
    """The judgments as if ``group`` had not contributed to the pool (Fröbe et al., ECIR 2023, §4.1).

    The pool is the union of the top-``depth`` documents (``None``: whole rankings) of ``runs``;
    ``groups`` maps every run name to its group (team). Judged documents that only the runs of ``group``
    put into that pool are removed; documents another group also pooled, and qrels documents outside
    the pool (judged for other reasons), are kept. The removed documents leave the pool, so they are
    dropped under both ``unjudged`` options.
    """
    depth = _check_int(depth, "depth", 1, allow_none=True)
    unjudged = _check_unjudged(unjudged)
    judg = _judgments(qrels)
    pool = _pool_of(runs, score_precision)
    mapping = _group_map(groups, pool.run_names)
    names = sorted(set(mapping[r] for r in pool.run_names))
    if group not in names:
        raise ValueError(f"group={group!r} has no run among the pooled runs; choices: {', '.join(names)}")
    mine = [r for r in pool.run_names if mapping[r] == group]
    others = [r for r in pool.run_names if mapping[r] != group]
    keys = pool.keys_of(judg.qids, judg.dids)
    in_mine = np.isin(keys, pool.pool_keys(depth, mine)) & (keys >= 0)
    in_others = np.isin(keys, pool.pool_keys(depth, others)) & (keys >= 0) if others else np.zeros(len(keys), bool)
    removed = in_mine & ~in_others
    return judg.result(~removed, ~removed, unjudged)
