"""Every (query, document) pair the runs retrieve, with each run's ranking of them, and the judging state.

:class:`Candidates` is built once from runs (anything :func:`ir_incomplete.evaluate` accepts): each run
is put in trec_eval's ranking order (score descending, compared as float32 by default, ties by document
id descending; :class:`ir_incomplete.robustness.RunPool`) and every retrieved pair gets a number.
Topics are numbered in natural order of their ids (numerically when every id is an integer, else as
text), so that outputs do not depend on the order of the runs. Pools, samples, the adaptive
strategies, judge-next and :func:`~ir_incomplete.judging.simulate` all build this one table and work
on its numbers; :class:`JudgeState` records which pairs are judged (and their grades) and which have
been handed out but not judged yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.data.columns import _ids
from ir_incomplete.data.prepared import PreparedRuns, duplicate_message
from ir_incomplete.robustness.degrade import RunPool

__all__ = ["Candidates", "JudgeState", "check_budget", "check_positive_int", "natural_order"]

UNJUDGED = -2  # grade code of a pair without a judgment (negative qrels grades are "pooled but unjudged")


def check_positive_int(value: object, name: str, what: str = "") -> int:
    """``value`` as an int ≥ 1, else ``ValueError`` naming ``name`` (``what`` explains the unit)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}={value!r} is not an integer; expected an integer >= 1{what}")
    if value < 1:
        raise ValueError(f"{name}={value!r} is out of range; expected an integer >= 1{what}")
    return int(value)


def check_budget(value: object, name: str = "budget") -> int:
    """A judgment budget: an integer ≥ 1 (``ValueError`` otherwise)."""
    return check_positive_int(value, name, " (a number of judgments)")


def natural_order(ids: np.ndarray) -> np.ndarray:
    """The permutation that sorts ids numerically when every id is an integer, else as text."""
    text = np.asarray([str(i) for i in ids], dtype=object)
    if len(text) and all(t.lstrip("-").isdigit() for t in text):
        values = np.asarray([int(t) for t in text], dtype=object)
        return np.asarray(sorted(range(len(text)), key=lambda i: (values[i], text[i])), dtype=np.int64)
    return np.argsort(text.astype(str), kind="stable").astype(np.int64)


