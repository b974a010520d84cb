"""Runs → the ranked-code matrix: :class:`PreparedRuns` (converted once, whatever the qrels) and
:class:`RankedLists` (the ``[rankings × depth]`` code matrix against one :class:`~ir_incomplete.data.Qrels`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    from ir_incomplete._lazy import pandas as pd

from ir_incomplete.data.codes import PAD, POOLED_UNJUDGED, UNPOOLED
from ir_incomplete.data.columns import _hash_ids, _query_segments, _run_columns
from ir_incomplete.data.ids import DocIds, hash_probe
from ir_incomplete.data.qrels import Qrels, _stratum_lookup
from ir_incomplete.data.ranking import _check_score_precision, _grouped_order, _grouped_tie_moves, _trec_order


@dataclass
class RankedLists:
    """Rankings of one or more runs against one :class:`Qrels`.

    Row ``i`` is the ranking of run ``run_names[run_of_row[i]]`` for topic
    ``qrels.topic_ids[topic_of_row[i]]``; rows are ordered by run, then topic code.
    ``codes[i, j]`` is the code of the document at rank ``j + 1`` (``PAD`` after ``lengths[i]``).
    """

    codes: np.ndarray
    lengths: np.ndarray
    run_of_row: np.ndarray
    topic_of_row: np.ndarray
    run_names: list[str]
    qrels: Qrels
    #: document ids in ranking order: row ``i`` is ``doc_ids[row_starts[i] : row_starts[i] + lengths[i]]``
    #: (they may hold other rows too; indexing gives an object array of ``str``, see
    #: :class:`~ir_incomplete.data.ids.DocIds`); ``None`` when not kept. Used by measures that order
    #: documents by id (``BootNDCG(order=docid)``).
    doc_ids: DocIds | np.ndarray | None = field(default=None, repr=False)
    row_starts: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        return self.codes.shape[0]

    def truncated(self, cutoff: int | None) -> np.ndarray:
        """The code matrix cut after rank ``cutoff`` (a view; the whole matrix for ``None``)."""
        if cutoff is None:
            return self.codes
        return self.codes[:, :cutoff]

    def per_topic(self, values: np.ndarray) -> np.ndarray:
        """Broadcast a per-topic array (indexed by topic code) to the rows."""
        return values[self.topic_of_row]

    def strata(self, cutoff: int | None = None) -> np.ndarray:
        """``[rows × depth]`` stratum code (local to the topic, see :attr:`Qrels.strata`) of each ranked
        document cut after rank ``cutoff``: ≥ 0 for documents in the qrels (judged or pooled but
        unjudged), −1 for unpooled documents and padding. Plain qrels have the one stratum 0. The look-up
        is done once per cut-off width and kept."""
        codes = self.truncated(cutoff)
        cached = self.__dict__.get("_strata")
        if cached is not None and cached.shape[1] >= codes.shape[1]:
            return cached[:, : codes.shape[1]]
        if not self.qrels.is_sampled:
            return np.where((codes >= 0) | (codes == POOLED_UNJUDGED), 0, -1).astype(np.int32)
        if self.doc_ids is None or self.row_starts is None:
            raise ValueError("these RankedLists were built without document ids; strata cannot be looked up")
        depth = codes.shape[1]
        in_pool = np.nonzero((codes >= 0) | (codes == POOLED_UNJUDGED))
        out = np.full(codes.shape, -1, dtype=np.int32)
        if len(in_pool[0]) and depth:
            items = self.row_starts[in_pool[0]] + in_pool[1]
            dids = self.doc_ids[items]
            doc_codes = self.qrels.doc_codes(dids, _hash_ids(dids))
            out[in_pool] = _stratum_lookup(self.qrels, self.topic_of_row[in_pool[0]], doc_codes)
        self.__dict__["_strata"] = out
        return out


_PAD32 = np.iinfo(np.int32).max


@dataclass
class PreparedRuns:
    """Runs converted once, whatever the qrels: the documents of every (run, query) pair in trec_eval's
    ranking order, their ids hashed once and checked for duplicates. :meth:`rank` then only looks up
    grades against given qrels, so the same runs are evaluated against many qrels (robustness studies,
    :func:`ir_incomplete.evaluate` called repeatedly) at the cost of a look-up, not of a conversion.

    Build with :func:`prepare_runs`. Row ``i`` is the ranking of run ``run_names[row_run[i]]`` for query
    ``row_query[i]``: documents ``doc_ids[row_starts[i] : row_starts[i] + lengths[i]]`` (scores alike),
    best first. ``doc_ids`` is a :class:`~ir_incomplete.data.ids.DocIds`: indexing it gives an object
    array of ``str``, ``np.asarray(doc_ids)`` all of them (ids read from Arrow stay Arrow strings until
    then). ``duplicate_rows`` are rows that list a document twice (``duplicate_docs``: the first such
    document); ranking one of them against qrels that judge its query raises, as trec_eval refuses it.
    Picklable: worker processes receive it once (document hashes are recomputed there when the process
    hashes strings differently).
    """

    run_names: list[str]
    score_precision: str
    row_run: np.ndarray
    row_query: np.ndarray
    row_starts: np.ndarray
    lengths: np.ndarray
    doc_ids: DocIds
    scores: np.ndarray
    duplicate_rows: np.ndarray
    duplicate_docs: np.ndarray
    _hashes: np.ndarray | None = field(repr=False, default=None)
    _hash_probe: int = field(repr=False, default=0)
    _uses: int = field(repr=False, default=0)
    # (document number of each item, distinct ids, row of each item), once evaluated twice; False: hashes collide
    _docs: tuple | bool | None = field(repr=False, default=None)
    _docs_index: pd.Index | None = field(repr=False, default=None)  # hashes of the distinct ids
    _docs_probe: int = field(repr=False, default=0)
    _frames: dict | None = field(repr=False, default=None)
    _judged: tuple | None = field(repr=False, default=None)

    def __post_init__(self):
        if not isinstance(self.doc_ids, DocIds):
            self.doc_ids = DocIds(np.asarray(self.doc_ids, dtype=object))

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_frames"] = state["_judged"] = None  # rebuilt where needed rather than shipped
        return state

    @property
    def n_rows(self) -> int:
        return len(self.row_run)

    @property
    def hashes(self) -> np.ndarray:
        """64-bit hashes of ``doc_ids`` in this process (recomputed once after unpickling elsewhere)."""
        probe = hash_probe()
        if self._hashes is None or self._hash_probe != probe:
            self._hashes = _hash_ids(self.doc_ids)
            self._hash_probe = probe
        return self._hashes

    def run_sizes(self) -> np.ndarray:
        """Number of documents of each run (all its queries)."""
        return np.bincount(self.row_run, weights=self.lengths, minlength=len(self.run_names)).astype(np.int64)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Each run as a ``query_id/doc_id/score`` DataFrame (ranking order; built once, shared: do not
        modify them)."""
        if self._frames is not None:
            return dict(self._frames)
        out = {}
        for run_no, name in enumerate(self.run_names):
            rows = np.flatnonzero(self.row_run == run_no)
            items = _row_items(self.row_starts[rows], self.lengths[rows])
            out[name] = pd.DataFrame(
                {
                    "query_id": pd.Series(np.repeat(self.row_query[rows], self.lengths[rows]), dtype=object),
                    "doc_id": pd.Series(self.doc_ids[items], dtype=object),
                    "score": self.scores[items],
                }
            )
        self._frames = out
        return dict(out)

    def select(self, names) -> PreparedRuns:
        """These runs restricted to ``names`` (in that order), converted nothing again: their rankings
        are gathered, not re-ordered or re-hashed (a robustness study scores one group's runs this way)."""
        names = [str(n) for n in names]
        position = {name: i for i, name in enumerate(self.run_names)}
        unknown = [n for n in names if n not in position]
        if unknown:
            raise ValueError(f"no run named {unknown[0]!r} here; the runs are {', '.join(map(repr, self.run_names))}")
        if len(set(names)) != len(names):
            raise ValueError(f"run names to select must be distinct (got {names})")
        new_run = np.full(len(self.run_names), -1, dtype=np.int64)
        new_run[[position[n] for n in names]] = np.arange(len(names))
        row_run = new_run[self.row_run]
        rows = np.flatnonzero(row_run >= 0)
        rows = rows[np.argsort(row_run[rows], kind="stable")]  # by new run number, queries as they were
        lengths = self.lengths[rows]
        items = _row_items(self.row_starts[rows], lengths)
        new_row = np.full(self.n_rows, -1, dtype=np.int64)
        new_row[rows] = np.arange(len(rows))
        dup = new_row[self.duplicate_rows] >= 0
        dup_rows = new_row[self.duplicate_rows[dup]]
        dup_order = np.argsort(dup_rows, kind="stable")
        hashes = self._hashes if self._hash_probe == hash_probe() else None  # hashed in this process
        return PreparedRuns(
            run_names=names,
            score_precision=self.score_precision,
            row_run=row_run[rows],
            row_query=self.row_query[rows],
            row_starts=np.cumsum(lengths) - lengths,
            lengths=lengths,
            doc_ids=self.doc_ids.permuted(items),
            scores=self.scores[items],
            duplicate_rows=dup_rows[dup_order],
            duplicate_docs=self.duplicate_docs[dup][dup_order],
            _hashes=None if hashes is None else hashes[items],
            _hash_probe=0 if hashes is None else self._hash_probe,
        )

    def rank(self, qrels: Qrels, runs: slice | None = None) -> RankedLists:
        """The :class:`RankedLists` of these runs (or of ``run_names[runs]``) against ``qrels``: rows of
        the queries ``qrels`` judges, ordered by run, then topic code. Raises ``ValueError`` when such a
        row lists a document twice.

        Its code matrix is padded to the longest ranking: see :meth:`rank_blocks` for rankings of very
        different lengths."""
        sel, row_topic = self._selected(qrels, runs)
        self._note_use()
        return self._rank_rows(qrels, sel, row_topic)

    def rank_blocks(
        self, qrels: Qrels, runs: slice | None = None, max_items: int | None = None
    ) -> Iterator[RankedLists]:
        """:meth:`rank` in blocks of rows of similar length, so that memory stays proportional to the
        number of ranked documents: one block (exactly :meth:`rank`'s result) unless padding every row to
        the longest would more than double the matrix (e.g. one 100,000-document ranking among thousands
        of short ones); then one block per length class ``⌈log2 length⌉`` (see :func:`depth_blocks`).
        ``max_items``: each block is further cut into consecutive rows holding at most this many ranked
        documents in all (at least one row), which bounds the measures' working memory. Each row's values
        do not depend on the other rows of its block (every kernel computes a row from that row and its
        topic's judgments alone)."""
        sel, row_topic = self._selected(qrels, runs)
        self._note_use()
        blocks = depth_blocks(self.lengths[sel])
        for block in [None] if blocks is None else blocks:
            rows = sel if block is None else sel[block]
            for part in _item_bounded(self.lengths[rows], max_items):
                yield self._rank_rows(qrels, rows if part is None else rows[part], row_topic)

    def _note_use(self) -> None:
        self._uses += 1
        if self._uses > 1 and self._docs is None:
            self._index_documents()  # evaluated again: index the distinct documents once

    def _selected(self, qrels: Qrels, runs: slice | None) -> tuple[np.ndarray, np.ndarray]:
        """The rows to rank (ordered by run, then topic code) and the topic code of every row (−1: not
        judged); ``ValueError`` when a selected row lists a document twice."""
        row_topic = qrels.topic_index.get_indexer(self.row_query) if self.n_rows else np.zeros(0, np.int64)
        keep = row_topic >= 0
        if runs is not None:
            start, stop, _ = runs.indices(len(self.run_names))
            keep &= (self.row_run >= start) & (self.row_run < stop)
        kept = np.flatnonzero(keep)
        sel = kept[np.lexsort((row_topic[kept], self.row_run[kept]))]
        if len(self.duplicate_rows):
            bad = np.flatnonzero(np.isin(sel, self.duplicate_rows))
            if len(bad):
                row = sel[bad[0]]
                doc = self.duplicate_docs[np.flatnonzero(self.duplicate_rows == row)[0]]
                raise ValueError(duplicate_message(self.run_names[self.row_run[row]], doc, self.row_query[row]))
        return sel, row_topic

    def _rank_rows(self, qrels: Qrels, sel: np.ndarray, row_topic: np.ndarray) -> RankedLists:
        """The :class:`RankedLists` of rows ``sel`` (checked by :meth:`_selected`), in that order."""
        lengths = self.lengths[sel]
        depth = int(lengths.max()) if len(lengths) else 0
        if bool(np.all(lengths == depth)):
            codes = np.full((len(sel), depth), UNPOOLED, dtype=np.int32)
        else:
            codes = np.where(np.arange(depth) < lengths[:, None], np.int32(UNPOOLED), np.int32(PAD))
        docs = self._docs  # read once: worker threads may share this object
        if len(sel) and len(qrels.keys):
            # only documents the qrels mention can have a grade: find them, then look up their
            # (topic, doc) pairs exactly
            lo = int(self.row_starts[sel].min())  # the selected rows' items lie in this range
            hi = int((self.row_starts[sel] + self.lengths[sel]).max())
            if isinstance(docs, tuple):
                doc_of_item, ids, row_of_item = docs
                judged = self._judged_by_index(qrels, ids)
                cand = np.flatnonzero(judged.any_topic[doc_of_item[lo:hi]]) + lo
                item_row = row_of_item[cand]
            else:
                cand = qrels.mentioned(self.hashes[lo:hi]) + lo
                item_row = np.searchsorted(self.row_starts, cand, side="right") - 1
            new_row = np.full(self.n_rows, -1, dtype=np.int64)
            new_row[sel] = np.arange(len(sel))
            out_row = new_row[item_row]
            ok = out_row >= 0
            cand, item_row, out_row = cand[ok], item_row[ok], out_row[ok]
            if docs:
                grades = judged.grades(row_topic[item_row], doc_of_item[cand])
            else:
                doc_codes = qrels.doc_codes(self.doc_ids[cand], self.hashes[cand])
                grades = qrels.lookup(row_topic[item_row], doc_codes)
            codes[out_row, cand - self.row_starts[item_row]] = grades
        return RankedLists(
            codes=codes,
            lengths=lengths,
            run_of_row=self.row_run[sel],
            topic_of_row=row_topic[sel].astype(np.int64),
            run_names=list(self.run_names),
            qrels=qrels,
            doc_ids=self.doc_ids,
            row_starts=self.row_starts[sel],
        )

    def _index_documents(self) -> None:
        """Number the distinct documents of all rows once (hash, then checked on the ids themselves), so
        that each later look-up checks the qrels' documents against them instead of every item."""
        item_doc, distinct = pd.factorize(self.hashes)
        some = np.empty(len(distinct), dtype=np.int64)
        some[item_doc] = np.arange(len(item_doc))  # an item of each document (any one: all are checked)
        ids = self.doc_ids.permuted(some)
        if not self.doc_ids.equal_to(some[item_doc]):  # two ids share a hash: keep the other path
            self._docs = False
            return
        row_of_item = np.repeat(np.arange(self.n_rows, dtype=np.int64), self.lengths)
        self._docs_index, self._docs_probe = pd.Index(distinct), hash_probe()
        self._docs = (item_doc.astype(np.int64), ids, row_of_item)

    def _judged_by_index(self, qrels: Qrels, ids: DocIds) -> _JudgedDocs:
        """The judgments of ``qrels`` in terms of the distinct documents ``ids`` of these runs (kept for
        the last qrels: chunks of one evaluation share it)."""
        cached = self._judged
        if cached is not None and cached[0] is qrels:
            return cached[1]
        index = self._docs_index
        if index is None or self._docs_probe != hash_probe():  # new here, or hashed differently
            index = pd.Index(_hash_ids(ids))
            self._docs_index, self._docs_probe = index, hash_probe()
        of_judged = index.get_indexer(qrels.doc_hashes())
        hit = np.flatnonzero(of_judged >= 0)
        same = ids[of_judged[hit]] == qrels.doc_ids[hit]
        of_judged[hit[~same]] = -1
        n_docs = max(len(qrels.doc_ids), 1)
        doc = of_judged[qrels.keys % n_docs]
        valid = doc >= 0
        judged = _JudgedDocs(qrels.keys[valid] // n_docs, doc[valid], qrels.grades[valid], len(ids))
        self._judged = (qrels, judged)
        return judged


class _JudgedDocs:
    """Judgments ``(topic, document number, grade code)`` with a grade look-up that is one gather for
    documents judged for one topic only (most of them) and a hash look-up for the others."""

    def __init__(self, topic: np.ndarray, doc: np.ndarray, grade: np.ndarray, n_docs: int):
        self.n_docs = max(n_docs, 1)
        count = np.bincount(doc, minlength=self.n_docs)
        self.any_topic = count > 0
        self.single_topic = np.full(self.n_docs, -1, dtype=np.int64)
        self.single_grade = np.full(self.n_docs, UNPOOLED, dtype=np.int32)
        once = count[doc] == 1
        self.single_topic[doc[once]] = topic[once]
        self.single_grade[doc[once]] = grade[once]
        self.multi = count > 1
        self.keys = pd.Index(topic[~once].astype(np.int64) * self.n_docs + doc[~once])  # unique pairs
        self.key_grades = grade[~once]

    def grades(self, topic: np.ndarray, doc: np.ndarray) -> np.ndarray:
        """Grade codes of (topic, document number) pairs (``UNPOOLED`` when not judged)."""
        out = np.where(self.single_topic[doc] == topic, self.single_grade[doc], np.int32(UNPOOLED))
        several = np.flatnonzero(self.multi[doc])
        if len(several) and len(self.keys):
            at = self.keys.get_indexer(topic[several].astype(np.int64) * self.n_docs + doc[several])
            found = at >= 0
            out[several[found]] = self.key_grades[at[found]]
        return out.astype(np.int32, copy=False)


def _item_bounded(lengths: np.ndarray, max_items: int | None) -> list[Any]:
    """Consecutive row slices holding at most ``max_items`` items each (a longer row alone); ``[None]``
    (all rows) when they fit at once."""
    total = int(lengths.sum())
    if max_items is None or total <= max_items:
        return [None]
    ends = np.cumsum(lengths)
    out, start = [], 0
    while start < len(lengths):
        base = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, base + max_items, side="right")), start + 1)
        out.append(slice(start, stop))
        start = stop
    return out


