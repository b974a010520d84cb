"""Estimators for stratified samples of judgments, and bounds for unjudged documents (definitions; the
kernels are in :mod:`ir_incomplete.kernels.sampled`).

Sampled qrels ("prels", NIST ``sample_eval``): one line per pooled document,
``topic iteration doc_id stratum relevance``; relevance ≥ 0 = sampled and judged, −1 = pooled in that
stratum but not sampled; a document absent from the file is unpooled (nonrelevant, in no stratum). Per
topic and stratum c: N_c pooled documents, n_c judged, r_c judged relevant (grade ≥ ``rel``); the inclusion
rate of the stratum is n_c/N_c. Plain qrels are one stratum per topic (negative grades = pooled but not
sampled), so these measures work there too.

===========================  ===========================================================================
``xinfAP@k``                 extended inferred AP (``infAP`` in ``sample_eval``'s output)
``infNDCG@k``                inferred nDCG (``idcg=exact``: the ideal ranking cut correctly at k)
``iP@k``                     inferred precision at k (``iP10`` … in ``sample_eval``'s output)
``iPrec@r``                  interpolated precision at recall r of the estimated curve (``iprec@rec``)
``RBPResidual(p=0.8)@k``     RBP with unjudged = nonrelevant, plus its residual and upper value
``PUpper@k``, ``APUpper@k``  naive upper bounds of P@k and AP@k (unjudged documents may be relevant)
===========================  ===========================================================================

The official TREC PM / CDS numbers are ``sample_eval`` with its "max result size" of 100: ``xinfAP@100``,
``infNDCG@100``, ``iP@10`` … (the cut-off truncates the ranking before anything is counted). Rankings:
score descending, ties by document id descending (as trec_eval); ``sample_eval`` compares scores in
double precision, our default in single precision (trec_eval 9): ``score_precision="float64"`` matches
the program when scores differ only beyond single precision.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from ir_measures.measures import ParamInfo

from ir_incomplete.data import PAD
from ir_incomplete.kernels import sampled as kernels
from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param

__all__ = [
    "ExtendedInfAP",
    "xinfAP",
    "InferredNDCG",
    "infNDCG",
    "InferredPrecision",
    "iP",
    "InterpolatedInferredPrecision",
    "iPrec",
    "RBPWithResidual",
    "RBPResidual",
    "ResidualMetric",
    "PrecisionUpper",
    "PUpper",
    "APUpperBound",
    "APUpper",
    "IDCG_CHOICES",
    "RBP_GAINS",
    "sampled_inputs",
]

IDCG_CHOICES = ("sample_eval", "exact")
#: gains of :class:`RBPWithResidual`
RBP_GAINS = ("binary", "graded")

REL_PARAM = Param(int, default=1, minimum=1, desc="minimum grade that counts as relevant (inclusive)")
CUTOFF_PARAM = Param(
    int,
    default=NOT_PROVIDED,
    minimum=1,
    desc="cut-off k: the ranking is cut after k documents before anything is counted (sample_eval's "
    "max result size; TREC PM/CDS used 100)",
)
K_PARAM = Param(int, minimum=1, required=True, desc="rank k")


def sampled_inputs(ranked, qrels, cutoff, rel_level: int):
    """``(codes, strata, n_strata, N, n, r)`` at ``cutoff``: the code and stratum matrices and, per row and
    stratum, the pooled, judged and judged relevant (grade ≥ ``rel_level``) counts of the topic."""
    codes = ranked.truncated(cutoff)
    strata = ranked.strata(cutoff)
    _, counts = qrels.stratum_summary()
    counts = counts[ranked.topic_of_row]
    pool = counts.sum(axis=2)
    judged = counts[:, :, 1:].sum(axis=2)
    relevant = counts[:, :, rel_level + 1 :].sum(axis=2)
    return codes, strata, counts.shape[1], pool, judged, relevant


def _cached(ranked, key, compute):
    """``compute()`` once per ranked lists and ``key`` (e.g. the 11 levels of iPrec share one table)."""
    cache = ranked.__dict__.setdefault("_sampled_cache", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


class _SampledMeasure(IncompleteMeasure):
    EXTENSION_PARAMS = None


class _NeedsK(_SampledMeasure):
    """A measure whose ``@`` parameter is required (``iP@10``); the registry object (:meth:`_family`)
    names the family, like ``ir_measures``' ``P``, and cannot be computed."""

    EXAMPLE: str  # set by every subclass (the measure string shown in the missing cut-off error)

    def _k(self) -> int:
        k = self.get("cutoff")
        if k is None:
            raise ValueError(f"{self.NAME} needs a cut-off, e.g. {self.EXAMPLE}")
        return k


