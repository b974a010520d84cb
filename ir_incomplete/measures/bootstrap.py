"""The bootstrap beyond nDCG: ``BootAP@k``, ``BootP@k``, ``BootRBP(p)@k`` and ``BootQ@k`` (definitions; the
sampler and the measures on completed grade matrices are in :mod:`ir_incomplete.kernels.bootstrap`).

They share ``BootNDCG``'s parameters and machinery (priors ``pool``/``run``/``pool+run``, ``b``,
``stat``, ``seed``, the per-topic random streams, summaries and intervals), plus ``prior=predicted``
(predicted grades of an automatic labeler, calibrated on the judged documents:
:mod:`ir_incomplete.predictions`). What a replicate is differs from ``BootNDCG``'s reservoir draw
([FGPH] Alg. 1, kept unchanged there): here a replicate is one *completion of the judgments* (see
:class:`BootstrapMeasure`), so R and the ideal rankings count the drawn relevant documents.

**What the intervals are.** A bootstrap interval (``interval=``, the ``pNN`` columns, ``--interval``)
is the spread of the replicates: how much the value moves *if the prior's model of the unjudged
documents is right*. It is not an error bar for the value that complete judgments would give: on
TREC-COVID round 1 (the manual, docs/measured.rst) 90 % intervals of
``BootNDCG@10`` / ``BootAP@100`` contained the complete-judgment value for 12 % / 0 % of the runs with
the pool+run prior, and for 27 % / 16 % with ``prior=predicted``. For error bars that hold, judge a
probability sample and estimate from it: :func:`ir_incomplete.judging.sample` and
:func:`ir_incomplete.estimate` (``ir_incomplete sample`` / ``ir_incomplete estimate``; docs/intervals.rst).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from ir_measures.measures import ParamInfo

from ir_incomplete.kernels import bootstrap as kernels
from ir_incomplete.kernels.cells import condense
from ir_incomplete.measures._completion import PREDICTIONS_PARAM, completion_setup
from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param
from ir_incomplete.measures.ndcg import (
    ALPHA_PARAM,
    MAX_B,
    MIN_COUNT_PARAM,
    POOL_SCOPES,
    PRIORS,
    Replicated,
    StatParam,
    topic_streams,
)
from ir_incomplete.measures.sampled import RBP_GAINS

__all__ = [
    "BootstrapMeasure",
    "BootstrapSummary",
    "BootstrappedAP",
    "BootstrappedP",
    "BootstrappedRBP",
    "BootstrappedQ",
    "QMeasure",
    "BootAP",
    "BootP",
    "BootRBP",
    "BootQ",
    "Q",
    "BOOTSTRAP_FIELDS",
]

#: per-query numbers of a :class:`BootstrapMeasure` besides its value
BOOTSTRAP_FIELDS = ("mode", "mean", "median", "p5", "p95", "plain")


class BootstrapSummary(NamedTuple):
    """Per-query result of a :class:`BootstrapMeasure` (the ``ir_measures.CwlMetric`` pattern): ``value`` is
    the statistic chosen by ``stat`` (what aggregates and ``pt.Experiment`` use); ``mode``, ``mean``,
    ``median``, ``p5`` and ``p95`` describe the b replicates; ``plain`` is the measure on the human
    judgments alone (unjudged documents nonrelevant)."""

    query_id: str
    measure: Any
    value: float
    mode: float
    mean: float
    median: float
    p5: float
    p95: float
    plain: float


_REL = Param(int, default=1, minimum=1, desc="minimum grade that counts as relevant (inclusive)")
_CUTOFF_OPTIONAL = Param(
    int, default=NOT_PROVIDED, minimum=1, desc="cut-off k: the ranks the bootstrap covers (default: the whole ranking)"
)
_CUTOFF_REQUIRED = Param(int, minimum=1, required=True, desc="cut-off k: the ranks the bootstrap covers")
_COMMON: dict[str, ParamInfo] = {
    "prior": Param(
        str,
        default="pool+run",
        choices=PRIORS,
        desc="prior over grades: run (judged covered docs), pool (all judged docs), their average, or "
        "predicted (calibrated predicted grades, given as predictions=)",
    ),
    "b": Param(int, default=1000, minimum=1, maximum=MAX_B, desc=f"number of bootstrap replicates (at most {MAX_B})"),
    "stat": StatParam(desc="statistic of the replicates that is the value"),
    "seed": Param(
        int, default=42, minimum=0, allow_none=True, desc="random seed; none draws fresh entropy (not reproducible)"
    ),
    "pool_scope": Param(
        str, default="topic", choices=POOL_SCOPES, desc="pool prior from the topic's judgments or the whole qrels"
    ),
    "min_count": MIN_COUNT_PARAM,
    "alpha": ALPHA_PARAM,
    "predictions": PREDICTIONS_PARAM,
}


class BootstrapMeasure(Replicated, IncompleteMeasure):
    """Base of the bootstrapped measures that complete the judgments (``BootAP``, ``BootP``, ``BootRBP``,
    ``BootQ``; the future-work list of Fröbe, Gienapp, Potthast & Hagen, ECIR 2023, §6).

    One replicate completes the judgments of every topic::

        for every unjudged document the bootstrap covers (the run's first k ranks; the whole ranking
        without @k) and, with prior=predicted, every predicted unjudged document of the topic:
            grade ~ its prior      (inverse CDF: u ~ U[0,1), grade = min{ℓ : u < Σ_{j≤ℓ} π(j)})
        replicate = the plain measure of the run against the human qrels plus these grades

    so AP's R, Q's R and ideal ranking (and nDCG's ideal DCG under ``BootNDCG(prior=predicted)``) count
    the drawn relevant documents. Grades are drawn independently, with replacement (no reservoir: unlike
    ``BootNDCG``'s Alg. 1, nothing ties the draws to judged documents outside the top k). With every
    covered document judged (and, with predictions, no predicted unjudged document) every replicate is the
    plain measure (to 1e−12).

    Priors (levels 0 .. the topic's highest judged grade, each component floored at 1e−6, renormalised):
    ``run`` = grades of the run's judged covered documents (the pool prior when there is none), ``pool`` =
    grades of the topic's judgments (``pool_scope=collection``: of the whole qrels), ``pool+run`` (default)
    their average; ``predicted`` = the calibrated prior of each predicted unjudged document
    (:mod:`ir_incomplete.predictions`; ``min_count``, ``alpha``), and pool+run for unjudged covered
    documents without a prediction. A run with unjudged covered documents and a prediction for none of
    them is refused under ``predicted``. The predicted prior is used as calibrated, **without** the 1e−6
    floor: where a query's own confusion row is used (at least ``min_count`` judged documents with that
    prediction) a grade never judged with that prediction has probability 0 and is never drawn for it;
    the pooled rows are smoothed by ``alpha`` > 0, so they give every grade some probability. (The floor
    keeps the empirical pool and run priors, built from few documents, from ruling a grade out; the
    calibration has its own smoothing, ``min_count`` and ``alpha``, for that.)

    Random numbers as ``BootNDCG``: with seed s, topic t has ``[rank × replicate]`` uniforms from
    ``default_rng(SeedSequence(s, spawn_key=blake2b(t)))`` (row i for rank i + 1, shared by the rankings
    of the topic, so a ``BootAP`` and a ``BootNDCG`` of the same seed see the same uniforms). Predicted
    documents use a second stream per topic (spawn key + (1,)), one row per predicted unjudged document in
    document-id order, shared by every run: one replicate is one completion of the qrels for all runs.
    Values are the ``stat`` of the b replicates (``mode``: the most likely value of [FGPH], ``mean``,
    ``median``, ``pNN``). Per query the provider yields :class:`BootstrapSummary` records.

    Their intervals (``p5``/``p95``, ``evaluate(..., interval=0.9)``, ``--interval``) are the spread of the
    replicates *under the prior*, not error bars for the complete-judgment value: on TREC-COVID round 1,
    90 % intervals of ``BootAP@100`` contained it for 0 % of the runs with the pool+run prior and 16 % with
    ``prior=predicted`` (``BootNDCG@10``: 12 % / 27 %; the manual, docs/measured.rst, "Automatic labels on
    TREC-COVID, measured"). For error bars, judge a probability sample: :func:`ir_incomplete.judging.sample` and
    :func:`ir_incomplete.estimate` (``ir_incomplete sample`` / ``estimate``).
    """

    EXTENSION_PARAMS = None
    METRIC_TYPE = BootstrapSummary
    NAME: str

    # -- the measure itself --------------------------------------------------------------------------------
    def definition(self, setup: dict[str, Any]):
        """``f(grades [n × k], counts [n × L]) -> [n]``: the plain measure on completed judgments."""
        raise NotImplementedError

    def setup(self, ranked, qrels, predictions: Any = None) -> dict[str, Any]:
        """Inputs of the sampler (:func:`ir_incomplete.measures._completion.completion_setup`)."""
        return completion_setup(
            self,
            ranked,
            qrels,
            self.get("cutoff"),
            self.get("prior"),
            self.get("pool_scope") == "collection",
            predictions,
            self.get("min_count"),
            self.get("alpha"),
        )

    def _replicates(self, ranked, qrels, setup: dict[str, Any], rows: np.ndarray) -> np.ndarray:
        b = self.get("b")
        return kernels.bootstrap_replicates(
            setup,
            rows,
            self.definition(setup),
            topic_streams(qrels.topic_ids, self.get("seed"), b),
            topic_streams(qrels.topic_ids, self.get("seed"), b, stream=1),
            b,
        )

    def plain(self, setup: dict[str, Any]) -> np.ndarray:
        """The measure on the human judgments alone (unjudged covered documents nonrelevant), per row."""
        counts = setup["topic_counts"][setup["topic"]]
        return kernels.plain(self.definition(setup), setup["grades"], counts)

    def _summary_extras(self, setup: dict[str, Any]) -> dict[str, np.ndarray]:
        """The plain measure per row (unjudged documents as nonrelevant)."""
        return {"plain": self.plain(setup)}


class BootstrappedAP(BootstrapMeasure):
    """Bootstrapped average precision, ``BootAP@k`` (machinery: :class:`BootstrapMeasure`).

    Each replicate is trec_eval's AP@k on the completed judgments::

        AP@k = (1/R) Σ_{i ≤ k, g_i ≥ rel} C(i)/i          (C(i) = relevant documents at ranks ≤ i)

    with R = the human-judged documents of grade ≥ rel plus the drawn ones (covered unjudged documents;
    with ``prior=predicted`` every predicted unjudged document of the topic too); R = 0 gives 0. Without
    ``@k`` every rank of the run is covered. Ties: score descending, then document id descending.
    """

    __name__ = "BootAP"
    NAME = "BootAP"
    PRETTY_NAME = "Bootstrapped AP"
    SHORT_DESC = "AP@k with the unjudged covered documents' grades bootstrapped (R counts drawn relevant docs)."
    EXAMPLE = "BootAP(prior=pool,stat=p95)@100"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {**_COMMON, "rel": _REL, "cutoff": _CUTOFF_OPTIONAL}

    def definition(self, setup):
        rel = self.get("rel")
        return lambda grades, counts: kernels.average_precision(grades, counts, rel)


class BootstrappedP(BootstrapMeasure):
    """Bootstrapped precision, ``BootP@k`` (machinery: :class:`BootstrapMeasure`)::

        P@k = |{i ≤ k : g_i ≥ rel}| / k                  (also divided by k when the run is shorter)

    on the completed judgments of each replicate. ``@k`` is required, as for ``P``.
    """

    __name__ = "BootP"
    NAME = "BootP"
    PRETTY_NAME = "Bootstrapped P@k"
    SHORT_DESC = "P@k with the unjudged top-k documents' grades bootstrapped."
    EXAMPLE = "BootP(prior=run)@10"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {**_COMMON, "rel": _REL, "cutoff": _CUTOFF_REQUIRED}

    def setup(self, ranked, qrels, predictions: Any = None) -> dict[str, Any]:
        if self.get("cutoff") is None:
            raise ValueError(f"{self.NAME} needs a cut-off, e.g. {self.EXAMPLE}")
        return super().setup(ranked, qrels, predictions)

    def definition(self, setup):
        rel, k = self.get("rel"), self.get("cutoff")

        def p_at_k(grades, counts):
            return kernels.precision(grades, k, rel)

        p_at_k.uses_counts = False  # type: ignore[attr-defined]
        return p_at_k


class BootstrappedRBP(BootstrapMeasure):
    """Bootstrapped rank-biased precision, ``BootRBP(p=0.8)@k`` (Moffat & Zobel, "Rank-biased precision
    for measurement of retrieval effectiveness", TOIS 27(1), 2008, eq. 3; machinery: :class:`BootstrapMeasure`)::

        RBP = (1 − p) Σ_{i ≤ k} p^{i−1} · [g_i ≥ rel]

    on the completed judgments of each replicate (``gain=binary``, the default: binary relevance, as
    ``RBP(p=…,rel=…)`` of ``ir_measures`` and the value of ``RBPResidual``). ``gain=graded`` replaces
    ``[g_i ≥ rel]`` by ``g_i / G`` for ``g_i ≥ rel`` (0 below), G the largest grade anywhere in the qrels
    (0 everywhere when G is 0), the definition of ``RBPResidual(gain=graded)`` (TREC-COVID's RBP); drawn
    grades never exceed G, so with every covered document judged each replicate is
    ``RBPResidual(gain=graded)``'s value. Ranks after the run's end, or after k, add nothing.
    """

    __name__ = "BootRBP"
    NAME = "BootRBP"
    PRETTY_NAME = "Bootstrapped RBP"
    SHORT_DESC = "Rank-biased precision (Moffat & Zobel 2008) with the unjudged covered documents bootstrapped."
    EXAMPLE = "BootRBP(p=0.9)@100"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        **_COMMON,
        "p": Param(
            float, default=0.8, minimum=0, maximum=1, min_inclusive=False, max_inclusive=False, desc="persistence p"
        ),
        "rel": _REL,
        "gain": Param(
            str,
            default="binary",
            choices=RBP_GAINS,
            desc="binary: gain 1 for grade >= rel; graded: grade / (largest grade in the qrels) for grade >= rel "
            "(as RBPResidual)",
        ),
        "cutoff": _CUTOFF_OPTIONAL,
    }

    def definition(self, setup):
        p, rel = self.get("p"), self.get("rel")
        # the qrels' largest grade: the prior's levels are 0 .. that grade (grade_counts' columns)
        max_grade = setup["topic_counts"].shape[1] - 1 if self.get("gain") == "graded" else None

        def rank_biased(grades, counts):
            return kernels.rbp(grades, p, rel, max_grade)

        rank_biased.uses_counts = False  # type: ignore[attr-defined]
        return rank_biased


_BETA = Param(float, default=1.0, minimum=0, desc="beta of the blended ratio (0 gives AP; large beta weighs gain)")
_NORM = Param(
    str,
    default="R",
    choices=("R", "min"),
    desc="divisor: R, every relevant document (trec_eval's AP@k convention), or min = min(k, R) (NTCIREVAL's Q@l)",
)


def _q_definition(beta: float, norm: str, cutoff: int | None):
    limit = cutoff if norm == "min" else None

    def q(grades, counts):
        if limit is None:
            return kernels.q_measure(grades, counts, beta)
        return kernels.q_measure(grades, counts, beta, limit=limit)

    return q


class BootstrappedQ(BootstrapMeasure):
    """Bootstrapped Q-measure, ``BootQ@k`` (the definition of :class:`QMeasure` on the completed judgments
    of each replicate; R and the ideal cumulative gain count the drawn grades; machinery:
    :class:`BootstrapMeasure`)."""

    __name__ = "BootQ"
    NAME = "BootQ"
    PRETTY_NAME = "Bootstrapped Q-measure"
    SHORT_DESC = "Sakai's Q-measure with the unjudged covered documents' grades bootstrapped."
    EXAMPLE = "BootQ(beta=1,prior=pool)@100"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {**_COMMON, "beta": _BETA, "norm": _NORM, "cutoff": _CUTOFF_OPTIONAL}

    def definition(self, setup):
        return _q_definition(self.get("beta"), self.get("norm"), self.get("cutoff"))


class QMeasure(IncompleteMeasure):
    """Sakai's Q-measure, ``Q(beta=1)@k`` (Sakai, "New performance metrics based on multigrade relevance",
    NTCIR-4 2004; "Alternatives to Bpref", SIGIR 2007; NTCIREVAL's ``Q-measure``/``Q@l``)::

        Q@k = (1/R) Σ_{r ≤ k} isrel(r) · (C(r) + β·cg(r)) / (r + β·cg*(r))

    * isrel(r) = 1 when the document at rank r has grade ≥ 1; C(r) = Σ_{i ≤ r} isrel(i);
    * gain = the grade; cg(r) = Σ_{i ≤ r} grade(i); cg*(r) the same for the ideal ranking (every judged
      document of grade ≥ 1, highest grade first; constant after its R documents);
    * R = every judged document of grade ≥ 1 of the topic, also with a cut-off: the sum runs over ranks
      ≤ k and the divisor stays R, as AP@k in trec_eval (``map_cut``); ``norm=min`` divides by
      ``min(k, R)`` instead, as NTCIREVAL's Q@l (Sakai's tool) does; without ``@k`` both are R;
    * R = 0 gives 0; unjudged documents (absent, or negative qrels grade) are nonrelevant with gain 0;
      ``judged_only=True`` removes them first (condensed list, Sakai 2007) and then cuts at k; R and the
      ideal ranking never change;
    * ties in score: document id descending (trec_eval), scores compared in single precision. The run is
      ranked by score, as trec_eval re-sorts it; NTCIREVAL scores a ranked list in the order of its
      lines. They differ where a run file's lines are not in that order: on TREC-COVID round 1, 41 of the
      4,290 (run, topic) cells of Q differ from NTCIREVAL's, by up to 0.066. To reproduce NTCIREVAL on
      such a file, give scores that follow the file order.

    β = 0 gives AP; for binary grades the blended ratio is precision C(r)/r up to rank R and
    (1+β)C(r)/(r+βR) beyond it, so Q ≥ AP, with equality when every retrieved relevant document is in the
    top R, and Q → (1/R)[Σ_{r ≤ R} isrel(r)C(r)/r + Σ_{r > R} isrel(r)C(r)/R] as β → ∞ (Sakai 2004).
    """

    __name__ = "Q"
    NAME = "Q"
    PRETTY_NAME = "Q-measure"
    SHORT_DESC = "Sakai's Q-measure: AP with a blended ratio of precision and cumulative gain (graded)."
    EXAMPLE = "Q(beta=1)@100"
    EXTENSION_PARAMS = None
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "beta": _BETA,
        "norm": _NORM,
        "judged_only": Param(
            bool, default=False, desc="remove the documents without a judgment of grade >= 0 first (condensed list)"
        ),
        "cutoff": Param(int, default=NOT_PROVIDED, minimum=1, desc="cut-off k (default: the whole ranking)"),
    }

    def compute(self, ranked, qrels):
        codes = ranked.codes
        if self.get("judged_only"):
            codes = condense(codes)
        cutoff = self.get("cutoff")
        if cutoff is not None:
            codes = codes[:, :cutoff]
        counts = ranked.per_topic(qrels.grade_counts)
        q = _q_definition(self.get("beta"), self.get("norm"), cutoff)
        return kernels.plain(q, kernels.dense_grades(codes), counts)


BootAP = BootstrappedAP()
BootP = BootstrappedP._family()
BootRBP = BootstrappedRBP()
BootQ = BootstrappedQ()
Q = QMeasure()
