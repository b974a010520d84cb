"""Design-based estimates with intervals that hold: AP@k, nDCG@k, P@k, RBP and R from a probability sample.

:func:`estimate` reads a *design* (the judged pairs and each one's inclusion probability π, as
:func:`ir_incomplete.judging.sample` draws it), the judgments of those pairs and the runs, and returns
every run's mean over the topics (or every pair of runs' difference) with an interval.

**What is estimated.** The *universe* is the set of (topic, document) pairs in the top ``depth`` of the
runs the design was drawn from (``design.attrs["runs"]``, else every run given), plus the certainty pairs
(π = 1) of the design. The target of every estimate is the value that judging the whole universe would
give on the design's topics, documents outside the universe counting as nonrelevant; the mean over
topics counts a topic a run does not answer as 0 (trec_eval's ``-c``). A run whose top ``k`` reaches
outside the universe (a run evaluated later) gets the share of its top-``k`` rows that lie outside in
the ``outside`` column and a warning: those documents count as nonrelevant, so its estimate is of a
different quantity.

**Estimators** (:mod:`ir_incomplete.kernels.design`): Horvitz–Thompson pseudo-judgments
``ŷ = f + S (y − f)/π`` (statAP's estimator of AP for ``f = 0``; Aslam, Pavlu & Yilmaz, SIGIR 2006) and
the difference estimator with a control variate ``f`` (model-assisted; Särndal, Swensson & Wretman,
1992, ch. 6): ``control="labels"`` uses automatic labels (``predictions=``) through their calibration,
the share of each predicted grade's sampled pairs judged with each grade (π-weighted, the pairs of the
random part of the sample); ``control="model"`` does the same with cells of the runs' reciprocal-rank
fusion score (10 quantile bins) — a relevance model fitted on the judged sample; ``"labels+model"`` their
product cells. A cell with fewer than ``min_cell`` random pairs uses all of them. ``control="none"``
is plain Horvitz–Thompson. Any ``f`` keeps the estimator (nearly) unbiased: poor labels cost width,
never coverage.

**Intervals.** Linearised variance under Poisson sampling (every pair drawn independently; the
fixed-size stratified design uses the without-replacement variance within its strata), plus AP's
second-order term (its numerator's products of two pseudo-judgments), with the ratio estimators (AP,
nDCG) corrected for their first-order bias. The quantile is Student's t with Satterthwaite's effective
degrees of freedom of the variance, ``(Σ_u c_u)² / Σ_u c_u²`` over the per-pair terms ``c_u = (1 − π_u)
z_u²`` (column ``df``): when a few sampled relevant documents with large weights carry the variance, the
variance is itself uncertain and a normal interval is too short (measured on TREC-COVID with round-1
judgments + 2,000 sampled, 6 seeds: normal intervals covered 0.78 (AP@100) and 0.73 (nDCG@10) of the
runs, these 0.82 and 0.87; from no judgments 0.91 / 0.90 become 0.93 / 0.94). Topics are fixed: the
interval covers the error from judging a sample rather than the universe, not topic sampling.

Default control variate (``control="auto"``): the fitted relevance model (``model``; ``labels+model`` with
predictions), each cell's rate scaled per topic (``f_u = β_t p_c(u)``, ``β_t`` the π-weighted ratio of the
topic's judged to predicted relevant pairs): topics differ in how many relevant documents they have, and
cells pooled over topics made the estimated R negative on small topics. The measure names (``StatAP``, …)
default to ``none`` so that every front door, including ``ir_measures`` which sees one run at a time,
gives the same number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ir_incomplete.data.columns import _ids
from ir_incomplete.data.prepared import PreparedRuns, _row_items, duplicate_message, prepare_runs
from ir_incomplete.data.qrels import Qrels
from ir_incomplete.kernels.design import Items, Units, estimate_measure

__all__ = ["estimate", "Universe", "read_design", "check_design", "parse_estimand", "CONTROLS", "DESIGN_COLUMNS"]

#: the control variates :func:`estimate` knows
CONTROLS = ("auto", "none", "labels", "model", "labels+model")
#: the columns of a design
DESIGN_COLUMNS = ("query_id", "doc_id", "pi")
#: the sampling designs :func:`estimate` knows (``attrs["design"]``; none recorded: Poisson)
DESIGN_KINDS = ("poisson", "stratified")
_MODEL_BINS = 10
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
        qids = np.asarray(prepared.row_query, dtype=object)
        topic_values = np.repeat(qids, lengths)
        docs = np.asarray(prepared.doc_ids[items], dtype=object)
        run = np.repeat(prepared.row_run, lengths)
        self._items = (run, topic_values, docs, rank)
        in_universe = np.isin(run, [self.run_names.index(r) for r in self.universe_runs])
        self._in_universe = in_universe
        if topics is None:
            topics = pd.unique(topic_values[in_universe])
        self.set_topics(topics)
        _refuse_duplicates(prepared, self.topic_ids)

    def set_topics(self, topics: Any) -> None:
        run, topic_values, docs, rank = self._items
        topic_ids = np.asarray(_natural(list(topics)), dtype=object)
        self.topic_ids = topic_ids
        topic_index = pd.Index(topic_ids)
        topic = topic_index.get_indexer(topic_values)
        keep = topic >= 0
        doc_codes, doc_ids = pd.factorize(docs[keep])
        self.doc_ids = np.asarray(doc_ids, dtype=object)
        self.doc_index = pd.Index(self.doc_ids)
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
        n_units = len(unit_keys)
        r = self.item_rank + 1.0
        u = self.item_unit[uni]
        self.rrf = np.bincount(u, weights=1.0 / (_RRF_K + r[uni]), minlength=n_units)
        harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, self.depth + 1))]
        prior = (1.0 + harmonic[self.depth] - harmonic[self.item_rank[uni]]) / (2.0 * self.depth)
        self.ap_prior = np.bincount(u, weights=prior, minlength=n_units) / max(len(self.universe_runs), 1)
        rbp = (1.0 - _RBP_P) * _RBP_P ** self.item_rank[uni].astype(float)
        self.rbp_prior = np.bincount(u, weights=rbp, minlength=n_units) / max(len(self.universe_runs), 1)

    @property
    def n_units(self) -> int:
        return len(self.unit_key)

    def add_units(self, topic: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        """Add pairs (certainty pairs outside the runs' top ``depth``); returns every given pair's unit."""
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


# -- designs ---------------------------------------------------------------------------------------------


def _quantile(interval: float, df: np.ndarray) -> np.ndarray:
    """The two-sided ``interval`` quantile of Student's t with ``df`` degrees of freedom (normal where
    ``df`` is infinite)."""
    from scipy.stats import t

    return np.asarray(t.ppf(0.5 + interval / 2.0, np.maximum(df, 1.0)))


def _plain_value(value: Any) -> Any:
    """A numpy scalar as the Python value (messages show ``1.5``, not ``np.float64(1.5)``)."""
    return value.item() if isinstance(value, np.generic) else value


def read_design(design: Any) -> pd.DataFrame:
    """A design as a DataFrame ``query_id, doc_id, pi`` (plus any other columns, e.g. ``round``), ids as
    ``str``; ``attrs`` keep ``depth``, ``runs``, ``seed`` and the rest of what :func:`sample` recorded.
    Accepts the DataFrame :func:`ir_incomplete.judging.sample` returns or a design file it wrote (a
    tab-separated table whose ``#`` header lines hold the settings)."""
    first_line = None  # file line of the first data row (messages name file lines)
    if isinstance(design, pd.DataFrame):
        frame = design
        attrs = dict(design.attrs)
    else:
        import json

        attrs = {}
        lines: list[str] = []
        with open(design, encoding="utf-8") as handle:
            for no, line in enumerate(handle, 1):
                if line.startswith("#") and not lines:  # settings and comments come before the column line
                    body = line[1:].strip()
                    if body.startswith("design "):
                        try:
                            attrs = json.loads(body[len("design ") :])
                        except ValueError:
                            raise ValueError(
                                f"design file {design!r} line {no}: the settings line is not JSON"
                            ) from None
                    continue
                lines.append(line)
        from io import StringIO

        if not "".join(lines).strip():
            raise ValueError(
                f"design file {str(design)!r} is empty: a design file holds a header line query_id, doc_id, pi "
                f"(tab-separated) and one line per judged pair"
            )
        frame = pd.read_csv(StringIO("".join(lines)), sep="\t", dtype={"query_id": str, "doc_id": str})
        first_line = no - len(lines) + 2

    def row(i: int) -> str:
        return f"design row {i}" if first_line is None else f"design file {str(design)!r} line {first_line + i}"

    missing = [c for c in DESIGN_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"the design has no {missing[0]!r} column; a design has columns {', '.join(DESIGN_COLUMNS)}")
    out = frame.copy()
    out["query_id"] = _ids(frame["query_id"], "design query_id")
    out["doc_id"] = _ids(frame["doc_id"], "design doc_id")
    pi = pd.to_numeric(frame["pi"], errors="coerce").to_numpy(dtype=float)
    flags = frame["pi"].map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
    bad = np.flatnonzero(~(pi > 0) | ~(pi <= 1) | np.isnan(pi) | flags)
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"{row(i)}: pi={_plain_value(frame['pi'].iloc[i])!r} for ({out['query_id'].iloc[i]}, "
            f"{out['doc_id'].iloc[i]}) is not an inclusion probability; pi must be in (0, 1]"
        )
    out["pi"] = pi
    dup = out.duplicated(["query_id", "doc_id"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(
            f"{row(i)}: the pair ({out['query_id'].iloc[i]}, {out['doc_id'].iloc[i]}) is listed twice; "
            f"each judged pair appears once with its inclusion probability"
        )
    if "stratum" in out.columns:
        certain = (out["stratum"].astype(str) == "certain").to_numpy() & (pi != 1.0)
        if certain.any():
            i = int(np.flatnonzero(certain)[0])
            raise ValueError(
                f"{row(i)}: ({out['query_id'].iloc[i]}, {out['doc_id'].iloc[i]}) is in the certainty "
                f"stratum with pi={float(pi[i])!r}; certainty pairs are judged with pi = 1"
            )
    kind = attrs.get("design", "poisson")
    if kind not in DESIGN_KINDS:
        raise ValueError(f"the design's settings say design={kind!r}; choices: {', '.join(DESIGN_KINDS)}")
    if kind == "stratified":
        out["stratum_id"] = _check_strata(out, attrs)
    out.attrs = attrs
    return out


def _check_strata(out: pd.DataFrame, attrs: dict) -> np.ndarray:
    """The ``stratum_id`` of a fixed-size design's rows, checked against ``attrs["strata"]``
    (``[N_h, n_h]`` per stratum): each stratum has ``n_h`` rows with ``pi = n_h/N_h``, ``-1`` rows have
    ``pi = 1``."""
    table = attrs.get("strata")
    try:
        strata = np.asarray(table, dtype=float).reshape(-1, 2)
    except (TypeError, ValueError):
        strata = np.zeros((0, 2))
    if not len(strata) or not np.all(np.isfinite(strata)) or np.any(strata != np.round(strata)):
        raise ValueError(
            f"a stratified design needs its settings' strata, a list of [N_h, n_h] (integers) per stratum; "
            f"got {table!r}"
        )
    size, n = strata[:, 0], strata[:, 1]
    bad = np.flatnonzero((n < 0) | (n > size) | ((n < 2) & (n < size) & (size >= 2)))
    if len(bad):
        h = int(bad[0])
        raise ValueError(
            f"stratum {h}: n_h={int(n[h])} of N_h={int(size[h])} is not a valid sample size; need 0 <= n_h <= N_h "
            f"and n_h >= 2 unless every pair is taken (a stratum's variance needs two pairs)"
        )
    if "stratum_id" not in out.columns:
        raise ValueError("a stratified design has no 'stratum_id' column (the stratum of each row, -1 for certainty)")
    sid = pd.to_numeric(out["stratum_id"], errors="coerce").to_numpy(dtype=float)
    wrong = np.flatnonzero(~np.isfinite(sid) | (sid != np.round(sid)) | (sid < -1) | (sid >= len(strata)))
    if len(wrong):
        i = int(wrong[0])
        raise ValueError(
            f"design row {i}: stratum_id={out['stratum_id'].iloc[i]!r} is not a stratum; choices: -1 (certainty) "
            f"or 0..{len(strata) - 1}"
        )
    sid = sid.astype(np.int64)
    pi = out["pi"].to_numpy(dtype=float)
    rate = np.where(sid >= 0, (n / np.maximum(size, 1.0))[np.maximum(sid, 0)], 1.0)
    off = np.flatnonzero(np.abs(pi - rate) > 1e-9 * rate)
    if len(off):
        i = int(off[0])
        raise ValueError(
            f"design row {i}: pi={float(pi[i])!r} of ({out['query_id'].iloc[i]}, {out['doc_id'].iloc[i]}) disagrees "
            f"with its stratum {int(sid[i])}: n_h/N_h = {float(rate[i])!r}"
        )
    rows = np.bincount(sid[sid >= 0], minlength=len(strata))
    short = np.flatnonzero(rows != n)
    if len(short):
        h = int(short[0])
        raise ValueError(f"stratum {h} has {int(rows[h])} rows in the design, but its settings say n_h={int(n[h])}")
    return sid


def check_design(design: pd.DataFrame) -> pd.DataFrame:
    return read_design(design)


def _grades(judgments: Any, design: pd.DataFrame) -> np.ndarray:
    """The grade of every design pair; a pair without one is an error naming it."""
    qrels = judgments if isinstance(judgments, Qrels) else Qrels.from_any(judgments)
    frame = qrels.to_frame()
    index = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
    pos = index.get_indexer(pd.MultiIndex.from_arrays([design["query_id"], design["doc_id"]]))
    missing = np.flatnonzero(pos < 0)
    if len(missing):
        i = int(missing[0])
        raise ValueError(
            f"the design's pair ({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]}) has no judgment "
            f"({len(missing)} of its {len(design)} pairs have none); judge every pair of the design"
        )
    grades = frame["relevance"].to_numpy()[pos].astype(np.int64)
    neg = np.flatnonzero(grades < 0)
    if len(neg):
        i = int(neg[0])
        raise ValueError(
            f"the design's pair ({design['query_id'].iloc[i]}, {design['doc_id'].iloc[i]}) has grade "
            f"{grades[i]} (pooled but unjudged); every sampled pair needs a grade >= 0"
        )
    return grades


# -- control variates -------------------------------------------------------------------------------------


def _predicted(universe: Universe, predictions: Any, levels: np.ndarray) -> np.ndarray:
    """The predicted grade of every unit (``-1``: none), checked against the judged scale."""
    from ir_incomplete.predictions import read_predictions

    frame = read_predictions(predictions)
    if "relevance" not in frame.columns:
        raise ValueError("predictions need a relevance column (the predicted grade)")
    grade = pd.to_numeric(frame["relevance"], errors="coerce").to_numpy(dtype=float)
    topic = universe.topic_codes(frame["query_id"].astype(str))
    unit = universe.lookup(topic, frame["doc_id"].astype(str).to_numpy(dtype=object))
    out = np.full(universe.n_units, -1, dtype=np.int64)
    ok = unit >= 0
    bad = np.flatnonzero(ok & ~np.isin(grade, levels))
    if len(bad):
        i = int(bad[0])
        raise ValueError(
            f"predictions: grade {_scalar(frame['relevance'].iloc[i])!r} of ({frame['query_id'].iloc[i]}, "
            f"{frame['doc_id'].iloc[i]}) is not on the judgments' scale ({', '.join(str(int(v)) for v in levels)})"
        )
    out[unit[ok]] = np.searchsorted(levels, grade[ok])
    return out


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (so that messages show ``5``, not ``np.int64(5)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _cells(universe: Universe, control: str, predicted: np.ndarray | None) -> np.ndarray:
    cells = np.zeros(universe.n_units, dtype=np.int64)
    if "model" in control:
        score = np.log(universe.rrf + 1e-12)
        edges = np.quantile(score, np.linspace(0, 1, _MODEL_BINS + 1)[1:-1]) if len(score) else []
        cells = np.searchsorted(np.unique(edges), score, side="right")
    if "labels" in control and predicted is not None:
        cells = cells * (int(predicted.max(initial=0)) + 2) + (predicted + 1)
    return cells


def _control_variate(
    cells: np.ndarray,
    rand: np.ndarray,
    grade: np.ndarray,
    pi: np.ndarray,
    n_levels: int,
    min_cell: int,
    topic: np.ndarray | None = None,
) -> np.ndarray:
    """``f_level`` [units × levels]: the π-weighted share of each grade among the random sampled pairs of
    the unit's cell (all random pairs when the cell has fewer than ``min_cell``)."""
    f = np.zeros((len(cells), n_levels))
    if len(rand) == 0:
        return f
    w = 1.0 / pi[rand]
    codes, cell_of = np.unique(cells, return_inverse=True)
    c = cell_of[rand]
    total = np.bincount(c, weights=w, minlength=len(codes))
    count = np.bincount(c, minlength=len(codes))
    share = np.zeros((len(codes), n_levels))
    overall = np.bincount(grade[rand], weights=w, minlength=n_levels) / w.sum()
    for lev in range(n_levels):
        share[:, lev] = np.bincount(c, weights=w * (grade[rand] == lev), minlength=len(codes))
    share = np.where((count >= min_cell)[:, None], share / np.where(total > 0, total, 1.0)[:, None], overall[None, :])
    f = share[cell_of]
    if topic is None:
        return f
    # scaled within each topic so that the π-weighted sums over the topic's random pairs agree
    # (f_u = β_t p_c(u), β_t = Σ_S 1[y = g]/π / Σ_S p_c/π): topics differ in how many relevant
    # documents they have, which cells pooled over topics cannot know
    n_topics = int(topic.max(initial=-1)) + 1
    t = topic[rand]
    for lev in range(1, n_levels):
        judged = np.bincount(t, weights=w * (grade[rand] == lev), minlength=n_topics)
        predicted = np.bincount(t, weights=w * f[rand, lev], minlength=n_topics)
        beta = np.where(predicted > 0, judged / np.where(predicted > 0, predicted, 1.0), 0.0)
        f[:, lev] *= beta[topic]
    return f


# -- estimate ---------------------------------------------------------------------------------------------


def _warn_outside(names: list[str], share: np.ndarray, est: Estimand) -> None:
    """Warn about the runs whose top ``k`` reaches outside the universe (with any form of the output)."""
    flagged = [names[i] for i in np.flatnonzero(share > 0)]
    if flagged:
        warnings.warn(
            f"{len(flagged)} run(s) retrieve documents outside the design's universe in their top "
            f"{est.k} (e.g. {flagged[0]!r}: {share[names.index(flagged[0])]:.1%}); those count as "
            f"nonrelevant, so their {est.name} estimates another quantity (column 'outside')",
            stacklevel=3,
        )


def _check_depth(depth: Any, recorded: Any) -> int:
    """The universe's depth: ``depth=`` (an integer >= 1, at most the design's) or the design's own."""
    if depth is not None and (
        isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer)) or depth < 1
    ):
        raise ValueError(f"depth={depth!r} is not an integer >= 1 (the ranks per run and query of the universe)")
    if recorded is None:
        if depth is None:
            raise ValueError(
                "the design records no depth (a DataFrame whose attrs were lost, or a file without its '# design' "
                "line): give depth= (the ranks per run and query it was drawn from)"
            )
        return int(depth)
    if isinstance(recorded, bool) or not isinstance(recorded, (int, np.integer)) or recorded < 1:
        raise ValueError(f"the design's recorded depth {recorded!r} is not an integer >= 1")
    if depth is not None and depth > recorded:
        raise ValueError(
            f"depth={depth} is deeper than the design's depth {recorded}: the pairs below rank {recorded} were never "
            f"sampled, so they cannot be estimated; leave depth= out (cut-offs up to {recorded} are estimated)"
        )
    if depth is not None and depth < recorded:
        raise ValueError(
            f"depth={depth} differs from the design's depth {recorded}: the universe is the runs' top {recorded}; "
            f"leave depth= out and ask for the cut-off you need (e.g. P@{depth})"
        )
    return int(recorded)


def estimate(
    runs: Any,
    judgments: Any,
    design: Any,
    measures: Any,
    *,
    predictions: Any = None,
    interval: float = 0.9,
    pairs: bool | str = False,
    per_query: bool = False,
    control: str = "auto",
    depth: int | None = None,
    universe: str = "runs",
    min_cell: int = 20,
    score_precision: str = "float32",
) -> pd.DataFrame:
    """Design-based estimates and intervals of run means (or, ``pairs=True``, of every pair's difference).

    ``runs``: anything :func:`ir_incomplete.evaluate` accepts; ``judgments``: qrels with a grade for every
    design pair (more are ignored); ``design``: the DataFrame or file of :func:`ir_incomplete.judging.sample`
    (``query_id, doc_id, pi``); ``measures``: ``AP@k``, ``nDCG@k``, ``P@k``, ``RBP(p=..)@k``, ``R``.
    ``predictions``: automatic labels (any form :func:`ir_incomplete.predictions.read_predictions`
    reads), used only as a control variate; ``control``: ``auto`` (``labels+model`` with predictions, else
    ``model``; ``none`` with ``universe="design"``),
    ``none``, ``labels``, ``model``, ``labels+model`` (see the module docstring). ``interval``: the
    level of the two-sided interval (Student's t with Satterthwaite's ``df``, see the module
    docstring). ``depth``: the universe's depth (default: the design's).
    ``universe``: ``"runs"`` (the top ``depth`` of the runs the design was drawn from, all of which must
    be given) or ``"design"`` (the design's pairs plus the top ``depth`` of the runs given: for evaluating
    runs one at a time, as ``ir_measures`` does; only ``control="none"``, whose estimates do not depend on
    the unsampled pairs, and identical to ``"runs"`` then).

    Returns ``run, measure, value, lo, hi, se, outside`` (``outside``: share of the run's top-k rows
    outside the universe), or with ``pairs=True`` ``run_a, run_b, measure, value, lo, hi, se,
    significant`` (value = a − b, every unordered pair once, in the runs' order); ``per_query=True``
    gives ``run, query_id, measure, value`` instead.
    """
    frame = read_design(design)
    if not (isinstance(interval, (int, float)) and 0 < interval < 1):
        raise ValueError(f"interval={interval!r} is not a level in (0, 1), e.g. 0.9")
    if control not in CONTROLS:
        raise ValueError(f"control={control!r} is not valid; choices: {', '.join(CONTROLS)}")
    depth = _check_depth(depth, frame.attrs.get("depth"))
    drawn_precision = frame.attrs.get("score_precision")
    if drawn_precision is not None and drawn_precision != score_precision:
        raise ValueError(
            f"score_precision={score_precision!r} differs from the design's {drawn_precision!r}: tied scores would "
            f"rank differently and the runs' top {depth} would not be the universe the design was drawn from; give "
            f"score_precision={drawn_precision!r}"
        )
    if not isinstance(per_query, (bool, np.bool_)):
        raise ValueError(f"per_query={per_query!r} is not True or False")
    if not (isinstance(pairs, (bool, np.bool_)) or (isinstance(pairs, str) and pairs == "both")):
        raise ValueError(f"pairs={pairs!r} is not True or False")
    if pairs and per_query:
        raise ValueError("pairs=True and per_query=True cannot be combined: pairs are of run means; choose one")
    if isinstance(min_cell, (bool, np.bool_)) or not isinstance(min_cell, (int, np.integer)) or min_cell < 0:
        raise ValueError(
            f"min_cell={min_cell!r} is not an integer >= 0 (random pairs a cell needs to use its own share)"
        )
    measure_list = [measures] if isinstance(measures, str) or not hasattr(measures, "__iter__") else list(measures)
    if not measure_list:
        raise ValueError("no measures given")
    estimands = [parse_estimand(m, depth) for m in measure_list]
    if not len(frame):
        raise ValueError("the design has no pairs")
    if universe not in ("runs", "design"):
        raise ValueError(f"universe={universe!r} is not valid; choices: runs, design")
    by_design = universe == "design"
    if by_design and control not in ("auto", "none"):
        raise ValueError(
            f"control={control!r} needs the whole universe (the sum of the control variate over every unsampled "
            f"pair): estimate all the design's runs together (universe='runs'); with universe='design' only "
            f"control='none' is valid"
        )
    if by_design and predictions is not None:
        raise ValueError(
            "predictions= need the whole universe (the sum of the control variate over every unsampled pair): "
            "estimate all the design's runs together (universe='runs'), not one run at a time"
        )
    universe_runs = None if by_design else frame.attrs.get("runs")
    # the mean is over the universe's topics, also those where no pair happened to be sampled (their
    # estimate is 0): as sample records them, else every topic the universe's runs answer
    topics = pd.unique(frame["query_id"].to_numpy())
    recorded_topics = frame.attrs.get("topics")
    if recorded_topics is not None:
        topics = pd.unique(np.r_[_ids(np.asarray(list(recorded_topics), dtype=object), "design topics"), topics])
    from_runs = recorded_topics is None and not by_design
    space = Universe(runs, depth, universe_runs, score_precision, topics=None if from_runs else topics)
    if from_runs:
        more = topics[pd.Index(space.topic_ids).get_indexer(topics) < 0]
        if len(more):
            space.set_topics(np.r_[space.topic_ids, more])
    drawn_from = frame.attrs.get("runs")
    if by_design and isinstance(drawn_from, list) and drawn_from:
        strangers = [name for name in space.run_names if name not in drawn_from]
        if strangers:
            warnings.warn(
                f"run {strangers[0]!r} is not among the runs the design was drawn from ({len(strangers)} such "
                f"run(s)): the documents it retrieves that those runs do not could never be sampled and count as "
                f"nonrelevant, so its estimates are of another quantity",
                stacklevel=2,
            )
    grades = _grades(judgments, frame)
    topic = space.topic_codes(frame["query_id"])
    unit = space.lookup(topic, frame["doc_id"].to_numpy(dtype=object))
    pi = frame["pi"].to_numpy(dtype=float)
    outside = np.flatnonzero((unit < 0) & (pi < 1.0) & (not by_design))
    if len(outside):
        i = int(outside[0])
        raise ValueError(
            f"the design's pair ({frame['query_id'].iloc[i]}, {frame['doc_id'].iloc[i]}) with pi={pi[i]:g} is not "
            f"in the top {depth} of the runs it was drawn from ({len(outside)} such pairs): the design's universe "
            f"disagrees with the runs given"
        )
    if (unit < 0).any():
        unit = space.add_units(topic, frame["doc_id"].to_numpy(dtype=object))
    levels = np.unique(np.r_[0, grades])
    unit_pi = np.ones(space.n_units)
    sampled = np.zeros(space.n_units, dtype=bool)
    unit_grade = np.zeros(space.n_units, dtype=np.int64)
    unit_pi[unit] = pi
    sampled[unit] = True
    unit_grade[unit] = np.searchsorted(levels, grades)
    if control == "auto":
        control = "none" if by_design else "labels+model" if predictions is not None else "model"
    if "labels" in control and predictions is None:
        raise ValueError(f"control={control!r} needs predictions=")
    f_level = np.zeros((space.n_units, len(levels)))
    if control != "none":
        predicted = _predicted(space, predictions, levels) if predictions is not None else None
        cells = _cells(space, control, predicted)
        rand = np.flatnonzero(sampled & (unit_pi < 1.0))
        f_level = _control_variate(cells, rand, unit_grade, unit_pi, len(levels), min_cell, space.unit_topic)
        f_level[sampled & (unit_pi >= 1.0)] = 0.0  # certainty pairs are known exactly
    unit_stratum, strata_table = None, None
    if frame.attrs.get("design") == "stratified":
        unit_stratum = np.full(space.n_units, -1, dtype=np.int64)
        unit_stratum[unit] = frame["stratum_id"].to_numpy(dtype=np.int64)
        strata_table = np.asarray(frame.attrs["strata"], dtype=np.int64).reshape(-1, 2)
    units = Units(
        space.unit_topic,
        unit_pi,
        sampled,
        unit_grade,
        levels.astype(float),
        f_level,
        len(space.topic_ids),
        unit_stratum,
        strata_table,
    )
    n_runs, n_topics = len(space.run_names), len(space.topic_ids)
    order = np.lexsort((space.item_rank, space.item_topic, space.item_run))
    inside = space.item_unit[order] >= 0
    rows = order[inside]
    items = Items(
        space.item_run[rows] * n_topics + space.item_topic[rows],
        space.item_rank[rows],
        space.item_unit[rows],
        n_runs,
        n_topics,
    )
    names = space.run_names
    out = []
    for est in estimands:
        result = estimate_measure(est.kind, est.k, units, items, rel_from=est.rel, p=est.p)
        cut = space.item_rank < est.k
        share = np.bincount(space.item_run[cut & (space.item_unit < 0)], minlength=n_runs) / np.maximum(
            np.bincount(space.item_run[cut], minlength=n_runs), 1
        )
        _warn_outside(names, share, est)
        if per_query:
            out.append(
                pd.DataFrame(
                    {
                        "run": np.repeat(names, n_topics),
                        "query_id": np.tile(space.topic_ids, n_runs),
                        "measure": est.name,
                        "value": result.value.reshape(-1),
                    }
                )
            )
            continue
        value = result.value.mean(axis=1)
        if units.stratum is None:
            zw = result.z * np.sqrt(1.0 - units.pi[units.random])[None, :]
        else:  # centred within strata and scaled: zw zwᵀ is the without-replacement covariance
            zw = units._centred(result.z) * np.sqrt(units.srs_scale[units.random_stratum])[None, :]
        cov = zw @ zw.T
        if result.second is not None:
            m2 = result.second
            cov = cov + (m2 @ m2.T).toarray()  # type: ignore[attr-defined]
        cov /= n_topics**2
        # Satterthwaite's effective degrees of freedom of each variance (a sum of one-unit terms): few
        # dominant units (rare relevant documents with large weights) make it small and the interval a t's
        c4 = (zw**2) ** 2
        total = (zw**2).sum(axis=1)
        df_run = np.where(c4.sum(axis=1) > 0, total**2 / np.where(c4.sum(axis=1) > 0, c4.sum(axis=1), 1.0), np.inf)
        if pairs:  # True, or "both" (run means, then pairs: one pass for callers that want both tables)
            a, b = np.triu_indices(n_runs, k=1)
            diff = value[a] - value[b]
            var = np.clip(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 0.0, None)
            se = np.sqrt(var)
            # Satterthwaite for a difference: Σ_u (z_a − z_b)^4 from powers of z (no [pairs × units] array)
            w2 = zw**2
            cube = (zw**3) @ zw.T
            s4 = c4.sum(axis=1)[a] + c4.sum(axis=1)[b] - 4.0 * cube[a, b] - 4.0 * cube[b, a] + 6.0 * (w2 @ w2.T)[a, b]
            s2 = total[a] + total[b] - 2.0 * (zw @ zw.T)[a, b]
            df_pair = np.where(s4 > 0, s2**2 / np.where(s4 > 0, s4, 1.0), np.inf)
            q_pair = _quantile(interval, df_pair)
            lo, hi = diff - q_pair * se, diff + q_pair * se
            out.append(
                pd.DataFrame(
                    {
                        "run_a": np.asarray(names, dtype=object)[a],
                        "run_b": np.asarray(names, dtype=object)[b],
                        "measure": est.name,
                        "value": diff,
                        "lo": lo,
                        "hi": hi,
                        "se": se,
                        "df": df_pair,
                        "significant": (lo > 0) | (hi < 0),
                    }
                )
            )
        if pairs != True:  # noqa: E712 (pairs is True, False or "both")
            se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
            q_run = _quantile(interval, df_run)
            out.append(
                pd.DataFrame(
                    {
                        "run": names,
                        "measure": est.name,
                        "value": value,
                        "lo": value - q_run * se,
                        "hi": value + q_run * se,
                        "se": se,
                        "df": df_run,
                        "outside": share,
                    }
                )
            )
    attrs = {"interval": interval, "control": control, "depth": depth, "topics": n_topics}
    if pairs == "both" and not per_query:
        tables = []
        for kind in ("run", "run_a"):
            frame = pd.concat([o for o in out if kind in o.columns], ignore_index=True)
            frame.attrs = dict(attrs)
            tables.append(frame)
        return tables
    result_frame = pd.concat(out, ignore_index=True)
    result_frame.attrs = attrs
    return result_frame
