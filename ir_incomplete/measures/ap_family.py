"""AP-family measures for incomplete judgments (definitions; the kernels are in
:mod:`ir_incomplete.kernels.ap_family`)."""

from __future__ import annotations

import numpy as np
from ir_measures.measures import ParamInfo
from ir_measures.measures.bpref import _Bpref
from ir_measures.measures.infap import _infAP

from ir_incomplete.kernels import ap_family as kernels
from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param

__all__ = [
    "InfAP",
    "infAP",
    "IndAP",
    "indAP",
    "SubAP",
    "subAP",
    "BprefMeasure",
    "Bpref",
    "BPref",
    "Bpref10Measure",
    "Bpref10",
    "RankEffMeasure",
    "RankEff",
    "REL_PARAM",
    "CUTOFF_PARAM",
]

REL_PARAM = Param(int, default=1, minimum=0, desc="minimum grade that counts as relevant (inclusive)")
CUTOFF_PARAM = Param(
    int, default=NOT_PROVIDED, minimum=1, desc="ranking cut-off k: only the first k retrieved documents count"
)


#: the smallest smoothing constant c of infAP: 1/c (the largest value a term of infAP can take) and its
#: sums over up to 10^8 relevant documents stay finite doubles
C_MINIMUM = 1e-300


class InfAP(IncompleteMeasure, _infAP):
    """Inferred AP, infAP (Yilmaz & Aslam, CIKM 2006; "Estimating average precision when judgments are
    incomplete", KAIS 2008, §4.5). trec_eval's ``infAP``.

    For each judged relevant document at rank k, let r and n be the judged relevant and judged
    nonrelevant documents *above* k, and d the documents above k that belong to the pool (judged, or
    pooled-but-unjudged: qrels grade < 0). Unpooled documents (absent from the qrels) are not in d but
    still occupy ranks::

        E[P@1] = 1
        E[P@k] = 1/k + ((k−1)/k) · (d/(k−1)) · (r + eps) / (r + n + c·eps)     (variant=pool)
        infAP  = (1/R) · Σ_{retrieved judged relevant} E[P@k]

    ``variant=uniform`` (KAIS 2008 eq. 2: the judged set is a uniform sample of everything) sets
    d = k − 1. ``c`` generalises trec_eval's Lidstone smoothing (c = 2): with nothing judged above k the
    estimated precision above k is 1/c (the paper studies c ∈ {1, 1.5, 2, 2.5}; sample_eval uses 3).
    Any c ≥ 1e-300 is accepted (so that 1/c, and sums of it over 10^8 relevant documents, stay finite);
    with c < 1 that estimate exceeds 1, and so can infAP (it is at most max(1, 1/c)); any finite
    eps > 0 is accepted. When c·eps underflows (c = eps = 1e-200) the ratio with nothing judged above k
    is its exact value 1/c rather than eps/0, so the value is never NaN (see
    :func:`ir_incomplete.kernels.inferred_ap`).

    Conventions: R = number of qrels with grade ≥ rel (negative grades never count); R = 0 gives 0;
    unretrieved relevant documents contribute 0; ties in score are broken by document id descending,
    scores compared in single precision (trec_eval 9); ``@k`` truncates the run and still divides by R.
    With c = 2, eps = 1e-5, variant=pool and no cut-off this is exactly trec_eval/pytrec_eval infAP.

    Without pooled-but-unjudged documents (no qrels grade < 0, as in complete or depth-pool judgments,
    or with ``negative="zero"``) infAP equals AP (variant=pool) up to the smoothing: every pooled
    document above k is judged, so r + n = d and E[P@k] = (1 + r)/k + eps·(d − c·r)/(k·(d + c·eps)),
    the precision at k plus a term below eps·max(1, c − 1)/k. So infAP and AP differ by less than
    eps·max(1, c − 1), below 1e-5 with the defaults (on TREC-COVID round 1, whose qrels hold no −1:
    at most 8.3e-7 per query over the 143 runs), and ``infAP@k`` and ``AP@k`` likewise.
    """

    __name__ = "infAP"
    NAME = "infAP"
    PRETTY_NAME = "Inferred Average Precision"
    SHORT_DESC = (
        "AP estimated from a judged sample of the pool (trec_eval infAP); equals AP (up to eps) when no grade is -1."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "c": Param(
            float,
            default=2.0,
            minimum=C_MINIMUM,
            desc="smoothing: estimated precision above k is 1/c when nothing above k is judged",
        ),
        "eps": Param(float, default=1e-5, minimum=0, min_inclusive=False, desc="Lidstone smoothing constant epsilon"),
        "variant": Param(
            str,
            default="pool",
            choices=("pool", "uniform"),
            desc="pool: d counts pooled documents above k (trec_eval); uniform: d = k-1",
        ),
        "cutoff": CUTOFF_PARAM,
    }
    EXTENSION_PARAMS = ("c", "eps", "variant", "cutoff")

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        return kernels.inferred_ap(
            ranked.truncated(self.get("cutoff")),
            ranked.per_topic(qrels.n_relevant(rel)),
            rel_level=rel,
            c=self.get("c"),
            eps=self.get("eps"),
            uniform=self.get("variant") == "uniform",
        )