class Candidates:
    """The pairs the runs retrieve and every run's ranking of them (numbers, not ids).

    Attributes: ``run_names``; ``topic_ids`` (natural order); ``doc_ids``; per pair ``pair_topic``,
    ``pair_doc`` (pairs sorted by topic, then document id as text); per row of any run, in the order
    (run, topic, rank): ``row_run``, ``row_topic``, ``row_rank`` (0-based), ``row_pair`` and
    ``row_ranking`` (``row_run · n_topics + row_topic``: the rows of one ranking are contiguous, in rank
    order); ``seg_start``/``seg_len`` ``[runs × topics]``: where each run's ranking of a topic lies among
    the rows. ``runs`` may also be :class:`~ir_incomplete.data.PreparedRuns` (re-ordered at
    ``score_precision``) or another :class:`Candidates` (re-built at ``score_precision`` if it differs).
    """

    _pool: RunPool

    def __init__(self, runs: Any, score_precision: str = "float32") -> None:
        if isinstance(runs, Candidates):
            runs = runs._pool
        elif isinstance(runs, PreparedRuns):
            runs = runs.frames()  # every run as a query_id/doc_id/score table
        pool = runs if isinstance(runs, RunPool) and runs.score_precision == score_precision else None
        if pool is None:
            pool = RunPool(runs, score_precision)
        self._pool = pool
        self.score_precision = score_precision
        self.run_names: list[str] = list(pool.run_names)
        if not self.run_names:
            raise ValueError("no runs given; pools and judging methods need at least one run")
        if len(pool) == 0:
            raise ValueError("the runs retrieve no documents; there is nothing to pool or judge")
        order = natural_order(pool.topic_ids)
        new_topic = np.empty(len(order), dtype=np.int64)
        new_topic[order] = np.arange(len(order))
        self.topic_ids = np.asarray(pool.topic_ids, dtype=object)[order]
        self.doc_ids = np.asarray(pool.doc_ids, dtype=object)
        n_runs, n_topics = len(self.run_names), len(self.topic_ids)
        topic = new_topic[pool.topic]
        rows = np.lexsort((pool.rank, topic, pool.run))
        self.row_run = pool.run[rows]
        self.row_topic = topic[rows]
        self.row_rank = pool.rank[rows]
        doc = pool.doc[rows]
        # pairs sorted by topic, then by document id as text (the order of pool files)
        doc_text_rank = np.empty(len(self.doc_ids), dtype=np.int64)
        doc_text_rank[np.argsort(self.doc_ids.astype(str), kind="stable")] = np.arange(len(self.doc_ids))
        key = self.row_topic * max(len(self.doc_ids), 1) + doc_text_rank[doc]
        pair_keys, row_pair = np.unique(key, return_inverse=True)
        self.row_pair = row_pair.reshape(-1).astype(np.int64)
        self._refuse_duplicates(doc)
        self.pair_topic = (pair_keys // max(len(self.doc_ids), 1)).astype(np.int64)
        pair_doc = np.empty(len(pair_keys), dtype=np.int64)
        pair_doc[self.row_pair] = doc
        self.pair_doc = pair_doc
        seg = self.row_run * n_topics + self.row_topic
        self.row_ranking = seg
        self.seg_len = np.bincount(seg, minlength=n_runs * n_topics).reshape(n_runs, n_topics).astype(np.int64)
        self.seg_start = (np.cumsum(self.seg_len.ravel()) - self.seg_len.ravel()).reshape(n_runs, n_topics)
        self._pair_index: pd.Index | None = None

    def _refuse_duplicates(self, doc: np.ndarray) -> None:
        """``ValueError`` when a run lists a document twice for a query (as :func:`ir_incomplete.evaluate`:
        the repeat would take a rank of its own and push a document out of a depth-k pool)."""
        flat = self.row_run * max(len(self.row_pair), 1) + self.row_pair
        if len(flat) < 2 or not (np.diff(np.sort(flat)) == 0).any():  # one sort: the usual case costs little
            return
        order = np.argsort(flat, kind="stable")
        again = np.flatnonzero(np.diff(flat[order]) == 0) + 1  # positions in ``order`` of repeats
        if len(again):
            row = int(order[again].min())  # the first repeat in row order: run, topic, rank
            raise ValueError(
                duplicate_message(
                    self.run_names[int(self.row_run[row])], self.doc_ids[doc[row]], self.topic_ids[self.row_topic[row]]
                )
            )

    # -- sizes -------------------------------------------------------------------------------------------
    @property
    def n_runs(self) -> int:
        return len(self.run_names)

    @property
    def n_topics(self) -> int:
        return len(self.topic_ids)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_topic)

    # -- selections --------------------------------------------------------------------------------------
    def run_mask(self, runs: Iterable[str] | None, name: str = "pool_runs") -> np.ndarray:
        """Boolean mask over rows: rows of the runs named (all when ``None``)."""
        if runs is None:
            return np.ones(len(self.row_run), dtype=bool)
        if isinstance(runs, str):
            runs = [runs]
        wanted = [str(r) for r in runs]
        unknown = [r for r in wanted if r not in self.run_names]
        if unknown:
            shown = ", ".join(self.run_names[:20]) + (" …" if len(self.run_names) > 20 else "")
            raise ValueError(f"{name}: no run named {unknown[0]!r}; the runs are {shown}")
        if not wanted:
            raise ValueError(f"{name} is empty; name at least one run (or None for all runs)")
        chosen = np.zeros(self.n_runs, dtype=bool)
        chosen[[self.run_names.index(r) for r in wanted]] = True
        return chosen[self.row_run]

    def best_rank(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per pair, the best (smallest, 0-based) rank any of the ``rows`` gives it (``-1``: none)."""
        sel = np.ones(len(self.row_pair), dtype=bool) if rows is None else rows
        best = np.full(self.n_pairs, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(best, self.row_pair[sel], self.row_rank[sel])
        best[best == np.iinfo(np.int64).max] = -1
        return best

    def pair_sum(self, values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per pair, the sum of ``values`` (one per selected row) over the ``rows`` (a mask; all when
        ``None``) that retrieve it (0 for pairs none of them retrieves): e.g. a fused score."""
        pair = self.row_pair if rows is None else self.row_pair[rows]
        return np.bincount(pair, weights=values, minlength=self.n_pairs)

    def pair_index(self, query_ids: Sequence[Any] | np.ndarray, doc_ids: Sequence[Any] | np.ndarray) -> np.ndarray:
        """Pair numbers of (query id, doc id) pairs; ``-1`` for pairs no run retrieved."""
        if self._pair_index is None:
            self._pair_index = pd.MultiIndex.from_arrays(
                [self.topic_ids[self.pair_topic].astype(str), self.doc_ids[self.pair_doc].astype(str)]
            )
        q = _ids(np.asarray(query_ids, dtype=object), "query_id")  # as every input's ids: 1.0 is "1"
        d = _ids(np.asarray(doc_ids, dtype=object), "doc_id")
        if len(q) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self._pair_index.get_indexer(pd.MultiIndex.from_arrays([q, d])), dtype=np.int64)

    def frame(self, pairs: np.ndarray, **columns: Any) -> pd.DataFrame:
        """A ``query_id/doc_id`` DataFrame of the pairs (in the order given), plus ``columns``."""
        pairs = np.asarray(pairs, dtype=np.int64)
        out = pd.DataFrame(
            {
                "query_id": pd.Series(self.topic_ids[self.pair_topic[pairs]], dtype=object),
                "doc_id": pd.Series(self.doc_ids[self.pair_doc[pairs]], dtype=object),
            }
        )
        for name, values in columns.items():
            out[name] = values
        return out

    def topic_of_query(self, query_ids: np.ndarray) -> np.ndarray:
        """Topic numbers of query ids (``-1`` for queries no run answers)."""
        index = pd.Index(self.topic_ids.astype(str))
        return np.asarray(index.get_indexer(_ids(np.asarray(query_ids, dtype=object), "query_id")), dtype=np.int64)


