"""trec_eval's reference measures, computed natively: ``AP``, ``AP@k``, ``nDCG``, ``nDCG@k``, ``P@k``,
``R@k``, ``RR``, ``RR@k``, ``Rprec``, ``Judged@k``, ``NumRet``, ``NumRelRet``, ``NumRel`` (definitions;
the kernels are in :mod:`ir_incomplete.kernels.reference`).

These are ``ir_measures``' built-in measures, with exactly the parameters they declare
(``SUPPORTED_PARAMS``) and the same defaults; a parameter value not supported here
(``nDCG(dcg=exp-log2)``, non-integer ``gains``, a cut-off < 1, ``rel`` < 1, which pytrec_eval refuses
too) leaves the measure to ``ir_measures``.
They are not registered with ``ir_measures``: its measure objects stay the built-in ones and, in its
default pipeline, the built-in providers (pytrec_eval, …) keep computing them. ``evaluate()`` (and so
robustness studies) and ``ir_measures.providers.registry['ir_incomplete']`` compute them here, with
one conversion of all runs and vectorized kernels; per query they equal pytrec_eval to 1e-9.

Conventions shared by every measure (trec_eval 9, as pytrec_eval):

* ranking order: score descending, scores compared as single-precision floats (``score_precision``
  of :func:`ir_incomplete.evaluate`), ties broken by document id descending;
* a grade is relevant when ≥ ``rel`` (default 1); R = qrels of the topic with grade ≥ ``rel``;
  negative grades (pooled but unjudged) are never relevant and have gain 0;
* ``judged_only=True`` (trec_eval ``-J``) first removes every retrieved document without a judgment of
  grade ≥ 0 (unpooled and pooled-but-unjudged alike), then cuts at ``k``: the condensed list
  (Sakai 2007). R and the ideal ranking are unchanged;
* a query of the qrels that the run does not answer gets 0 (as ``ir_measures``); queries of the run
  without judgments are ignored; ``NumRet`` and ``NumRel`` aggregate as sums (``SumAgg``).
"""

from __future__ import annotations

import numpy as np
from ir_measures.measures import ParamInfo
from ir_measures.measures.ap import _AP
from ir_measures.measures.judged import _Judged
from ir_measures.measures.ndcg import _nDCG
from ir_measures.measures.numrel import _NumRel
from ir_measures.measures.numret import _NumRet
from ir_measures.measures.p import _P
from ir_measures.measures.r import _R
from ir_measures.measures.rprec import _Rprec
from ir_measures.measures.rr import _RR

from ir_incomplete.kernels import reference as kernels
from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param

__all__ = [
    "ReferenceMeasure",
    "AveragePrecision",
    "NDCG",
    "GainsParam",
    "Precision",
    "Recall",
    "ReciprocalRank",
    "RPrecision",
    "JudgedRate",
    "NumRetrieved",
    "NumRelevant",
    "REFERENCE_MEASURES",
]

_REL = Param(int, default=1, minimum=1, desc="minimum grade that counts as relevant (inclusive; pytrec_eval: >= 1)")
_CUTOFF = Param(int, default=NOT_PROVIDED, minimum=1, desc="ranking cut-off k (after condensing with judged_only)")
_CUTOFF_REQUIRED = Param(int, minimum=1, required=True, desc="ranking cut-off k (after condensing with judged_only)")
_JUDGED_ONLY = Param(
    bool,
    default=False,
    desc="remove the retrieved documents without a judgment of grade >= 0 first (trec_eval -J, condensed list)",
)


class ReferenceMeasure(IncompleteMeasure):
    """A built-in ``ir_measures`` measure computed natively. It never extends the built-in (no extension
    parameters), so in ``ir_measures``' default pipeline the built-in providers keep it."""

    EXTENSION_PARAMS = ()

    def ranking(self, ranked, codes: np.ndarray | None = None) -> np.ndarray:
        """The code matrix this measure reads (``ranked.codes`` unless given): condensed when
        ``judged_only``, then cut at the cut-off."""
        codes = ranked.codes if codes is None else codes
        if "judged_only" in self.SUPPORTED_PARAMS and self.get("judged_only"):
            codes = kernels.condense(codes)
        cutoff = self.get("cutoff") if "cutoff" in self.SUPPORTED_PARAMS else None
        return codes if cutoff is None else codes[:, :cutoff]

    def n_relevant(self, ranked, qrels) -> np.ndarray:
        """R of each row's topic at this measure's relevance level."""
        return ranked.per_topic(qrels.n_relevant(self.get("rel")))