class ExtendedInfAP(_SampledMeasure):
    """Extended inferred AP, ``xinfAP`` (Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling
    method for estimating AP and NDCG", SIGIR 2008), exactly as NIST's ``sample_eval`` computes it (its
    ``infAP`` line).

    Walk the ranking; keep per stratum c over the documents *above* rank k: d_c pooled (any qrels line),
    s_c judged, ρ_c judged relevant, and D = Σ_c d_c. At a judged relevant document at rank k in stratum c::

        prec_k = 1/k + (D/k) · Σ_{c': d_c' > 0} (d_c'/D) · (ρ_c' + ε₁)/(s_c' + ε₃)
                                                              (the sum is 0 at D = 0)
        SAP_c += prec_k
        R̂_c    = r_c · N_c / n_c,   R̂ = Σ_c R̂_c     (strata with n_c = 0 contribute nothing)
        xinfAP = Σ_{c: n_c > 0, r_c > 0} (R̂_c / R̂) · SAP_c / r_c       (0 when R̂ = 0)

    with ε₁ = 1e-5, ε₃ = 3e-5. ``@k`` cuts the ranking first and still divides by the full R̂ (the official
    TREC PM numbers are ``xinfAP@100``). Relevant = grade ≥ ``rel`` (default 1, the program's "> 0").

    Conventions: unpooled documents (absent from the qrels) occupy ranks but belong to no stratum; a
    stratum with no judged document contributes nothing; a topic without judged relevant documents gets 0;
    a topic the run does not answer gets 0 (ir_measures' convention; ``sample_eval`` leaves it out of its
    mean, see ``evaluate(..., topics="run")``). With plain qrels (one stratum, everything in it judged)
    this is the pool variant of infAP with c = 3: within 3e-5 of AP (the ε terms).

    Bias: xinfAP is a ratio of estimates (the sampled precisions weighted by R̂_c / R̂), so it is only
    approximately unbiased, with a finite-sample bias of the ratio estimator. On 200 seeded stratified
    samples of the TREC-COVID round-1 pool of its 143 runs (``stratified_sample`` with seeds 0–199: ranks
    1–10 judged, ranks 11–100 sampled at 20 %), the mean over the samples of a run's ``xinfAP@100``
    differs from its AP@100 on the full round-1 judgments by up to 0.0032, and on one (run, topic) by
    0.022. NIST's ``sample_eval``, which this reproduces, gives the same values: the bias is the
    estimator's, not its computation's.
    """

    __name__ = "xinfAP"
    NAME = "xinfAP"
    PRETTY_NAME = "Extended inferred AP"
    SHORT_DESC = "AP estimated from a stratified sample of judgments (sample_eval's infAP; TREC PM: xinfAP@100)."
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"rel": REL_PARAM, "cutoff": CUTOFF_PARAM}

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        codes, strata, n_strata, pool, judged, relevant = sampled_inputs(ranked, qrels, self.get("cutoff"), rel)
        return kernels.xinf_ap(codes, strata, n_strata, pool, judged, relevant, rel)


xinfAP = ExtendedInfAP()