infAP = InfAP()


class IndAP(IncompleteMeasure):
    """Induced AP, indAP (Yilmaz & Aslam, "Estimating average precision when judgments are incomplete",
    KAIS 2008, §4.3; the "original" variant is from their CIKM 2006 paper).

    AP computed on the ranking reduced to the documents the variant keeps::

        indAP = (1/R) · Σ_{retrieved judged relevant d} |{judged relevant d' : rank(d') ≤ rank(d)}|
                                                         / rank(d)

    where rank(·) is the rank in the reduced list.

    * ``variant=pool`` (default, the journal definition): drop the pooled-but-unjudged documents (qrels
      grade < 0); unpooled documents (absent from the qrels) stay in the list as nonrelevant. With qrels
      that have no negative entries this is plain AP.
    * ``variant=original``: drop every unjudged document (pooled-but-unjudged and unpooled). This is
      condensed AP, trec_eval ``-J map`` (pytrec_eval ``map`` with ``judged_docs_only_flag``).

    Conventions: R = number of qrels with grade ≥ rel (negative grades never count); R = 0 gives 0;
    unretrieved relevant documents contribute 0; ties in score are broken by document id descending,
    scores compared in single precision (trec_eval 9); ``@k`` is applied after dropping documents
    (condense, then cut: the first k documents of the reduced list; trec_eval
    ``-J`` with ``map_cut.k``) and still divides by R.
    """

    __name__ = "indAP"
    NAME = "indAP"
    PRETTY_NAME = "Induced Average Precision"
    SHORT_DESC = (
        "AP on the ranking with unjudged documents removed "
        "(pool: only pooled-but-unjudged; original: all, = trec_eval -J map)."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "variant": Param(
            str,
            default="pool",
            choices=kernels.INDUCED_VARIANTS,
            desc="pool: drop pooled-but-unjudged documents (qrels grade < 0), keep unpooled ones as "
            "nonrelevant; original: drop every unjudged document (trec_eval -J map)",
        ),
        "cutoff": Param(
            int, default=NOT_PROVIDED, minimum=1, desc="cut-off k, applied to the reduced ranking (condense, then cut)"
        ),
    }

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        return kernels.induced_ap(
            ranked.codes,
            ranked.per_topic(qrels.n_relevant(rel)),
            rel_level=rel,
            variant=self.get("variant"),
            cutoff=self.get("cutoff"),
        )


class SubAP(IncompleteMeasure):
    """Subcollection AP, subAP (Yilmaz & Aslam, "Estimating average precision when judgments are
    incomplete", Knowledge and Information Systems 16(2), 2008, §4.4; the formula is reconstructed from
    the text of that section).

    Pooled-but-unjudged documents (qrels grade < 0) are dropped. Each unpooled document (absent from the
    qrels) is in the judged subcollection, as a nonrelevant document, with probability p, independently.
    For the judged relevant document d let r and n be the judged relevant and judged nonrelevant
    documents up to and including d, and nd the unpooled documents up to d::

        E[P(d)] = Σ_{i=0}^{nd} C(nd,i) p^i (1−p)^(nd−i) · r/(r+n+i)
        subAP   = (1/R) · Σ_{retrieved judged relevant d} E[P(d)]

    ``p`` is the fraction of the complete judgment set that is judged. When omitted it is estimated per
    topic as ``|J| / (|J| + U)``, with ``|J|`` the judged qrels (grade ≥ 0) and U the negative qrels
    (this package's default: the paper takes p as known), so qrels without negative entries give p = 1.
    p = 1 equals indAP (variant=pool), p = 0 equals indAP (variant=original) (0⁰ = 1); both are computed
    exactly as indAP does. The sum is evaluated with a recurrence over nd (no binomial coefficients),
    stable for rankings of any length.

    Conventions: R = number of qrels with grade ≥ rel; R = 0 gives 0; unretrieved relevant documents
    contribute 0; ties in score are broken by document id descending, scores compared in single
    precision (trec_eval 9); ``@k`` is applied to each reduced ranking (condense, then cut): the term
    for i counts only when r+n+i ≤ k; the result still divides by R.
    """

    __name__ = "subAP"
    NAME = "subAP"
    PRETTY_NAME = "Subcollection Average Precision"
    SHORT_DESC = (
        "Expected AP when each unpooled document is judged (nonrelevant) with probability p; "
        "between indAP original (p=0) and pool (p=1)."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "p": Param(
            float,
            default=NOT_PROVIDED,
            minimum=0.0,
            maximum=1.0,
            desc="fraction of the complete judgment set that is judged, in [0, 1]; "
            "omitted: per topic |J|/(|J|+U), judged qrels over judged plus negative qrels",
        ),
        "rel": REL_PARAM,
        "cutoff": Param(
            int, default=NOT_PROVIDED, minimum=1, desc="cut-off k, applied to each reduced ranking (condense, then cut)"
        ),
    }

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        p = self.get("p")
        if p is None:
            judged = qrels.n_judged().astype(np.float64)
            pooled = judged + qrels.n_unjudged
            per_topic = np.ones(qrels.n_topics, dtype=np.float64)
            np.divide(judged, pooled, out=per_topic, where=pooled > 0)
            p = ranked.per_topic(per_topic)
        return kernels.subcollection_ap(
            ranked.codes, ranked.per_topic(qrels.n_relevant(rel)), p, rel_level=rel, cutoff=self.get("cutoff")
        )