def _row_items(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Item indices of rows given by their starts and lengths, concatenated."""
    total = int(lengths.sum())
    out_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - out_starts, lengths)


def prepare_runs(runs: Any, score_precision: str = "float32", topics=None) -> PreparedRuns:
    """Convert runs once, independently of any qrels (see :class:`PreparedRuns`).

    ``runs``: whatever :func:`ir_incomplete.evaluate` accepts (:func:`ir_incomplete.api.as_run_mapping`):
    ``{name: run}`` (any run form), a DataFrame with a ``run`` column, a single run, a run file, a
    directory of run files or a list of run files; the run names are those ``evaluate`` gives.
    ``topics`` (optional, query ids): keep only these queries (trec_eval ignores queries its qrels do not
    judge). Raises ``ValueError`` on missing columns and non-numeric or non-finite scores.
    """
    from ir_incomplete.data.runs import as_run_mapping

    _check_score_precision(score_precision)
    run_map = as_run_mapping(runs)
    return _prepare([(name, _run_columns(run)) for name, run in run_map.items()], score_precision, topics)


def _prepare(columns, score_precision: str, topics=None) -> PreparedRuns:
    """:func:`prepare_runs` from ``[(name, (query_ids, doc_ids, scores)), ...]`` (see :func:`run_columns`;
    query ids may be unchecked, as :func:`_run_columns` gives them).

    Each run is cut into segments of equal adjacent query ids. When every query of a run is one
    segment and each segment is sorted by score (as TREC runs are), the items stay where they are and
    only tied neighbours are reordered; otherwise one sort puts everything in order."""
    _check_score_precision(score_precision)
    names = [name for name, _ in columns]
    topic_index = None if topics is None else (topics if isinstance(topics, pd.Index) else pd.Index(topics))
    seg_row_parts, seg_len_parts, did_parts, score_parts, query_parts, run_parts = [], [], [], [], [], []
    n_rows = 0
    owned = len(columns) > 1  # the item arrays are ours (concatenated), not the caller's
    for run_no, (_name, (qids, dids, scores)) in enumerate(columns):
        seg_code, query_names, starts = _query_segments(qids)
        seg_len = np.diff(np.append(starts, len(scores)))
        kept_names = np.ones(len(query_names), dtype=bool)
        if topic_index is not None and len(starts):
            kept_names = topic_index.get_indexer(query_names) >= 0
            keep = kept_names[seg_code]
            if not keep.all():
                items = np.repeat(keep, seg_len)
                dids, scores, owned = dids.permuted(items), scores[items], True
                seg_code, seg_len = seg_code[keep], seg_len[keep]
        # one row per distinct query of the run, numbered in first-seen order (as the names are)
        row_of_name = np.cumsum(kept_names) - 1
        row_query = query_names[kept_names]
        seg_row_parts.append(row_of_name[seg_code].astype(np.int64) + n_rows)
        seg_len_parts.append(seg_len.astype(np.int64))
        query_parts.append(np.asarray(row_query, dtype=object))
        run_parts.append(np.full(len(row_query), run_no, dtype=np.int64))
        did_parts.append(dids)
        score_parts.append(scores)
        n_rows += len(row_query)

    def joined(parts, dtype):
        if not parts:
            return np.zeros(0, dtype=dtype)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    seg_rows, seg_lens = joined(seg_row_parts, np.int64), joined(seg_len_parts, np.int64)
    dids = DocIds.concat(did_parts) if did_parts else DocIds(np.zeros(0, dtype=object))
    scores = joined(score_parts, np.float64)
    del did_parts, score_parts
    grouped = bool(np.all(seg_rows[1:] > seg_rows[:-1]))  # each query one segment: segment i is row i
    seg_starts = np.cumsum(seg_lens) - seg_lens
    moves = _grouped_tie_moves(seg_starts, scores, dids, score_precision) if grouped else None
    if moves is None and grouped:  # each query's items together, not sorted by score: sorted in place
        lengths = seg_lens
        within = _grouped_order(seg_starts, seg_lens, scores, dids, score_precision)
        dids, scores = dids.permuted(within), scores[within]
        del within
    elif moves is None:  # not in ranking order: one sort
        ranking = np.repeat(seg_rows, seg_lens)
        order = _trec_order(ranking, scores, dids, score_precision)
        lengths = np.bincount(ranking, minlength=n_rows).astype(np.int64)  # the same in any order
        del ranking
        if order is not None:
            dids, scores = dids.permuted(order), scores[order]
            del order
    else:
        lengths = seg_lens
        if moves:
            to, source = moves
            if not (owned or scores.flags.writeable):  # the caller's scores: never modified
                scores = scores.copy()
            dids, scores[to] = dids.moved(to, source), scores[source]
    row_starts = np.cumsum(lengths) - lengths
    hashes = _hash_ids(dids)
    dup_rows, dup_docs = _find_duplicates(hashes, dids, row_starts, lengths)
    return PreparedRuns(
        run_names=names,
        score_precision=score_precision,
        row_run=joined(run_parts, np.int64),
        row_query=joined(query_parts, object),
        row_starts=row_starts,
        lengths=lengths,
        doc_ids=dids,
        scores=scores,
        duplicate_rows=dup_rows,
        duplicate_docs=dup_docs,
        _hashes=hashes,
        _hash_probe=hash_probe(),
    )


def rank_runs(runs: Mapping[str, Any], qrels: Qrels, score_precision: str = "float32") -> RankedLists:
    """Convert runs (name → any run form) into one :class:`RankedLists` against ``qrels``.

    Only topics present in ``qrels`` are kept (trec_eval ignores the others). Raises ``ValueError`` on
    missing columns, non-numeric or non-finite scores and on a document listed twice for one query.
    """
    return prepare_runs(runs, score_precision, topics=qrels.topic_index).rank(qrels)


def duplicate_message(run: str, doc: str, query: str) -> str:
    """The error of a run that lists document ``doc`` more than once for ``query`` (every reader of runs
    refuses such a run with this message)."""
    return (
        f"run {run!r} lists document {doc!r} more than once for query {query!r}; trec_eval refuses such runs "
        f"(remove the duplicates first, e.g. run.drop_duplicates(['query_id', 'doc_id']))"
    )


def _find_duplicates(hashes, dids, row_starts, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Rows listing a document twice, and the first such document of each (by rank).

    Each row's 32 low bits of the hashes are sorted in one ``[rows × depth]`` matrix; equal neighbours
    are candidates, confirmed by comparing the ids themselves."""
    none = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object))
    n_rows = len(lengths)
    if n_rows == 0:
        return none
    low = hashes.astype(np.int32)  # the low 32 bits
    np.minimum(low, _PAD32 - 1, out=low)  # no document takes the padding value
    blocks = depth_blocks(lengths)
    if blocks is None:
        candidates = _candidate_rows(low, row_starts, lengths, None)
    else:  # rows of very different lengths: one matrix per length class, memory O(items)
        candidates = np.sort(np.concatenate([_candidate_rows(low, row_starts, lengths, b) for b in blocks]))
    if len(candidates) == 0:
        return none
    rows, docs = [], []
    for row in candidates.tolist():
        start, stop = int(row_starts[row]), int(row_starts[row] + lengths[row])
        seen = set()
        for doc in dids[start:stop].tolist():
            if doc in seen:
                rows.append(row)
                docs.append(doc)
                break
            seen.add(doc)
    return np.array(rows, dtype=np.int64), np.array(docs, dtype=object)