class AveragePrecision(ReferenceMeasure, _AP):
    """Average precision, AP and AP@k (trec_eval ``map`` and ``map_cut.k``, ``m_map.c`` / ``m_map_cut.c``).

    With rel(i) = 1 when the document at rank i has grade ≥ rel::

        AP@k = (1/R) · Σ_{i ≤ k, rel(i)} (Σ_{j ≤ i} rel(j)) / i        (R = 0 → 0; no k: every rank)

    Relevant documents not retrieved (or past k) contribute 0; the divisor is R also for ``@k``.
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"cutoff": _CUTOFF, "rel": _REL, "judged_only": _JUDGED_ONLY}

    def compute(self, ranked, qrels):
        return kernels.average_precision(self.ranking(ranked), self.n_relevant(ranked, qrels), self.get("rel"))


class GainsParam(Param):
    """nDCG's ``gains``: a mapping grade → gain, both integers, grades ≥ 0 (pytrec_eval takes integer
    relevance values only; negative grades are not kept apart in the data model)."""

    def __init__(self):
        super().__init__(dict, desc="custom gain of each grade (int to int); grades not listed keep gain = grade")

    def describe_allowed(self) -> str:
        return "a dict of integer grade >= 0 -> integer gain, e.g. {0: 0, 1: 1, 2: 3}"

    def coerce(self, owner: str, name: str, value):
        def integer(x) -> bool:
            return isinstance(x, (int, np.integer)) and not isinstance(x, bool)

        if not isinstance(value, dict) or not all(integer(k) and k >= 0 and integer(v) for k, v in value.items()):
            raise ValueError(
                f"{owner}: invalid value {value!r} for parameter {name!r}; expected {self.describe_allowed()}"
            )
        return {int(k): int(v) for k, v in value.items()}


class NDCG(ReferenceMeasure, _nDCG):
    """Normalised discounted cumulative gain, nDCG and nDCG@k (trec_eval ``ndcg`` and ``ndcg_cut.k``,
    ``m_ndcg.c`` / ``m_ndcg_cut.c``, default gains; Järvelin & Kekäläinen 2002).

    The gain of a document is its grade (linear; grade 0, negative grades and unjudged documents: 0),
    discounted by log2 of rank + 1::

        DCG@k  = Σ_{i ≤ k} gain(i) / log2(i + 1)
        nDCG@k = DCG@k / IDCG@k                                          (IDCG@k = 0 → 0)

    IDCG@k is the DCG@k of the ideal ranking: all judgments of the topic with a positive gain, highest
    gain first, whatever the run retrieved (with ``judged_only`` too). No k: the whole ranking and the
    whole ideal list. ``rel`` plays no part (nDCG has no such parameter).

    ``gains={grade: gain}`` replaces the gain of the grades listed (as ``ir_measures`` does, by
    rewriting the qrels for pytrec_eval): a grade mapped to a negative gain then counts as pooled but
    unjudged (gain 0; removed by ``judged_only``). Supported: integer grades ≥ 0 and integer gains, and
    ``dcg=log2`` only (other values stay with ``ir_measures``).
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "cutoff": _CUTOFF,
        "dcg": Param(str, default="log2", choices=("log2",), desc="DCG formulation (log2: trec_eval)"),
        "gains": GainsParam(),
        "judged_only": _JUDGED_ONLY,
    }

    def compute(self, ranked, qrels):
        custom = self.get("gains")
        gains = None if custom is None else kernels.grade_gains(qrels.grade_counts.shape[1], custom)
        ideal = kernels.ideal_dcg(qrels.grade_counts, self.get("cutoff"), gains)
        codes = ranked.codes if gains is None else kernels.drop_negative_gains(ranked.codes, gains)
        return kernels.ndcg(self.ranking(ranked, codes), ranked.per_topic(ideal), gains)