_BPREF_VARIANT_DESC = (
    "trec_eval: denominator min({cap}, N) (trec_eval >= 8, N excludes negative qrels); paper: denominator {cap}"
)


class BprefMeasure(IncompleteMeasure, _Bpref):
    """Binary preference, bpref (Buckley & Voorhees, SIGIR 2004; as in Yilmaz & Aslam, KAIS 2008, eq. 1,
    and Ahlgren & Grönqvist, IP&M 2008, §4.1). trec_eval's ``bpref``.

    For each retrieved judged relevant document r, let n_r be the judged nonrelevant documents ranked
    above r; unjudged documents (pooled-but-unjudged and unpooled) are ignored. With N the judged
    nonrelevant documents of the topic (retrieved or not)::

        variant=trec_eval:  bpref = (1/R) · Σ_r [1 − min(n_r, R) / min(R, N)]   (term = 1 when n_r = 0)
        variant=paper:      bpref = (1/R) · Σ_r [1 − min(n_r, R) / R]

    ``trec_eval`` (default) is trec_eval ≥ 8.0 (``m_bpref.c``) and equals pytrec_eval ``bpref``; the
    variants differ only when N < R. ``paper`` counts only the first R judged nonrelevant documents.

    Conventions: R = qrels with grade ≥ rel, N = qrels with 0 ≤ grade < rel (negative grades are in
    neither, as in trec_eval ≥ 9); R = 0 gives 0; N = 0 gives R_ret/R; unretrieved relevant documents
    contribute 0; ties in score are broken by document id descending, scores compared in single
    precision (trec_eval 9); ``@k`` truncates the run first (like trec_eval ``-M k``), R and N unchanged.
    Plain ``Bpref`` (and its alias ``BPref``) stays with pytrec_eval in ``ir_measures``' default pipeline;
    ``variant`` or a cut-off routes it here.
    """

    __name__ = "Bpref"
    NAME = "Bpref"
    ALIASES = ("BPref",)
    PRETTY_NAME = "Binary Preference"
    SHORT_DESC = (
        "Fraction of judged nonrelevant documents (of the first R) ranked below each relevant one; unjudged ignored."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "variant": Param(
            str, default="trec_eval", choices=kernels.BPREF_VARIANTS, desc=_BPREF_VARIANT_DESC.format(cap="R")
        ),
        "cutoff": CUTOFF_PARAM,
    }
    EXTENSION_PARAMS = ("variant", "cutoff")

    def compute(self, ranked, qrels):
        return _bpref(self, ranked, qrels, extra=0)


def _bpref(measure, ranked, qrels, extra: int):
    """bpref of ``measure``'s parameters with the nonrelevant cap R + ``extra`` (0: bpref, 10: bpref-10)."""
    rel = measure.get("rel")
    return kernels.bpref(
        ranked.truncated(measure.get("cutoff")),
        ranked.per_topic(qrels.n_relevant(rel)),
        ranked.per_topic(qrels.n_nonrelevant(rel)),
        rel_level=rel,
        variant=measure.get("variant"),
        extra=extra,
    )


