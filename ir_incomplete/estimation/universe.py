"""The universe of a design: the runs' top ``depth`` pairs, numbered, plus the pairs judged already that
lie outside them (the design's certainty pairs, added as more units), with the fusion priors that designs
and the fitted relevance model use; and the measures :func:`ir_incomplete.estimate` knows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ir_incomplete.data.prepared import PreparedRuns, _row_items, duplicate_message, prepare_runs

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = [
    "Universe",
    "Estimand",
    "parse_estimand",
    "check_universe",
    "examples",
    "PRIORS",
    "ALLOCATIONS",
    "MIN_PER_TOPIC",
]

#: the priors :func:`ir_incomplete.judging.sample` knows by name (each from the universe's rankings)
PRIORS = ("ap+rbp", "ap", "rbp-fusion", "rrf", "uniform")
#: how :func:`ir_incomplete.judging.sample` spreads the random part of the budget: over all open pairs at
#: once, or topic by topic (:mod:`ir_incomplete.judging.designs`)
ALLOCATIONS = ("global", "topics")
#: the default of ``sample(min_per_topic=)``: the random judgments each topic expects at least with
#: ``allocation="topics"`` (fewer where the topic has fewer open pairs; equal shares where the budget is short)
MIN_PER_TOPIC = 10

_RRF_K = 60
_RBP_P = 0.8  # the persistence of the RBP prior (Universe.rbp_prior)


@dataclass
class Estimand:
    """One measure to estimate: ``kind`` (P, RBP, R, AP, nDCG), cut-off ``k``, ``rel`` (smallest relevant
    grade), ``p`` (RBP), ``name`` (as printed)."""

    kind: str
    k: int
    rel: int
    p: float
    name: str


def parse_estimand(measure: Any, depth: int) -> Estimand:
    """``AP@100``, ``nDCG@10``, ``P@10``, ``RBP(p=0.8)@100``, ``R`` (or ``NumRel``), as strings or
    ir_measures measures. A cut-off deeper than ``depth`` is refused (the universe ends there); AP, nDCG
    and RBP without one are cut at ``depth``. RBP is binary, gain ``[grade >= rel]`` (``rel=1`` unless
    given), as ``RBPResidual`` and ``ir_measures``' ``RBP(p=..,rel=1)``; it is not the graded RBP that
    ``ir_measures`` means by an RBP without ``rel``."""
    import ir_measures

    text = measure if isinstance(measure, str) else str(measure)
    if not isinstance(measure, str) and getattr(measure, "NAME", None) == "R":
        raise ValueError(
            f"measure {text!r}: ir_measures' R is recall, which cannot be estimated from a sample; the number of "
            f"relevant documents is the string 'R' or NumRel"
        )
    if text.strip() == "R":
        return Estimand("R", depth, 1, 0.0, "R")
    try:
        m = ir_measures.parse_measure(text) if isinstance(measure, str) else measure
    except Exception:  # ir_measures raises several types for a bad name
        raise ValueError(
            f"measure {text!r} is not one estimate() knows; choices: AP@k, nDCG@k, P@k, RBP(p=..)@k, R "
            f"(k at most the design's depth {depth})"
        ) from None
    name = getattr(m, "NAME", None)
    params = dict(getattr(m, "params", {}) or {})
    kinds = {"AP": "AP", "nDCG": "nDCG", "P": "P", "RBP": "RBP", "NumRel": "R"}
    if name not in kinds:
        raise ValueError(
            f"measure {text!r}: {name} cannot be estimated from a sample; choices: AP@k, nDCG@k, P@k, RBP(p=..)@k, R"
        )
    kind = kinds[name]
    cutoff = params.pop("cutoff", None)
    rel = params.pop("rel", None)
    p = params.pop("p", 0.8) if kind == "RBP" else 0.8
    params.pop("judged_only", None) if params.get("judged_only") in (False, None) else None
    if kind == "nDCG" and params.get("dcg") in ("log2", None):
        params.pop("dcg", None)
    if kind == "nDCG" and params.get("gains") is None:
        params.pop("gains", None)
    extra = {k: v for k, v in params.items() if v is not None}
    if extra:
        raise ValueError(f"measure {text!r}: parameter {next(iter(extra))}= is not supported by estimate()")
    if kind == "P" and cutoff is None:
        raise ValueError(f"measure {text!r}: P needs a cut-off (P@10)")
    k = depth if cutoff is None or kind == "R" else int(cutoff)
    if k > depth:
        raise ValueError(
            f"measure {text!r}: cut-off {k} is deeper than the design's depth {depth}; documents below rank "
            f"{depth} lie outside the sampled universe"
        )
    if kind == "RBP" and (isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1):
        raise ValueError(f"measure {text!r}: p={p!r} is not a persistence; expected a number > 0 and < 1")
    rel = 1 if rel is None else int(rel)
    if rel < 1:
        raise ValueError(f"measure {text!r}: rel={rel} must be at least 1")
    return Estimand(kind, k, rel, float(p), text if isinstance(measure, str) else str(m))


# -- the universe ----------------------------------------------------------------------------------------


class Universe:
    """The runs' top-``depth`` pairs, numbered: ``topic_ids``, ``doc_ids`` (distinct), per unit
    ``unit_topic``/``unit_doc``; per item of the runs' top ``depth``: ``item_run``, ``item_topic``,
    ``item_rank`` (0-based), ``item_unit`` (``-1`` outside the universe); ``rrf`` per unit (Σ over the
    universe runs of 1/(60 + rank), ranks from 1) and ``ap_prior`` (Aslam & Pavlu's AP-prior averaged over
    the universe runs: ``(1 + Σ_{i=r}^{depth} 1/i) / (2·depth)`` at rank r).
    """

    def __init__(
        self,
        runs: Any,
        depth: int,
        universe_runs: list[str] | None = None,
        score_precision: str = "float32",
        topics: Any = None,
    ) -> None:
        prepared = runs if isinstance(runs, PreparedRuns) else prepare_runs(runs, score_precision)
        self.prepared = prepared
        self.depth = depth
        self.run_names = list(prepared.run_names)
        if not self.run_names:
            raise ValueError("no runs given")
        if universe_runs is None:
            universe_runs = self.run_names
        missing = [r for r in universe_runs if r not in self.run_names]
        if missing:
            raise ValueError(
                f"the design was drawn from run {missing[0]!r}, which is not among the runs given "
                f"({len(missing)} of its {len(universe_runs)} runs are missing): the design's universe "
                f"disagrees with the runs; give every run the design was drawn from"
            )
        self.universe_runs = list(universe_runs)
        lengths = np.minimum(prepared.lengths, depth)
        items = _row_items(prepared.row_starts, lengths)
        rank = np.arange(len(items)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        qids = np.asarray(prepared.row_query, dtype=object)  # per row (run, topic): topics are looked up per row
        docs = np.asarray(prepared.doc_ids[items], dtype=object)
        run = np.repeat(prepared.row_run, lengths)
        self._items = (run, (qids, lengths), docs, rank)
        universe_codes = [self.run_names.index(r) for r in self.universe_runs]
        self._in_universe = np.isin(run, universe_codes)
        if topics is None:
            topics = pd.unique(qids[np.isin(prepared.row_run, universe_codes) & (lengths > 0)])
        self.set_topics(topics)
        _refuse_duplicates(prepared, self.topic_ids)

    def set_topics(self, topics: Any) -> None:
        run, (qids, lengths), docs, rank = self._items
        topic_ids = np.asarray(_natural(list(topics)), dtype=object)
        self.topic_ids = topic_ids
        topic = np.repeat(pd.Index(topic_ids).get_indexer(qids), lengths)
        keep = topic >= 0
        doc_codes, doc_ids = pd.factorize(docs[keep])
        self.doc_ids = np.asarray(doc_ids, dtype=object)
        self.doc_index = pd.Index(self.doc_ids)
        self._doc_rank: np.ndarray | None = None  # the documents' string order, computed when asked
        n_docs = max(len(self.doc_ids), 1)
        key = topic[keep].astype(np.int64) * n_docs + doc_codes
        uni = self._in_universe[keep]
        unit_keys = np.unique(key[uni])
        self.unit_key = unit_keys
        self.unit_topic = (unit_keys // n_docs).astype(np.int64)
        self.unit_doc = (unit_keys % n_docs).astype(np.int64)
        self.n_docs = n_docs
        if len(unit_keys):
            pos_c = np.minimum(np.searchsorted(unit_keys, key), len(unit_keys) - 1)
            found = unit_keys[pos_c] == key
        else:
            pos_c, found = np.zeros(len(key), np.int64), np.zeros(len(key), bool)
        self.item_run = run[keep]
        self.item_topic = topic[keep].astype(np.int64)
        self.item_rank = rank[keep].astype(np.int64)
        self.item_unit = np.where(found, pos_c, -1).astype(np.int64)
        # the universe runs' items by rank (a stable sort of small integers): each unit's sum over them adds
        # its items in rank order, so it does not depend on the runs' order
        held = np.flatnonzero(uni)
        small = np.int16 if self.depth <= np.iinfo(np.int16).max else np.int64
        self._sum_order = held[np.argsort(self.item_rank[held].astype(small), kind="stable")]
        ranks = np.arange(self.depth, dtype=float)
        self.rrf = self.rank_sum(1.0 / (_RRF_K + (ranks + 1.0)))
        harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, self.depth + 1))]
        prior = (1.0 + harmonic[self.depth] - harmonic[: self.depth]) / (2.0 * self.depth)
        self.ap_prior = self.rank_sum(prior) / max(len(self.universe_runs), 1)
        self.rbp_prior = self.rank_sum((1.0 - _RBP_P) * _RBP_P**ranks) / max(len(self.universe_runs), 1)

    def rank_sum(self, per_rank: np.ndarray) -> np.ndarray:
        """Per unit, ``Σ per_rank[rank]`` over the universe runs' items of the unit (``rank`` 0-based),
        added in rank order: a function of the set of runs, bit for bit, whatever their order (items of
        one unit at the same rank add the same value)."""
        order = self._sum_order
        weights = np.asarray(per_rank, dtype=float)[self.item_rank[order]]
        return np.bincount(self.item_unit[order], weights=weights, minlength=self.n_units)

    def canonical_order(self) -> np.ndarray:
        """Every unit, in the canonical pair order: topics in ``topic_ids``' (natural) order, then documents
        in string (code point) order. It depends on the set of pairs only, not on the runs' order or
        their rows'."""
        doc_rank = self._doc_rank
        if doc_rank is None or len(doc_rank) != len(self.doc_ids):  # documents are only appended
            docs = np.asarray(self.doc_ids, dtype=str)
            doc_rank = np.empty(len(docs), dtype=np.int64)
            doc_rank[np.argsort(docs, kind="stable")] = np.arange(len(docs))
            self._doc_rank = doc_rank
        return np.lexsort((doc_rank[self.unit_doc], self.unit_topic))

    def fingerprint(self) -> dict[str, Any]:
        """The record of the universe runs' top-``depth`` pairs (certainty pairs added by :meth:`add_units`
        left out) that :func:`ir_incomplete.judging.sample` writes in a design: ``universe_hash``, the
        SHA-256 (hex) of the UTF-8 lines ``"{query_id}\\t{doc_id}\\n"`` of every pair in the canonical
        order (:meth:`canonical_order`), and ``universe_topics``, per topic ``[pairs, digest]``, the digest
        the first 16 hex digits of the SHA-256 of that topic's lines."""
        import hashlib

        from_runs = np.bincount(self.item_unit[self._sum_order], minlength=self.n_units) > 0
        order = self.canonical_order()
        order = order[from_runs[order]]
        counts = np.bincount(self.unit_topic[order], minlength=len(self.topic_ids))
        docs = self.doc_ids[self.unit_doc[order]].tolist()
        whole = hashlib.sha256()
        topics: dict[str, list] = {}
        start = 0
        for topic, count in zip(self.topic_ids.tolist(), counts.tolist(), strict=True):  # one join per topic
            lead = f"{topic}\t"
            block = (lead + ("\n" + lead).join(docs[start : start + count]) + "\n" if count else "").encode()
            whole.update(block)
            topics[str(topic)] = [int(count), hashlib.sha256(block).hexdigest()[:16]]
            start += count
        return {"universe_hash": whole.hexdigest(), "universe_topics": topics}

    @property
    def n_units(self) -> int:
        return len(self.unit_key)

    def add_units(self, topic: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        """Add pairs (certainty pairs outside the runs' top ``depth``); returns every given pair's unit.

        Units stay numbered in key order (topic, then document code), so a call that adds pairs renumbers
        the units after them: unit numbers obtained before the call (from an earlier ``add_units`` or
        :meth:`lookup`) are stale after it. Add every pair in one call."""
        doc = self.doc_index.get_indexer(doc_ids)
        new_docs = pd.unique(np.asarray(doc_ids, dtype=object)[doc < 0])
        if len(new_docs):
            self.doc_ids = np.concatenate([self.doc_ids, np.asarray(new_docs, dtype=object)])
            self.doc_index = pd.Index(self.doc_ids)
            doc = self.doc_index.get_indexer(doc_ids)
            if len(self.doc_ids) > self.n_docs:  # re-key with the larger document count
                old_doc = self.unit_doc
                self.n_docs = len(self.doc_ids)
                self.unit_key = self.unit_topic * self.n_docs + old_doc
        key = topic.astype(np.int64) * self.n_docs + doc
        extra = np.setdiff1d(key, self.unit_key)
        if len(extra):
            keys = np.r_[self.unit_key, extra]
            order = np.argsort(keys, kind="stable")
            self.unit_key = keys[order]
            remap = np.empty(len(keys), dtype=np.int64)
            remap[order] = np.arange(len(keys))
            self.unit_topic = (self.unit_key // self.n_docs).astype(np.int64)
            self.unit_doc = (self.unit_key % self.n_docs).astype(np.int64)
            self.item_unit = np.where(self.item_unit >= 0, remap[np.maximum(self.item_unit, 0)], -1)
            grow = np.zeros(len(extra))
            self.rrf = np.r_[self.rrf, grow][order]
            self.ap_prior = np.r_[self.ap_prior, grow][order]
            self.rbp_prior = np.r_[self.rbp_prior, grow][order]
        return np.searchsorted(self.unit_key, key)

    def lookup(self, topic: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        """The unit of each pair, ``-1`` where it is not in the universe."""
        doc = self.doc_index.get_indexer(doc_ids)
        key = topic.astype(np.int64) * self.n_docs + doc
        if not self.n_units:
            return np.full(len(key), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.unit_key, key), self.n_units - 1)
        ok = (doc >= 0) & (topic >= 0) & (self.unit_key[pos] == key)
        return np.where(ok, pos, -1)

    def topic_codes(self, query_ids: Any) -> np.ndarray:
        return pd.Index(self.topic_ids).get_indexer(query_ids)

    def frame(self, units: np.ndarray, **columns: Any) -> pd.DataFrame:
        out = pd.DataFrame(
            {
                "query_id": pd.Series(self.topic_ids[self.unit_topic[units]], dtype=object),
                "doc_id": pd.Series(self.doc_ids[self.unit_doc[units]], dtype=object),
            }
        )
        for name, values in columns.items():
            out[name] = values
        return out


def check_universe(universe: Universe, attrs: dict) -> None:
    """``ValueError`` when the runs given make another universe than the one the design records
    (``universe_hash``, :meth:`Universe.fingerprint`; a design without the record is not checked): runs
    changed under the same names (deeper lists, other documents) would turn pairs that could never have
    been drawn into unsampled universe pairs. Names the first topic, in natural order, that differs."""
    recorded = attrs.get("universe_hash")
    if recorded is None:
        return
    now = universe.fingerprint()
    if now["universe_hash"] == recorded:
        return
    then = attrs.get("universe_topics")
    then = then if isinstance(then, dict) else {}
    base = "the runs given are not those the design was drawn from: "
    advice = (
        "; the estimates hold for the universe the design was drawn from (a pair added since could never have "
        "been drawn, yet would count as an unsampled pair): give the runs the design was drawn from (the same "
        "files), or draw a new design for these runs"
    )
    differ = [t for t in universe.topic_ids.tolist() if now["universe_topics"].get(t) != then.get(t)]
    if not then or not differ:
        raise ValueError(f"{base}their top {universe.depth} pairs differ from the design's universe{advice}")
    topic = differ[0]
    count = now["universe_topics"][topic][0]
    drawn = then.get(topic, [0, ""])[0]
    where = f"in topic {topic!r} their top {universe.depth}"
    if count != drawn:
        what = f"holds {count} pairs, the design's universe {drawn}"
    else:
        what = f"holds other documents than the design's universe (the same number, {count} pairs)"
    raise ValueError(f"{base}{where} {what} ({len(differ)} of {len(universe.topic_ids)} topics differ){advice}")


def _refuse_duplicates(prepared: PreparedRuns, topic_ids: np.ndarray) -> None:
    """``ValueError`` when a run lists a document twice for one of the topics (as trec_eval and
    :func:`ir_incomplete.evaluate` refuse it): the document would count twice."""
    rows = prepared.duplicate_rows
    if not len(rows):
        return
    hit = np.flatnonzero(pd.Index(topic_ids).get_indexer(np.asarray(prepared.row_query, dtype=object)[rows]) >= 0)
    if len(hit):
        row = rows[hit[0]]
        raise ValueError(
            duplicate_message(
                prepared.run_names[prepared.row_run[row]], prepared.duplicate_docs[hit[0]], prepared.row_query[row]
            )
        )


def _natural(ids: list) -> list:
    text = [str(i) for i in ids]
    if all(t.lstrip("-").isdigit() for t in text):
        return sorted(text, key=lambda t: (int(t), t))
    return sorted(text)


def examples(ids: Any, count: int = 3) -> str:
    """The first ``count`` distinct ids in natural order, quoted, for messages: ``'1', '2', '10'``, with
    ``, ...`` when there are more."""
    shown = _natural(list(dict.fromkeys(str(i) for i in ids)))
    return ", ".join(repr(i) for i in shown[:count]) + (", ..." if len(shown) > count else "")