class InferredNDCG(_SampledMeasure):
    """Inferred nDCG, ``infNDCG`` (Yilmaz, Kanoulas & Aslam, SIGIR 2008), as NIST's ``sample_eval``.

    With the counts over the whole (cut) ranking — d_c pooled, s_c judged documents of stratum c retrieved,
    D = Σ_c d_c — and G_c = Σ g/log2(k+1) over the judged relevant documents of stratum c retrieved
    (g = the raw grade, k = the rank)::

        infNDCG = D · Σ_{c: s_c > 0} (d_c/D) · G_c / s_c  /  IDCG     (0 when IDCG = 0 or D = 0)

    IDCG: the estimated number of documents of each grade g ≥ ``rel``, R̂(g) = Σ_c r_c(g) · N_c/n_c, each
    rounded half up to an integer count; the grades fill the ideal ranking from rank 1, highest first,
    with gain g and discount log2(rank+1).

    ``idcg=sample_eval`` (default) reproduces the official program, including its quirk: within one grade
    the filling stops at rank = k, but the next grade starts after the previous grade's whole rounded
    count, so each lower grade adds one more term at a rank past k (grades are visited in the *string*
    order of their labels, which is numeric order for grades 0–9). ``idcg=exact`` fills the ideal ranking
    correctly, cut at k; the two differ only when the estimated relevant documents above the lowest grade
    reach the cut-off. Without ``@k`` nothing is cut and they agree.

    Conventions: as :class:`ExtendedInfAP`. With plain qrels and no pooled-but-unjudged entries this is
    trec_eval's ``ndcg`` (``ndcg_cut.k`` with ``idcg=exact``).
    """

    __name__ = "infNDCG"
    NAME = "infNDCG"
    PRETTY_NAME = "Inferred nDCG"
    SHORT_DESC = "nDCG estimated from a stratified sample of judgments (sample_eval's infNDCG; TREC PM: @100)."
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "idcg": Param(
            str,
            default="sample_eval",
            choices=IDCG_CHOICES,
            desc="sample_eval: the official program's ideal DCG (one extra term per lower grade past the "
            "cut-off); exact: the ideal ranking cut at k",
        ),
        "cutoff": CUTOFF_PARAM,
    }

    def compute(self, ranked, qrels):
        rel, cutoff = self.get("rel"), self.get("cutoff")
        codes, strata, n_strata, _, _, _ = sampled_inputs(ranked, qrels, cutoff, rel)
        dcg = kernels.inf_dcg(codes, strata, n_strata, rel)
        quirk = self.get("idcg") == "sample_eval"
        grades = list(range(rel, qrels.max_grade + 1))
        grades.sort(key=str if quirk else int, reverse=True)
        _, counts = qrels.stratum_summary()
        pool = counts.sum(axis=2)
        judged = counts[:, :, 1:].sum(axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_grade = (
                np.stack(
                    [np.where(judged > 0, counts[:, :, g + 1] * pool / judged, 0.0).sum(axis=1) for g in grades], axis=1
                )
                if grades
                else np.zeros((qrels.n_topics, 0))
            )
        ideal = ranked.per_topic(kernels.ideal_dcg(per_grade, grades, cutoff, quirk))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ideal != 0, dcg / ideal, 0.0)


infNDCG = InferredNDCG()


class InferredPrecision(_NeedsK):
    """Inferred precision at k, ``iP@k`` (Yilmaz, Kanoulas & Aslam, SIGIR 2008; ``sample_eval``'s ``iP10``…).

    With d_c, s_c, ρ_c the pooled, judged and judged relevant (grade ≥ ``rel``) documents of stratum c in
    the top k::

        E_k  = Σ_c d_c · (ρ_c + ε₁)/(s_c + ε₃)        (ε₁ = 1e-5, ε₃ = 3e-5)
        iP@k = E_k / k

    A ranking shorter than k uses the counts of all its documents, still divided by k. With plain qrels
    (everything in the pool judged) this is P@k within 3e-5 (the ε terms).
    """

    __name__ = "iP"
    NAME = "iP"
    PRETTY_NAME = "Inferred precision"
    SHORT_DESC = "P@k estimated from a stratified sample of judgments (sample_eval's iP10, iP100, ...)."
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"rel": REL_PARAM, "cutoff": K_PARAM}
    EXAMPLE = "iP@10"

    def compute(self, ranked, qrels):
        rel, k = self.get("rel"), self._k()
        codes, strata, n_strata, _, _, _ = sampled_inputs(ranked, qrels, k, rel)
        return kernels.inferred_precision(codes, strata, n_strata, k, rel)


iP = InferredPrecision._family()