class Precision(ReferenceMeasure, _P):
    """Precision at k, P@k (trec_eval ``P.k``, ``m_P.c``)::

        P@k = |{i ≤ k : grade(i) ≥ rel}| / k

    The divisor is k also when fewer than k documents are retrieved (or kept by ``judged_only``).
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"cutoff": _CUTOFF_REQUIRED, "rel": _REL, "judged_only": _JUDGED_ONLY}

    def compute(self, ranked, qrels):
        return kernels.precision(self.ranking(ranked), self.get("cutoff"), self.get("rel"))


class Recall(ReferenceMeasure, _R):
    """Recall at k, R@k (trec_eval ``recall.k``, ``m_recall.c``)::

    R@k = |{i ≤ k : grade(i) ≥ rel}| / R                             (R = 0 → 0)
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"cutoff": _CUTOFF_REQUIRED, "rel": _REL, "judged_only": _JUDGED_ONLY}

    def compute(self, ranked, qrels):
        return kernels.recall(self.ranking(ranked), self.n_relevant(ranked, qrels), self.get("rel"))


class ReciprocalRank(ReferenceMeasure, _RR):
    """Reciprocal rank, RR and RR@k (trec_eval ``recip_rank``, ``m_recip_rank.c``)::

        RR@k = 1 / min{i ≤ k : grade(i) ≥ rel}                           (none → 0)

    pytrec_eval has no cut-off for it; ``RR@k`` is ``recip_rank`` of the ranking cut at k.
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"cutoff": _CUTOFF, "rel": _REL, "judged_only": _JUDGED_ONLY}

    def compute(self, ranked, qrels):
        return kernels.reciprocal_rank(self.ranking(ranked), self.get("rel"))


class RPrecision(ReferenceMeasure, _Rprec):
    """R-precision, Rprec (trec_eval ``Rprec``, ``m_Rprec.c``): precision at rank R::

        Rprec = |{i ≤ R : grade(i) ≥ rel}| / R                           (R = 0 → 0)

    The divisor is R also when fewer than R documents are retrieved.
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"rel": _REL, "judged_only": _JUDGED_ONLY}

    def compute(self, ranked, qrels):
        return kernels.r_precision(self.ranking(ranked), self.n_relevant(ranked, qrels), self.get("rel"))


class JudgedRate(ReferenceMeasure, _Judged):
    """Judgment rate, Judged@k (``ir_measures``' ``judged`` provider; not in trec_eval)::

        Judged@k = |{i ≤ k : document i is in the qrels}| / min(k, retrieved)   (no k: / retrieved)

    A document is "in the qrels" with any grade, negative ones included (as ``ir_measures``, which
    looks the document up in the qrels). Ranks follow trec_eval's order like every other measure here;
    ``ir_measures``' provider breaks score ties by document id *ascending*, so the two can differ when
    tied documents straddle rank k.
    """

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"cutoff": _CUTOFF}

    def compute(self, ranked, qrels):
        return kernels.judged_rate(self.ranking(ranked))


class NumRetrieved(ReferenceMeasure, _NumRet):
    """Number of retrieved documents, NumRet (trec_eval ``num_ret``), and with ``rel`` the number of
    retrieved relevant documents, ``NumRet(rel=r)`` (trec_eval ``num_rel_ret``; ``NumRelRet`` is
    ``NumRet(rel=1)``). Aggregated as the sum over queries."""

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": Param(
            int,
            default=NOT_PROVIDED,
            minimum=1,
            desc="count only retrieved documents with grade >= rel (inclusive); all retrieved documents if omitted",
        )
    }

    def compute(self, ranked, qrels):
        return kernels.retrieved(self.ranking(ranked), self.get("rel"))


class NumRelevant(ReferenceMeasure, _NumRel):
    """Number of relevant documents, NumRel (trec_eval ``num_rel``): R, the qrels of the topic with
    grade ≥ rel, whatever the run retrieved. Aggregated as the sum over queries; a query the run does
    not answer gets 0 (as ``ir_measures``)."""

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"rel": _REL}

    def compute(self, ranked, qrels):
        return self.n_relevant(ranked, qrels).astype(np.float64)


#: the measure classes computed natively, by the ``NAME`` of their ``ir_measures`` built-in
REFERENCE_MEASURES = (
    AveragePrecision,
    NDCG,
    Precision,
    Recall,
    ReciprocalRank,
    RPrecision,
    JudgedRate,
    NumRetrieved,
    NumRelevant,
)