class Bpref10Measure(IncompleteMeasure):
    """bpref-10 (Buckley & Voorhees, SIGIR 2004; Yilmaz & Aslam, KAIS 2008; Ahlgren & Grönqvist, IP&M
    2008, §4.1/§4.3): bpref with the cap R replaced by R + 10.

    For each retrieved judged relevant document r, n_r is the number of judged nonrelevant documents
    above r (unjudged documents ignored); N the judged nonrelevant documents of the topic::

        variant=trec_eval:  (1/R) · Σ_r [1 − min(n_r, R+10) / min(N, R+10)]   (term = 1 when n_r = 0)
        variant=paper:      (1/R) · Σ_r [1 − min(n_r, R+10) / (R+10)]

    ``trec_eval`` (default) is trec_eval 8.1's ``bpref_top10pRnonrel`` with N
    excluding negative qrels (as trec_eval ≥ 9 does for bpref); trec_eval ≥ 9 no longer has this measure.
    ``paper`` is the published formula, which equals Ahlgren & Grönqvist's "practical adjustment": use
    ``Bpref10(variant=paper)`` to reproduce the papers' numbers. The two differ when N < R+10.
    bpref-10 can violate SWAP: moving a relevant document above a nonrelevant one beyond the first R+10
    leaves it unchanged.

    Conventions: R = qrels with grade ≥ rel, N = qrels with 0 ≤ grade < rel; R = 0 gives 0; N = 0 gives
    R_ret/R; unretrieved relevant documents contribute 0; ties in score are broken by document id
    descending, scores compared in single precision; ``@k`` truncates the run first, R and N unchanged.
    """

    __name__ = "Bpref10"
    NAME = "Bpref10"
    PRETTY_NAME = "Binary Preference, top R+10 nonrelevant"
    SHORT_DESC = (
        "bpref-10: first R+10 judged nonrelevant count; default trec_eval 8.1's min(N, R+10), "
        "papers' R+10 = variant=paper."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "variant": Param(
            str, default="trec_eval", choices=kernels.BPREF_VARIANTS, desc=_BPREF_VARIANT_DESC.format(cap="R+10")
        ),
        "cutoff": CUTOFF_PARAM,
    }

    def compute(self, ranked, qrels):
        return _bpref(self, ranked, qrels, extra=10)


class RankEffMeasure(IncompleteMeasure):
    """Rank effectiveness, RankEff (Ahlgren & Grönqvist, "Evaluation of retrieval effectiveness with
    incomplete relevance data", IP&M 44(6), 2008, §4; the formula is reconstructed from the text of
    §4.2–4.3).

    The fraction of (judged relevant, judged nonrelevant) pairs that the run orders correctly. With the
    paper's practical adjustments (§4.2–4.3): a judged nonrelevant document that is not retrieved counts
    as ranked below every retrieved document, and the sum runs over the retrieved judged relevant
    documents only, divided by R. With n_r the judged nonrelevant documents ranked above the judged
    relevant document r and N the judged nonrelevant documents of the topic::

        RankEff = (1/R) · Σ_{retrieved judged relevant r} (N − n_r) / N

    Unjudged documents (pooled-but-unjudged and unpooled) are ignored. Unlike bpref-10 it satisfies SWAP
    (swapping a relevant document with a judged nonrelevant one ranked above it increases the value).
    When R = N it equals bpref.

    Conventions: R = qrels with grade ≥ rel, N = qrels with 0 ≤ grade < rel (negative grades in
    neither); R = 0 gives 0; N = 0 (undefined in the paper) gives R_ret/R (this package's convention); ties in
    score are broken by document id descending, scores compared in single precision; ``@k`` truncates
    the run first: documents past rank k count as not retrieved.
    """

    __name__ = "RankEff"
    NAME = "RankEff"
    PRETTY_NAME = "Rank Effectiveness"
    SHORT_DESC = (
        "Fraction of (relevant, judged nonrelevant) pairs ranked correctly; "
        "unretrieved nonrelevant count as ranked last."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "cutoff": Param(
            int, default=NOT_PROVIDED, minimum=1, desc="ranking cut-off k: documents past rank k count as not retrieved"
        ),
    }

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        return kernels.rank_effectiveness(
            ranked.truncated(self.get("cutoff")),
            ranked.per_topic(qrels.n_relevant(rel)),
            ranked.per_topic(qrels.n_nonrelevant(rel)),
            rel_level=rel,
        )


indAP = IndAP()
subAP = SubAP()
Bpref = BprefMeasure()
BPref = Bpref
Bpref10 = Bpref10Measure()
RankEff = RankEffMeasure()