class InterpolatedInferredPrecision(_NeedsK):
    """Interpolated precision of the estimated recall–precision curve at one of the 11 standard recall
    levels, ``iPrec@r`` (``sample_eval``'s ``iprec@rec`` lines; Yilmaz, Kanoulas & Aslam, SIGIR 2008).

    With E_k the estimated relevant documents at ranks ≤ k (see :class:`InferredPrecision`), L the
    length of the (cut) ranking and R̂ the estimated number of relevant documents (see
    :class:`ExtendedInfAP`), the level r stands for the count r·R̂. Levels with r·R̂ > E_L get 0. The
    others are assigned walking the ranks from L down to 1 with ``int_prec = max_{k' ≥ k} E_k'/k'``: at
    rank k the highest level not yet assigned gets ``int_prec`` when r·R̂ > E_k — at most one level per
    rank, as the program does —, and the levels left at the end get the final ``int_prec``.

    ``r`` is one of 0, 0.1, …, 1 (written ``@0.5``); ``cutoff`` is the program's max result size (the
    official PM runs: 100). The program prints only the mean over topics.
    """

    __name__ = "iPrec"
    NAME = "iPrec"
    AT_PARAM = "rec"
    PRETTY_NAME = "Interpolated inferred precision"
    SHORT_DESC = "Interpolated precision at a recall level of the estimated curve (sample_eval's iprec@rec)."
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "cutoff": CUTOFF_PARAM,
        "rec": Param(
            float,
            required=True,
            choices=tuple(float(x) for x in kernels.RECALL_LEVELS),
            desc="recall level: one of 0, 0.1, ..., 1",
        ),
    }
    EXAMPLE = "iPrec(cutoff=100)@0.5"

    def compute(self, ranked, qrels):
        rel, cutoff = self.get("rel"), self.get("cutoff")

        def table():
            codes, strata, n_strata, pool, judged, relevant = sampled_inputs(ranked, qrels, cutoff, rel)
            expected = kernels.expected_relevant_matrix(codes, strata, n_strata, rel)
            _, r_hat = kernels.estimated_relevant(pool, judged, relevant)
            lengths = (codes != PAD).sum(axis=1)
            return kernels.interpolated_precision(expected, lengths, r_hat)

        levels = _cached(ranked, ("iPrec", cutoff, rel), table)
        if self.get("rec") is None:
            raise ValueError(f"{self.NAME} needs a recall level, e.g. {self.EXAMPLE}")
        return levels[:, int(round(self.get("rec") * 10))]


iPrec = InterpolatedInferredPrecision._family()


class ResidualMetric(NamedTuple):
    """Per-query result of :class:`RBPWithResidual` (the ``ir_measures.CwlMetric`` pattern): ``value`` is
    RBP with unjudged documents nonrelevant (what aggregates and ``pt.Experiment`` use), ``residual`` the
    weight the unjudged and unretrieved ranks could still add, ``upper = value + residual``."""

    query_id: str
    measure: Any
    value: float
    residual: float
    upper: float


class RBPWithResidual(_SampledMeasure):
    """Rank-biased precision with its residual, ``RBPResidual(p=0.8)@k`` (Moffat & Zobel, "Rank-biased
    precision for measurement of retrieval effectiveness", TOIS 27(1), 2008, §5 for the residual).

    Over the ranking cut at k (L = the documents left; no ``@k``: the whole ranking)::

        value    = (1 − p) · Σ_{i ≤ L} p^{i−1} · gain_i          (unjudged documents have gain 0)
        residual = (1 − p) · Σ_{i ≤ L, i unjudged} p^{i−1}  +  p^L
                   (the unjudged ranks, and every rank after L)
        upper    = value + residual

    Gain of the document at rank i with grade g_i:

    * ``gain=binary`` (default): ``[g_i ≥ rel]``. ``value`` equals ``ir_measures``' ``RBP(p=…,rel=…)@k``.
    * ``gain=graded``: ``g_i / G`` for ``g_i ≥ rel``, 0 below ``rel``, where G is the largest grade
      anywhere in the qrels (over all topics, not per topic; 0 everywhere when no judgment is above 0).
      This is the RBP of the official TREC-COVID results ("RBP(p=.5)": grades 0/1/2, gains 0, ½, 1):
      ``RBPResidual(p=0.5,gain=graded)`` with the round-1 qrels and no cut-off reproduces all 143 round-1
      runs of the leaderboard to 5e-5 (its 4 decimals); binary RBP misses it by up to 0.17.

    Unjudged = absent from the qrels or pooled but unjudged (negative grade under the default
    ``negative="pooled_unjudged"``; ``negative="zero"`` makes negative grades judged nonrelevant). Every
    unjudged or unretrieved rank could hold a document of gain at most 1 (binary: relevant; graded: of
    the largest grade G), so the RBP of any completion of the judgments and of the ranking lies in
    ``[value, upper]``. A topic the run does not answer has value 0, residual 1, upper 1.

    Per query ``iter_calc`` yields a :class:`ResidualMetric` with the fields ``value``, ``residual`` and
    ``upper``; :func:`ir_incomplete.evaluate` returns ``residual`` and ``upper`` columns (their mean over
    topics when aggregated), and so do the command line and :func:`ir_incomplete.pivot`. The name differs
    from ``RBP`` so that ``ir_measures``' own measure keeps its meaning.
    """

    __name__ = "RBPResidual"
    NAME = "RBPResidual"
    PRETTY_NAME = "RBP with residual"
    SHORT_DESC = "Rank-biased precision (unjudged = 0) with its residual and upper value (Moffat & Zobel 2008)."
    METRIC_TYPE = ResidualMetric
    # a query the run does not answer: nothing retrieved, so every rank is unknown (residual p^0 = 1)
    EXTRA_COLUMNS = {"residual": 1.0, "upper": 1.0}
    INTERVAL = ("value", "upper")
    CELL_FORMAT = "{value} +{residual}"  # the usual "base + residual" form of RBP
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "p": Param(
            float, default=0.8, minimum=0, maximum=1, min_inclusive=False, max_inclusive=False, desc="persistence p"
        ),
        "rel": REL_PARAM,
        "gain": Param(
            str,
            default="binary",
            choices=RBP_GAINS,
            desc="binary: gain 1 for grade >= rel; graded: grade / (largest grade in the qrels) for grade >= rel "
            "(TREC-COVID's RBP)",
        ),
        "cutoff": Param(int, default=NOT_PROVIDED, minimum=1, desc="cut-off k (default: the whole ranking)"),
    }

    def compute_details(self, ranked, qrels) -> dict[str, np.ndarray]:
        codes = ranked.truncated(self.get("cutoff"))
        max_grade = qrels.max_grade if self.get("gain") == "graded" else None
        value, residual = kernels.rbp_residual(codes, self.get("p"), self.get("rel"), max_grade)
        return {"value": value, "residual": residual, "upper": value + residual}

    def compute(self, ranked, qrels):
        return self.compute_details(ranked, qrels)["value"]