def _candidate_rows(low: np.ndarray, row_starts: np.ndarray, lengths: np.ndarray, rows: np.ndarray | None):
    """Rows (all, or ``rows``) in which two documents share the low 32 bits of their hash: each row's
    bits sorted in one ``[rows × depth]`` matrix, equal neighbours compared."""
    if rows is None:
        depth = int(lengths.max())
        if bool(np.all(lengths == depth)):
            matrix = low.reshape(len(lengths), depth)  # low is ours: sorted in place
        else:
            matrix = np.full((len(lengths), depth), _PAD32, dtype=np.int32)
            # item i of row r goes to flat cell r·depth + (i − start of r)
            cell = np.repeat(np.arange(len(lengths), dtype=np.int64) * depth - row_starts, lengths)
            cell += np.arange(len(low), dtype=np.int64)
            matrix.reshape(-1)[cell] = low
            del cell
        rows = np.arange(len(lengths))
    else:
        sub = lengths[rows]
        matrix = np.full((len(rows), int(sub.max())), _PAD32, dtype=np.int32)
        row_of_item = np.repeat(np.arange(len(rows)), sub)
        within = np.arange(len(row_of_item)) - np.repeat(np.cumsum(sub) - sub, sub)
        matrix[row_of_item, within] = low[row_starts[rows][row_of_item] + within]
        del row_of_item, within
    matrix.sort(axis=1)
    same = (matrix[:, 1:] == matrix[:, :-1]) & (matrix[:, 1:] != _PAD32)
    return rows[np.flatnonzero(same.any(axis=1))]


#: padding may add this many cells to a code matrix whatever the number of ranked documents
_PAD_SLACK_CELLS = 1 << 16


def depth_blocks(lengths: np.ndarray) -> list[np.ndarray] | None:
    """``None`` when a matrix padded to the longest of ``lengths`` holds at most twice their sum (plus
    :data:`_PAD_SLACK_CELLS`); otherwise the positions of ``lengths`` grouped by length class
    ``⌈log2 length⌉`` (ascending, each in its given order), whose padded matrices hold together less
    than twice the sum: memory proportional to the number of ranked documents."""
    n = len(lengths)
    if n == 0 or n * int(lengths.max()) <= 2 * int(lengths.sum()) + _PAD_SLACK_CELLS:
        return None
    length_class = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    order = np.argsort(length_class, kind="stable")
    cuts = np.flatnonzero(np.diff(length_class[order])) + 1
    return np.split(order, cuts)