def _judgment_frame(judgments: Any, what: str) -> pd.DataFrame:
    """``query_id/doc_id/relevance`` of any qrels form, read as :func:`ir_incomplete.evaluate` reads qrels
    (:meth:`ir_incomplete.data.Qrels.from_any`): ids become text (``1``, ``1.0`` and ``"1"`` are one
    query), a (query, document) judged twice is refused, grades are integers; negative grades (pooled but
    unjudged) become −1. Errors name ``what``."""
    from ir_incomplete.data import Qrels

    try:
        frame = Qrels.from_any(judgments).to_frame()
    except (ValueError, TypeError) as exc:
        raise (TypeError if isinstance(exc, TypeError) else ValueError)(f"{what}: {exc}") from None
    return pd.DataFrame(
        {
            "query_id": frame["query_id"].to_numpy(dtype=object),
            "doc_id": frame["doc_id"].to_numpy(dtype=object),
            "relevance": frame["relevance"].to_numpy(dtype=np.int64),
        }
    )


def is_empty_qrels(qrels: Any) -> bool:
    """``None``, an empty DataFrame/mapping/sequence: no judgments yet."""
    if qrels is None:
        return True
    if isinstance(qrels, pd.DataFrame):
        return len(qrels) == 0
    if isinstance(qrels, (dict, list, tuple)):
        return len(qrels) == 0
    return False


class JudgeState:
    """Which candidate pairs are judged (and their grades) and which are handed out, not yet judged.

    ``grade[pair]``: the grade (≥ 0) or ``UNJUDGED``; ``issued[pair]``: handed out by ``next_batch`` and
    not judged yet (never handed out again); ``outside``: judgments of pairs no run retrieved (kept, not
    used to choose). Initial judgments come from ``qrels`` (entries with a negative grade are pooled but
    unjudged: they stay candidates). Qrels that judge a query no run answers are refused: no pool or
    strategy can choose documents for it, and silently keeping it would hide a mismatch of query ids.
    """

    def __init__(self, candidates: Candidates, qrels: Any = None) -> None:
        self.candidates = candidates
        self.grade = np.full(candidates.n_pairs, UNJUDGED, dtype=np.int64)
        self.issued = np.zeros(candidates.n_pairs, dtype=bool)
        self.outside = pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []})
        self.n_issued = np.zeros(candidates.n_topics, dtype=np.int64)  # pairs handed out per topic
        if not is_empty_qrels(qrels):
            frame = _judgment_frame(qrels, "qrels")
            topic = candidates.topic_of_query(frame["query_id"].to_numpy())
            if (topic < 0).any():
                missing = pd.unique(frame["query_id"].to_numpy()[topic < 0])
                raise ValueError(
                    f"the qrels judge {len(missing)} quer{'y' if len(missing) == 1 else 'ies'} that no run answers "
                    f"(first: {', '.join(map(repr, missing[:5]))}); pools and judging methods choose documents "
                    f"from the runs, so give qrels of the runs' queries only (e.g. qrels[qrels.query_id.isin(...)])"
                )
            self.record(frame, initial=True)

    def record(self, frame: pd.DataFrame, initial: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Store judgments (``query_id/doc_id/relevance``); returns the pair numbers of those on
        candidate pairs and their grades. Negative grades are not judgments (initial qrels) or refused."""
        rel = frame["relevance"].to_numpy(dtype=np.int64)
        if not initial and (rel < 0).any():
            i = int(np.flatnonzero(rel < 0)[0])
            raise ValueError(
                f"judgments must have grades >= 0; query {frame['query_id'].iloc[i]!r}, document "
                f"{frame['doc_id'].iloc[i]!r} has {rel[i]} (a document that cannot be judged counts as 0)"
            )
        pairs = self.candidates.pair_index(frame["query_id"].to_numpy(), frame["doc_id"].to_numpy())
        judged = rel >= 0
        inside = (pairs >= 0) & judged
        outside = (pairs < 0) & judged
        if outside.any():
            self.outside = pd.concat([self.outside, frame[outside]], ignore_index=True)
        p, g = pairs[inside], rel[inside]
        self.grade[p] = g
        self.issued[p] = False
        return p, g

    @property
    def available(self) -> np.ndarray:
        """Pairs neither judged nor handed out."""
        return (self.grade == UNJUDGED) & ~self.issued

    def judgments(self) -> pd.DataFrame:
        """Every judgment known: ``query_id/doc_id/relevance``."""
        pairs = np.flatnonzero(self.grade != UNJUDGED)
        frame = self.candidates.frame(pairs, relevance=self.grade[pairs])
        if len(self.outside):
            frame = pd.concat([frame, self.outside.astype({"relevance": np.int64})], ignore_index=True)
        return frame
