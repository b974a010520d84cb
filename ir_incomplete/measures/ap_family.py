"""AP-family measures for incomplete judgments (definitions; the kernels are in
:mod:`ir_incomplete.kernels.ap_family`)."""
from __future__ import annotations

from ir_measures.measures.infap import _infAP

from ir_incomplete.kernels import ap_family as kernels
from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param

__all__ = ["InfAP", "infAP", "REL_PARAM", "CUTOFF_PARAM"]

REL_PARAM = Param(int, default=1, minimum=0,
                  desc="minimum grade that counts as relevant (inclusive)")
CUTOFF_PARAM = Param(int, default=NOT_PROVIDED, minimum=1,
                     desc="ranking cut-off k: only the first k retrieved documents count")


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

    Conventions: R = number of qrels with grade ≥ rel (negative grades never count); R = 0 gives 0;
    unretrieved relevant documents contribute 0; ties in score are broken by document id descending,
    scores compared in single precision (trec_eval 9); ``@k`` truncates the run and still divides by R.
    With c = 2, eps = 1e-5, variant=pool and no cut-off this is exactly trec_eval/pytrec_eval infAP.
    """

    __name__ = "infAP"
    NAME = "infAP"
    PRETTY_NAME = "Inferred Average Precision"
    SHORT_DESC = "AP estimated from a judged sample of the pool (trec_eval infAP, with smoothing c)."
    SUPPORTED_PARAMS = {
        "rel": REL_PARAM,
        "c": Param(float, default=2.0, minimum=0, min_inclusive=False,
                   desc="smoothing: estimated precision above k is 1/c when nothing above k is judged"),
        "eps": Param(float, default=1e-5, minimum=0, min_inclusive=False,
                     desc="Lidstone smoothing constant epsilon"),
        "variant": Param(str, default="pool", choices=("pool", "uniform"),
                         desc="pool: d counts pooled documents above k (trec_eval); uniform: d = k-1"),
        "cutoff": CUTOFF_PARAM,
    }
    EXTENSION_PARAMS = ("c", "eps", "variant", "cutoff")

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        return kernels.inferred_ap(ranked.truncated(self.get("cutoff")),
                                   ranked.per_topic(qrels.n_relevant(rel)), rel_level=rel,
                                   c=self.get("c"), eps=self.get("eps"),
                                   uniform=self.get("variant") == "uniform")


infAP = InfAP()