RBPResidual = RBPWithResidual()


class PrecisionUpper(_NeedsK):
    """Naive upper bound of P@k, ``PUpper@k``: every unjudged document in the top k taken as relevant::

        PUpper@k = |{i ≤ k : g_i ≥ rel or document i unjudged}| / k

    Unjudged = absent from the qrels or pooled but unjudged (negative grade). Its lower companion is
    ``P@k`` (unjudged = nonrelevant); for sampled qrels the estimate is ``iP@k``. A ranking shorter than k
    still divides by k (as trec_eval's P@k).
    """

    __name__ = "PUpper"
    NAME = "PUpper"
    PRETTY_NAME = "Naive upper P@k"
    SHORT_DESC = "Naive upper bound of P@k: unjudged documents in the top k counted as relevant."
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"rel": REL_PARAM, "cutoff": K_PARAM}
    EXAMPLE = "PUpper@10"

    def compute(self, ranked, qrels):
        k = self._k()
        return kernels.precision_upper(ranked.truncated(k), k, self.get("rel"))


PUpper = PrecisionUpper._family()


class APUpperBound(_SampledMeasure):
    """Upper bound of AP@k, ``APUpper@k``: the largest AP@k that any relevance of the unjudged documents
    could give.

    AP@k = (1/R) Σ_{i ≤ k, relevant} P@i, R = all relevant documents of the topic (trec_eval ``map_cut``).
    Unjudged documents outside the top k are taken as nonrelevant (more relevant documents only raise R
    and lower AP@k). Inside the top k, taking *all* unjudged documents as relevant is not an upper bound:
    one relevant document at rank 1 and an unjudged one at rank 100 give AP = 1, but 0.51 if the second
    is relevant. The bound is therefore the maximum over the subsets; marking the first t unjudged
    documents of the top k relevant is optimal for some t (moving relevance to a higher-ranked unjudged
    document never lowers AP), so::

        APUpper@k = max_{t = 0 … U_k} [ Σ_{i ∈ J ∪ U(t)} P_t@i ] / (R_J + t)     (0 when R_J + t = 0)

    with J the judged relevant ranks (grade ≥ ``rel``) in the top k, U(t) the ranks of the first t unjudged
    documents, P_t@i the precision at i when J ∪ U(t) are relevant, R_J the judged relevant documents of
    the topic, U_k the unjudged documents in the top k. It never exceeds 1, equals AP@k when nothing in
    the top k is unjudged, and is the tight bound (a completion of the judgments attains it). Without
    ``@k`` the whole ranking is used. Unjudged = absent from the qrels or pooled but unjudged.
    """

    __name__ = "APUpper"
    NAME = "APUpper"
    PRETTY_NAME = "Upper AP@k"
    SHORT_DESC = "Largest AP@k any relevance of the unjudged documents could give (tight upper bound)."
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "rel": REL_PARAM,
        "cutoff": Param(int, default=NOT_PROVIDED, minimum=1, desc="cut-off k (default: the whole ranking)"),
    }

    def compute(self, ranked, qrels):
        rel = self.get("rel")
        return kernels.ap_upper(ranked.truncated(self.get("cutoff")), ranked.per_topic(qrels.n_relevant(rel)), rel)


APUpper = APUpperBound()
