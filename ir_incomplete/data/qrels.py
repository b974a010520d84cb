"""Judgments of all topics, interned once: :class:`Qrels` (plain and sampled qrels)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    #: a TREC file: a path (``.gz`` allowed) or the text itself (a string with a newline)
    TrecSource = str | os.PathLike[str]
else:
    from ir_incomplete._lazy import pandas as pd

from ir_incomplete.data.codes import GRADE_RANGE, MAX_INDEXED_GRADE, NEGATIVE_POLICIES, POOLED_UNJUDGED, UNPOOLED
from ir_incomplete.data.columns import _QREL_COLUMNS, _columns, _first_complex, _hash_ids, _ids, _row_label
from ir_incomplete.data.ids import hash_probe, is_arrow, is_arrow_table
from ir_incomplete.data.readers import read_trec_qrels

_DENSE_LOOKUP_CELLS = 4_000_000  # qrels look-up through a dense [topics × judged docs] table up to this size
_FILTER_BLOCK = 1 << 20  # documents checked against the qrels' hash table per step (bounds temporaries)


@dataclass
class Qrels:
    """Judgments of all topics, interned once and shared by every run and measure of a call.

    Attributes: ``topic_ids`` (object array, first-seen order), ``doc_ids`` (unique judged doc ids),
    ``keys``/``grades`` (sorted ``topic * n_docs + doc`` keys and their grade codes),
    ``grade_levels`` (the distinct grades ≥ 0, ascending, always with 0), ``level_counts``
    (``[topics × levels]`` count of each of those grades) and ``n_unjudged`` (negative entries per
    topic: pooled but unjudged; 0 under ``negative="zero"``). Memory depends on the number of distinct
    grades, not on their values; :attr:`grade_counts` (indexed by grade value) is built on demand for the
    measures that index by value, up to :data:`MAX_INDEXED_GRADE`.
    """

    topic_ids: np.ndarray
    doc_ids: np.ndarray
    keys: np.ndarray
    grades: np.ndarray
    grade_levels: np.ndarray
    level_counts: np.ndarray
    n_unjudged: np.ndarray
    negative: str = "pooled_unjudged"
    topic_index: pd.Index = field(repr=False, default=None)
    #: sampled qrels only (``None`` otherwise): the stratum of each entry of ``keys`` as a code local to
    #: its topic (0, 1, …, in label order), and the labels as ``[topics × strata]`` (``None`` = unused)
    strata: np.ndarray | None = field(repr=False, default=None)
    stratum_labels: np.ndarray | None = field(repr=False, default=None)
    _stratum_summary: tuple | None = field(repr=False, default=None)
    #: hashes of the judged doc ids (``None``: not built yet; ``False``: they collide, look strings up)
    _doc_hash_index: pd.Index | bool | None = field(repr=False, default=None)
    _dense: np.ndarray | None = field(repr=False, default=None)
    _grade_counts: np.ndarray | None = field(repr=False, default=None)
    _filter: np.ndarray | None = field(repr=False, default=None)
    _doc_hashes: np.ndarray | None = field(repr=False, default=None)
    _key_index: pd.Index | None = field(repr=False, default=None)
    _hash_probe: int = field(repr=False, default=0)

    @classmethod
    def from_any(cls, qrels, negative: str = "pooled_unjudged") -> Qrels:
        """Build from a DataFrame or a pyarrow Table (``query_id/doc_id/relevance`` or ``qid/docno/label``,
        optionally ``stratum``), a dict of dicts, an iterable of ``Qrel``, a TREC qrels path (``.gz``
        allowed), a parquet file path or an existing ``Qrels``."""
        if isinstance(qrels, Qrels):
            if qrels.negative != negative:
                raise ValueError(f"these Qrels were built with negative={qrels.negative!r}, not {negative!r}")
            return qrels
        if negative not in NEGATIVE_POLICIES:
            raise ValueError(f"negative={negative!r} is not a valid policy; choices: {', '.join(NEGATIVE_POLICIES)}")
        if isinstance(qrels, (str, os.PathLike)):
            qrels = read_trec_qrels(qrels)
        stratum = _stratum_column(qrels)
        if stratum is not None and not (isinstance(qrels, pd.DataFrame) or is_arrow_table(qrels)):
            stratum, qrels = _split_strata(qrels)
        q, d, r = _columns(qrels, _QREL_COLUMNS, "qrels", read_trec_qrels)
        qids, dids = _ids(q, "qrels query_id"), _ids(d, "qrels doc_id")
        if is_arrow(r):
            r = r.to_numpy(zero_copy_only=False)
        grades = _integer_grades(r.to_numpy() if isinstance(r, pd.Series) else np.asarray(r), qids, dids)
        if negative == "zero":
            grades = np.where(grades < 0, 0, grades)
        topic_codes, topic_ids = pd.factorize(qids)
        doc_codes, doc_ids = pd.factorize(dids)
        topic_ids = np.asarray(topic_ids, dtype=object)
        doc_ids = np.asarray(doc_ids, dtype=object)
        n_topics, n_docs = len(topic_ids), max(len(doc_ids), 1)
        keys = topic_codes.astype(np.int64) * n_docs + doc_codes
        order = np.argsort(keys, kind="stable")
        keys, grades_sorted = keys[order], grades[order]
        dup = np.flatnonzero(keys[1:] == keys[:-1])
        if len(dup):
            i = order[dup[0]]
            raise ValueError(f"qrels judge document {dids[i]!r} twice for query {qids[i]!r}")
        codes = np.where(grades_sorted < 0, POOLED_UNJUDGED, grades_sorted).astype(np.int32)
        judged = grades >= 0
        levels, level_of = np.unique(np.concatenate(([0], grades[judged])), return_inverse=True)
        counts = np.bincount(
            topic_codes[judged] * len(levels) + level_of.reshape(-1)[1:], minlength=n_topics * len(levels)
        ).reshape(n_topics, len(levels))
        n_unjudged = np.bincount(topic_codes[~judged], minlength=n_topics).astype(np.int64)
        strata = labels = None
        if stratum is not None:
            strata, labels = _local_strata(_ids(stratum, "qrels stratum"), topic_codes, n_topics)
            strata = strata[order]
        return cls(
            topic_ids=topic_ids,
            doc_ids=doc_ids,
            keys=keys,
            grades=codes,
            grade_levels=levels.astype(np.int64),
            level_counts=counts.astype(np.int64),
            n_unjudged=n_unjudged,
            negative=negative,
            topic_index=pd.Index(topic_ids),
            strata=strata,
            stratum_labels=labels,
        )

    # -- summaries --------------------------------------------------------------------------------------
    @property
    def n_topics(self) -> int:
        return len(self.topic_ids)

    @property
    def max_grade(self) -> int:
        return int(self.grade_levels[-1])

    @property
    def grade_counts(self) -> np.ndarray:
        """``[topics × (max_grade+1)]``: judged documents of each grade value 0 .. max_grade (built once, on
        demand, for measures that index by grade value); ``ValueError`` above :data:`MAX_INDEXED_GRADE`."""
        if self._grade_counts is None:
            if self.max_grade > MAX_INDEXED_GRADE:
                topic = int(np.flatnonzero(self.level_counts[:, -1])[0])
                raise ValueError(
                    f"qrels grade {self.max_grade} (query {self.topic_ids[topic]!r}) is above "
                    f"{MAX_INDEXED_GRADE}, the largest grade that measures indexing grades by value "
                    f"(nDCG, GAP and sampled-judgment families) accept; the AP family and bpref take any grade"
                )
            dense = np.zeros((self.n_topics, self.max_grade + 1), dtype=np.int64)
            dense[:, self.grade_levels] = self.level_counts
            self._grade_counts = dense
        return self._grade_counts

    def n_relevant(self, rel_level: int = 1) -> np.ndarray:
        """R per topic: judged documents with grade ≥ ``rel_level``."""
        return self.level_counts[:, self.grade_levels >= rel_level].sum(axis=1)

    def n_nonrelevant(self, rel_level: int = 1) -> np.ndarray:
        """N per topic: judged documents with 0 ≤ grade < ``rel_level`` (negative entries excluded)."""
        return self.level_counts[:, self.grade_levels < rel_level].sum(axis=1)

    def n_judged(self) -> np.ndarray:
        return self.level_counts.sum(axis=1)

    def to_frame(self) -> pd.DataFrame:
        """The judgments as a ``query_id/doc_id/relevance`` DataFrame (pooled-but-unjudged as −1), with a
        ``stratum`` column (the labels) for sampled qrels."""
        n_docs = max(len(self.doc_ids), 1)
        grades = np.where(self.grades == POOLED_UNJUDGED, -1, self.grades)
        topics = self.keys // n_docs
        columns = {"query_id": self.topic_ids[topics], "doc_id": self.doc_ids[self.keys % n_docs]}
        if self.strata is not None and self.stratum_labels is not None:
            columns["stratum"] = self.stratum_labels[topics, self.strata]
        columns["relevance"] = grades
        return pd.DataFrame(columns)

    # -- strata (sampled qrels) ---------------------------------------------------------------------------
    @property
    def is_sampled(self) -> bool:
        """True for sampled qrels (a stratum per judgment); plain qrels are one stratum per topic."""
        return self.strata is not None

    def stratum_summary(self) -> tuple[np.ndarray, np.ndarray]:
        """``(strata, counts)`` where ``strata`` is the stratum code of each entry of ``keys`` (all 0 for
        plain qrels) and ``counts`` is ``[topics × strata × (max_grade+2)]``: column 0 counts the pooled
        but unsampled entries (negative grade), column ``g + 1`` the entries judged with grade ``g``."""
        if self._stratum_summary is not None:
            return self._stratum_summary
        self.grade_counts  # noqa: B018 -- refuses grades above MAX_INDEXED_GRADE before sizing by grade value
        strata = self.strata if self.strata is not None else np.zeros(len(self.keys), dtype=np.int32)
        n_strata = int(strata.max()) + 1 if len(strata) else 1
        n_docs = max(len(self.doc_ids), 1)
        topics = self.keys // n_docs
        column = np.where(self.grades == POOLED_UNJUDGED, 0, self.grades + 1)
        n_cols = self.max_grade + 2
        flat = (topics * n_strata + strata) * n_cols + column
        counts = np.bincount(flat, minlength=self.n_topics * n_strata * n_cols)
        self._stratum_summary = (strata, counts.reshape(self.n_topics, n_strata, n_cols))
        return self._stratum_summary

    # -- look-up ------------------------------------------------------------------------------------------
    def _check_hashes(self) -> None:
        """Drop hash tables built by another process (``str`` hashes differ between processes)."""
        probe = hash_probe()
        if self._hash_probe != probe:
            self._doc_hash_index = self._filter = self._doc_hashes = None
            self._hash_probe = probe

    def doc_hashes(self) -> np.ndarray:
        """64-bit hashes of ``doc_ids`` in this process (computed once)."""
        self._check_hashes()
        if self._doc_hashes is None:
            self._doc_hashes = _hash_ids(self.doc_ids)
        return self._doc_hashes

    def mentioned(self, hashes: np.ndarray) -> np.ndarray:
        """Positions of the document hashes that may be those of judged documents: a superset (a
        bit table of the judged documents' hashes), to be confirmed by :meth:`doc_codes`."""
        self._check_hashes()
        if self._filter is None:
            # ≥ 256 bits per judged document, at most 2 MiB: few false candidates, a table that stays in cache
            bits = int(np.clip(np.ceil(np.log2(max(len(self.doc_ids), 1) * 256)), 12, 21))
            table = np.zeros(1 << bits, dtype=bool)
            table[self.doc_hashes() & ((1 << bits) - 1)] = True
            self._filter = table
        mask = len(self._filter) - 1
        parts = [
            np.flatnonzero(self._filter[hashes[start : start + _FILTER_BLOCK] & mask]) + start
            for start in range(0, len(hashes), _FILTER_BLOCK)
        ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def doc_codes(self, dids: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """Index of each doc id in ``doc_ids`` (−1 when never judged), via 64-bit hashes, verified."""
        self._check_hashes()
        if self._doc_hash_index is None:
            qh = self.doc_hashes()
            self._doc_hash_index = pd.Index(qh) if pd.Index(qh).is_unique else None
            if self._doc_hash_index is None:  # colliding hashes among judged ids: exact string look-up
                self._doc_hash_index = False
        index = self._doc_hash_index
        if not isinstance(index, pd.Index):  # colliding hashes
            return pd.Index(self.doc_ids).get_indexer(dids)
        codes = index.get_indexer(hashes)
        hit = np.flatnonzero(codes >= 0)
        if len(hit):
            same = self.doc_ids[codes[hit]] == dids[hit]
            codes[hit[~same]] = -1
        return codes

    def lookup(self, topic_codes: np.ndarray, doc_codes: np.ndarray) -> np.ndarray:
        """Grade codes of (topic, doc) pairs: the judged grade, ``POOLED_UNJUDGED`` or ``UNPOOLED``."""
        out = np.full(len(topic_codes), UNPOOLED, dtype=np.int32)
        known = np.flatnonzero(doc_codes >= 0)
        n_docs = max(len(self.doc_ids), 1)
        if len(known) and len(self.keys) and self.n_topics * n_docs <= _DENSE_LOOKUP_CELLS:
            if self._dense is None:  # a [topics × judged docs] table: one gather instead of a search
                dense = np.full(self.n_topics * n_docs, UNPOOLED, dtype=np.int32)
                dense[self.keys] = self.grades
                self._dense = dense
            out[known] = self._dense[topic_codes[known].astype(np.int64) * n_docs + doc_codes[known]]
        elif len(known) and len(self.keys):
            if self._key_index is None:
                self._key_index = pd.Index(self.keys)  # unique (topic, doc) keys: a hash look-up
            at = self._key_index.get_indexer(topic_codes[known].astype(np.int64) * n_docs + doc_codes[known])
            found = at >= 0
            out[known[found]] = self.grades[at[found]]
        return out


def _stratum_column(qrels):
    """The stratum values of sampled qrels (a DataFrame column ``stratum``, or a dict of dicts whose values
    are ``(stratum, relevance)`` pairs), else ``None``."""
    if isinstance(qrels, pd.DataFrame):
        return qrels["stratum"] if "stratum" in qrels.columns else None
    if is_arrow_table(qrels):
        return qrels.column("stratum") if "stratum" in qrels.column_names else None
    if isinstance(qrels, Mapping):
        for docs in qrels.values():
            if isinstance(docs, Mapping):
                for value in docs.values():
                    return True if isinstance(value, (tuple, list)) else None
    return None


def _split_strata(qrels: Mapping) -> tuple[np.ndarray, dict]:
    """The strata and ``{qid: {doc: relevance}}`` of ``{qid: {doc: (stratum, relevance)}}``."""
    out, strata = {}, []
    for qid, docs in qrels.items():
        if not isinstance(docs, Mapping):
            raise ValueError(f"qrels dict must map query ids to dicts; query {qid!r} maps to {type(docs).__name__}")
        inner = {}
        for doc, value in docs.items():
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise ValueError(
                    f"sampled qrels dict must map every doc_id to a (stratum, relevance) pair; "
                    f"query {qid!r}, document {doc!r} maps to {value!r}"
                )
            strata.append(value[0])
            inner[doc] = value[1]
        out[qid] = inner
    return np.array(strata, dtype=object), out


def _local_strata(labels: np.ndarray, topic_codes: np.ndarray, n_topics: int):
    """Stratum codes local to each topic (0, 1, … in label order) and the ``[topics × strata]`` labels."""
    label_codes, uniques = pd.factorize(labels, sort=True)
    n_labels = max(len(uniques), 1)
    pair = topic_codes.astype(np.int64) * n_labels + label_codes
    pairs, pair_of_entry = np.unique(pair, return_inverse=True)
    pair_topic = pairs // n_labels
    first = np.searchsorted(pair_topic, pair_topic, side="left")
    local = (np.arange(len(pairs)) - first).astype(np.int32)
    n_strata = int(local.max()) + 1 if len(local) else 1
    table = np.full((n_topics, n_strata), None, dtype=object)
    table[pair_topic, local] = np.asarray(uniques, dtype=object)[pairs % n_labels]
    return local[pair_of_entry.reshape(-1)], table


def _stratum_lookup(qrels: Qrels, topic_codes: np.ndarray, doc_codes: np.ndarray) -> np.ndarray:
    """Stratum code of (topic, doc) pairs of sampled qrels; −1 when the pair is not in the qrels."""
    out = np.full(len(topic_codes), -1, dtype=np.int32)
    known = np.flatnonzero(doc_codes >= 0)
    if len(known) and len(qrels.keys) and qrels.strata is not None:
        key = topic_codes[known].astype(np.int64) * max(len(qrels.doc_ids), 1) + doc_codes[known]
        pos = np.minimum(np.searchsorted(qrels.keys, key), len(qrels.keys) - 1)
        found = qrels.keys[pos] == key
        out[known[found]] = qrels.strata[pos[found]]
    return out


def _integer_grades(raw: np.ndarray, qids, dids) -> np.ndarray:
    if raw.dtype == bool:
        raise ValueError("qrels relevance must be integer grades, not booleans")
    if raw.dtype == object:
        complex_at = _first_complex(raw)
        if complex_at is not None:
            raise ValueError(
                f"qrels relevance {raw[complex_at]!r} is a complex number at "
                f"{_row_label(qids, dids, complex_at)}; grades must be integers"
            )
        numeric = pd.to_numeric(pd.Series(raw), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(numeric))
        if len(bad):
            raise ValueError(
                f"qrels relevance {raw[bad[0]]!r} is not an integer grade at {_row_label(qids, dids, bad[0])}"
            )
        raw = numeric
    if np.issubdtype(raw.dtype, np.floating):
        bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.round(raw)))
        if len(bad):
            raise ValueError(
                f"qrels relevance {float(raw[bad[0]])!r} is not an integer grade at {_row_label(qids, dids, bad[0])}"
            )
    if np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating):
        out = np.flatnonzero((raw < GRADE_RANGE[0]) | (raw > GRADE_RANGE[1]))
        if len(out):
            value = raw[out[0]]
            value = int(value) if np.issubdtype(raw.dtype, np.integer) else float(value)
            raise ValueError(
                f"qrels relevance {value!r} at {_row_label(qids, dids, out[0])} is outside the supported "
                f"grade range {GRADE_RANGE[0]}..{GRADE_RANGE[1]}"
            )
        return raw.astype(np.int64)
    raise ValueError(f"qrels relevance must be integer grades (got dtype {raw.dtype})")
